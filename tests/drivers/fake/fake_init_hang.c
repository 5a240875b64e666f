/* fake_init_hang.c -- init never returns (it sleeps forever): the loader
 * must give up at the deadline, and stay stoppable by SIGTERM. */
#include "fake_common.h"

static int hang_init(const gb_host *host, void **out, gb_error *err)
{
	(void)err;
	*out = NULL;
	for (;;)
		host->sleep_ms(host->ctx, 3600 * 1000);
	return 0;
}

static const gb_driver desc = {
	.abi_major = GB_DRIVER_ABI_MAJOR,
	.abi_minor = GB_DRIVER_ABI_MINOR,
	.struct_size = sizeof(gb_driver),
	.name = "init_hang",
	.version = "1",
	.init = hang_init, .fini = fake_fini, .list_offers = fake_list,
	.create = fake_create, .describe = fake_describe,
	.terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
