/* engine_destroy.c -- journaled termination and pool destruction that is
 * only finished when the cloud confirms. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "workers.h"

typedef struct tgroup {
	gb_engine *e;
	gb_drv *drv;
	const char *cloud, *region;
	gb_inst_row **rows;
	size_t n;
	gb_instance_ref *refs;
	int64_t intent_id; /* 0: not journaled, so not sent */
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

/* The calls for groups (sets each group's batch and call0; a group
 * whose intent could not be journaled gets none): a malloc'd array of
 * *nc calls, caller frees. */
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
		calls = !g->intent_id ? 0 : g->batch ? 1 : g->n;
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

/* ---- terminate outcomes the store refused ----
 *
 * After a terminate call, its intent is closed and the time the cloud
 * accepted each instance's terminate is recorded (billing ends there),
 * in one transaction.  When the store refuses that write (a full disk,
 * an I/O error) the outcome is kept here, in memory, and written by
 * gb_engine__settle at the start of whatever the engine does next,
 * before anything else can touch those rows: otherwise a refresh would
 * see the instances gone and end their billing at that moment (seconds
 * or minutes late), and the open intent would wait for the next start.
 * If the process dies first, recovery resolves the intent by describe
 * and ends billing at the journal time, as after any crash. */

static void outcome_free(gb_term_outcome *o)
{
	if (!o)
		return;
	free(o->pool);
	free(o->error);
	free(o->row);
	free(o->at_ms);
	free(o->cause);
	free(o);
}

/* Writes one outcome in one transaction: 0, or -1 (gb_store_errmsg). */
static int outcome_write(gb_engine *e, const gb_term_outcome *o)
{
	gb_store *s = e->o.store;
	int ok;
	if (gb_store_begin(s) != 0)
		return -1;
	ok = gb_store_intent_close(s, o->intent_id, o->error ? "failed" : "done",
	                           o->error) == 0;
	for (size_t i = 0; ok && i < o->n; i++)
		ok = gb_store_inst_term_accepted(s, o->row[i], o->at_ms[i]) == 0;
	if (!ok) {
		gb_store_rollback(s);
		return -1;
	}
	return gb_store_commit(s);
}

/* Takes o (appended to the pending list, oldest first). */
static void outcome_keep(gb_engine *e, gb_term_outcome *o)
{
	gb_term_outcome **pp;
	pthread_mutex_lock(&e->pend_mu);
	for (pp = &e->pend; *pp; pp = &(*pp)->next)
		;
	*pp = o;
	pthread_mutex_unlock(&e->pend_mu);
}

