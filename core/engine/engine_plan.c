/* engine_plan.c -- the plan of one engine operation, and the failover
 * cooldowns the planner and the placement walk skip. */
#include "engine_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is the offer cooling down after a capacity or quota error?  1 with
 * why and *until (unix s). */
static int cooling(gb_store *st, const gb_coffer *o, char *why, size_t cap,
                   int64_t *until)
{
	char reason[256], when[32];
	*until = 0;
	if (!gb_store_unavailable_check(st, o->cloud, o->region, o->zone,
	                                o->instance_type,
	                                gb_capacity_name(o->capacity),
	                                gb_now_ms() / 1000, reason,
	                                sizeof(reason), until))
		return 0;
	snprintf(why, cap, "%s, until %s", reason,
	         gb_format_time(*until, when, sizeof(when)));
	return 1;
}

/* Failover cooldowns recorded in the state store (shared by every pool
 * and process) also apply to plans, so `plan --explain` says why a zone
 * is being skipped right now. */
int gb_engine_unavailable(void *ud, const gb_coffer *o, char *why,
                          size_t cap)
{
	gb_engine_cool *c = ud;
	int64_t until;
	if (!cooling(c->st, o, why, cap, &until))
		return 0;
	if (until > 0 && (!c->first_s || until < c->first_s))
		c->first_s = until;
	return 1;
}

int gb_engine__cooling(gb_engine *e, const gb_coffer *o, char *why,
                       size_t cap, int64_t *until_s)
{
	return cooling(e->o.store, o, why, cap, until_s);
}


/* What a co-located pool already holds where: its live instances count
 * towards the room at their place (gb_plan_opts.held). */
typedef struct plan_held {
	gb_store *st;
	const char *pool;
	int loaded;
	int failed;             /* the read failed: no plan from it */
	char err[512];
	gb_inst_row *rows;
	size_t n;
} plan_held;

static int plan_held_at(void *ud, const gb_coffer *o)
{
	plan_held *h = ud;
	int k = 0;
	if (!h->loaded) {
		/* read once, and only for a plan with an offer that knows
		 * what it has */
		h->loaded = 1;
		if (gb_store_inst_list(h->st, h->pool, 1, &h->rows, &h->n) != 0) {
			h->rows = NULL;
			h->n = 0;
			h->failed = 1;
			snprintf(h->err, sizeof(h->err), "state store failed: %s",
			         gb_store_errmsg(h->st));
		}
	}
	for (size_t i = 0; i < h->n; i++) {
		const gb_inst_row *r = &h->rows[i];
		if (strcmp(r->cloud, o->cloud) == 0 &&
		    strcmp(r->region, o->region) == 0 &&
		    strcmp(r->zone ? r->zone : "", o->zone) == 0 &&
		    strcmp(r->instance_type, o->instance_type) == 0 &&
		    strcmp(r->capacity, gb_capacity_name(o->capacity)) == 0)
			k++;
	}
	return k;
}

/* The pool's size (its desired count once it exists, when smaller than
 * the spec's: a scaled-down pool) and its live instances, for the
 * planner's room check of a co-located pool. */
static void plan_room_opts(gb_engine *e, const gb_pool_spec *spec,
                           gb_plan_opts *po, plan_held *h)
{
	gb_pool_row row;
	memset(h, 0, sizeof(*h));
	if (spec->colocate == GB_COLOCATE_NONE)
		return;
	h->st = e->o.store;
	switch (gb_store_pool_get(e->o.store, spec->name, &row)) {
	case 0:
		if (strcmp(row.state, "active") == 0 && row.desired > 0 &&
		    row.desired < spec->count)
			po->need = row.desired;
		gb_pool_row_free(&row);
		break;
	case 1:
		break;
	default: /* a room check on a size it could not read: none */
		h->failed = 1;
		snprintf(h->err, sizeof(h->err), "state store failed: %s",
		         gb_store_errmsg(e->o.store));
	}
	h->pool = spec->name;
	po->held = plan_held_at;
	po->held_ud = h;
}

