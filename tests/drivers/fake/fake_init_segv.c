/* fake_init_segv.c -- a valid descriptor whose init crashes (SIGSEGV);
 * init runs in the loader's init thread. */
#include <stdint.h>

#include "fake_common.h"

static volatile uintptr_t bad_address = 16;

static int segv_init(const gb_host *host, void **out, gb_error *err)
{
	(void)err;
	*out = NULL;
	*(volatile uint32_t *)bad_address = host->abi_major;
	return 0;
}

FAKE_DRIVER("init_segv", segv_init, fake_fini)