static void outcome_unlink(gb_engine *e, gb_term_outcome *o)
{
	pthread_mutex_lock(&e->pend_mu);
	for (gb_term_outcome **pp = &e->pend; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	pthread_mutex_unlock(&e->pend_mu);
}

int gb_engine__settle(gb_engine *e, char *err, size_t cap)
{
	gb_term_outcome **v = NULL;
	size_t n = 0, done = 0;
	int64_t mono;
	pthread_mutex_lock(&e->pend_mu);
	n = e->pend != NULL;
	pthread_mutex_unlock(&e->pend_mu);
	if (!n)
		return 0;
	pthread_mutex_lock(&e->settle_mu);
	pthread_mutex_lock(&e->pend_mu);
	n = 0;
	for (gb_term_outcome *o = e->pend; o; o = o->next) {
		v = gb_xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = o;
	}
	pthread_mutex_unlock(&e->pend_mu);
	/* in order; the first refusal stops it (the store still refuses) */
	for (; done < n; done++) {
		gb_term_outcome *o = v[done];
		if (outcome_write(e, o) != 0)
			break;
		outcome_unlink(e, o);
		gb_log(GB_LOG_INFO, "engine", "recorded terminate intent %lld "
		       "of pool %s (%zu accepted), which the state database had "
		       "refused (%s)", (long long)o->intent_id, o->pool, o->n,
		       o->cause);
		gb_engine__event(e, o->pool, NULL, "recorded",
		                 "the outcome of terminate intent %lld (%zu "
		                 "instance%s accepted by the cloud) is recorded "
		                 "now that the state database accepts writes "
		                 "again; billing ended when the cloud accepted",
		                 (long long)o->intent_id, o->n,
		                 o->n == 1 ? "" : "s");
		outcome_free(o);
	}
	pthread_mutex_unlock(&e->settle_mu);
	free(v);
	if (done == n)
		return 0;
	snprintf(err, cap, "the state database does not accept writes (%s): "
	         "the outcome of %zu terminate call%s the cloud answered is "
	         "held in memory and written first, so nothing else changes "
	         "until it is; free space on the database's disk (or fix the "
	         "cause), and it is written by the next operation",
	         gb_store_errmsg(e->o.store), n - done, n - done == 1 ? "" : "s");
	mono = gb_mono_ms();
	pthread_mutex_lock(&e->pend_mu);
	if (mono - e->pend_logged_ms < 10000)
		mono = 0; /* logged less than 10 s ago */
	else
		e->pend_logged_ms = mono;
	pthread_mutex_unlock(&e->pend_mu);
	if (mono)
		gb_log(GB_LOG_ERROR, "engine", "%s", err);
	return -1;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t *gb_engine__pending_rows(gb_engine *e, size_t *n)
{
	int64_t *v = NULL;
	*n = 0;
	pthread_mutex_lock(&e->pend_mu);
	for (gb_term_outcome *o = e->pend; o; o = o->next)
		for (size_t i = 0; i < o->n; i++) {
			v = gb_xrealloc(v, (*n + 1) * sizeof(*v));
			v[(*n)++] = o->row[i];
		}
	pthread_mutex_unlock(&e->pend_mu);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_id);
	return v;
}

int gb_engine__pending_intent(gb_engine *e, int64_t intent_id)
{
	int found = 0;
	pthread_mutex_lock(&e->pend_mu);
	for (gb_term_outcome *o = e->pend; o && !found; o = o->next)
		found = o->intent_id == intent_id;
	pthread_mutex_unlock(&e->pend_mu);
	return found;
}

void gb_engine__drop_pending(gb_engine *e)
{
	gb_term_outcome *left;
	char err[1024];
	if (gb_engine__settle(e, err, sizeof(err)) == 0)
		return;
	pthread_mutex_lock(&e->pend_mu);
	left = e->pend;
	e->pend = NULL;
	pthread_mutex_unlock(&e->pend_mu);
	while (left) {
		gb_term_outcome *o = left;
		left = o->next;
		gb_log(GB_LOG_ERROR, "engine", "terminate intent %lld of pool %s: "
		       "its outcome could not be recorded (%s); it stays open and "
		       "the next start resolves it by describe, ending billing "
		       "at its journal time", (long long)o->intent_id, o->pool,
		       gb_store_errmsg(e->o.store));
		outcome_free(o);
	}
}

int gb_engine__terminate_rows(gb_engine *e, gb_inst_row **rows, size_t n,
                              const char *reason)
{
	tgroup *groups = NULL;
	tcall *calls;
	size_t ng = 0, nc = 0;
	int64_t now = gb_now_ms();
	int rc = 0, settled;
	char unsettled[1024];

	/* outcomes the store refused before go first (a row among them must
	 * get its first accepted time, not this call's) */
	settled = gb_engine__settle(e, unsettled, sizeof(unsettled)) == 0;
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
	/* journal first: intent + rows marked terminating, one transaction;
	 * a group whose journal cannot be written is not sent (intent_id
	 * stays 0): its rows stay as they are and the next step retries */
	for (size_t k = 0; k < ng && settled; k++) {
		tgroup *g = &groups[k];
		gb_intent_row in;
		json_t *ids = json_array();
		char *detail, *fresh;
		int ok = 0;
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
		fresh = gb_xcalloc(g->n, sizeof(*fresh));
		if (gb_store_begin(e->o.store) == 0) {
			ok = gb_store_intent_open(e->o.store, &in) == 0;
			for (size_t i = 0; ok && i < g->n; i++) {
				/* not in the store yet (a gc's orphan): recorded
				 * with its intent */
				if (!g->rows[i]->id) {
					fresh[i] = 1;
					ok = gb_store_inst_put(e->o.store,
					                       g->rows[i]) == 0;
				}
				ok = ok && gb_store_inst_set_state(e->o.store,
				                                   g->rows[i]->id,
				                                   "terminating",
				                                   reason, now) == 0;
			}
			if (ok)
				ok = gb_store_commit(e->o.store) == 0;
			else
				gb_store_rollback(e->o.store);
		}
		for (size_t i = 0; !ok && i < g->n; i++)
			if (fresh[i])
				g->rows[i]->id = 0; /* rolled back: not recorded */
		g->intent_id = ok ? in.id : 0;
		free(fresh);
		free(detail);
	}
	for (size_t k = 0; k < ng; k++) {
		tgroup *g = &groups[k];
		if (g->intent_id)
			continue;
		rc = -2;
		gb_engine__event(e, g->rows[0]->pool, NULL, "error",
		                 "terminate of %zu instance%s in %s/%s not sent: "
		                 "%s%s; it is sent at the next step, once the "
		                 "journal can be written", g->n,
		                 g->n == 1 ? "" : "s", g->cloud, g->region,
		                 settled ? "its intent could not be journaled: "
		                         : "",
		                 settled ? gb_store_errmsg(e->o.store) : unsettled);
	}
	calls = plan_calls(groups, ng, &nc);
	gb_parallel_for(nc, e->workers, run_tcall, calls);
	for (size_t k = 0; k < ng; k++) {
		tgroup *g = &groups[k];
		size_t failed = 0;
		const gb_error *first_err = NULL;
		gb_term_outcome *o;
		if (!g->intent_id) {
			free(g->rows);
			free(g->refs);
			continue;
		}
		for (size_t i = 0; i < g->n; i++) {
			tcall *c = call_of(calls, g, i);
			if (c->rc != 0 && !failed++)
				first_err = &c->err;
		}
		/* the outcome: intent closed, and when the cloud accepted each
		 * instance's terminate (billing ends there), in one transaction */
		o = gb_xcalloc(1, sizeof(*o));
		o->intent_id = g->intent_id;
		o->pool = gb_xstrdup(g->rows[0]->pool);
		if (failed) {
			char msg[sizeof(first_err->message) + 64];
			snprintf(msg, sizeof(msg), "%s%s", first_err->message,
			         failed > 1 ? " (and more)" : "");
			o->error = gb_xstrdup(msg);
		}
		o->row = gb_xcalloc(g->n, sizeof(*o->row));
		o->at_ms = gb_xcalloc(g->n, sizeof(*o->at_ms));
		for (size_t i = 0; i < g->n; i++) {
			tcall *c = call_of(calls, g, i);
			if (c->rc == 0) {
				o->row[o->n] = g->rows[i]->id;
				o->at_ms[o->n++] = c->call_ms;
			}
		}
		if (outcome_write(e, o) == 0) {
			outcome_free(o);
		} else {
			o->cause = gb_xstrdup(gb_store_errmsg(e->o.store));
			gb_log(GB_LOG_ERROR, "engine", "cannot record the outcome of "
			       "terminate intent %lld of pool %s (%zu of %zu "
			       "accepted by %s): %s; it is held in memory and "
			       "written before anything else, as soon as the "
			       "state database accepts writes", (long long)o->intent_id,
			       o->pool, o->n, g->n, g->cloud, o->cause);
			outcome_keep(e, o);
		}
		gb_engine__stat(e, &e->stats.terminates, g->n);
		for (size_t i = 0; i < g->n; i++) {
			tcall *c = call_of(calls, g, i);
			free(g->rows[i]->state);
			g->rows[i]->state = gb_xstrdup("terminating");
			/* billing ends when the cloud accepted the request */
			if (c->rc == 0) {
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
		if (failed && rc == 0)
			rc = -1;
		free(g->rows);
		free(g->refs);
	}
	free(calls);
	free(groups);
	return rc;
}

/* A destroyed pool is gone: a second destroy finds no pool (as
 * kubectl's second delete), and says where its history is.  1 with
 * res->message, or 0. */
static int gone(const gb_pool_row *row, const char *pool,
                gb_engine_result *res)
{
	if (strcmp(row->state, "destroyed") != 0)
		return 0;
	snprintf(res->message, sizeof(res->message), "no pool named %s (one "
	         "was destroyed: 'gpubroker status --all %s' shows it, "
	         "'gpubroker events --pool %s' its history)", pool, pool, pool);
	return 1;
}

/* Every instance of the pool is confirmed gone: the pool is destroyed.
 * 0 (res->ok set), or -1 when the store refused it (res says so; the
 * next destroy or reconcile pass marks it). */
static int mark_destroyed(gb_engine *e, const char *pool, const char *reason,
                          gb_engine_result *res)
{
	if (gb_store_pool_set_state(e->o.store, pool, "destroyed", reason) != 0)
		return gb_engine__store_failed(e, res);
	gb_engine__forget_refusals(e, pool);
	gb_engine__event(e, pool, NULL, "destroyed",
	                 "pool destroyed; every instance confirmed "
	                 "terminated by its cloud");
	res->ok = 1;
	return 0;
}

int gb_engine_destroy(gb_engine *e, const char *pool, const char *reason,
                      gb_engine_result *res)
{
	gb_pool_row row;
	int64_t deadline = gb_mono_ms() + e->confirm_timeout_s * 1000;
	int rc;

	memset(res, 0, sizeof(*res));
	if (gb_engine__begin_destroy(e, pool, res) != 0)
		return -1;
	rc = gb_store_pool_get(e->o.store, pool, &row);
	if (rc != 0 || gone(&row, pool, res)) {
		if (rc < 0)
			gb_engine__store_failed(e, res);
		else if (rc == 1)
			snprintf(res->message, sizeof(res->message),
			         "no pool named %s (see 'gpubroker status')", pool);
		else
			gb_pool_row_free(&row);
		res->not_found = rc >= 0;
		gb_engine__unlock_pool(e, pool);
		return -1;
	}
	if (strcmp(row.state, "active") == 0) {
		/* not marked destroying: a converge would place it again */
		if (gb_store_pool_set_state(e->o.store, pool, "destroying",
		                            reason) != 0) {
			gb_engine__store_failed(e, res);
			gb_pool_row_free(&row);
			gb_engine__unlock_pool(e, pool);
			res->pool = gb_engine_pool_json(e, pool);
			return -1;
		}
		gb_engine__event(e, pool, NULL, "destroying", "destroying pool (%s)",
		                 reason);
	}
	for (;;) {
		gb_inst_row *rows = NULL, **todo;
		size_t n = 0, nt = 0;
		int64_t now = gb_now_ms();
		char err[sizeof(res->message) - 64];
		if (gb_engine__settle(e, err, sizeof(err)) != 0) {
			/* the store refuses writes: wait for it, holding the
			 * outcomes it refused (lost if this process ends) */
			if (gb_mono_ms() > deadline || (e->o.stop && *e->o.stop)) {
				snprintf(res->message, sizeof(res->message),
				         "pool %s: %s", pool, err);
				rc = -1;
				break;
			}
			gb_sleep_ms(e->poll_ms);
			continue;
		}
		if (gb_engine__live_rows(e, pool, 1, &rows, &n) != 0) {
			rc = gb_engine__store_failed(e, res);
			break;
		}
		if (n == 0) {
			free(rows);
			rc = mark_destroyed(e, pool, reason, res);
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
			         "pool %s: termination requested, but %zu instance%s "
			         "%s not yet confirmed terminated by their cloud; "
			         "%s in state 'terminating' (and in 'cost') "
			         "until confirmed. Run 'gpubroker destroy %s' again "
			         "or let the daemon finish.", pool, n,
			         gb_plural((long long)n), n == 1 ? "is" : "are",
			         n == 1 ? "it stays" : "they stay", pool);
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

int gb_engine_request_destroy(gb_engine *e, const char *pool,
                              const char *reason, const char *by,
                              gb_engine_result *res)
{
	gb_pool_row row;
	int rc;
	memset(res, 0, sizeof(*res));
	if ((rc = gb_engine__begin_destroy(e, pool, res)) != 0)
		return rc;
	rc = gb_store_pool_get(e->o.store, pool, &row);
	if (rc != 0 || gone(&row, pool, res)) {
		if (rc < 0)
			gb_engine__store_failed(e, res);
		else if (rc == 1)
			snprintf(res->message, sizeof(res->message),
			         "no pool named %s", pool);
		else
			gb_pool_row_free(&row);
		res->not_found = rc >= 0;
		gb_engine__unlock_pool(e, pool);
		return rc < 0 ? 1 : -1;
	}
	if (strcmp(row.state, "active") == 0) {
		if (gb_store_pool_set_state(e->o.store, pool, "destroying",
		                            reason) != 0) {
			gb_engine__store_failed(e, res);
			gb_pool_row_free(&row);
			gb_engine__unlock_pool(e, pool);
			return 1;
		}
		gb_engine__event(e, pool, NULL, "destroying",
		                 "destroy requested by %s", by);
	}
	gb_pool_row_free(&row);
	gb_engine__unlock_pool(e, pool);
	res->ok = 1;
	res->pool = gb_engine_pool_json(e, pool);
	return 0;
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
	rc = gb_engine__begin_destroy(e, pool, res);
	if (rc != 0)
		return rc == 1 ? 0 : -1; /* 1: the store refuses writes for now */
	rc = gb_store_pool_get(e->o.store, pool, &row);
	if (rc != 0) {
		if (rc < 0)
			gb_engine__store_failed(e, res);
		else
			snprintf(res->message, sizeof(res->message),
			         "no pool named %s", pool);
		res->not_found = rc == 1;
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
		if (gb_store_pool_set_state(e->o.store, pool, "destroying",
		                            reason) != 0) {
			gb_pool_row_free(&row);
			gb_engine__unlock_pool(e, pool);
			return gb_engine__store_failed(e, res);
		}
		gb_engine__event(e, pool, NULL, "destroying", "destroying pool (%s)",
		                 reason);
	}
	gb_pool_row_free(&row);
	if (gb_engine__live_rows(e, pool, 1, &rows, &n) != 0) {
		gb_engine__unlock_pool(e, pool);
		return gb_engine__store_failed(e, res);
	}
	if (n == 0) {
		free(rows);
		rc = mark_destroyed(e, pool, reason, res);
		gb_engine__unlock_pool(e, pool);
		return rc == 0 ? 1 : -1;
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
