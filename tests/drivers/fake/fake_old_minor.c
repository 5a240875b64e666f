/* fake_old_minor.c -- a driver built against ABI 1.0: its descriptor ends
 * before command() (minor 1).  What lies after it in memory is garbage
 * the host must never call. */
#include <stddef.h>

#include "fake_common.h"

static gb_driver desc;

/* Its offers end before `available` (minor 6): what lies there is
 * garbage the host must not read (5, put after fake_list's offers). */
typedef struct fwd {
	gb_offer_cb emit;
	void *ud;
} fwd;

static int garbage_after(void *ud, const gb_offer *o)
{
	const fwd *f = ud;
	gb_offer c = *o;
	c.available = 5;
	return f->emit(f->ud, &c);
}

static int old_list(void *ctx, gb_offer_cb emit, void *ud, gb_error *err)
{
	fwd f = {emit, ud};
	return fake_list(ctx, garbage_after, &f, err);
}

__attribute__((constructor)) static void build(void)
{
	memset(&desc, 0, sizeof(desc));
	desc.abi_major = GB_DRIVER_ABI_MAJOR;
	desc.abi_minor = 0;
	desc.struct_size = (uint32_t)offsetof(gb_driver, command);
	desc.name = "fake";
	desc.version = "1.0";
	desc.init = fake_init;
	desc.fini = fake_fini;
	desc.list_offers = old_list;
	desc.create = fake_create;
	desc.describe = fake_describe;
	desc.terminate = fake_terminate;
	/* garbage beyond the declared size */
	memset((char *)&desc + offsetof(gb_driver, command), 0x41,
	       sizeof(desc) - offsetof(gb_driver, command));
}

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major);
GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_major)
{
	(void)host_major;
	return &desc;
}
