/* progress.c -- live progress for long operations. */
#include "progress.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* The live line redraws itself with escape codes (CR, erase line): only
 * on a terminal that understands them, and not when the user asked for
 * plain output (NO_COLOR, https://no-color.org: set and not empty). */
static int escapes_ok(void)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	return isatty(STDERR_FILENO) && !getenv("GB_NO_TTY") &&
	       !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
}

void gb_progress_init(gb_progress *p, const gb_cli *cli)
{
	memset(p, 0, sizeof(*p));
	p->cli = cli;
	p->tty = escapes_ok();
}

static void status_line(gb_progress *p)
{
	/* created but not yet running, failed or gone */
	int pending = p->requested - p->running - p->failed - p->terminated;
	fprintf(stderr, "\r\033[K  requested %d | pending %d | running %d | "
	                "failed %d | terminated %d | failovers %d",
	        p->requested, pending > 0 ? pending : 0, p->running, p->failed,
	        p->terminated, p->failovers);
	p->line_shown = 1;
}

void gb_progress_event(void *ud, const char *pool, const char *instance,
                       const char *kind, const char *message)
{
	gb_progress_event_at(ud, gb_now_ms(), pool, instance, kind, message);
}

void gb_progress_event_at(gb_progress *p, int64_t time_ms, const char *pool,
                          const char *instance, const char *kind,
                          const char *message)
{
	char ts[32];
	(void)instance;
	pthread_mutex_lock(&mu);
	if (strcmp(kind, "created") == 0)
		p->requested++;
	else if (strcmp(kind, "running") == 0)
		p->running++;
	else if (strcmp(kind, "failed") == 0 || strcmp(kind, "preempted") == 0)
		p->failed++;
	else if (strcmp(kind, "terminated") == 0)
		p->terminated++;
	else if (strcmp(kind, "failover") == 0)
		p->failovers++;
	if (!p->cli->quiet) {
		if (p->tty && p->line_shown)
			fputs("\r\033[K", stderr);
		gb_format_time(time_ms / 1000, ts, sizeof(ts));
		fprintf(stderr, "%s %s %-11s %s\n", ts + 11, pool ? pool : "-",
		        kind, message);
		if (p->tty)
			status_line(p);
	}
	pthread_mutex_unlock(&mu);
}

void gb_progress_done(gb_progress *p)
{
	pthread_mutex_lock(&mu);
	if (p->tty && p->line_shown) {
		fputs("\r\033[K", stderr);
		p->line_shown = 0;
	}
	pthread_mutex_unlock(&mu);
}
