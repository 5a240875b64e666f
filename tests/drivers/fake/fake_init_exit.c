/* fake_init_exit.c -- init calls exit(0) (from the loader's init thread):
 * the process must not end with status 0 as if all went well. */
#include <stdlib.h>

#include "fake_common.h"

static int exit_init(const gb_host *host, void **out, gb_error *err)
{
	(void)host;
	(void)out;
	(void)err;
	exit(0);
}

FAKE_DRIVER("init_exit", exit_init, fake_fini)
