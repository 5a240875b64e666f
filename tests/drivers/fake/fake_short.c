/* fake_short.c -- a descriptor shorter than the minor-0 layout. */
#include "fake_common.h"

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = 0,
	.struct_size = 24,
	.name = "fake",
	.version = "1",
	FAKE_METHODS,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
