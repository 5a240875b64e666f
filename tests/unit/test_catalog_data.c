/* test_catalog_data.c -- the default catalogs the drivers ship
 * (drivers/<cloud>/data/offers.json) and the built-in region table they
 * lean on: every file loads through drvc_catalog_emit, covers the GPU
 * families and geographies issue 3 asks for, has sane prices, and names
 * only regions whose facts (jurisdiction, place, compliance tags, carbon)
 * are known.  Reads the files from $GB_SRC (tests/run.sh sets it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "drvc_catalog.h"
#include "regions.h"

#define MAX_REGIONS 128
#define MAX_TYPES 128

static const char *const CANON_GPUS[] = {
	"H100", "H200", "A100", "A100-80GB", "L4", "L40S", "A10G", "A10",
	"T4", "V100", "V100-32GB", NULL};

/* Jurisdictions counted as Asia-Pacific for the geography check. */
static const char *const APAC[] = {"JP", "SG", "AU", "IN", "KR", "HK", "TW",
                                   "ID", "NZ", "TH", "MY", NULL};

static int in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------ fixtures */

typedef struct seen {
	const char *cloud;
	char regions[MAX_REGIONS][64];
	size_t nregions;
	char types[MAX_TYPES][64];
	size_t ntypes;
	size_t offers, spot_offers;
	/* the last on-demand offer, to pair with the spot offer that
	 * drvc_catalog_emit emits right after it for the same zone */
	char od_key[256];
	double od_price;
} seen;

static void add_unique(char (*arr)[64], size_t *n, size_t cap, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(arr[i], s) == 0)
			return;
	assert_true(*n < cap);
	snprintf(arr[(*n)++], 64, "%s", s);
}

static const char *src_dir(void)
{
	const char *src = getenv("GB_SRC");
	if (!src || !*src)
		fail_msg("GB_SRC is not set: run this test through tests/run.sh "
		         "or as GB_SRC=/path/to/source %s", "test_catalog_data");
	return src;
}

static void catalog_path(const char *cloud, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/drivers/%s/data/offers.json", src_dir(), cloud);
}

static int collect(void *ud, const gb_offer *o)
{
	seen *s = ud;
	const gb_region_info *r;
	char key[256];

	s->offers++;
	assert_non_null(o->instance_type);
	assert_non_null(o->region);
	assert_non_null(o->zone);
	if (!in_list(CANON_GPUS, o->gpu_model))
		fail_msg("%s %s: gpu \"%s\" is not a canonical model name",
		         s->cloud, o->instance_type, o->gpu_model);
	assert_true(o->gpu_count >= 1 && o->gpu_count <= 16);
	assert_true(o->gpu_memory_gb >= 16 && o->gpu_memory_gb <= 192);
	assert_true(o->vcpus >= 1);
	assert_true(o->ram_gb >= 8);
	assert_true(o->fetched_at > 1600000000); /* after Sep 2020 */
	assert_non_null(o->source);
	assert_true(strlen(o->source) > 20);
	if (!(o->price_per_hour > 0 && o->price_per_hour < 1000))
		fail_msg("%s %s %s %s: price %g out of range", s->cloud,
		         o->instance_type, o->region, o->zone,
		         o->price_per_hour);

	r = gb_region_find(s->cloud, o->region);
	if (!r)
		fail_msg("%s region %s (used by %s) is not in the built-in "
		         "region table (core/model/regions_data.c)", s->cloud,
		         o->region, o->instance_type);
	if (*o->zone && strncmp(o->zone, o->region, strlen(o->region)) != 0)
		fail_msg("%s %s: zone %s does not belong to region %s",
		         s->cloud, o->instance_type, o->zone, o->region);

	add_unique(s->regions, &s->nregions, MAX_REGIONS, o->region);
	add_unique(s->types, &s->ntypes, MAX_TYPES,
	           o->instance_type);

	snprintf(key, sizeof(key), "%s|%s|%s", o->instance_type, o->region,
	         o->zone);
	if (o->capacity == GB_CAPACITY_ON_DEMAND) {
		snprintf(s->od_key, sizeof(s->od_key), "%s", key);
		s->od_price = o->price_per_hour;
	} else {
		assert_int_equal(o->capacity, GB_CAPACITY_SPOT);
		s->spot_offers++;
		/* Every file here prices on-demand wherever it prices spot. */
		if (strcmp(key, s->od_key) != 0)
			fail_msg("%s: spot offer %s has no on-demand twin",
			         s->cloud, key);
		/* A zone whose spot price is unknown or at the cap carries
		 * the on-demand price (see SOURCES.md): never above it. */
		if (o->price_per_hour > s->od_price + 1e-9)
			fail_msg("%s: spot %g above on-demand %g for %s",
			         s->cloud, o->price_per_hour, s->od_price, key);
	}
	return 0;
}

