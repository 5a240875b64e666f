/*
 * drvc_shapes.h -- the table a driver's refresh_prices builds from its
 * shipped catalog (drvc_catalog_emit): one entry per (instance type,
 * region) with the catalog's shape (GPUs, vCPUs, RAM) and zones, priced
 * from the provider's price API, then emitted as offers -- zone by zone,
 * on-demand before spot, in catalog order.
 *
 * For a driver whose price API gives prices but not shapes.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Ownership: the table owns every string, zone list and ext block in it;
 * pointers to entries are valid until the next drvc_shapes_add or
 * drvc_shapes_free.  Thread-safety: none; a table belongs to one
 * refresh_prices call (start from {0}, set ext_size, free at the end).
 */
#ifndef DRVC_SHAPES_H
#define DRVC_SHAPES_H

#include <stddef.h>
#include <stdint.h>

#include "gpubroker/driver.h"

typedef struct drvc_shape {
	char *type, *region, *gpu;
	int gpus, gpu_mem, vcpus;
	double ram;
	char **zones;
	size_t nzones;
	double price[2];   /* per hour: [0] on-demand, [1] spot; 0 = none */
	void *ext;         /* the driver's data: ext_size zeroed bytes */
} drvc_shape;

typedef struct drvc_shapes {
	drvc_shape *v;
	size_t n;
	size_t ext_size;   /* set before the first add; 0: no ext */
	int region_nocase; /* regions compare case-insensitively */
} drvc_shapes;

/* The entry for (type, region), or NULL. */
drvc_shape *drvc_shapes_find(const drvc_shapes *s, const char *type,
                             const char *region);
/* Adds o's (type, region) when new (o's shape; *is_new = 1), then o's
 * zone when new to the entry.  Returns the entry. */
drvc_shape *drvc_shapes_add(drvc_shapes *s, const gb_offer *o, int *is_new);
void drvc_shapes_free(drvc_shapes *s);

/* Emits sh's offers with source and fetched_at (unix s): per zone, the
 * on-demand offer when price[0] > 0, then the spot offer when price[1]
 * > 0.  Returns emit's first non-zero answer (stop), else 0. */
int drvc_shape_emit(const drvc_shape *sh, const char *source,
                    int64_t fetched_at, gb_offer_cb emit, void *ud);

#endif
