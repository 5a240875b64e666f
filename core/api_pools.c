/* api_pools.c -- /v1/pools endpoints and heartbeats. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "log.h"

/* A pool without its instances, for lists. */
static json_t *summary(json_t *p)
{
	json_t *s = json_deep_copy(p);
	json_object_del(s, "instances");
	return s;
}

void gb_api_pools_list(gb_api_req *r)
{
	json_t *all = gb_engine_pools_json(r->d->eng, NULL), *out = json_array();
	const char *team = gb_api_query(r, "team");
	const char *after = gb_api_query(r, "after");
	const char *lim = gb_api_query(r, "limit");
	int64_t limit = 100;
	size_t i, taken = 0;
	json_t *p;
	const char *next = NULL;
	if (lim && (gb_parse_int64(lim, &limit) != 0 || limit < 1 || limit > 1000)) {
		json_decref(all);
		json_decref(out);
		gb_api_error(r, 400, "BadQuery", "limit must be 1..1000");
		return;
	}
	json_array_foreach(all, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *t = json_string_value(json_object_get(p, "team"));
		if (!gb_api_sees_team(r, t) || (team && strcmp(team, t) != 0))
			continue;
		if (after && strcmp(name, after) <= 0)
			continue;
		if ((int64_t)taken == limit) {
			next = json_string_value(json_object_get(json_array_get(out, taken - 1), "name"));
			break;
		}
		json_array_append_new(out, summary(p));
		taken++;
	}
	r->resp = json_pack("{s:o, s:s?}", "pools", out, "next_after", next);
	r->status = 200;
	json_decref(all);
}

void gb_api_pool_get(gb_api_req *r, const char *name)
{
	if (!gb_api_pool_visible(r, name))
		return;
	r->resp = gb_engine_pool_json(r->d->eng, name);
	r->status = r->resp ? 200 : 404;
}

void gb_api_pool_instances(gb_api_req *r, const char *name)
{
	json_t *p;
	if (!gb_api_pool_visible(r, name))
		return;
	p = gb_engine_pool_json(r->d->eng, name);
	r->resp = json_pack("{s:O}", "instances", json_object_get(p, "instances"));
	json_decref(p);
	r->status = 200;
}

/* The spec from a request body: either the spec document itself (as
 * `gpubroker apply` sends it) or {"pool": {...}} as in YAML files. */
static int body_spec(gb_api_req *r, const char *name, gb_spec_set *set)
{
	json_t *j = gb_api_body_json(r);
	gb_diags d = GB_DIAGS_INIT;
	gb_spec_opts so;
	char *text;
	json_t *wrapped;
	if (!j)
		return -1;
	wrapped = json_object_get(j, "pool") ? json_incref(j)
	                                     : json_pack("{s:O}", "pool", j);
	json_decref(j);
	text = json_dumps(wrapped, JSON_COMPACT);
	json_decref(wrapped);
	memset(&so, 0, sizeof(so));
	/* No ${VAR} expansion on the server: the client already expanded
	 * its own environment, and the daemon's must not leak in. */
	so.getenv_fn = NULL;
	if (gb_spec_load_json("request", text, strlen(text), &so, set, &d) != 0) {
		json_t *details = json_array();
		char *all = gb_diags_str(&d);
		for (size_t i = 0; i < d.n; i++)
			json_array_append_new(details,
			                      json_sprintf("%s: %s", d.v[i].path,
			                                   d.v[i].msg));
		gb_api_error(r, 400, "InvalidSpec",
		             "the pool spec is invalid (%zu problems)", d.n);
		json_object_set_new(json_object_get(r->resp, "error"), "details",
		                    details);
		snprintf(r->detail, sizeof(r->detail), "%s", all);
		free(all);
		gb_diags_free(&d);
		free(text);
		return -1;
	}
	gb_diags_free(&d);
	free(text);
	if (set->n != 1 || (name && strcmp(set->pools[0].name, name) != 0)) {
		gb_api_error(r, 400, "NameMismatch",
		             "the URL names pool %s but the spec names %s", name,
		             set->n ? set->pools[0].name : "nothing");
		gb_spec_set_free(set);
		return -1;
	}
	return 0;
}