static void load(const char *cloud, seen *s)
{
	char path[4096];
	gb_error err;
	memset(s, 0, sizeof(*s));
	memset(&err, 0, sizeof(err));
	s->cloud = cloud;
	catalog_path(cloud, path, sizeof(path));
	if (drvc_catalog_emit(path, NULL, collect, s, &err) != 0)
		fail_msg("%s: %s", path, err.message);
	assert_true(s->offers > 0);
}

/* ------------------------------------------------------------ raw file */

/* Checks that drvc_catalog_emit does not look at: duplicate keys, strict
 * spot < on-demand at region level, zone lists, provenance of estimates.
 * Returns the number of offers the file should produce. */
static size_t check_raw(const char *cloud)
{
	char path[4096];
	json_error_t je;
	json_t *root, *types, *t;
	size_t i, expect = 0;

	catalog_path(cloud, path, sizeof(path));
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		fail_msg("%s:%d:%d: %s", path, je.line, je.column, je.text);
	assert_int_equal(json_integer_value(json_object_get(root, "format")),
	                 1);
	assert_string_equal(json_string_value(json_object_get(root, "cloud")),
	                    cloud);
	assert_string_equal(
		json_string_value(json_object_get(root, "currency")), "USD");
	types = json_object_get(root, "types");
	assert_true(json_array_size(types) > 0);
	json_array_foreach(types, i, t) {
		const char *tn = json_string_value(json_object_get(t, "type"));
		json_t *regions = json_object_get(t, "regions"), *rv;
		const char *rn;
		assert_non_null(tn);
		assert_true(json_object_size(regions) > 0);
		json_object_foreach(regions, rn, rv) {
			json_t *od = json_object_get(rv, "on_demand");
			json_t *sp = json_object_get(rv, "spot");
			json_t *zones = json_object_get(rv, "zones");
			json_t *sz = json_object_get(rv, "spot_zones");
			json_t *est = json_object_get(rv, "estimated");
			size_t nz = json_is_array(zones) ? json_array_size(zones)
			                                 : 0;
			double odv;
			assert_true(json_is_number(od));
			odv = json_number_value(od);
			assert_true(odv > 0);
			if (sp && !json_is_null(sp)) {
				assert_true(json_is_number(sp));
				if (!(json_number_value(sp) > 0 &&
				      json_number_value(sp) < odv))
					fail_msg("%s %s %s: spot %g is not below "
					         "on-demand %g", cloud, tn, rn,
					         json_number_value(sp), odv);
			}
			if (sz) {
				const char *zk;
				json_t *zv;
				assert_true(sp && json_is_number(sp));
				json_object_foreach(sz, zk, zv) {
					int found = 0;
					size_t k;
					json_t *z;
					/* null: no spot market in that zone */
					if (!json_is_null(zv)) {
						assert_true(json_is_number(zv));
						assert_true(json_number_value(zv) > 0);
						if (!(json_number_value(zv) < odv))
							fail_msg("%s %s %s %s: zone spot "
							         "%g not below on-demand %g",
							         cloud, tn, rn, zk,
							         json_number_value(zv), odv);
					}
					json_array_foreach(zones, k, z)
						found |= strcmp(
							json_string_value(z),
							zk) == 0;
					if (!found)
						fail_msg("%s %s %s: spot_zones "
						         "names unknown zone %s",
						         cloud, tn, rn, zk);
				}
			}
			if (strcmp(cloud, "azure") != 0 && nz == 0)
				fail_msg("%s %s %s: no zones", cloud, tn, rn);
			if (json_object_get(rv, "zone_ids"))
				assert_int_equal(json_array_size(json_object_get(
				                         rv, "zone_ids")),
				                 nz);
			/* Derived prices must say how they were derived. */
			if (est) {
				const char *how = json_string_value(
					json_object_get(rv, "estimate"));
				assert_true(json_is_true(est));
				assert_non_null(how);
				assert_non_null(strstr(how, "estimated"));
			}
			expect += ((sp && json_is_number(sp)) ? 2 : 1) *
			          (nz ? nz : 1);
			/* zones whose spot price is null have no spot offer */
			if (sp && json_is_number(sp) && sz) {
				const char *zk;
				json_t *zv;
				json_object_foreach(sz, zk, zv)
					if (json_is_null(zv))
						expect--;
			}
		}
	}
	json_decref(root);
	return expect;
}

