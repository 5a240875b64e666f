/* engine_destroy.c -- journaled termination and pool destruction that is
 * only finished when the cloud confirms. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "workers.h"

typedef struct tgroup {
	gb_engine *e;
	gb_drv *drv;
	const char *cloud, *region;
	gb_inst_row **rows;
	size_t n;
	gb_instance_ref *refs;
	int64_t intent_id;
	const char *reason;
	int batch;         /* one terminate() call for all refs */
	size_t call0;      /* index of the group's first call */
} tgroup;

/* One terminate() call: every ref of a group for drivers with
 * GB_DRV_CAP_BATCH_TERMINATE, else one ref.  call_ms is when it returned:
 * the cloud had accepted the request by then (billing stops when the
 * request is processed, which is after it left and before the answer
 * came back; the answer's way back is the smaller part of a call). */
typedef struct tcall {
	tgroup *g;
	size_t first, n;  /* refs[first .. first + n) of g */
	int64_t call_ms;
	gb_error err;
	int rc;
} tcall;

static void run_tcall(void *ud, size_t i)
{
	tcall *c = &((tcall *)ud)[i];
	tgroup *g = c->g;
	memset(&c->err, 0, sizeof(c->err));
	if (!g->drv) {
		c->rc = -1;
		gb_error_set(&c->err, GB_ERR_INTERNAL, 0, "DriverNotReady",
		             "driver %s is not loaded", g->cloud);
		return;
	}
	c->rc = g->drv->d->terminate(g->drv->ctx, g->refs + c->first, c->n,
	                             &c->err);
	c->call_ms = gb_now_ms();
}

/* The call that carries ref i of group g. */
static tcall *call_of(tcall *calls, const tgroup *g, size_t i)
{
	return &calls[g->call0 + (g->batch ? 0 : i)];
}

/* The calls for groups (sets each group's batch and call0): a malloc'd
 * array of *nc calls, caller frees. */
static tcall *plan_calls(tgroup *groups, size_t ng, size_t *nc)
{
	tcall *c = NULL;
	size_t n = 0;
	for (size_t k = 0; k < ng; k++) {
		tgroup *g = &groups[k];
		size_t calls;
		g->batch = g->drv && g->drv->d &&
		           (g->drv->d->caps & GB_DRV_CAP_BATCH_TERMINATE);
		g->call0 = n;
		calls = g->batch ? 1 : g->n;
		c = gb_xrealloc(c, (n + calls) * sizeof(*c));
		for (size_t j = 0; j < calls; j++) {
			memset(&c[n + j], 0, sizeof(*c));
			c[n + j].g = g;
			c[n + j].first = g->batch ? 0 : j;
			c[n + j].n = g->batch ? g->n : 1;
		}
		n += calls;
	}
	*nc = n;
	return c;
}

