/* fake_init_slow.c -- init takes the option sleep_ms (default 500) and
 * then succeeds, or fails when the option fail is "1".  Its context is
 * a heap block its fini frees (a double fini or a missing one shows
 * under ASan), and fini logs "init_slow: fini" through the host. */
#include <stdlib.h>

#include "fake_common.h"

typedef struct slow_ctx {
	const gb_host *host;
} slow_ctx;

static int slow_init(const gb_host *host, void **out, gb_error *err)
{
	const char *ms = host->option(host->ctx, "sleep_ms");
	const char *fail = host->option(host->ctx, "fail");
	slow_ctx *c;
	host->sleep_ms(host->ctx, ms ? atoll(ms) : 500);
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
