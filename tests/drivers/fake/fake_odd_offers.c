/* fake_odd_offers.c -- a driver named "odd" whose catalog has one good
 * offer, one with a GPU model no spec can ask for, one with an alias of
 * a canonical model and one malformed offer (no price). */
#include "fake_common.h"

static int odd_list(void *ctx, gb_offer_cb emit, void *ud, gb_error *err)
{
	static const struct {
		const char *type, *model;
		double price;
	} rows[] = {
		{"odd.h100", "H100", 10.0},
		{"odd.h100x", "H100X", 11.0},
		{"odd.sxm", "NVIDIA H100-SXM", 12.0},
		{"odd.free", "A100", 0.0},
	};
	(void)ctx;
	(void)err;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		gb_offer o;
		memset(&o, 0, sizeof(o));
		o.region = "odd-1";
		o.zone = "";
		o.instance_type = rows[i].type;
		o.gpu_model = rows[i].model;
		o.gpu_count = 1;
		o.gpu_memory_gb = 80;
		o.price_per_hour = rows[i].price;
		o.source = "fake";
		if (emit(ud, &o))
			break;
	}
	return 0;
}

static const gb_driver desc = {
	GB_DRIVER_V1,
	.name = "odd",
	.version = "1",
	.init = fake_init, .fini = fake_fini, .list_offers = odd_list,
	.create = fake_create, .describe = fake_describe,
	.terminate = fake_terminate,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
