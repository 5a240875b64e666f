/*
 * region_glob.h -- does a region glob (placement.regions, `offers
 * --region`) name any region of the clouds it is meant for?  Region names
 * differ per cloud ("eu-*" is AWS only; GCP's are europe-*, Azure's
 * westeurope, ...), so a glob that matches none of the selected clouds'
 * regions is a mistake worth refusing, with the names the user probably
 * meant.
 */
#ifndef GB_REGION_GLOB_H
#define GB_REGION_GLOB_H

#include "catalog.h"

/* The regions of a cloud, as the broker knows them: the region table's
 * rows for it (core/model/regions_data.c, plus the sites drivers
 * registered through the `sites` verb, which cover clouds outside the
 * table and on-prem sites) and the regions of its offers in cat (the
 * shipped catalogs and refreshed prices: every loaded driver lists its
 * regions there, third-party ones included).  Neither source alone covers
 * every loaded driver: the table has regions with no shipped offer, the
 * catalog has drivers the table does not know.
 *
 * Checks glob against the regions of clouds (NULL-terminated: a pool's
 * placement.clouds, or every loaded driver).  A cloud with no known
 * region (its driver did not load, or lists nothing) can place nothing
 * and is not judged.  Returns NULL when a region of a judged cloud
 * matches, or when no cloud is judged; otherwise a message for the user
 * such as
 *   "eu-*" matches no region of gcp (it matches regions of aws: region
 *   names differ per cloud); the nearest by place, in the same
 *   jurisdictions (CH, EU, UK): europe-central2, ...
 * naming the nearest names (by place when the glob matches another
 * cloud's regions, else by spelling).  Caller frees the message. */
char *gb_region_glob_problem(const char *glob, const char *const *clouds,
                             const gb_catalog *cat);

#endif