void gb_api_pool_put(gb_api_req *r, const char *name)
{
	gb_spec_set set;
	gb_engine_result res;
	gb_pool_row row;
	if (body_spec(r, name, &set) != 0)
		return;
	if (!gb_api_sees_team(r, set.pools[0].team)) {
		gb_api_error(r, 403, "Forbidden",
		             "token '%s' is for team %s and cannot create pools "
		             "for team %s", r->actor, r->team, set.pools[0].team);
		gb_spec_set_free(&set);
		return;
	}
	/* an operator must not overwrite another team's pool of that name */
	if (gb_store_pool_get(r->d->store, name, &row) == 0) {
		int other = !gb_api_sees_team(r, row.team) &&
		            strcmp(row.state, "destroyed") != 0;
		gb_pool_row_free(&row);
		if (other) {
			gb_api_error(r, 409, "NameTaken",
			             "a pool named %s exists for another team; pick "
			             "another name", name);
			gb_spec_set_free(&set);
			return;
		}
	}
	if (gb_engine_submit(r->d->eng, &set.pools[0], &res) != 0) {
		gb_api_error(r, 422, "Refused", "%s", res.message);
		gb_engine_result_free(&res);
		gb_spec_set_free(&set);
		return;
	}
	gb_daemon_enqueue(r->d, GB_JOB_CONVERGE, name, NULL);
	r->resp = res.pool;
	res.pool = NULL;
	r->status = 202;
	snprintf(r->detail, sizeof(r->detail), "%d x %s", set.pools[0].count,
	         set.pools[0].gpu_models.n ? set.pools[0].gpu_models.v[0] : "?");
	gb_spec_set_free(&set);
}

void gb_api_pool_diff(gb_api_req *r, const char *name)
{
	gb_spec_set set;
	char err[1024];
	if (body_spec(r, name, &set) != 0)
		return;
	if (!gb_api_sees_team(r, set.pools[0].team)) {
		gb_api_error(r, 403, "Forbidden", "token '%s' is for team %s",
		             r->actor, r->team);
		gb_spec_set_free(&set);
		return;
	}
	r->resp = gb_engine_diff(r->d->eng, &set.pools[0], err, sizeof(err));
	if (!r->resp)
		gb_api_error(r, 422, "PlanFailed", "%s", err);
	else
		r->status = 200;
	gb_spec_set_free(&set);
}

void gb_api_pool_delete(gb_api_req *r, const char *name)
{
	if (!gb_api_pool_visible(r, name))
		return;
	gb_store_pool_set_state(r->d->store, name, "destroying", "user");
	gb_store_event(r->d->store, name, NULL, "destroying",
	               "destroy requested by %s", r->actor);
	gb_daemon_enqueue(r->d, GB_JOB_DESTROY, name, "user");
	r->resp = gb_engine_pool_json(r->d->eng, name);
	r->status = 202;
}

void gb_api_pool_scale(gb_api_req *r, const char *name)
{
	json_t *j;
	json_t *c;
	gb_engine_result res;
	if (!gb_api_pool_visible(r, name))
		return;
	if (!(j = gb_api_body_json(r)))
		return;
	c = json_object_get(j, "count");
	if (!json_is_integer(c)) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest",
		             "body must be {\"count\": N} with an integer N");
		return;
	}
	if (gb_engine_set_desired(r->d->eng, name, (int)json_integer_value(c),
	                          &res) != 0) {
		gb_api_error(r, 422, "Refused", "%s", res.message);
	} else {
		gb_daemon_enqueue(r->d, GB_JOB_CONVERGE, name, NULL);
		r->resp = res.pool;
		res.pool = NULL;
		r->status = 202;
		snprintf(r->detail, sizeof(r->detail), "count %lld",
		         (long long)json_integer_value(c));
	}
	gb_engine_result_free(&res);
	json_decref(j);
}

/* POST /v1/instances/{id}/heartbeat {"gpu_util": 0.0..1.0}: the
 * workload says it is alive and how busy its GPUs are.  Utilisation
 * above 5% counts as GPU use for idle_timeout. */
void gb_api_heartbeat(gb_api_req *r, const char *id)
{
	json_t *j, *u;
	gb_inst_row inst;
	double util;
	int64_t now = gb_now_ms() / 1000;
	if (!(j = gb_api_body_json(r)))
		return;
	u = json_object_get(j, "gpu_util");
	if (!json_is_number(u) || json_number_value(u) < 0 ||
	    json_number_value(u) > 1) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest",
		             "body must be {\"gpu_util\": U} with U between 0 and "
		             "1 (the busiest GPU's utilisation)");
		return;
	}
	util = json_number_value(u);
	json_decref(j);
	if (gb_store_inst_lookup(r->d->store, id, &inst) != 0) {
		gb_api_error(r, 404, "NotFound", "no live instance %s", id);
		return;
	}
	if (!gb_api_pool_visible(r, inst.pool)) {
		gb_api_error(r, 404, "NotFound", "no live instance %s", id);
		gb_inst_row_free(&inst);
		return;
	}
	gb_store_inst_heartbeat(r->d->store, inst.id, now, util);
	gb_store_pool_heartbeat(r->d->store, inst.pool, now, util > 0.05);
	r->resp = json_pack("{s:s, s:s, s:f}", "instance", id, "pool",
	                    inst.pool, "gpu_util", util);
	r->status = 200;
	gb_inst_row_free(&inst);
}
