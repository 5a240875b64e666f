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

FAKE_DRIVER("init_overflow", overflow_init, fake_fini)
