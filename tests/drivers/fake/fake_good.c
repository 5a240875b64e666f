/* fake_good.c -- a valid driver named "fake" with the optional command(). */
#include "fake_common.h"

static int fake_command(void *ctx, const char *verb, int argc,
                        const char *const *argv,
                        void (*out)(void *ud, const char *json), void *ud,
                        gb_error *err)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	(void)err;
	if (strcmp(verb, "ping") != 0)
		return -1;
	out(ud, "{\"pong\": true}");
	return 0;
}

/* documented limits: the host's buckets start from these */
static const char *const fake_rates[] = {
	"fake-a", "3/1",
	"fake-b", "10/5",
	NULL, NULL,
};

/* the options it reads */
static const char *const fake_options[] = {"known", "image.*", NULL};

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "fake",
	.version = "1.2.3",
	.description = "a test driver",
	.caps = GB_DRV_CAP_ZONES,
	FAKE_METHODS,
	.command = fake_command,
	.default_rates = fake_rates,
	.options = fake_options,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	return host_major == GB_DRIVER_ABI_MAJOR ? &desc : NULL;
}
