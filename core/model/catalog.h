/*
 * catalog.h -- every offer from every driver, held by the core with its
 * provenance (source, fetched_at).  Strings are interned: two offers with
 * the same region share one pointer, so comparisons may use ==.
 *
 * Ownership: the catalog owns every gb_coffer and every string in it;
 * pointers stay valid until gb_catalog_free.
 */
#ifndef GB_CATALOG_H
#define GB_CATALOG_H

#include <stdint.h>

#include "gpubroker/driver.h"
#include "regions.h"

typedef struct gb_coffer {
	uint32_t id;              /* index in the catalog */
	const char *cloud;        /* driver name */
	const char *region;
	const char *zone;         /* "" if none */
	const char *instance_type;
	const char *gpu_model;    /* canonical */
	int gpu_count;
	int gpu_memory_gb;
	int vcpus;
	double ram_gb;
	gb_capacity capacity;
	double price;             /* USD per instance-hour */
	const char *source;
	int64_t fetched_at;       /* unix seconds */
	const char *bench_json;   /* NULL unless measured (on-prem) */
	const char *tags;         /* NULL or comma-separated */
	const gb_region_info *rinfo; /* region facts, NULL if unknown */
	int available;            /* instances that can be created now, when
	                             the driver knows (gb_offer.available);
	                             0 = unknown or unbounded */
	int owned;                /* capacity you own and have paid for (a
	                             node driver's: gb_catalog_mark_owned);
	                             the planner ranks it first */
} gb_coffer;

typedef struct gb_catalog gb_catalog;

gb_catalog *gb_catalog_new(void);
void gb_catalog_free(gb_catalog *c);
/* Copies the offer (interning strings).  Returns the stored offer. */
const gb_coffer *gb_catalog_add(gb_catalog *c, const char *cloud,
                                const gb_offer *o);
/* Marks every offer of cloud as owned (gb_coffer.owned). */
void gb_catalog_mark_owned(gb_catalog *c, const char *cloud);
size_t gb_catalog_count(const gb_catalog *c);
const gb_coffer *gb_catalog_at(const gb_catalog *c, size_t i);
/* The interned pointer equal to s, or NULL when no offer uses s. */
const char *gb_catalog_lookup(const gb_catalog *c, const char *s);
/* Interned copy of s (borrowed from the catalog). */
const char *gb_catalog_intern(gb_catalog *c, const char *s);
/* sha256 hex of the catalog content (order-independent), for decision
 * records.  out[65].  Computed once and cached until the next add; not
 * thread-safe against concurrent adds. */
void gb_catalog_hash(const gb_catalog *c, char out[65]);

#endif
