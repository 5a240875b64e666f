/* fake_ctor_exit.c -- a constructor that calls exit(0) while dlopen runs
 * it: the process must not end with status 0 as if all went well. */
#include <stdlib.h>

#include "fake_common.h"

__attribute__((constructor)) static void leave_early(void)
{
	exit(0);
}

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "ctor_exit",
	.version = "1",
	FAKE_METHODS,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
