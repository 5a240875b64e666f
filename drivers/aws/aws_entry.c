/*
 * aws_entry.c -- the one exported symbol of aws.so.  Kept apart from the
 * descriptor so that programs linking the driver archive statically (the
 * unit tests) use aws_driver without pulling in a gb_driver_entry that
 * would clash with another driver's.
 */
#include "aws.h"

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major);

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major)
{
	return host_abi_major == GB_DRIVER_ABI_MAJOR ? &aws_driver : NULL;
}
