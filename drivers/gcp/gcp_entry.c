/* gcp_entry.c -- the one symbol gcp.so exports. */
#include "gcp.h"

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major);

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major)
{
	if (host_abi_major != GB_DRIVER_ABI_MAJOR)
		return NULL;
	return &gcp_driver_desc;
}