int gb_engine__terminate_rows(gb_engine *e, gb_inst_row **rows, size_t n,
                              const char *reason)
{
	tgroup *groups = NULL;
	tcall *calls;
	size_t ng = 0, nc = 0;
	int64_t now = gb_now_ms();
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		tgroup *g = NULL;
		if (!rows[i]->provider_id)
			continue; /* never reached the cloud */
		for (size_t k = 0; k < ng && !g; k++)
			if (strcmp(groups[k].cloud, rows[i]->cloud) == 0 &&
			    strcmp(groups[k].region, rows[i]->region) == 0 &&
			    strcmp(groups[k].rows[0]->pool, rows[i]->pool) == 0)
				g = &groups[k];
		if (!g) {
			groups = gb_xrealloc(groups, (ng + 1) * sizeof(*groups));
			g = &groups[ng++];
			memset(g, 0, sizeof(*g));
			g->e = e;
			g->cloud = rows[i]->cloud;
			g->region = rows[i]->region;
			g->drv = gb_engine__drv(e, rows[i]->cloud);
			g->rows = gb_xcalloc(n, sizeof(*g->rows));
			g->refs = gb_xcalloc(n, sizeof(*g->refs));
			g->reason = reason;
		}
		g->refs[g->n].id = rows[i]->provider_id;
		g->refs[g->n].region = rows[i]->region;
		g->refs[g->n].zone = rows[i]->zone ? rows[i]->zone : "";
		g->rows[g->n++] = rows[i];
	}
	/* journal first: intent + rows marked terminating, one transaction */
	for (size_t k = 0; k < ng; k++) {
		tgroup *g = &groups[k];
		gb_intent_row in;
		json_t *ids = json_array();
		char *detail;
		for (size_t i = 0; i < g->n; i++)
			json_array_append_new(ids, json_string(g->refs[i].id));
		{
			json_t *d = json_pack("{s:o}", "ids", ids);
			detail = json_dumps(d, JSON_COMPACT);
			json_decref(d);
		}
		memset(&in, 0, sizeof(in));
		in.kind = (char *)"terminate";
		in.pool = g->rows[0]->pool;
		in.cloud = (char *)g->cloud;
		in.region = (char *)g->region;
		in.count = (int)g->n;
		in.token = (char *)"-";
		in.detail = detail;
		if (gb_store_begin(e->o.store) == 0) {
			int ok = gb_store_intent_open(e->o.store, &in) == 0;
			for (size_t i = 0; ok && i < g->n; i++)
				ok = gb_store_inst_set_state(e->o.store, g->rows[i]->id,
				                             "terminating", reason,
				                             now) == 0;
			if (ok)
				ok = gb_store_commit(e->o.store) == 0;
			else
				gb_store_rollback(e->o.store);
			g->intent_id = ok ? in.id : 0;
		}
		free(detail);
	}
	calls = plan_calls(groups, ng, &nc);
	gb_parallel_for(nc, e->workers, run_tcall, calls);
	for (size_t k = 0; k < ng; k++) {
		tgroup *g = &groups[k];
		size_t failed = 0;
		const gb_error *first_err = NULL;
		for (size_t i = 0; i < g->n; i++) {
			tcall *c = call_of(calls, g, i);
			if (c->rc != 0 && !failed++)
				first_err = &c->err;
		}
		if (g->intent_id) {
			char msg[sizeof(first_err->message) + 64];
			if (failed)
				snprintf(msg, sizeof(msg), "%s%s", first_err->message,
				         failed > 1 ? " (and more)" : "");
			gb_store_intent_close(e->o.store, g->intent_id,
			                      failed ? "failed" : "done",
			                      failed ? msg : NULL);
		}
		gb_engine__stat(e, &e->stats.terminates, g->n);
		for (size_t i = 0; i < g->n; i++) {
			tcall *c = call_of(calls, g, i);
			free(g->rows[i]->state);
			g->rows[i]->state = gb_xstrdup("terminating");
			/* billing ends when the cloud accepted the request */
			if (c->rc == 0) {
				gb_store_inst_term_accepted(e->o.store, g->rows[i]->id,
				                            c->call_ms);
				if (!g->rows[i]->terminate_requested_ms)
					g->rows[i]->terminate_requested_ms = c->call_ms;
				gb_engine__event(e, g->rows[i]->pool,
				                 g->rows[i]->provider_id, "terminating",
				                 "terminating %s (%s)", g->rows[i]->name,
				                 reason);
			} else {
				gb_engine__event(e, g->rows[i]->pool,
				                 g->rows[i]->provider_id, "error",
				                 "terminate %s failed (%s%s%s): %s; will "
				                 "retry", g->rows[i]->name,
				                 gb_err_class_name(c->err.cls),
				                 c->err.code[0] ? " " : "", c->err.code,
				                 c->err.message);
			}
		}
		if (failed)
			rc = -1;
		free(g->rows);
		free(g->refs);
	}
	free(calls);
	free(groups);
	return rc;
}

