/* autoscale.c -- the daemon's side of elastic pools: per-pool decision
 * state and demand signals (in memory, under mmu), one decision per pool
 * per reconcile pass (gb_autoscale_decide), applied through the engine's
 * scale path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale.h"
#include "daemon.h"
#include "log.h"
#include "timejson.h"

typedef struct as_entry {
	char *pool;
	gb_as_state st;
	int demand;
	int64_t demand_until;
	gb_as_decision last; /* the latest decision (last.reason is a copy) */
	double target;
	int have_last;
	char refused[sizeof(((gb_engine_result *)0)->message)];   /* the last refusal reported as an event */
} as_entry;

struct gb_as_table {
	as_entry *v;
	size_t n, cap;
};

/* The entry of `pool`, created when missing; under mmu. */
static as_entry *entry(gb_daemon *d, const char *pool)
{
	struct gb_as_table *t;
	if (!d->autoscale)
		d->autoscale = gb_xcalloc(1, sizeof(*d->autoscale));
	t = d->autoscale;
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].pool, pool) == 0)
			return &t->v[i];
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8;
		t->v = gb_xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].pool = gb_xstrdup(pool);
	return &t->v[t->n++];
}

void gb_daemon_autoscale_free(gb_daemon *d)
{
	if (!d->autoscale)
		return;
	for (size_t i = 0; i < d->autoscale->n; i++)
		free(d->autoscale->v[i].pool);
	free(d->autoscale->v);
	free(d->autoscale);
	d->autoscale = NULL;
}

void gb_daemon_set_demand(gb_daemon *d, const char *pool, int n,
                          int64_t until)
{
	as_entry *e;
	pthread_mutex_lock(&d->mmu);
	e = entry(d, pool);
	e->demand = n;
	e->demand_until = until;
	pthread_mutex_unlock(&d->mmu);
}

int gb_daemon_autoscale(gb_daemon *d, const gb_pool_row *p,
                        const gb_pool_spec *s)
{
	gb_inst_row *rows = NULL;
	size_t n = 0, ns = 0;
	gb_as_sample *sm;
	gb_as_input in;
	gb_as_decision dec;
	gb_engine_result res;
	as_entry *e;
	int64_t now = gb_now_ms() / 1000;
	int scaled = 0;

	if (!s->autoscale.enabled)
		return 0;
	if (gb_store_inst_list(d->store, p->name, 1, &rows, &n) != 0) {
		gb_log(GB_LOG_WARN, "autoscale", "pool %s: %s", p->name,
		       gb_store_errmsg(d->store));
		return 0;
	}
	sm = gb_xcalloc(n + 1, sizeof(*sm));
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].state, "running") != 0)
			continue;
		sm[ns].id = rows[i].id;
		sm[ns].util = rows[i].last_gpu_util;
		sm[ns].at = rows[i].last_heartbeat_at;
		sm[ns].price = rows[i].price_per_hour;
		sm[ns].created_at = (rows[i].running_ms ? rows[i].running_ms
		                                        : rows[i].launched_ms) /
		                    1000;
		ns++;
	}
	memset(&in, 0, sizeof(in));
	in.min = s->min;
	in.max = s->max;
	in.as = &s->autoscale;
	in.current = p->desired;
	in.samples = sm;
	in.nsamples = ns;
	in.now = now;
	in.fresh_s = GB_AS_FRESH_S;
	pthread_mutex_lock(&d->mmu);
	e = entry(d, p->name);
	in.demand = e->demand;
	in.demand_until = e->demand_until;
	gb_autoscale_decide(&in, &e->st, &dec);
	e->last = dec;
	e->target = s->autoscale.gpu_util_target;
	e->have_last = 1;
	pthread_mutex_unlock(&d->mmu);

	if (dec.desired != p->desired) {
		memset(&res, 0, sizeof(res));
		if (gb_engine_set_desired(d->eng, p->name, dec.desired,
		                          &res) == 0) {
			gb_store_event(d->store, p->name, NULL, "autoscale", "%s",
			               dec.reason);
			gb_log(GB_LOG_INFO, "autoscale", "pool %s: %s", p->name,
			       dec.reason);
			pthread_mutex_lock(&d->mmu);
			if (dec.desired > p->desired)
				d->autoscale_up++;
			else
				d->autoscale_down++;
			e = entry(d, p->name);
			e->refused[0] = 0;
			pthread_mutex_unlock(&d->mmu);
			scaled = 1;
		} else {
			int same;
			pthread_mutex_lock(&d->mmu);
			e = entry(d, p->name);
			same = strcmp(e->refused, res.message) == 0;
			d->autoscale_refused++;
			snprintf(e->refused, sizeof(e->refused), "%s",
			         res.message);
			pthread_mutex_unlock(&d->mmu);
			/* once per refusal, not every pass */
			if (!same)
				gb_store_event(d->store, p->name, NULL,
				               "autoscale-refused", "%s refused: %s",
				               dec.reason, res.message);
		}
		gb_engine_result_free(&res);
	}
	free(sm);
	gb_inst_list_free(rows, n);
	return scaled;
}

json_t *gb_daemon_autoscale_json(gb_daemon *d, const char *pool)
{
	json_t *o = NULL;
	int64_t now = gb_now_ms() / 1000;
	pthread_mutex_lock(&d->mmu);
	if (d->autoscale)
		for (size_t i = 0; i < d->autoscale->n; i++) {
			as_entry *e = &d->autoscale->v[i];
			if (strcmp(e->pool, pool) != 0 || !e->have_last)
				continue;
			o = json_pack("{s:f, s:i, s:s, s:s, s:i}", "target",
			              e->target, "reporting", e->last.reporting,
			              "reason", e->last.reason, "next",
			              e->last.next, "floor", e->last.floor);
			json_object_set_new(o, "mean", e->last.mean >= 0
			                    ? json_real(e->last.mean)
			                    : json_null());
			if (e->last.next_at)
				json_object_set_new(o, "next_at",
				                    gb_json_time(e->last.next_at * 1000));
			if (e->demand && now < e->demand_until)
				json_object_set_new(o, "demand",
				                    json_pack("{s:i, s:o}", "desired",
				                              e->demand, "until",
				                              gb_json_time(e->demand_until * 1000)));
		}
	pthread_mutex_unlock(&d->mmu);
	return o;
}
