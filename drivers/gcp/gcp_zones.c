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
	pthread_mutex_lock(&c->zone_mu);
	for (size_t i = 0; i < c->nzones; i++) {
		if (strcmp(c->zones[i].name, name) == 0) {
			free(c->zones[i].zone);
			c->zones[i].zone = drvc_xstrdup(zone);
			pthread_mutex_unlock(&c->zone_mu);
			return;
		}
	}
	if (c->nzones == GCP_ZONE_CACHE) {
		free(c->zones[0].name);
		free(c->zones[0].zone);
		memmove(c->zones, c->zones + 1,
		        (c->nzones - 1) * sizeof(*c->zones));
		c->nzones--;
	}
	c->zones = drvc_xrealloc(c->zones, (c->nzones + 1) * sizeof(*c->zones));
	c->zones[c->nzones].name = drvc_xstrdup(name);
	c->zones[c->nzones].zone = drvc_xstrdup(zone);
	c->nzones++;
	pthread_mutex_unlock(&c->zone_mu);
}

char *gcp_zone_lookup(gcp_ctx *c, const char *name)
{
	char *z = NULL;
	pthread_mutex_lock(&c->zone_mu);
	for (size_t i = 0; i < c->nzones; i++)
		if (strcmp(c->zones[i].name, name) == 0) {
			z = drvc_xstrdup(c->zones[i].zone);
			break;
		}
	pthread_mutex_unlock(&c->zone_mu);
	return z;
}

void gcp_zone_forget(gcp_ctx *c, const char *name)
{
	pthread_mutex_lock(&c->zone_mu);
	for (size_t i = 0; i < c->nzones; i++)
		if (strcmp(c->zones[i].name, name) == 0) {
			free(c->zones[i].name);
			free(c->zones[i].zone);
			memmove(c->zones + i, c->zones + i + 1,
			        (c->nzones - i - 1) * sizeof(*c->zones));
			c->nzones--;
			break;
		}
	pthread_mutex_unlock(&c->zone_mu);
}

void gcp_zone_free(gcp_ctx *c)
{
	for (size_t i = 0; i < c->nzones; i++) {
		free(c->zones[i].name);
		free(c->zones[i].zone);
	}
	free(c->zones);
	c->zones = NULL;
	c->nzones = 0;
}
