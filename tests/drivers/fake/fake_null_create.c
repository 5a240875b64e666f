/* fake_null_create.c -- a mandatory method missing. */
#include "fake_common.h"

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "fake",
	.version = "1",
	.init = fake_init, .fini = fake_fini, .list_offers = fake_list,
	.create = NULL, .describe = fake_describe, .terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