int gb_engine__plan(gb_engine *e, const gb_pool_spec *spec,
                    gb_engine_plan *ep)
{
	gb_plan_opts po;
	gb_engine_cool pc;
	plan_held held;
	int failed = 0, rc;
	memset(ep, 0, sizeof(*ep));
	ep->ps = gb_plan_load_policies(e->o.cfg, spec, e->o.policy_dir,
	                               &failed, ep->err, sizeof(ep->err));
	if (failed) {
		ep->rc = -1;
		return -1;
	}
	memset(&po, 0, sizeof(po));
	po.policies = ep->ps;
	po.team = gb_config_team(e->o.cfg, spec->team);
	pc.st = e->o.store;
	pc.first_s = 0;
	po.unavailable = gb_engine_unavailable;
	po.unavailable_ud = &pc;
	plan_room_opts(e, spec, &po, &held);
	rc = gb_plan_pool(spec, e->o.cat, &po, &ep->plan, ep->err,
	                  sizeof(ep->err));
	gb_inst_list_free(held.rows, held.n);
	ep->cool_until_s = pc.first_s;
	if (rc == 0 && held.failed) {
		/* a room check without what the pool holds would move it */
		snprintf(ep->err, sizeof(ep->err), "%s", held.err);
		ep->store_failed = 1;
		rc = -1;
	}
	if (rc != 0) {
		gb_plan_free(&ep->plan);
		gb_policy_set_free(ep->ps);
		ep->ps = NULL;
		ep->rc = -1;
		return -1;
	}
	if (!ep->plan.ncands && !ep->plan.counts[GB_REFUSE_UNAVAILABLE])
		ep->no_match = 1;
	else if (!ep->plan.ncands) {
		/* Only cooldowns left nothing, or would the spec and the
		 * policies refuse those offers anyway?  Plan without them (a
		 * pool with no candidate only: rare, and cheap). */
		gb_plan all;
		char err[256];
		po.unavailable = NULL;
		if (gb_plan_pool(spec, e->o.cat, &po, &all, err,
		                 sizeof(err)) == 0 && !all.ncands) {
			/* its refusals are the true reasons */
			gb_plan_free(&ep->plan);
			ep->plan = all;
			ep->cool_until_s = 0;
			ep->no_match = 1;
		} else {
			gb_plan_free(&all);
		}
	}
	return 0;
}

char *gb_engine__no_match_note(const gb_engine_plan *ep)
{
	gb_buf b = GB_BUF_INIT;
	const gb_plan *p = &ep->plan;
	gb_refusal_kind order[GB_REFUSE__COUNT];
	size_t nk = gb_plan_refusal_order(p, order);
	gb_buf_printf(&b, "no offer qualifies (%zu considered", p->considered);
	/* commonest first, as gb_plan_no_candidate_msg lists them */
	for (size_t i = 0; i < nk; i++)
		gb_buf_printf(&b, "%s%zu refused by %s", i ? ", " : ": ",
		              p->counts[order[i]], gb_refusal_kind_name(order[i]));
	gb_buf_puts(&b, "); tried again when the spec, the policies or the "
	                "offers change");
	return gb_buf_take(&b);
}

/* The note of a plan p that cooldowns (the first ending at until_s)
 * left without a candidate; caller frees.  with_in: how long from now
 * too (not in a pool's stored note, which would change every pass). */
static char *cooldown_note(const gb_plan *p, int64_t until_s, int with_in)
{
	gb_buf b = GB_BUF_INIT;
	const char *code[2] = {NULL, NULL};
	size_t len[2] = {0, 0}, ncodes = 0, more = 0;
	char when[32], in[32];
	int64_t left;
	/* the distinct error codes behind the cooldowns ("InsufficientInstanceCapacity,
	 * until ...": the part before the comma) */
	for (size_t i = 0; i < p->nrefusals; i++) {
		const char *r = p->refusals[i].reason;
		size_t n, k;
		if (p->refusals[i].kind != GB_REFUSE_UNAVAILABLE || !r)
			continue;
		n = strcspn(r, ",");
		for (k = 0; k < ncodes; k++)
			if (len[k] == n && strncmp(code[k], r, n) == 0)
				break;
		if (k < ncodes)
			continue;
		if (ncodes < GB_ARRAY_LEN(code)) {
			code[ncodes] = r;
			len[ncodes++] = n;
		} else {
			more = 1;
		}
	}
	gb_buf_printf(&b, "no candidate: %zu offer%s refused by capacity "
	              "cooldown", p->counts[GB_REFUSE_UNAVAILABLE],
	              gb_plural((long long)p->counts[GB_REFUSE_UNAVAILABLE]));
	for (size_t k = 0; k < ncodes; k++)
		gb_buf_printf(&b, "%s%.*s", k ? ", " : " (", (int)len[k], code[k]);
	if (ncodes)
		gb_buf_puts(&b, more ? ", ...)" : ")");
	left = until_s - gb_now_ms() / 1000;
	gb_buf_printf(&b, "; next attempt %s%s%s%s, when the first cooldown "
	              "ends", gb_format_time(until_s, when, sizeof(when)),
	              with_in ? " (in " : "",
	              with_in ? gb_format_duration(left > 0 ? left : 0, in,
	                                           sizeof(in))
	                      : "",
	              with_in ? ")" : "");
	return gb_buf_take(&b);
}

