/* azure_entry.c -- the one symbol azure.so exports. */
#include "azure.h"

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major);

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major)
{
	if (host_abi_major != GB_DRIVER_ABI_MAJOR)
		return NULL;
	return &azure_driver_desc;
}
