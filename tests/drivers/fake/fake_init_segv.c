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

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "init_segv",
	.version = "1",
	.init = segv_init, .fini = fake_fini, .list_offers = fake_list,
	.create = fake_create, .describe = fake_describe,
	.terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
