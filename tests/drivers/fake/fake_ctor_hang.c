/* fake_ctor_hang.c -- a constructor that never returns (dlopen hangs in
 * it): SIGTERM must still stop the process, naming the driver, even in
 * `serve`, which blocks SIGTERM for its sigwait loop. */
#include <time.h>

#include "fake_common.h"

__attribute__((constructor)) static void stuck(void)
{
	struct timespec ts = {3600, 0};
	for (;;)
		nanosleep(&ts, NULL);
}

FAKE_DRIVER("ctor_hang", fake_init, fake_fini)
