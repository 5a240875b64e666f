/*
 * offers_view.h -- offers as flat JSON records (one per cloud, region,
 * zone, type and capacity: what GET /v1/offers returns) and the rows of
 * `gpubroker offers`, built from such records so that the local and the
 * --server views print alike.
 */
#ifndef GB_OFFERS_VIEW_H
#define GB_OFFERS_VIEW_H

#include <jansson.h>

#include "catalog.h"

/* {cloud, region, zone, instance_type, gpu, gpu_count, gpu_memory_gb,
 *  vcpus, ram_gb, capacity, price_per_hour, source, fetched_at (unix s)
 *  [, jurisdiction, carbon_g_per_kwh] [, bench]}.  New reference. */
json_t *gb_offer_record(const gb_coffer *o);

/* Rows for display: per region (zones counted, $/h the cheapest zone,
 * max_price_per_hour when zones differ) or, with per_zone, one per zone;
 * sorted by price per GPU-hour; at most limit rows (0 = all); price_age
 * and fetched_at rendered as text.  Records that are not offers (no
 * GPUs, unknown capacity) are skipped.  New reference. */
json_t *gb_offers_view(const json_t *records, int per_zone, size_t limit);

#endif
