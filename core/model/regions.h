/*
 * regions.h -- facts about every region gpubroker can place capacity in:
 * which cloud, which country and legal jurisdiction, where it is, which
 * compliance programmes it is eligible for, and how dirty its grid is.
 * The built-in table lives in regions_data.c (sources noted there);
 * on-prem sites are added at run time from the inventory.
 */
#ifndef GB_REGIONS_H
#define GB_REGIONS_H

#include <stddef.h>

typedef struct gb_region_info {
	const char *cloud;        /* "aws", "azure", "gcp", "onprem" */
	const char *name;         /* provider's region id: eu-west-1, westeurope,
	                             europe-west4, or the on-prem site name */
	const char *display;      /* "Europe (Ireland)" */
	const char *country;      /* ISO 3166-1 alpha-2, e.g. "IE" */
	const char *jurisdiction; /* "EU" (EU/EEA), "UK", "CH", "US", "CA",
	                             "JP", "SG", "AU", "IN", "KR", "BR", ... */
	double lat, lon;          /* degrees */
	const char *tags;         /* comma-separated compliance tags, from
	                             gb_region_tags (only where true) */
	double carbon_g_per_kwh;  /* grid intensity, gCO2eq/kWh */
	const char *carbon_source;/* where the figure comes from */
} gb_region_info;

/* Lookup by cloud and name; cloud NULL matches any cloud (first found).
 * Borrowed (static table or registry-owned); NULL when unknown. */
const gb_region_info *gb_region_find(const char *cloud, const char *name);
/* Iterate: i in [0, gb_region_count()). */
size_t gb_region_count(void);
const gb_region_info *gb_region_at(size_t i);
/* One region tag: its name and what it means (one line). */
typedef struct gb_region_tag {
	const char *name, *meaning;
} gb_region_tag;
/* Every tag a region can carry, which is also what placement.compliance
 * accepts (regions_data.c); *n set to the count.  Static storage. */
const gb_region_tag *gb_region_tags(size_t *n);
/* The tag an older name stands for ("hipaa-eligible" -> "hipaa"), else
 * tag itself.  Static storage or tag. */
const char *gb_region_tag_canonical(const char *tag);
/* 1 if the comma-separated tag list contains tag (exact match, after
 * gb_region_tag_canonical). */
int gb_region_has_tag(const gb_region_info *r, const char *tag);
/* Great-circle distance in km (haversine, R = 6371 km). */
double gb_distance_km(double lat1, double lon1, double lat2, double lon2);
/* Register an extra region (on-prem site).  Copies every string.  A second
 * registration of the same (cloud, name) replaces the first.  Thread-safe
 * against concurrent lookups only if done before planning starts. */
void gb_region_register(const gb_region_info *r);

/* The built-in table (regions_data.c). */
extern const gb_region_info gb_builtin_regions[];
extern const size_t gb_builtin_region_count;

#endif
