/* fake_common.h -- a tiny in-memory driver for the loader tests; each
 * fake_*.c includes it and breaks one thing. */
#ifndef FAKE_COMMON_H
#define FAKE_COMMON_H

#include <stdio.h>
#include <string.h>

#include "gpubroker/driver.h"

static const gb_host *fake_host;

static __attribute__((unused)) int fake_init(const gb_host *host, void **out, gb_error *err)
{
	(void)err;
	fake_host = host;
	*out = (void *)&fake_host;
	return 0;
}

static __attribute__((unused)) void fake_fini(void *ctx)
{
	(void)ctx;
}

static __attribute__((unused)) int fake_list(void *ctx, gb_offer_cb emit, void *ud, gb_error *err)
{
	gb_offer o;
	(void)ctx;
	(void)err;
	memset(&o, 0, sizeof(o));
	o.region = "fake-region-1";
	o.zone = "";
	o.instance_type = "fake.8xh100";
	o.gpu_model = "H100";
	o.gpu_count = 8;
	o.gpu_memory_gb = 80;
	o.capacity = GB_CAPACITY_ON_DEMAND;
	o.price_per_hour = 10.0;
	o.source = "fake";
	o.fetched_at = 1;
	return emit(ud, &o);
}

static __attribute__((unused)) int fake_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                       void *ud, gb_error *err)
{
	(void)ctx;
	(void)req;
	(void)emit;
	(void)ud;
	err->cls = GB_ERR_INVALID;
	snprintf(err->message, sizeof(err->message), "fake driver creates nothing");
	return -1;
}

static __attribute__((unused)) int fake_describe(void *ctx, const gb_describe_req *req,
                         gb_instance_cb emit, void *ud, gb_error *err)
{
	(void)ctx;
	(void)req;
	(void)emit;
	(void)ud;
	(void)err;
	return 0;
}

static __attribute__((unused)) int fake_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                          gb_error *err)
{
	(void)ctx;
	(void)refs;
	(void)n;
	(void)err;
	return 0;
}

#define FAKE_METHODS                                                     \
	.init = fake_init, .fini = fake_fini, .list_offers = fake_list,  \
	.create = fake_create, .describe = fake_describe,                \
	.terminate = fake_terminate

/* A whole fake driver named NAME whose init and fini are INIT and FINI
 * (the other methods: the fakes above): its descriptor and its exported
 * entry. */
#define FAKE_DRIVER(NAME, INIT, FINI)                                     \
	static const gb_driver fake_desc = {                              \
		.abi_major = GB_DRIVER_ABI_MAJOR,                         \
		.abi_minor = GB_DRIVER_ABI_MINOR,                         \
		.struct_size = sizeof(gb_driver),                         \
		.name = NAME,                                             \
		.version = "1",                                           \
		.init = INIT, .fini = FINI, .list_offers = fake_list,     \
		.create = fake_create, .describe = fake_describe,         \
		.terminate = fake_terminate,                              \
	};                                                                \
	GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t major); \
	GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t major) \
	{                                                                 \
		(void)major;                                              \
		return &fake_desc;                                        \
	}

#endif
