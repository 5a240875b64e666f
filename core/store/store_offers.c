/* store_offers.c -- refreshed prices and failover cooldowns. */
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

void gb_offer_list_free(gb_offer_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].cloud);
		free(v[i].region);
		free(v[i].zone);
		free(v[i].instance_type);
		free(v[i].capacity);
		free(v[i].gpu_model);
		free(v[i].source);
	}
	free(v);
}

static void offers_free(void *v, size_t n)
{
	gb_offer_list_free(v, n);
}

static void read_offer(gb_sql *st, void *row)
{
	gb_offer_row *o = row;
	o->cloud = gb_sql_strdup(st, 0);
	o->region = gb_sql_strdup(st, 1);
	o->zone = gb_sql_strdup(st, 2);
	o->instance_type = gb_sql_strdup(st, 3);
	o->capacity = gb_sql_strdup(st, 4);
	o->gpu_model = gb_sql_strdup(st, 5);
	o->gpu_count = (int)gb_sql_int(st, 6);
	o->gpu_memory_gb = (int)gb_sql_int(st, 7);
	o->vcpus = (int)gb_sql_int(st, 8);
	o->ram_gb = gb_sql_double(st, 9);
	o->price = gb_sql_double(st, 10);
	o->source = gb_sql_strdup(st, 11);
	o->fetched_at = gb_sql_int(st, 12);
}

static const gb_store__rows offer_rows = {
	sizeof(gb_offer_row), read_offer, offers_free, "list offers"
};

int gb_store_offers_replace(gb_store *s, const char *cloud,
                            const char *region, const gb_offer_row *v,
                            size_t n)
{
	static const char del[] =
		"DELETE FROM offers WHERE cloud = ?1 AND (CAST(?2 AS TEXT) IS NULL OR region = ?2)";
	static const char ins[] =
		"INSERT INTO offers (cloud, region, zone, instance_type,"
		" capacity, gpu_model, gpu_count, gpu_memory_gb, vcpus, ram_gb,"
		" price, source, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
		" ?9, ?10, ?11, ?12, ?13) ON CONFLICT (cloud, region, zone,"
		" instance_type, capacity) DO UPDATE SET gpu_model = ?6,"
		" gpu_count = ?7, gpu_memory_gb = ?8, vcpus = ?9, ram_gb = ?10,"
		" price = ?11, source = ?12, fetched_at = ?13";
	static const char bump[] =
		"INSERT INTO meta(key, value) VALUES ('offers_version', ?1)"
		" ON CONFLICT (key) DO UPDATE SET value = ?1";
	gb_sql *st;
	if (gb_store_begin(s) != 0)
		return -1;
	if (!(st = gb_store__stmt(s, del)))
		goto fail;
	gb_sql_bind_text(st, 1, cloud);
	gb_sql_bind_text(st, 2, region);
	if (gb_store__exec_stmt(s, st, "clear offers") != 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (!(st = gb_store__stmt(s, ins)))
			goto fail;
		gb_sql_bind_text(st, 1, v[i].cloud);
		gb_sql_bind_text(st, 2, v[i].region);
		gb_sql_bind_text(st, 3, v[i].zone ? v[i].zone : "");
		gb_sql_bind_text(st, 4, v[i].instance_type);
		gb_sql_bind_text(st, 5, v[i].capacity);
		gb_sql_bind_text(st, 6, v[i].gpu_model);
		gb_sql_bind_int(st, 7, v[i].gpu_count);
		gb_sql_bind_int(st, 8, v[i].gpu_memory_gb);
		gb_sql_bind_int(st, 9, v[i].vcpus);
		gb_sql_bind_double(st, 10, v[i].ram_gb);
		gb_sql_bind_double(st, 11, v[i].price);
		gb_sql_bind_text(st, 12, v[i].source);
		gb_sql_bind_int(st, 13, v[i].fetched_at);
		if (gb_store__exec_stmt(s, st, "store offer") != 0)
			goto fail;
	}
	/* every process planning from this store reloads (daemon.c) */
	if (!(st = gb_store__stmt(s, bump)))
		goto fail;
	gb_sql_bind_int(st, 1, gb_now_ms());
	if (gb_store__exec_stmt(s, st, "record the offers' version") != 0)
		goto fail;
	return gb_store_commit(s);
fail:
	gb_store_rollback(s);
	return -1;
}

int gb_store_offers_list(gb_store *s, gb_offer_row **out, size_t *n)
{
	static const char sql[] =
		"SELECT cloud, region, zone, instance_type, capacity, gpu_model,"
		" gpu_count, gpu_memory_gb, vcpus, ram_gb, price, source, fetched_at"
		" FROM offers ORDER BY cloud, region, zone, instance_type, capacity";
	void *v;
	int rc = gb_store__list(s, sql, NULL, 0, &offer_rows, &v, n);
	*out = v;
	return rc;
}

int gb_store_unavailable_mark(gb_store *s, const char *cloud,
                              const char *region, const char *zone,
                              const char *instance_type, const char *capacity,
                              int64_t until_s, const char *reason)
{
	static const char sql[] =
		"INSERT INTO unavailable (cloud, region, zone,"
		" instance_type, capacity, until_s, reason) VALUES (?1, ?2, ?3, ?4,"
		" ?5, ?6, ?7) ON CONFLICT (cloud, region, zone, instance_type,"
		" capacity) DO UPDATE SET until_s = ?6, reason = ?7";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_sql_bind_text(st, 1, cloud);
	gb_sql_bind_text(st, 2, region);
	gb_sql_bind_text(st, 3, zone ? zone : "");
	gb_sql_bind_text(st, 4, instance_type);
	gb_sql_bind_text(st, 5, capacity);
	gb_sql_bind_int(st, 6, until_s);
	gb_sql_bind_text(st, 7, reason);
	rc = gb_store__exec_stmt(s, st, "mark unavailable");
	gb_store__unlock(s);
	return rc;
}

int gb_store_unavailable_check(gb_store *s, const char *cloud,
                               const char *region, const char *zone,
                               const char *instance_type, const char *capacity,
                               int64_t now_s, char *reason, size_t cap,
                               int64_t *until_s)
{
	/* A zone-less mark (zone '') covers every zone of the region. */
	static const char sql[] =
		"SELECT reason, until_s FROM unavailable WHERE cloud = ?1 AND"
		" region = ?2 AND (zone = ?3 OR zone = '') AND instance_type = ?4"
		" AND capacity = ?5 AND until_s > ?6 ORDER BY until_s DESC LIMIT 1";
	gb_sql *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return 0;
	}
	gb_sql_bind_text(st, 1, cloud);
	gb_sql_bind_text(st, 2, region);
	gb_sql_bind_text(st, 3, zone ? zone : "");
	gb_sql_bind_text(st, 4, instance_type);
	gb_sql_bind_text(st, 5, capacity);
	gb_sql_bind_int(st, 6, now_s);
	rc = gb_sql_step(st) == GB_SQL_ROW;
	if (rc) {
		if (reason)
			snprintf(reason, cap, "%s", gb_sql_text(st, 0) ? gb_sql_text(st, 0) : "");
		if (until_s)
			*until_s = gb_sql_int(st, 1);
	}
	gb_sql_reset(st);
	gb_store__unlock(s);
	return rc;
}
