/* fake_ctor_exit.c -- a constructor that calls exit(0) while dlopen runs
 * it: the process must not end with status 0 as if all went well. */
#include <stdlib.h>

#include "fake_common.h"

__attribute__((constructor)) static void leave_early(void)
{
	exit(0);
}

FAKE_DRIVER("ctor_exit", fake_init, fake_fini)