/* ------------------------------------------------------------ checks */

static void check_geography(const seen *s)
{
	int eu = 0, us = 0, apac = 0;
	for (size_t i = 0; i < s->nregions; i++) {
		const gb_region_info *r = gb_region_find(s->cloud,
		                                         s->regions[i]);
		assert_non_null(r);
		eu |= strcmp(r->jurisdiction, "EU") == 0;
		us |= strcmp(r->jurisdiction, "US") == 0;
		apac |= in_list(APAC, r->jurisdiction);
	}
	if (s->nregions < 8)
		fail_msg("%s: %zu regions, want at least 8", s->cloud,
		         s->nregions);
	if (!eu || !us || !apac)
		fail_msg("%s: regions must span the EU (%d), the US (%d) and "
		         "Asia-Pacific (%d)", s->cloud, eu, us, apac);
}

static int has_type(const seen *s, const char *prefix, const char *infix)
{
	for (size_t i = 0; i < s->ntypes; i++)
		if (strncmp(s->types[i], prefix, strlen(prefix)) == 0 &&
		    (!infix || strstr(s->types[i], infix)))
			return 1;
	return 0;
}

static void want_type(const seen *s, const char *prefix, const char *infix)
{
	if (!has_type(s, prefix, infix))
		fail_msg("%s: no instance type starting with \"%s\"%s%s",
		         s->cloud, prefix, infix ? " containing " : "",
		         infix ? infix : "");
}

static void run_cloud(const char *cloud, seen *s)
{
	size_t expect = check_raw(cloud);
	load(cloud, s);
	assert_int_equal(s->offers, expect);
	assert_true(s->spot_offers > 0);
	check_geography(s);
}

static void test_aws(void **state)
{
	static seen s;
	(void)state;
	run_cloud("aws", &s);
	want_type(&s, "p5.", NULL);
	want_type(&s, "p4d.", NULL);
	want_type(&s, "p4de.", NULL);
	want_type(&s, "p3.", NULL);
	want_type(&s, "g6.", NULL);
	want_type(&s, "g6e.", NULL);
	want_type(&s, "g5.", NULL);
	want_type(&s, "g4dn.", NULL);
}

static void test_azure(void **state)
{
	static seen s;
	(void)state;
	run_cloud("azure", &s);
	want_type(&s, "Standard_ND96isr_H100_v5", NULL);
	if (!has_type(&s, "Standard_ND96asr_v4", NULL) &&
	    !has_type(&s, "Standard_ND96amsr_A100_v4", NULL))
		fail_msg("azure: no ND A100 v4 type");
	want_type(&s, "Standard_NC24ads_A100_v4", NULL);
	if (!has_type(&s, "Standard_NV36ads_A10_v5", NULL) &&
	    !has_type(&s, "Standard_NC", "ads_A10_v4"))
		fail_msg("azure: neither NVads A10 v5 nor NCads A10 v4");
	want_type(&s, "Standard_NC4as_T4_v3", NULL);
}

static void test_gcp(void **state)
{
	static seen s;
	(void)state;
	run_cloud("gcp", &s);
	want_type(&s, "a3-highgpu-8g", NULL);
	want_type(&s, "a2-highgpu-", NULL);
	want_type(&s, "a2-ultragpu-", NULL);
	want_type(&s, "g2-standard-", NULL);
	want_type(&s, "n1-", "/nvidia-tesla-t4:");
	want_type(&s, "n1-", "/nvidia-tesla-v100:");
}

/* The region filter of drvc_catalog_emit returns only that region. */
static void test_region_filter(void **state)
{
	seen s;
	char path[4096];
	gb_error err;
	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&err, 0, sizeof(err));
	s.cloud = "gcp";
	catalog_path("gcp", path, sizeof(path));
	assert_int_equal(drvc_catalog_emit(path, "europe-west4", collect, &s,
	                                   &err),
	                 0);
	assert_int_equal(s.nregions, 1);
	assert_string_equal(s.regions[0], "europe-west4");
}