int gb_engine_destroy(gb_engine *e, const char *pool, const char *reason,
                      gb_engine_result *res)
{
	gb_pool_row row;
	int64_t deadline = gb_mono_ms() + e->confirm_timeout_s * 1000;
	int rc;

	memset(res, 0, sizeof(*res));
	gb_engine__lock_pool(e, pool);
	rc = gb_store_pool_get(e->o.store, pool, &row);
	if (rc != 0) {
		snprintf(res->message, sizeof(res->message),
		         rc == 1 ? "no pool named %s (see 'gpubroker status')" : "%s",
		         rc == 1 ? pool : gb_store_errmsg(e->o.store));
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	if (strcmp(row.state, "active") == 0) {
		gb_store_pool_set_state(e->o.store, pool, "destroying", reason);
		gb_engine__event(e, pool, NULL, "destroying", "destroying pool (%s)",
		                 reason);
	}
	for (;;) {
		gb_inst_row *rows = NULL, **todo;
		size_t n = 0, nt = 0;
		int64_t now = gb_now_ms();
		if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0) {
			snprintf(res->message, sizeof(res->message), "%s",
			         gb_store_errmsg(e->o.store));
			rc = -1;
			break;
		}
		if (n) {
			gb_engine__refresh_rows(e, pool, rows, n);
			gb_inst_list_free(rows, n);
			gb_store_inst_list(e->o.store, pool, 1, &rows, &n);
		}
		if (n == 0) {
			free(rows);
			gb_store_pool_set_state(e->o.store, pool, "destroyed", reason);
			gb_engine__event(e, pool, NULL, "destroyed",
			                 "pool destroyed; every instance confirmed "
			                 "terminated by its cloud");
			res->ok = 1;
			rc = 0;
			break;
		}
		todo = gb_xcalloc(n, sizeof(*todo));
		for (size_t i = 0; i < n; i++)
			if (strcmp(rows[i].state, "terminating") != 0 ||
			    !rows[i].terminate_requested_ms ||
			    rows[i].terminate_requested_ms < now - 60000)
				todo[nt++] = &rows[i];
		if (nt) {
			gb_engine__terminate_rows(e, todo, nt, reason);
			res->destroyed += (int)nt;
		}
		free(todo);
		gb_inst_list_free(rows, n);
		if (gb_mono_ms() > deadline || (e->o.stop && *e->o.stop)) {
			snprintf(res->message, sizeof(res->message),
			         "pool %s: termination requested, but %zu instances "
			         "are not yet confirmed terminated by their cloud; "
			         "they stay in state 'terminating' (and in 'cost') "
			         "until confirmed. Run 'gpubroker destroy %s' again "
			         "or let the daemon finish.", pool, n, pool);
			rc = -1;
			break;
		}
		gb_sleep_ms(e->poll_ms);
	}
	gb_pool_row_free(&row);
	gb_engine__unlock_pool(e, pool);
	res->pool = gb_engine_pool_json(e, pool);
	return rc;
}

int gb_engine_destroy_step(gb_engine *e, const char *pool, const char *reason,
                           gb_engine_result *res)
{
	gb_pool_row row;
	gb_inst_row *rows = NULL, **todo;
	size_t n = 0, nt = 0;
	int64_t now = gb_now_ms();
	int rc;

	memset(res, 0, sizeof(*res));
	gb_engine__lock_pool(e, pool);
	rc = gb_store_pool_get(e->o.store, pool, &row);
	if (rc != 0) {
		snprintf(res->message, sizeof(res->message),
		         rc == 1 ? "no pool named %s" : "%s",
		         rc == 1 ? pool : gb_store_errmsg(e->o.store));
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	if (strcmp(row.state, "destroyed") == 0) {
		gb_pool_row_free(&row);
		gb_engine__unlock_pool(e, pool);
		res->ok = 1;
		return 1;
	}
	if (strcmp(row.state, "active") == 0) {
		gb_store_pool_set_state(e->o.store, pool, "destroying", reason);
		gb_engine__event(e, pool, NULL, "destroying", "destroying pool (%s)",
		                 reason);
	}
	gb_pool_row_free(&row);
	if (gb_store_inst_list(e->o.store, pool, 1, &rows, &n) != 0) {
		snprintf(res->message, sizeof(res->message), "%s",
		         gb_store_errmsg(e->o.store));
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	if (n) {
		gb_engine__refresh_rows(e, pool, rows, n);
		gb_inst_list_free(rows, n);
		gb_store_inst_list(e->o.store, pool, 1, &rows, &n);
	}
	if (n == 0) {
		free(rows);
		gb_store_pool_set_state(e->o.store, pool, "destroyed", reason);
		gb_engine__event(e, pool, NULL, "destroyed",
		                 "pool destroyed; every instance confirmed "
		                 "terminated by its cloud");
		gb_engine__unlock_pool(e, pool);
		res->ok = 1;
		return 1;
	}
	todo = gb_xcalloc(n, sizeof(*todo));
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].state, "terminating") != 0 ||
		    !rows[i].terminate_requested_ms ||
		    rows[i].terminate_requested_ms < now - 60000)
			todo[nt++] = &rows[i];
	if (nt) {
		gb_engine__terminate_rows(e, todo, nt, reason);
		res->destroyed += (int)nt;
	}
	free(todo);
	gb_inst_list_free(rows, n);
	gb_engine__unlock_pool(e, pool);
	return 0;
}
