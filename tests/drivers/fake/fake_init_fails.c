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

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "fake",
	.version = "1",
	.init = bad_init, .fini = fake_fini, .list_offers = fake_list,
	.create = fake_create, .describe = fake_describe,
	.terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
