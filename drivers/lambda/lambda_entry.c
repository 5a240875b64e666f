/* lambda_entry.c -- the one symbol lambda.so exports. */
#include "lambda.h"

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major);

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major)
{
	if (host_abi_major != GB_DRIVER_ABI_MAJOR)
		return NULL;
	return &lambda_driver_desc;
}
