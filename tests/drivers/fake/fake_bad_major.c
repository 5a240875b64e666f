/* fake_bad_major.c -- built for a future ABI major. */
#include "fake_common.h"

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR + 1,
	.abi_minor = 0,
	.struct_size = sizeof(gb_driver),
	.name = "fake",
	.version = "9",
	FAKE_METHODS,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major; /* answers anyway: the host must check */
	return &desc;
}