char *gb_engine__cooldown_note(const gb_engine_plan *ep)
{
	return cooldown_note(&ep->plan, ep->cool_until_s, 0);
}

char *gb_engine_cooldown_msg(const gb_pool_spec *spec, const gb_catalog *cat,
                             const gb_plan_opts *po, const gb_plan *p,
                             const gb_engine_cool *cool)
{
	gb_plan_opts o = *po;
	gb_plan all;
	char err[256];
	int some;
	if (p->ncands || !p->counts[GB_REFUSE_UNAVAILABLE] || !cool->first_s)
		return NULL;
	/* would the spec and the policies take those offers at all? */
	o.unavailable = NULL;
	some = gb_plan_pool(spec, cat, &o, &all, err, sizeof(err)) == 0 &&
	       all.ncands;
	gb_plan_free(&all);
	return some ? cooldown_note(p, cool->first_s, 1) : NULL;
}

void gb_engine__plan_free(gb_engine_plan *ep)
{
	gb_plan_free(&ep->plan);
	gb_policy_set_free(ep->ps);
	memset(ep, 0, sizeof(*ep));
}

/* ------------------------------------------------------- kept plans */

struct gb_kept_plan {
	char *pool;
	char *spec_hash;
	int64_t generation;
	const gb_catalog *cat;  /* the catalog its offers point into */
	int64_t at_ms;          /* monotonic */
	gb_engine_plan ep;
	struct gb_kept_plan *next;
};

static void kept_free(struct gb_kept_plan *k)
{
	gb_engine__plan_free(&k->ep);
	free(k->pool);
	free(k->spec_hash);
	free(k);
}

/* Unlinks the entry of pool (NULL when none); under plans_mu. */
static struct gb_kept_plan *unlink_kept(gb_engine *e, const char *pool)
{
	for (struct gb_kept_plan **pp = &e->plans; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->pool, pool) == 0) {
			struct gb_kept_plan *k = *pp;
			*pp = k->next;
			return k;
		}
	return NULL;
}

void gb_engine__keep_plan(gb_engine *e, const gb_pool_row *row,
                          gb_engine_plan *ep)
{
	struct gb_kept_plan *k = gb_xcalloc(1, sizeof(*k)), *old;
	k->pool = gb_xstrdup(row->name);
	k->spec_hash = gb_xstrdup(row->spec_hash ? row->spec_hash : "");
	k->generation = row->generation;
	k->cat = e->o.cat;
	k->at_ms = gb_mono_ms();
	k->ep = *ep;
	/* the submit's spec goes away with its request: the plan gets the
	 * converge's (the same spec hash) when it is taken */
	k->ep.plan.spec = NULL;
	memset(ep, 0, sizeof(*ep));
	pthread_mutex_lock(&e->plans_mu);
	old = unlink_kept(e, row->name);
	k->next = e->plans;
	e->plans = k;
	pthread_mutex_unlock(&e->plans_mu);
	if (old)
		kept_free(old);
}

int gb_engine__take_plan(gb_engine *e, const gb_pool_row *row,
                         const gb_pool_spec *spec, gb_engine_plan *out)
{
	struct gb_kept_plan *k;
	int fresh;
	pthread_mutex_lock(&e->plans_mu);
	k = unlink_kept(e, row->name);
	pthread_mutex_unlock(&e->plans_mu);
	if (!k)
		return 0;
	fresh = k->generation == row->generation && k->cat == e->o.cat &&
	        strcmp(k->spec_hash, row->spec_hash ? row->spec_hash : "") == 0 &&
	        gb_mono_ms() - k->at_ms < GB_KEPT_PLAN_MAX_MS;
	if (fresh) {
		*out = k->ep;
		out->plan.spec = spec;
		memset(&k->ep, 0, sizeof(k->ep));
	}
	kept_free(k);
	return fresh;
}

void gb_engine__drop_plans(gb_engine *e)
{
	struct gb_kept_plan *k;
	pthread_mutex_lock(&e->plans_mu);
	k = e->plans;
	e->plans = NULL;
	pthread_mutex_unlock(&e->plans_mu);
	while (k) {
		struct gb_kept_plan *next = k->next;
		kept_free(k);
		k = next;
	}
}
