/* fake_ctor_hang.c -- a constructor that never returns (dlopen hangs in
 * it): SIGTERM must still stop the process, naming the driver, even in
 * `serve`, which blocks SIGTERM for its sigwait loop. */
#include <time.h>

#include "fake_common.h"

__attribute__((constructor)) static void stuck(void)
{
	struct timespec ts = {3600, 0};
	for (;;)
		nanosleep(&ts, NULL);
}

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "ctor_hang",
	.version = "1",
	FAKE_METHODS,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
