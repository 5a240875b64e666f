/* drvc_shapes.c -- see drvc_shapes.h. */
#include "drvc_shapes.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_mem.h"

drvc_shape *drvc_shapes_find(const drvc_shapes *s, const char *type,
                             const char *region)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].type, type) == 0 &&
		    (s->region_nocase ? strcasecmp(s->v[i].region, region)
		                      : strcmp(s->v[i].region, region)) == 0)
			return &s->v[i];
	return NULL;
}

drvc_shape *drvc_shapes_add(drvc_shapes *s, const gb_offer *o, int *is_new)
{
	drvc_shape *sh = drvc_shapes_find(s, o->instance_type, o->region);
	*is_new = 0;
	if (!sh) {
		s->v = drvc_xrealloc(s->v, (s->n + 1) * sizeof(drvc_shape));
		sh = &s->v[s->n++];
		memset(sh, 0, sizeof(*sh));
		sh->type = drvc_xstrdup(o->instance_type);
		sh->region = drvc_xstrdup(o->region);
		sh->gpu = drvc_xstrdup(o->gpu_model);
		sh->gpus = o->gpu_count;
		sh->gpu_mem = o->gpu_memory_gb;
		sh->vcpus = o->vcpus;
		sh->ram = o->ram_gb;
		if (s->ext_size)
			sh->ext = drvc_xcalloc(1, s->ext_size);
		*is_new = 1;
	}
	for (size_t z = 0; z < sh->nzones; z++)
		if (strcmp(sh->zones[z], o->zone) == 0)
			return sh;
	sh->zones = drvc_xrealloc(sh->zones, (sh->nzones + 1) * sizeof(char *));
	sh->zones[sh->nzones++] = drvc_xstrdup(o->zone);
	return sh;
}

void drvc_shapes_free(drvc_shapes *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].type);
		free(s->v[i].region);
		free(s->v[i].gpu);
		for (size_t z = 0; z < s->v[i].nzones; z++)
			free(s->v[i].zones[z]);
		free(s->v[i].zones);
		free(s->v[i].ext);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int drvc_shape_emit(const drvc_shape *sh, const char *source,
                    int64_t fetched_at, gb_offer_cb emit, void *ud)
{
	gb_offer o;
	int stop = 0;
	memset(&o, 0, sizeof(o));
	o.region = sh->region;
	o.instance_type = sh->type;
	o.gpu_model = sh->gpu;
	o.gpu_count = sh->gpus;
	o.gpu_memory_gb = sh->gpu_mem;
	o.vcpus = sh->vcpus;
	o.ram_gb = sh->ram;
	o.source = source;
	o.fetched_at = fetched_at;
	for (size_t z = 0; z < sh->nzones && !stop; z++) {
		o.zone = sh->zones[z];
		for (int spot = 0; spot < 2 && !stop; spot++) {
			if (sh->price[spot] <= 0)
				continue;
			o.capacity = spot ? GB_CAPACITY_SPOT : GB_CAPACITY_ON_DEMAND;
			o.price_per_hour = sh->price[spot];
			stop = emit(ud, &o);
		}
	}
	return stop;
}
