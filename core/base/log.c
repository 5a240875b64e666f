/* log.c -- leveled, redacted log lines as text or JSON. */
#include "log.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>

static gb_log_level level = GB_LOG_WARN;
static int json_lines;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static gb_log_tap_fn tap;
static void *tap_ud;

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

void gb_log_set_tap(gb_log_tap_fn fn, void *ud)
{
	pthread_mutex_lock(&out_lock);
	tap_ud = ud;
	__atomic_store_n(&tap, fn, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&out_lock);
}

void gb_logv(gb_log_level lvl, const char *component, const char *fmt,
             va_list ap)
{
	char *raw, *msg, ts[32];
	FILE *f;
	/* (read without the lock: a tap set while this line is formatted
	 * may miss it, as a level change would) */
	if (lvl > level && !__atomic_load_n(&tap, __ATOMIC_RELAXED))
		return;
	raw = gb_xvasprintf(fmt, ap);
	msg = gb_redact(raw);
	free(raw);
	gb_format_time_ms(gb_now_ms(), ts, sizeof(ts));
	pthread_mutex_lock(&out_lock);
	f = out ? out : stderr;
	if (tap)
		tap(tap_ud, lvl, component ? component : "gpubroker", msg);
	if (lvl > level) {
		/* formatted for the tap only */
	} else if (json_lines) {
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
