/* log.c -- leveled, redacted log lines as text or JSON. */
#include "log.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>

static gb_log_level level = GB_LOG_WARN;
static int json_lines;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const names[] = {"error", "warn", "info", "debug"};

void gb_log_set_level(gb_log_level lvl)
{
	level = lvl;
}

gb_log_level gb_log_get_level(void)
{
	return level;
}

void gb_log_set_json(int on)
{
	json_lines = on;
}

void gb_log_set_file(FILE *f)
{
	out = f;
}

void gb_logv(gb_log_level lvl, const char *component, const char *fmt,
             va_list ap)
{
	char *raw, *msg, ts[32];
	FILE *f;
	if (lvl > level)
		return;
	raw = gb_xvasprintf(fmt, ap);
	msg = gb_redact(raw);
	free(raw);
	gb_format_time(gb_now_ms() / 1000, ts, sizeof(ts));
	pthread_mutex_lock(&out_lock);
	f = out ? out : stderr;
	if (json_lines) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "time", ts, "level",
		                      names[lvl], "component",
		                      component ? component : "gpubroker", "msg",
		                      msg);
		char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
		if (line) {
			fputs(line, f);
			fputc('\n', f);
		}
		free(line);
		json_decref(o);
	} else {
		fprintf(f, "%s %-5s %s: %s\n", ts, names[lvl],
		        component ? component : "gpubroker", msg);
	}
	fflush(f);
	pthread_mutex_unlock(&out_lock);
	free(msg);
}

void gb_log(gb_log_level lvl, const char *component, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gb_logv(lvl, component, fmt, ap);
	va_end(ap);
}
