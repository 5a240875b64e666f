/* fake_init_overflow.c -- init recurses until the stack overflows: the
 * crash handler must still run (on its alternate stack) and name the
 * driver. */
#include <stdint.h>

#include "fake_common.h"

/* volatile: no tail call, no "infinite recursion" for the compiler */
static volatile size_t depth_limit = SIZE_MAX;

static size_t deep(size_t depth)
{
	volatile char frame[4096];
	frame[0] = (char)depth;
	frame[sizeof(frame) - 1] = frame[0];
	if (depth >= depth_limit)
		return 0;
	return deep(depth + 1) + (size_t)frame[sizeof(frame) - 1];
}

static int overflow_init(const gb_host *host, void **out, gb_error *err)
{
	(void)host;
	(void)err;
	*out = NULL;
	return deep(0) == 42 ? 0 : -1;
}

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "init_overflow",
	.version = "1",
	.init = overflow_init, .fini = fake_fini, .list_offers = fake_list,
	.create = fake_create, .describe = fake_describe,
	.terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