/* Every row of the built-in table, whether a catalog uses it or not. */
static void test_region_table(void **state)
{
	(void)state;
	assert_true(gb_builtin_region_count >= 60);
	for (size_t i = 0; i < gb_builtin_region_count; i++) {
		const gb_region_info *r = &gb_builtin_regions[i];
		int eu, uk;
		assert_non_null(r->cloud);
		assert_non_null(r->name);
		assert_true(strcmp(r->cloud, "aws") == 0 ||
		            strcmp(r->cloud, "azure") == 0 ||
		            strcmp(r->cloud, "gcp") == 0);
		if (gb_region_find(r->cloud, r->name) != r)
			fail_msg("%s/%s: duplicate or shadowed row", r->cloud,
			         r->name);
		assert_true(r->display && *r->display);
		assert_true(r->country && strlen(r->country) == 2);
		assert_true(r->jurisdiction && *r->jurisdiction);
		if (!(r->lat >= -90 && r->lat <= 90 && r->lon >= -180 &&
		      r->lon <= 180) ||
		    (r->lat == 0 && r->lon == 0))
			fail_msg("%s/%s: lat/lon %g,%g", r->cloud, r->name,
			         r->lat, r->lon);
		if (!(r->carbon_g_per_kwh > 0 && r->carbon_g_per_kwh < 1200))
			fail_msg("%s/%s: carbon %g", r->cloud, r->name,
			         r->carbon_g_per_kwh);
		assert_true(r->carbon_source && strlen(r->carbon_source) > 10);
		eu = strcmp(r->jurisdiction, "EU") == 0;
		uk = strcmp(r->jurisdiction, "UK") == 0;
		if (eu != gb_region_has_tag(r, "gdpr"))
			fail_msg("%s/%s: gdpr tag must be set exactly for "
			         "EU/EEA regions", r->cloud, r->name);
		if (uk != gb_region_has_tag(r, "uk-gdpr"))
			fail_msg("%s/%s: uk-gdpr tag must be set exactly for "
			         "UK regions", r->cloud, r->name);
		if (uk)
			assert_string_equal(r->country, "GB");
		if (gb_region_has_tag(r, "fedramp") &&
		    strcmp(r->jurisdiction, "US") != 0)
			fail_msg("%s/%s: fedramp outside the US", r->cloud,
			         r->name);
		if (strcmp(r->jurisdiction, "US") == 0)
			assert_string_equal(r->country, "US");
	}
	/* Spot checks against well-known facts. */
	assert_string_equal(gb_region_find("aws", "eu-west-2")->jurisdiction,
	                    "UK");
	assert_true(gb_region_has_tag(gb_region_find("aws", "us-east-1"),
	                              "fedramp"));
	assert_false(gb_region_has_tag(gb_region_find("gcp", "europe-west6"),
	                               "gdpr"));
	assert_string_equal(gb_region_find("azure", "westeurope")->country,
	                    "NL");
	assert_null(gb_region_find("aws", "westeurope"));
	assert_true(gb_distance_km(gb_region_find("aws", "eu-west-1")->lat,
	                           gb_region_find("aws", "eu-west-1")->lon,
	                           gb_region_find("azure", "northeurope")->lat,
	                           gb_region_find("azure", "northeurope")->lon) <
	            50);
}

/* ------------------------------------------------- dates of the prices */

#define MAX_DATES 32

typedef struct dates {
	char v[MAX_DATES][11]; /* YYYY-MM-DD, distinct */
	size_t n;
	int64_t newest;
} dates;

static int collect_date(void *ud, const gb_offer *o)
{
	dates *d = ud;
	time_t t = (time_t)o->fetched_at;
	struct tm tm;
	char day[11];
	size_t i;
	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	for (i = 0; i < d->n && strcmp(d->v[i], day) != 0; i++)
		;
	if (i == d->n) {
		assert_true(d->n < MAX_DATES);
		snprintf(d->v[d->n++], sizeof(d->v[0]), "%s", day);
	}
	if (o->fetched_at > d->newest)
		d->newest = o->fetched_at;
	return 0;
}

/* Each shipped catalog's prices are as new as its SOURCES.md says
 * ("Newest price: YYYY-MM-DD", the date of the newest price found when
 * the file was last updated), and every date a price carries is
 * documented there: a catalog updated without its SOURCES.md, or a
 * SOURCES.md that promises newer prices than the file holds, fails. */
