/* api_targets.c -- GET /v1/pools/NAME/targets: the pool's running
 * instances as a Prometheus HTTP service-discovery list, which load
 * balancers read as well:
 *   [{"targets": ["10.0.0.5:8000"], "labels": {"pool": ..., "team": ...,
 *     "name": ..., "cloud": ..., "region": ..., "zone": ...,
 *     "capacity": ...}}, ...]
 * one group per instance, ordered by name; the address is the private
 * one (else the public one; ?address=public picks the public one), with
 * the spec's serve.port.  The answer's ETag is a hash of the list:
 * ?wait=SECONDS (<= 60) with ?version=ETAG waits until the list differs
 * from that one (a long poll, parked on the pool's events) or the time
 * is up, then answers the list as it is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* The list now (new reference), NULL when the pool is gone; *webhook
 * (when asked) the spec's serve.webhook, caller frees. */
static json_t *targets(gb_daemon *d, const char *name, int public_first,
                       char **webhook)
{
	json_t *p = gb_engine_pool_json(d->eng, name), *out, *inst;
	gb_pool_row row;
	gb_spec_set set;
	int port = 0;
	size_t i;
	if (webhook)
		*webhook = NULL;
	if (!p)
		return NULL;
	if (gb_store_pool_get(d->store, name, &row) == 0) {
		gb_diags dg = GB_DIAGS_INIT;
		memset(&set, 0, sizeof(set));
		if (row.spec_json &&
		    gb_spec_load_json("stored", row.spec_json,
		                      strlen(row.spec_json), NULL, &set, &dg) == 0 &&
		    set.n) {
			port = set.pools[0].serve_port;
			if (webhook)
				*webhook = gb_xstrdup(set.pools[0].serve_webhook);
		}
		gb_spec_set_free(&set);
		gb_diags_free(&dg);
		gb_pool_row_free(&row);
	}
	out = json_array();
	json_array_foreach(json_object_get(p, "instances"), i, inst) {
		const char *priv = json_string_value(json_object_get(inst,
		                                                     "private_ip"));
		const char *pub = json_string_value(json_object_get(inst,
		                                                    "public_ip"));
		const char *ip = public_first ? (pub && *pub ? pub : priv)
		                              : (priv && *priv ? priv : pub);
		const char *st = json_string_value(json_object_get(inst, "state"));
		char addr[96];
		json_t *labels;
		if (!st || strcmp(st, "running") != 0 || !ip || !*ip)
			continue;
		if (port)
			snprintf(addr, sizeof(addr), strchr(ip, ':') ? "[%s]:%d"
			                                             : "%s:%d",
			         ip, port);
		else
			snprintf(addr, sizeof(addr), "%s", ip);
		labels = json_object();
		json_object_set(labels, "pool", json_object_get(p, "name"));
		json_object_set(labels, "team", json_object_get(p, "team"));
		for (const char *const *k = (const char *const[]){
		             "name", "cloud", "region", "zone", "capacity", NULL};
		     *k; k++) {
			json_t *v = json_object_get(inst, *k);
			if (json_is_string(v) && *json_string_value(v))
				json_object_set(labels, *k, v);
		}
		json_array_append_new(out, json_pack("{s:[s], s:o}", "targets",
		                                     addr, "labels", labels));
	}
	json_decref(p);
	return out;
}

/* FNV-1a of the list's text, as the ETag's 16 hex digits (quoted). */
static void version_of(const char *text, char *out, size_t cap)
{
	uint64_t h = 1469598103934665603ULL;
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		h ^= *c;
		h *= 1099511628211ULL;
	}
	snprintf(out, cap, "\"%016llx\"", (unsigned long long)h);
}

json_t *gb_daemon_pool_targets(gb_daemon *d, const char *pool,
                               int public_first, char *version, size_t cap,
                               char **webhook)
{
	json_t *list = targets(d, pool, public_first, webhook);
	char *text;
	if (!list)
		return NULL;
	text = json_dumps(list, JSON_COMPACT);
	version_of(text ? text : "", version, cap);
	free(text);
	return list;
}

static void targets_again(gb_api_req *r);

static void answer(gb_api_req *r, const char *name)
{
	const char *addr = gb_api_query(r, "address");
	const char *known = gb_api_query(r, "version");
	char *text;
	json_t *list;
	int pub = addr && strcmp(addr, "public") == 0;
	if (!r->ev_started) {
		const char *wait_s = gb_api_query(r, "wait");
		int64_t wait = 0;
		if ((wait_s && (gb_parse_int64(wait_s, &wait) != 0 || wait < 0 ||
		                wait > 60)) ||
		    (addr && strcmp(addr, "public") && strcmp(addr, "private"))) {
			gb_api_error(r, 400, "BadQuery", "wait is 0..60 (seconds), "
			             "address is private or public");
			return;
		}
		r->ev_started = 1;
		r->park_until_ms = gb_mono_ms() + wait * 1000;
	}
	if (!gb_api_pool_visible(r, name))
		return;
	list = targets(r->d, name, pub, NULL);
	if (!list) {
		gb_api_error(r, 404, "NotFound", "no pool named %s", name);
		return;
	}
	text = json_dumps(list, JSON_COMPACT);
	version_of(text ? text : "", r->etag, sizeof(r->etag));
	if (known && strcmp(known, r->etag) != 0 &&
	    !(known[0] != '"' && strncmp(known, r->etag + 1, 16) == 0))
		known = NULL; /* it differs: answer now */
	if (!known || gb_mono_ms() >= r->park_until_ms ||
	    gb_daemon_stopping(r->d)) {
		r->text = text;
		r->content_type = "application/json";
		r->status = 200;
		json_decref(list);
		return;
	}
	free(text);
	json_decref(list);
	r->etag[0] = '\0';
	gb_api_park(r, targets_again, name, r->park_until_ms);
}

static void targets_again(gb_api_req *r)
{
	char name[256];
	snprintf(name, sizeof(name), "%s", r->park_pool ? r->park_pool : "");
	answer(r, name);
}

void gb_api_pool_targets(gb_api_req *r, const char *name)
{
	answer(r, name);
}
