/* fake_init_slow.c -- init takes the option sleep_ms (default 500) and
 * then succeeds, or fails when the option fail is "1".  The sleep is the
 * host's (cut short by a cancel or the call's deadline) unless the option
 * plain is "1": then nothing cuts it, so the init surely outlives a
 * shorter deadline.  Its context is
 * a heap block its fini frees (a double fini or a missing one shows
 * under ASan), and fini logs "init_slow: fini" through the host. */
#include <stdlib.h>
#include <time.h>

#include "fake_common.h"

typedef struct slow_ctx {
	const gb_host *host;
} slow_ctx;

static int slow_init(const gb_host *host, void **out, gb_error *err)
{
	const char *ms = host->option(host->ctx, "sleep_ms");
	const char *fail = host->option(host->ctx, "fail");
	const char *plain = host->option(host->ctx, "plain");
	long long sleep_ms = ms ? atoll(ms) : 500;
	slow_ctx *c;
	if (plain && strcmp(plain, "1") == 0) {
		struct timespec ts = {(time_t)(sleep_ms / 1000),
		                      (long)(sleep_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0)
			;
	} else {
		host->sleep_ms(host->ctx, sleep_ms);
	}
	if (fail && strcmp(fail, "1") == 0) {
		snprintf(err->message, sizeof(err->message), "slow and failing");
		return -1;
	}
	c = malloc(sizeof(*c));
	if (!c)
		return -1;
	c->host = host;
	*out = c;
	return 0;
}

static void slow_fini(void *ctx)
{
	slow_ctx *c = ctx;
	c->host->log(c->host->ctx, GB_LOG_WARN, "init_slow: fini");
	free(c);
}

FAKE_DRIVER("init_slow", slow_init, slow_fini)
