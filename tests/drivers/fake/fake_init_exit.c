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

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "init_exit",
	.version = "1",
	.init = exit_init, .fini = fake_fini, .list_offers = fake_list,
	.create = fake_create, .describe = fake_describe,
	.terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
