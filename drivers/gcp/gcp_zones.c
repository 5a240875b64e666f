/* gcp_zones.c -- instance name -> zone, remembered for the instances this
 * driver created or saw (a GCE instance is addressed by zone and name;
 * describe-by-id gets only the name).  Bounded; under a mutex. */
#include <stdlib.h>
#include <string.h>

#include "drvc_mem.h"
#include "gcp.h"

void gcp_zone_remember(gcp_ctx *c, const char *name, const char *zone)
{
	if (!name || !*name || !zone || !*zone)
		return;
	drvc_cache_put(&c->zones, name, &zone, 1);
}

char *gcp_zone_lookup(gcp_ctx *c, const char *name)
{
	char *z = NULL;
	if (name && drvc_cache_get(&c->zones, name, &z, 1))
		return z;
	return NULL;
}

void gcp_zone_forget(gcp_ctx *c, const char *name)
{
	if (name)
		drvc_cache_del(&c->zones, name);
}