static void test_price_dates_documented(void **state)
{
	static const char *const clouds[] = {"aws", "azure", "gcp", "lambda"};
	(void)state;
	for (size_t c = 0; c < sizeof(clouds) / sizeof(clouds[0]); c++) {
		char path[4096], *doc, *line, newest[11];
		dates d;
		gb_error err;
		struct tm tm;
		time_t t;
		size_t len;
		FILE *f;
		memset(&d, 0, sizeof(d));
		memset(&err, 0, sizeof(err));
		catalog_path(clouds[c], path, sizeof(path));
		if (drvc_catalog_emit(path, NULL, collect_date, &d, &err) != 0)
			fail_msg("%s: %s", path, err.message);
		snprintf(path, sizeof(path), "%s/drivers/%s/data/SOURCES.md",
		         src_dir(), clouds[c]);
		f = fopen(path, "r");
		if (!f)
			fail_msg("%s: cannot open", path);
		doc = calloc(1, 1 << 20);
		assert_non_null(doc);
		len = fread(doc, 1, (1 << 20) - 1, f);
		fclose(f);
		doc[len] = '\0';
		line = strstr(doc, "\nNewest price: ");
		if (!line)
			fail_msg("%s: no \"Newest price: YYYY-MM-DD\" line", path);
		t = (time_t)d.newest;
		gmtime_r(&t, &tm);
		strftime(newest, sizeof(newest), "%Y-%m-%d", &tm);
		if (strncmp(line + 15, newest, 10) != 0)
			fail_msg("%s says \"Newest price: %.10s\"; the newest "
			         "price in offers.json is of %s", path, line + 15,
			         newest);
		for (size_t i = 0; i < d.n; i++)
			if (!strstr(doc, d.v[i]))
				fail_msg("%s: prices dated %s in offers.json, a "
				         "date SOURCES.md never names", path,
				         d.v[i]);
		free(doc);
	}
}

/* A region entry's own provenance ("on_demand_source",
 * "on_demand_fetched_at", "spot_..."), else the file's. */
typedef struct prov {
	char od_src[64], spot_src[64];
	int64_t od_at, spot_at;
	size_t n;
} prov;

static int collect_prov(void *ud, const gb_offer *o)
{
	prov *p = ud;
	p->n++;
	if (o->capacity == GB_CAPACITY_SPOT) {
		snprintf(p->spot_src, sizeof(p->spot_src), "%s", o->source);
		p->spot_at = o->fetched_at;
	} else {
		snprintf(p->od_src, sizeof(p->od_src), "%s", o->source);
		p->od_at = o->fetched_at;
	}
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_entry_provenance(void **state)
{
	char path[] = "/tmp/gbcatXXXXXX";
	int fd = mkstemp(path);
	prov p;
	gb_error err;
	(void)state;
	assert_true(fd >= 0);
	close(fd);
#define HEAD "{\"source\": \"file source\", \"fetched_at\": \"2024-12-01\", " \
	     "\"types\": [{\"type\": \"t\", \"gpu\": \"H100\", \"gpus\": 8, "  \
	     "\"gpu_memory_gb\": 80, \"vcpus\": 8, \"ram_gb\": 64, "          \
	     "\"regions\": {\"r1\": "
	write_file(path, HEAD "{\"on_demand\": 55.04, \"spot\": 20, "
	           "\"on_demand_source\": \"newer\", "
	           "\"on_demand_fetched_at\": \"2026-11-09\"}}}]}");
	memset(&p, 0, sizeof(p));
	memset(&err, 0, sizeof(err));
	assert_int_equal(drvc_catalog_emit(path, NULL, collect_prov, &p, &err),
	                 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.od_src, "newer");
	assert_int_equal(p.od_at, 1794182400);  /* 2026-11-09 */
	assert_string_equal(p.spot_src, "file source");
	assert_int_equal(p.spot_at, 1733011200); /* 2024-12-01 */
	write_file(path, HEAD "{\"on_demand\": 55.04, \"spot\": 20, "
	           "\"spot_source\": \"live\", "
	           "\"spot_fetched_at\": \"2026-11-20\"}}}]}");
	memset(&p, 0, sizeof(p));
	assert_int_equal(drvc_catalog_emit(path, NULL, collect_prov, &p, &err),
	                 0);
	assert_string_equal(p.od_src, "file source");
	assert_string_equal(p.spot_src, "live");
	assert_int_equal(p.spot_at, 1795132800); /* 2026-11-20 */
	/* a malformed date is an error naming the file, type and region */
	write_file(path, HEAD "{\"on_demand\": 55.04, "
	           "\"on_demand_fetched_at\": \"last June\"}}}]}");
	memset(&err, 0, sizeof(err));
	assert_int_equal(drvc_catalog_emit(path, NULL, collect_prov, &p, &err),
	                 -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_non_null(strstr(err.message, path));
	assert_non_null(strstr(err.message, "t r1"));
	assert_non_null(strstr(err.message, "on_demand_fetched_at"));
#undef HEAD
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region_table),
		cmocka_unit_test(test_aws),
		cmocka_unit_test(test_azure),
		cmocka_unit_test(test_gcp),
		cmocka_unit_test(test_region_filter),
		cmocka_unit_test(test_price_dates_documented),
		cmocka_unit_test(test_entry_provenance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
