/* fake_init_fails.c -- loads, but init fails with a message. */
#include "fake_common.h"

static int bad_init(const gb_host *host, void **out, gb_error *err)
{
	(void)host;
	(void)out;
	err->cls = GB_ERR_AUTH;
	snprintf(err->code, sizeof(err->code), "NoCredentials");
	snprintf(err->message, sizeof(err->message),
	         "no credentials: set FAKE_TOKEN");
	return -1;
}

FAKE_DRIVER("fake", bad_init, fake_fini)
