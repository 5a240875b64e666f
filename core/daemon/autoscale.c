/* autoscale.c -- the daemon's side of elastic pools: per-pool decision
 * state and demand signals (in the store: every replica sees them, a
 * restart keeps them), one decision per pool per reconcile pass
 * (gb_autoscale_decide), applied through the engine's scale path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoscale.h"
#include "daemon.h"
#include "log.h"
#include "timejson.h"

/* The decision state as stored (JSON text; caller frees). */
static char *state_text(const gb_as_state *st)
{
	json_t *j = json_pack("{s:I, s:I, s:I, s:i}", "above_since",
	                      (json_int_t)st->above_since, "below_since",
	                      (json_int_t)st->below_since, "last_change",
	                      (json_int_t)st->last_change, "last_floor",
	                      st->last_floor);
	char *t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return t;
}

/* The stored decision state (zeroed when none or unreadable). */
static void state_read(const char *text, gb_as_state *st)
{
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	memset(st, 0, sizeof(*st));
	if (!j)
		return;
	st->above_since = json_integer_value(json_object_get(j, "above_since"));
	st->below_since = json_integer_value(json_object_get(j, "below_since"));
	st->last_change = json_integer_value(json_object_get(j, "last_change"));
	st->last_floor = (int)json_integer_value(json_object_get(j, "last_floor"));
	json_decref(j);
}

/* The latest decision as status shows it, as stored (JSON text; caller
 * frees): the pool's bounds, target, mean, floor, this pass's reason
 * and next action, and the last change ("last", "last_at": this pass's
 * when it changed the pool, else carried from prev, the stored text). */
static char *last_text(const gb_as_decision *dec, const gb_pool_spec *s,
                       const char *prev, int changed, int64_t now)
{
	json_t *o = json_pack("{s:f, s:i, s:s, s:s, s:i, s:i, s:i}", "target",
	                      s->autoscale.gpu_util_target, "reporting",
	                      dec->reporting, "reason", dec->reason, "next",
	                      dec->next, "floor", dec->floor, "min", s->min,
	                      "max", s->max);
	char *t;
	json_object_set_new(o, "mean", dec->mean >= 0 ? json_real(dec->mean)
	                                              : json_null());
	if (dec->next_at)
		json_object_set_new(o, "next_at",
		                    gb_json_time(dec->next_at * 1000));
	if (changed) {
		json_object_set_new(o, "last", json_string(dec->reason));
		json_object_set_new(o, "last_at", gb_json_time(now * 1000));
	} else if (prev) {
		json_t *p = json_loads(prev, 0, NULL);
		if (json_is_string(json_object_get(p, "last"))) {
			json_object_set(o, "last", json_object_get(p, "last"));
			json_object_set(o, "last_at", json_object_get(p, "last_at"));
		}
		json_decref(p);
	}
	t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

/* 1 when two refusals say the same but for their figures (a budget's
 * projection moves by the cent from one pass to the next). */
static int same_refusal(const char *a, const char *b)
{
	for (;;) {
		while (*a && ((*a >= '0' && *a <= '9') || *a == '.'))
			a++;
		while (*b && ((*b >= '0' && *b <= '9') || *b == '.'))
			b++;
		if (*a != *b)
			return 0;
		if (!*a)
			return 1;
		a++;
		b++;
	}
}

int gb_daemon_set_demand(gb_daemon *d, const char *pool, int n,
                         int64_t until)
{
	int changed = 0;
	if (gb_store_as_demand(d->store, pool, n, until, gb_now_ms() / 1000,
	                       &changed) != 0)
		return -1;
	return changed;
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
	gb_as_state st;
	gb_as_row row;
	char *stext, *ltext, *refused;
	int64_t now = gb_now_ms() / 1000;
	int scaled = 0, purpose = (unsigned)s->purpose < 3 ? (int)s->purpose : 0;

	if (!s->autoscale.enabled)
		return 0;
	if (gb_store_as_get(d->store, p->name, &row) < 0 ||
	    gb_store_inst_list(d->store, p->name, 1, &rows, &n) != 0) {
		gb_log(GB_LOG_WARN, "autoscale", "pool %s: %s", p->name,
		       gb_store_errmsg(d->store));
		gb_as_row_free(&row);
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
	in.demand = row.demand;
	in.demand_until = row.demand_until;
	state_read(row.state, &st);
	gb_autoscale_decide(&in, &st, &dec);
	refused = row.refused ? gb_xstrdup(row.refused) : NULL;

	if (dec.desired != p->desired) {
		memset(&res, 0, sizeof(res));
		if (gb_engine_set_desired(d->eng, p->name, dec.desired,
		                          &res) == 0) {
			/* logged below as well: the event is best effort */
			GB_IGNORE(gb_store_event(d->store, p->name, NULL,
			                         "autoscale", "%s", dec.reason));
			gb_log(GB_LOG_INFO, "autoscale", "pool %s: %s", p->name,
			       dec.reason);
			pthread_mutex_lock(&d->mmu);
			if (dec.desired > p->desired)
				d->autoscale_up[purpose]++;
			else
				d->autoscale_down[purpose]++;
			pthread_mutex_unlock(&d->mmu);
			free(refused);
			refused = NULL;
			scaled = 1;
		} else {
			/* once per refusal, not every pass */
			int same = refused && same_refusal(refused, res.message);
			pthread_mutex_lock(&d->mmu);
			d->autoscale_refused[purpose]++;
			pthread_mutex_unlock(&d->mmu);
			free(refused);
			refused = gb_xstrdup(res.message);
			if (!same)
				GB_IGNORE(gb_store_event(d->store, p->name, NULL,
				               "autoscale-refused", "%s refused: %s",
				               dec.reason, res.message));
		}
		gb_engine_result_free(&res);
	}
	/* in the store: every replica shows it, a restart keeps it */
	stext = state_text(&st);
	ltext = last_text(&dec, s, row.last, scaled, now);
	if (gb_store_as_save(d->store, p->name, stext, ltext, refused) != 0)
		gb_log(GB_LOG_WARN, "autoscale", "pool %s: %s", p->name,
		       gb_store_errmsg(d->store));
	free(stext);
	free(ltext);
	free(refused);
	gb_as_row_free(&row);
	free(sm);
	gb_inst_list_free(rows, n);
	return scaled;
}

json_t *gb_daemon_autoscale_json(gb_daemon *d, const char *pool)
{
	gb_as_row row;
	json_t *o;
	int64_t now = gb_now_ms() / 1000;
	if (gb_store_as_get(d->store, pool, &row) != 0)
		return NULL;
	o = row.last ? json_loads(row.last, 0, NULL) : NULL;
	if (o && row.demand && now < row.demand_until)
		json_object_set_new(o, "demand",
		                    json_pack("{s:i, s:o}", "desired", row.demand,
		                              "until",
		                              gb_json_time(row.demand_until * 1000)));
	gb_as_row_free(&row);
	return o;
}
