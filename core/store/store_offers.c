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

static void read_offer(sqlite3_stmt *st, void *row)
{
	gb_offer_row *o = row;
	o->cloud = gb_store__col_str(st, 0);
	o->region = gb_store__col_str(st, 1);
	o->zone = gb_store__col_str(st, 2);
	o->instance_type = gb_store__col_str(st, 3);
	o->capacity = gb_store__col_str(st, 4);
	o->gpu_model = gb_store__col_str(st, 5);
	o->gpu_count = sqlite3_column_int(st, 6);
	o->gpu_memory_gb = sqlite3_column_int(st, 7);
	o->vcpus = sqlite3_column_int(st, 8);
	o->ram_gb = sqlite3_column_double(st, 9);
	o->price = sqlite3_column_double(st, 10);
	o->source = gb_store__col_str(st, 11);
	o->fetched_at = sqlite3_column_int64(st, 12);
}

static const gb_store__rows offer_rows = {
	sizeof(gb_offer_row), read_offer, offers_free, "list offers"
};

int gb_store_offers_replace(gb_store *s, const char *cloud,
                            const char *region, const gb_offer_row *v,
                            size_t n)
{
	static const char del[] =
		"DELETE FROM offers WHERE cloud = ?1 AND (?2 IS NULL OR region = ?2)";
	static const char ins[] =
		"INSERT OR REPLACE INTO offers (cloud, region, zone, instance_type,"
		" capacity, gpu_model, gpu_count, gpu_memory_gb, vcpus, ram_gb,"
		" price, source, fetched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
		" ?9, ?10, ?11, ?12, ?13)";
	sqlite3_stmt *st;
	if (gb_store_begin(s) != 0)
		return -1;
	if (!(st = gb_store__stmt(s, del)))
		goto fail;
	gb_store__bind_str(st, 1, cloud);
	gb_store__bind_str(st, 2, region);
	if (gb_store__exec_stmt(s, st, "clear offers") != 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (!(st = gb_store__stmt(s, ins)))
			goto fail;
		gb_store__bind_str(st, 1, v[i].cloud);
		gb_store__bind_str(st, 2, v[i].region);
		gb_store__bind_str(st, 3, v[i].zone ? v[i].zone : "");
		gb_store__bind_str(st, 4, v[i].instance_type);
		gb_store__bind_str(st, 5, v[i].capacity);
		gb_store__bind_str(st, 6, v[i].gpu_model);
		sqlite3_bind_int(st, 7, v[i].gpu_count);
		sqlite3_bind_int(st, 8, v[i].gpu_memory_gb);
		sqlite3_bind_int(st, 9, v[i].vcpus);
		sqlite3_bind_double(st, 10, v[i].ram_gb);
		sqlite3_bind_double(st, 11, v[i].price);
		gb_store__bind_str(st, 12, v[i].source);
		sqlite3_bind_int64(st, 13, v[i].fetched_at);
		if (gb_store__exec_stmt(s, st, "store offer") != 0)
			goto fail;
	}
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
		"INSERT OR REPLACE INTO unavailable (cloud, region, zone,"
		" instance_type, capacity, until_s, reason) VALUES (?1, ?2, ?3, ?4,"
		" ?5, ?6, ?7)";
	sqlite3_stmt *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return -1;
	}
	gb_store__bind_str(st, 1, cloud);
	gb_store__bind_str(st, 2, region);
	gb_store__bind_str(st, 3, zone ? zone : "");
	gb_store__bind_str(st, 4, instance_type);
	gb_store__bind_str(st, 5, capacity);
	sqlite3_bind_int64(st, 6, until_s);
	gb_store__bind_str(st, 7, reason);
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
	sqlite3_stmt *st;
	int rc;
	gb_store__lock(s);
	if (!(st = gb_store__stmt(s, sql))) {
		gb_store__unlock(s);
		return 0;
	}
	gb_store__bind_str(st, 1, cloud);
	gb_store__bind_str(st, 2, region);
	gb_store__bind_str(st, 3, zone ? zone : "");
	gb_store__bind_str(st, 4, instance_type);
	gb_store__bind_str(st, 5, capacity);
	sqlite3_bind_int64(st, 6, now_s);
	rc = sqlite3_step(st) == SQLITE_ROW;
	if (rc) {
		if (reason)
			snprintf(reason, cap, "%s", sqlite3_column_text(st, 0));
		if (until_s)
			*until_s = sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	gb_store__unlock(s);
	return rc;
}
