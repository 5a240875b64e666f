/* runtime.c -- config + drivers + catalog for commands. */
#include "runtime.h"

#include <string.h>

int gb_runtime_open(gb_cli *cli, gb_runtime *rt, int want_offers)
{
	int rc;
	memset(rt, 0, sizeof(*rt));
	if ((rc = gb_cli_config(cli)) != 0)
		return rc;
	gb_drivers_load(&rt->drivers, &cli->cfg);
	for (size_t i = 0; i < rt->drivers.n; i++) {
		gb_drv *d = rt->drivers.v[i];
		if (!d->ready)
			gb_strv_push_take(&rt->problems,
			                  gb_xasprintf("driver %s: %s", d->name,
			                               d->status));
	}
	rt->cat = gb_catalog_new();
	if (want_offers)
		gb_drivers_offers(&rt->drivers, rt->cat, &rt->problems);
	return 0;
}

void gb_runtime_free(gb_runtime *rt)
{
	gb_catalog_free(rt->cat);
	gb_drivers_free(&rt->drivers);
	gb_strv_free(&rt->problems);
	memset(rt, 0, sizeof(*rt));
}
