/* local_backend.c -- the pool commands on local state: the engine, through
 * the app layer's session (backend.h). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "events_output.h"
#include "progress.h"
#include "cli_app.h"
#include "events_json.h"

typedef struct local_backend {
	gb_backend b;
	gb_session s;        /* unless store-only */
	gb_store *store;     /* store-only: events */
	gb_progress prog;
	int progress;        /* prog is the engine's progress sink */
} local_backend;

static local_backend *lb(gb_backend *b)
{
	return (local_backend *)(void *)b;
}

/* Clears the live progress line before anything else is printed. */
static void progress_done(local_backend *l)
{
	if (l->progress)
		gb_progress_done(&l->prog);
}

/* The end of an engine operation: clears the progress line, says why
 * it failed, hands the pool over; 0 or -1. */
static int finish(local_backend *l, int rc, gb_engine_result *res,
                  json_t **out)
{
	progress_done(l);
	if (rc != 0)
		gb_cli_err(l->b.cli, "%s", res->message);
	*out = res->pool;
	res->pool = NULL;
	gb_engine_result_free(res);
	return rc ? -1 : 0;
}

static json_t *local_plan_diff(gb_backend *b, const gb_pool_spec *spec,
                               const gb_pool_spec *const *earlier,
                               size_t nearlier)
{
	char err[1024];
	gb_engine_batch bt = GB_ENGINE_BATCH_INIT;
	json_t *diff = NULL;
	for (size_t i = 0; i < nearlier; i++)
		if (gb_engine_batch_plan(lb(b)->s.eng, &bt, earlier[i], err,
		                         sizeof(err)) != 0) {
			gb_cli_err(b->cli, "pool %s: %s", earlier[i]->name, err);
			gb_engine_batch_free(&bt);
			return NULL;
		}
	diff = gb_engine_diff(lb(b)->s.eng, spec, &bt, err, sizeof(err));
	if (!diff)
		gb_cli_err(b->cli, "pool %s: %s", spec->name, err);
	gb_engine_batch_free(&bt);
	return diff;
}

static int local_apply(gb_backend *b, const gb_pool_spec *spec,
                       json_t **pool)
{
	local_backend *l = lb(b);
	gb_engine_result res;
	int rc = gb_engine_apply(l->s.eng, spec, &res);
	return finish(l, rc, &res, pool);
}

static int local_wait(gb_backend *b, const char *pool, int64_t timeout_s,
                      char *err, size_t cap, json_t **out)
{
	local_backend *l = lb(b);
	int w = gb_engine_wait(l->s.eng, pool, timeout_s, err, cap);
	progress_done(l);
	*out = gb_engine_pool_json(l->s.eng, pool);
	if (w == GB_ENGINE_WAIT_GONE)
		return GB_BACKEND_GONE; /* gb_pool_wait says so */
	if (w < 0)
		gb_cli_err(b->cli, "pool %s: %s", pool, err);
	return w;
}

static int local_destroy(gb_backend *b, const char *pool, int64_t timeout_s,
                         json_t **out)
{
	local_backend *l = lb(b);
	gb_engine_result res;
	int rc;
	if (timeout_s > 0) {
		/* the engine reads its options at creation */
		gb_engine_opts eo;
		memset(&eo, 0, sizeof(eo));
		eo.cfg = &b->cli->cfg;
		eo.store = l->s.store;
		eo.drivers = &l->s.rt.drivers;
		eo.cat = l->s.rt.cat;
		eo.progress = l->progress ? gb_progress_event : NULL;
		eo.progress_ud = l->progress ? &l->prog : NULL;
		eo.stop = b->stop;
		eo.confirm_timeout_s = timeout_s;
		gb_engine_free(l->s.eng);
		l->s.eng = gb_engine_new(&eo);
	}
	rc = gb_engine_destroy(l->s.eng, pool, "user", &res);
	if (rc != 0 && res.not_found) {
		if (!b->cli->quiet_not_found)
			gb_cli_err(b->cli, "%s", res.message);
		progress_done(l);
		gb_engine_result_free(&res);
		return 1;
	}
	return finish(l, rc, &res, out);
}

static int local_scale(gb_backend *b, const char *pool, int n, json_t **out)
{
	local_backend *l = lb(b);
	gb_engine_result res;
	int rc = gb_engine_scale(l->s.eng, pool, n, &res);
	return finish(l, rc, &res, out);
}

static int local_status(gb_backend *b, const char *pool, int all,
                        json_t **out)
{
	gb_engine *e = lb(b)->s.eng;
	const char *st;
	gb_pool_row row;
	int rc;
	/* a failed describe: the status shows the rows as last seen */
	GB_IGNORE(gb_engine_refresh(e, pool));
	*out = pool ? gb_engine_pool_json(e, pool)
	            : gb_engine_pools_json(e, NULL, all);
	st = pool ? json_string_value(json_object_get(*out, "state")) : NULL;
	if (st && !all && strcmp(st, "destroyed") == 0) {
		/* gone, as from the list; as the daemon answers */
		json_decref(*out);
		*out = NULL;
		gb_cli_err(b->cli, "no pool named %s (one was destroyed: "
		           "'gpubroker status --all %s' shows it)", pool, pool);
		return -1;
	}
	if (*out) {
		/* as the daemon answers (api_pools.c) */
		json_t *budgets = gb_engine_budgets(e, NULL);
		gb_engine_budget_attach(*out, budgets);
		json_decref(budgets);
		return 0;
	}
	/* no such pool, or a store that failed (not an empty answer) */
	rc = pool ? gb_store_pool_get(lb(b)->s.store, pool, &row) : -1;
	if (rc == 0)
		gb_pool_row_free(&row);
	if (rc == 1)
		gb_cli_err(b->cli, "no pool named %s", pool);
	else
		gb_cli_err(b->cli, "state store failed: %s",
		           gb_store_errmsg(lb(b)->s.store));
	return -1;
}

