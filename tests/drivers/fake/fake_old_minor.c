/* fake_old_minor.c -- a driver built against ABI 1.0: its descriptor ends
 * before command() (minor 1).  What lies after it in memory is garbage
 * the host must never call. */
#include <stddef.h>

#include "fake_common.h"

static gb_driver desc;

__attribute__((constructor)) static void build(void)
{
	memset(&desc, 0, sizeof(desc));
	desc.abi_major = GB_DRIVER_ABI_MAJOR;
	desc.abi_minor = 0;
	desc.struct_size = (uint32_t)offsetof(gb_driver, command);
	desc.name = "fake";
	desc.version = "1.0";
	desc.init = fake_init;
	desc.fini = fake_fini;
	desc.list_offers = fake_list;
	desc.create = fake_create;
	desc.describe = fake_describe;
	desc.terminate = fake_terminate;
	/* garbage beyond the declared size */
	memset((char *)&desc + offsetof(gb_driver, command), 0x41,
	       sizeof(desc) - offsetof(gb_driver, command));
}

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
