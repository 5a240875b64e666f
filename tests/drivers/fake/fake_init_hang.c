/* fake_init_hang.c -- init never returns (it sleeps forever): the loader
 * must give up at the deadline, and stay stoppable by SIGTERM. */
#include "fake_common.h"

static int hang_init(const gb_host *host, void **out, gb_error *err)
{
	(void)err;
	*out = NULL;
	for (;;)
		host->sleep_ms(host->ctx, 3600 * 1000);
	return 0;
}

FAKE_DRIVER("init_hang", hang_init, fake_fini)