/* Nothing new while following: look again in half a second. */
static int local_events(gb_backend *b, const char *pool, int64_t *after,
                        int64_t since_ms, int wait, json_t **events)
{
	gb_store *st = lb(b)->store;
	gb_event_row *rows;
	size_t n;
	*events = NULL;
	if (gb_store_event_list(st, pool, *after, since_ms, 1000, &rows, &n)) {
		gb_cli_err(b->cli, "%s", gb_store_errmsg(st));
		return -1;
	}
	if (n)
		*after = rows[n - 1].id;
	*events = gb_events_json(rows, n);
	gb_event_list_free(rows, n);
	if (wait && !n)
		gb_sleep_ms(500);
	return 0;
}

static int local_cost(gb_backend *b, const char *by, int64_t since_s,
                      json_t **cost)
{
	gb_engine *e = lb(b)->s.eng;
	/* a failed describe: billed to the last time seen */
	GB_IGNORE(gb_engine_refresh(e, NULL));
	*cost = gb_engine_cost(e, by, since_s, NULL);
	if (!*cost) {
		gb_cli_err(b->cli, "state store failed: %s (no cost report)",
		           gb_store_errmsg(lb(b)->s.store));
		return -1;
	}
	{
		json_t *bud = gb_engine_budgets(e, NULL);
		if (!bud) {
			json_decref(*cost);
			*cost = NULL;
			gb_cli_err(b->cli, "state store failed: %s (no cost "
			           "report)", gb_store_errmsg(lb(b)->s.store));
			return -1;
		}
		json_object_set_new(*cost, "budgets", bud);
	}
	return 0;
}

static int local_usage(gb_backend *b, const char *by, const char *pool,
                       const char *team, int64_t since_s, int64_t until_s,
                       json_t **usage)
{
	local_backend *l = lb(b);
	gb_pool_row row;
	*usage = NULL;
	if (pool) { /* as the daemon answers: no such pool is an error */
		int rc = gb_store_pool_get(l->s.store, pool, &row);
		if (rc == 0)
			gb_pool_row_free(&row);
		else if (rc == 1) {
			gb_cli_err(b->cli, "no pool named %s (see gpubroker status)",
			           pool);
			return -1;
		}
	}
	*usage = gb_engine_usage(l->s.eng, by, pool, team, since_s * 1000,
	                         until_s ? until_s * 1000 : gb_now_ms());
	if (!*usage) {
		gb_cli_err(b->cli, "usage failed: cannot read the state store: %s",
		           gb_store_errmsg(l->s.store));
		return -1;
	}
	return 0;
}

static int local_gc(gb_backend *b, int adopt, json_t **orphans,
                    int *incomplete)
{
	local_backend *l = lb(b);
	int rc = gb_engine_gc(l->s.eng, adopt, orphans);
	*incomplete = rc == 1;
	if (rc < 0) {
		gb_cli_err(b->cli, "gc failed: cannot read the state store: %s",
		           gb_store_errmsg(l->s.store));
		return -1;
	}
	return 0;
}

static int local_queue(gb_backend *b, json_t **queue)
{
	*queue = gb_engine_admission(lb(b)->s.eng, gb_now_ms() / 1000, NULL,
	                             NULL, NULL);
	return 0;
}

static void local_close(gb_backend *b)
{
	local_backend *l = lb(b);
	if (l->store)
		gb_store_close(l->store);
	else
		gb_session_close(&l->s);
	free(l);
}

static int local_decision(gb_backend *b, const char *pool, json_t **out)
{
	local_backend *l = lb(b);
	gb_store *st = l->store ? l->store : l->s.store;
	*out = NULL;
	return st ? gb_store_decision_last(st, pool, out) : -1;
}

static const gb_backend_ops local_ops = {
	local_plan_diff, local_apply, local_wait, local_destroy, local_scale,
	local_status, local_events, local_cost, local_usage, local_gc,
	local_decision, local_queue, local_close,
};

int gb_local_backend_open(gb_cli *cli, unsigned needs, gb_backend **out)
{
	local_backend *l = gb_xcalloc(1, sizeof(*l));
	int rc;
	l->b.ops = &local_ops;
	l->b.cli = cli;
	if (needs & GB_BACKEND_STORE_ONLY) {
		char err[512];
		if (gb_cli_config(cli)) {
			free(l);
			return GB_EXIT_FAIL;
		}
		if (gb_store_open_cfg(&cli->cfg, &l->store, err,
		                  sizeof(err)) != 0) {
			gb_cli_err(cli, "%s", err);
			free(l);
			return GB_EXIT_FAIL;
		}
	}
	if (needs & GB_BACKEND_SIGNALS)
		gb_backend_catch_signals(&l->b);
	if (!(needs & GB_BACKEND_STORE_ONLY)) {
		if (needs & GB_BACKEND_PROGRESS) {
			l->progress = 1;
			gb_progress_init(&l->prog, cli);
		}
		rc = gb_cli_session(cli, &l->s,
		                     l->progress ? gb_progress_event : NULL,
		                     l->progress ? &l->prog : NULL, l->b.stop);
		if (rc) {
			free(l);
			return rc;
		}
		l->b.catalog = l->s.rt.cat;
	}
	*out = &l->b;
	return 0;
}
