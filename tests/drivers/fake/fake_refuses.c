/* fake_refuses.c -- the driver refuses this host's ABI. */
#include "fake_common.h"

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return NULL;
}
