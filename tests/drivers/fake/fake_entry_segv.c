/* fake_entry_segv.c -- the entry function crashes (SIGSEGV): the loader
 * must name the driver on stderr before the process dies. */
#include <stdint.h>

#include "fake_common.h"

/* volatile: the compiler cannot see the store is to a bad address (and
 * turn it into a trap, SIGILL) */
static volatile uintptr_t bad_address = 16;

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	*(volatile uint32_t *)bad_address = host_major;
	return NULL;
}
