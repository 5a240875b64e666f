/* plan.c -- filtering, policy evaluation and ranking of offers. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "paths.h"

/* A tiny pointer-keyed memo: regions are few, offers many. */
typedef struct memo {
	const void *keys[512];
	signed char vals[512];
} memo;

static int memo_get(memo *m, const void *k, int *v)
{
	size_t h = ((uintptr_t)k >> 4) & 511;
	for (size_t i = 0; i < 512; i++, h = (h + 1) & 511) {
		if (!m->keys[h])
			return 0;
		if (m->keys[h] == k) {
			*v = m->vals[h];
			return 1;
		}
	}
	return 0;
}

static void memo_put(memo *m, const void *k, int v)
{
	size_t h = ((uintptr_t)k >> 4) & 511;
	for (size_t i = 0; i < 512; i++, h = (h + 1) & 511) {
		if (!m->keys[h] || m->keys[h] == k) {
			m->keys[h] = k;
			m->vals[h] = (signed char)v;
			return;
		}
	}
	/* full: simply do not memoise */
}

static const char *const kind_names[GB_REFUSE__COUNT] = {
	"cloud",     "gpu-model",  "gpu-count", "gpu-memory", "capacity",
	"region",    "compliance", "price",     "unavailable", "policy",
	"room",
};

const char *gb_refusal_kind_name(gb_refusal_kind k)
{
	return k < GB_REFUSE__COUNT ? kind_names[k] : "unknown";
}

static int region_ok(const gb_pool_spec *s, const char *region)
{
	if (!s->regions.n)
		return 1;
	for (size_t i = 0; i < s->regions.n; i++)
		if (gb_glob(s->regions.v[i], region))
			return 1;
	return 0;
}

static int compliance_ok(const gb_pool_spec *s, const gb_region_info *ri)
{
	for (size_t i = 0; i < s->compliance.n; i++)
		if (!ri || !gb_region_has_tag(ri, s->compliance.v[i]))
			return 0;
	return 1;
}

static int cap_order(const gb_pool_spec *s, gb_capacity c)
{
	for (int i = 0; i < s->ncapacity; i++)
		if (s->capacity[i] == c)
			return i;
	return -1;
}

static void refuse(gb_plan *p, size_t *cap, const gb_coffer *o,
                   gb_refusal_kind k, int policy, const char *reason)
{
	if (p->nrefusals == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		p->refusals = gb_xrealloc(p->refusals, *cap * sizeof(gb_refusal));
	}
	p->refusals[p->nrefusals].offer = o;
	p->refusals[p->nrefusals].kind = (uint8_t)k;
	p->refusals[p->nrefusals].policy = (int16_t)policy;
	p->refusals[p->nrefusals].reason = reason;
	p->nrefusals++;
	p->counts[k]++;
}

static int cand_cmp(const void *a, const void *b)
{
	const gb_candidate *x = a, *y = b;
	int c;
	if (x->cap_order != y->cap_order)
		return x->cap_order < y->cap_order ? -1 : 1;
	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	if (x->pool_price != y->pool_price)
		return x->pool_price < y->pool_price ? -1 : 1;
	if ((c = strcmp(x->offer->cloud, y->offer->cloud)))
		return c;
	if ((c = strcmp(x->offer->region, y->offer->region)))
		return c;
	if ((c = strcmp(x->offer->zone, y->offer->zone)))
		return c;
	return strcmp(x->offer->instance_type, y->offer->instance_type);
}

/* A co-located pool needs all its instances in one place: 1 with the
 * reason ("only 2 free; the pool needs 4 in one zone") when the offer's
 * known room there is short. */
static int room_short(const gb_plan *p, const gb_plan_opts *o,
                      const gb_coffer *of, char *why, size_t cap)
{
	int held = o && o->held ? o->held(o->held_ud, of) : 0;
	const char *unit = p->spec->colocate == GB_COLOCATE_ZONE ? "zone"
	                                                         : "region";
	if (of->available + held >= p->need)
		return 0;
	if (held > 0)
		snprintf(why, cap, "only %d free (and %d of the pool's own "
		         "there); the pool needs %d in one %s", of->available,
		         held, p->need, unit);
	else
		snprintf(why, cap, "only %d free; the pool needs %d in one %s",
		         of->available, p->need, unit);
	return 1;
}

int gb_plan_pool(const gb_pool_spec *s, const gb_catalog *cat,
                 const gb_plan_opts *o, gb_plan *p, char *err, size_t errcap)
{
	size_t n = gb_catalog_count(cat), rcap = 0, ncand = 0;
	const char *models[16];
	size_t nmodels = 0;
	const char *clouds[16];
	size_t nclouds = 0;
	const gb_coffer **survivors;
	memo region_memo, compl_memo;
	int64_t t0 = gb_mono_ns();
	gb_policy_set *ps = o ? o->policies : NULL;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	memset(&region_memo, 0, sizeof(region_memo));
	memset(&compl_memo, 0, sizeof(compl_memo));
	p->spec = s;
	p->need = o && o->need > 0 ? o->need : s->count;
	p->considered = n;
	gb_catalog_hash(cat, p->catalog_hash);

	/* Interned pointers: a model/cloud no offer uses simply matches none. */
	for (size_t i = 0; i < s->gpu_models.n && nmodels < 16; i++) {
		const char *m = gb_catalog_lookup(cat, s->gpu_models.v[i]);
		if (m)
			models[nmodels++] = m;
	}
	for (size_t i = 0; i < s->clouds.n && nclouds < 16; i++) {
		const char *c = gb_catalog_lookup(cat, s->clouds.v[i]);
		if (c)
			clouds[nclouds++] = c;
	}

	survivors = gb_xmalloc((n ? n : 1) * sizeof(*survivors));
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *of = gb_catalog_at(cat, i);
		int ok = 0, v;
		char why[160];
		if (s->clouds.n) {
			for (size_t k = 0; k < nclouds && !ok; k++)
				ok = of->cloud == clouds[k];
			if (!ok) {
				refuse(p, &rcap, of, GB_REFUSE_CLOUD, -1, NULL);
				continue;
			}
		}
		ok = 0;
		for (size_t k = 0; k < nmodels && !ok; k++)
			ok = of->gpu_model == models[k];
		if (!ok) {
			refuse(p, &rcap, of, GB_REFUSE_GPU_MODEL, -1, NULL);
			continue;
		}
		if (of->gpu_count != s->gpu_count) {
			refuse(p, &rcap, of, GB_REFUSE_GPU_COUNT, -1, NULL);
			continue;
		}
		if (of->gpu_memory_gb < s->gpu_memory_gb) {
			refuse(p, &rcap, of, GB_REFUSE_GPU_MEMORY, -1, NULL);
			continue;
		}
		if (cap_order(s, of->capacity) < 0) {
			refuse(p, &rcap, of, GB_REFUSE_CAPACITY, -1, NULL);
			continue;
		}
		if (!memo_get(&region_memo, of->region, &v)) {
			v = region_ok(s, of->region);
			memo_put(&region_memo, of->region, v);
		}
		if (!v) {
			refuse(p, &rcap, of, GB_REFUSE_REGION, -1, NULL);
			continue;
		}
		if (s->compliance.n) {
			if (!memo_get(&compl_memo, of->rinfo ? (const void *)of->rinfo
			                                     : (const void *)of->region,
			              &v)) {
				v = compliance_ok(s, of->rinfo);
				memo_put(&compl_memo,
				         of->rinfo ? (const void *)of->rinfo
				                   : (const void *)of->region, v);
			}
			if (!v) {
				refuse(p, &rcap, of, GB_REFUSE_COMPLIANCE, -1, NULL);
				continue;
			}
		}
		if (s->max_price_per_hour > 0 &&
		    of->price * s->count > s->max_price_per_hour + 1e-9) {
			refuse(p, &rcap, of, GB_REFUSE_PRICE, -1, NULL);
			continue;
		}
		if (o && o->unavailable &&
		    o->unavailable(o->unavailable_ud, of, why, sizeof(why))) {
			gb_strv_push(&p->notes, why);
			refuse(p, &rcap, of, GB_REFUSE_UNAVAILABLE, -1,
			       p->notes.v[p->notes.n - 1]);
			continue;
		}
		if (s->colocate != GB_COLOCATE_NONE && of->available > 0 &&
		    room_short(p, o, of, why, sizeof(why))) {
			gb_strv_push(&p->notes, why);
			refuse(p, &rcap, of, GB_REFUSE_ROOM, -1,
			       p->notes.v[p->notes.n - 1]);
			continue;
		}
		survivors[ncand++] = of;
	}

	p->cands = gb_xcalloc(ncand ? ncand : 1, sizeof(gb_candidate));
	if (ps) {
		gb_policy_result *res;
		size_t np = gb_policy_count(ps), nl = 0;
		const char *const *logs;
		for (size_t i = 0; i < np; i++) {
			gb_strv_push(&p->policy_names, gb_policy_name(ps, i));
			gb_strv_push(&p->policy_hashes, gb_policy_hash(ps, i));
		}
		/* the set may be shared (policy cache): one evaluation at a
		 * time; the request, the evaluation and its logs together */
		gb_policy_lock(ps);
		if (gb_policy_set_request(ps, s, o->team, err, errcap) != 0) {
			gb_policy_unlock(ps);
			rc = -1;
			goto out;
		}
		res = gb_xcalloc(ncand ? ncand : 1, sizeof(*res));
		if (ncand && gb_policy_eval(ps, survivors, ncand, res, err,
		                            errcap) != 0) {
			gb_policy_unlock(ps);
			free(res);
			rc = -1;
			goto out;
		}
		logs = gb_policy_logs(ps, &nl);
		for (size_t i = 0; i < nl; i++)
			gb_strv_push(&p->logs, logs[i]);
		gb_policy_unlock(ps);
		/* A policy "scores" when any survivor got a non-zero score or
		 * the set has score functions; the policy module reports sums,
		 * so treat a set with all-zero sums as unscored. */
		for (size_t i = 0; i < ncand; i++) {
			const gb_coffer *of = survivors[i];
			if (res[i].refused_by >= 0) {
				refuse(p, &rcap, of, GB_REFUSE_POLICY,
				       res[i].refused_by, res[i].reason);
				continue;
			}
			if (res[i].score != 0)
				p->scored_by_policy = 1;
			p->cands[p->ncands].offer = of;
			p->cands[p->ncands].score = res[i].score;
			p->ncands++;
		}
		free(res);
	} else {
		for (size_t i = 0; i < ncand; i++)
			p->cands[p->ncands++].offer = survivors[i];
	}
	for (size_t i = 0; i < p->ncands; i++) {
		gb_candidate *c = &p->cands[i];
		/* owned capacity (on-prem nodes) is already paid for: it
		 * ranks before every capacity kind of the spec, whatever
		 * the order of capacity: (a policy's filter can still
		 * refuse it) */
		c->cap_order = c->offer->owned ? -1
		                               : cap_order(s, c->offer->capacity);
		c->pool_price = c->offer->price * s->count;
		if (!p->scored_by_policy)
			c->score = c->pool_price;
	}
	qsort(p->cands, p->ncands, sizeof(gb_candidate), cand_cmp);
out:
	free(survivors);
	p->elapsed_ms = (double)(gb_mono_ns() - t0) / 1e6;
	return rc;
}

void gb_plan_free(gb_plan *p)
{
	free(p->cands);
	free(p->refusals);
	gb_strv_free(&p->policy_names);
	gb_strv_free(&p->policy_hashes);
	gb_strv_free(&p->logs);
	gb_strv_free(&p->notes);
	memset(p, 0, sizeof(*p));
}

static char *join_models(const gb_pool_spec *s)
{
	return gb_strv_join(&s->gpu_models, ", ");
}

char *gb_plan_refusal_text(const gb_plan *p, const gb_refusal *r)
{
	const gb_pool_spec *s = p->spec;
	const gb_coffer *o = r->offer;
	char *tmp, *msg = NULL;
	switch ((gb_refusal_kind)r->kind) {
	case GB_REFUSE_CLOUD:
		tmp = gb_strv_join(&s->clouds, ", ");
		msg = gb_xasprintf("cloud %s is not in placement.clouds [%s]",
		                   o->cloud, tmp);
		free(tmp);
		break;
	case GB_REFUSE_GPU_MODEL:
		tmp = join_models(s);
		msg = gb_xasprintf("GPU model %s not requested (pool wants %s)",
		                   o->gpu_model, tmp);
		free(tmp);
		break;
	case GB_REFUSE_GPU_COUNT:
		msg = gb_xasprintf("%d GPUs per instance, pool wants %d",
		                   o->gpu_count, s->gpu_count);
		break;
	case GB_REFUSE_GPU_MEMORY:
		msg = gb_xasprintf("%d GB per GPU, pool wants at least %d GB",
		                   o->gpu_memory_gb, s->gpu_memory_gb);
		break;
	case GB_REFUSE_CAPACITY:
		msg = gb_xasprintf("capacity %s not in the pool's capacity list",
		                   gb_capacity_name(o->capacity));
		break;
	case GB_REFUSE_REGION:
		tmp = gb_strv_join(&s->regions, ", ");
		msg = gb_xasprintf("region %s does not match placement.regions "
		                   "[%s]", o->region, tmp);
		free(tmp);
		break;
	case GB_REFUSE_COMPLIANCE:
		tmp = gb_strv_join(&s->compliance, ", ");
		if (!o->rinfo)
			msg = gb_xasprintf("no region facts for %s, so compliance "
			                   "[%s] cannot be shown", o->region, tmp);
		else
			msg = gb_xasprintf("region %s (%s) lacks compliance [%s] "
			                   "(has: %s)", o->region,
			                   o->rinfo->jurisdiction, tmp,
			                   *o->rinfo->tags ? o->rinfo->tags : "none");
		free(tmp);
		break;
	case GB_REFUSE_PRICE:
		msg = gb_xasprintf("pool would cost $%.2f/h (%d x $%.4f), over "
		                   "limits.max_price_per_hour $%.2f",
		                   o->price * s->count, s->count, o->price,
		                   s->max_price_per_hour);
		break;
	case GB_REFUSE_UNAVAILABLE:
		msg = gb_xasprintf("marked unavailable: %s",
		                   r->reason ? r->reason : "recent capacity error");
		break;
	case GB_REFUSE_ROOM:
		msg = gb_xstrdup(r->reason ? r->reason : "not enough room");
		break;
	case GB_REFUSE_POLICY:
		msg = gb_xasprintf("policy %s: %s",
		                   r->policy >= 0 &&
		                                   (size_t)r->policy < p->policy_names.n
		                           ? p->policy_names.v[r->policy]
		                           : "?",
		                   r->reason ? r->reason : "refused");
		break;
	case GB_REFUSE__COUNT:
		break;
	}
	return msg ? msg : gb_xstrdup("refused");
}

size_t gb_plan_refusal_order(const gb_plan *p,
                             gb_refusal_kind order[GB_REFUSE__COUNT])
{
	int done[GB_REFUSE__COUNT] = {0};
	size_t n = 0;
	for (;;) {
		int best = -1;
		for (int k = 0; k < GB_REFUSE__COUNT; k++)
			if (!done[k] && p->counts[k] &&
			    (best < 0 || p->counts[k] > p->counts[best]))
				best = k;
		if (best < 0)
			return n;
		done[best] = 1;
		order[n++] = (gb_refusal_kind)best;
	}
}

char *gb_plan_no_candidate_msg(const gb_plan *p)
{
	gb_buf b = GB_BUF_INIT;
	gb_refusal_kind order[GB_REFUSE__COUNT];
	size_t nk;
	gb_buf_printf(&b, "no offer qualifies for pool '%s' (%zu offer%s "
	                  "considered)", p->spec->name, p->considered,
	              gb_plural((long long)p->considered));
	if (!p->considered) {
		gb_buf_puts(&b, ": no driver offered anything -- check "
		                "'gpubroker drivers'");
		return gb_buf_take(&b);
	}
	gb_buf_puts(&b, ":");
	nk = gb_plan_refusal_order(p, order);
	for (size_t ki = 0; ki < nk; ki++) {
		gb_refusal_kind best = order[ki];
		for (size_t i = 0; i < p->nrefusals; i++) {
			if (p->refusals[i].kind == best) {
				char *t = gb_plan_refusal_text(p, &p->refusals[i]);
				gb_buf_printf(&b, "\n  %zu refused by %s, e.g. %s/%s/%s %s: %s",
				              p->counts[best],
				              gb_refusal_kind_name(best),
				              p->refusals[i].offer->cloud,
				              p->refusals[i].offer->region,
				              p->refusals[i].offer->instance_type,
				              gb_capacity_name(p->refusals[i].offer->capacity),
				              t);
				free(t);
				break;
			}
		}
	}
	return gb_buf_take(&b);
}

static json_t *offer_json(const gb_coffer *o)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:f}",
	                      "cloud", o->cloud, "region", o->region, "zone",
	                      o->zone, "instance_type", o->instance_type,
	                      "gpu_model", o->gpu_model, "gpu_count",
	                      o->gpu_count, "gpu_memory_gb", o->gpu_memory_gb,
	                      "capacity", gb_capacity_name(o->capacity),
	                      "price_per_hour", o->price);
	if (o->available > 0)
		json_object_set_new(j, "available", json_integer(o->available));
	return j;
}

size_t gb_plan_first_choice(const gb_plan *p, int need, gb_plan_part *parts,
                            size_t cap, int *unplaced, double *price)
{
	size_t n = 0;
	int left = need;
	*price = 0;
	for (size_t i = 0; i < p->ncands && left > 0 && n < cap; i++) {
		const gb_coffer *o = p->cands[i].offer;
		int take = left;
		if (p->spec->colocate == GB_COLOCATE_NONE && o->available > 0 &&
		    o->available < left)
			take = o->available;
		parts[n].offer = o;
		parts[n].count = take;
		n++;
		left -= take;
		*price += o->price * take;
	}
	*unplaced = left > 0 ? left : 0;
	return n;
}

json_t *gb_plan_parts_json(const gb_plan *p, int need, int *unplaced,
                           double *price)
{
	gb_plan_part *parts = gb_xcalloc(p->ncands ? p->ncands : 1,
	                                 sizeof(*parts));
	size_t n = gb_plan_first_choice(p, need, parts, p->ncands, unplaced,
	                                price);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const gb_coffer *o = parts[i].offer;
		json_array_append_new(a, json_pack(
			"{s:i, s:s, s:s, s:s, s:s, s:s, s:f}", "count",
			parts[i].count, "cloud", o->cloud, "region", o->region,
			"zone", o->zone, "instance_type", o->instance_type,
			"capacity", gb_capacity_name(o->capacity),
			"price_per_hour", o->price));
	}
	free(parts);
	return a;
}

json_t *gb_plan_refusals_json(const gb_plan *p, size_t per_kind)
{
	json_t *refs = json_array();
	size_t seen[GB_REFUSE__COUNT] = {0};
	for (size_t i = 0; i < p->nrefusals; i++) {
		const gb_refusal *r = &p->refusals[i];
		char *t;
		json_t *j;
		if (per_kind && seen[r->kind]++ >= per_kind)
			continue;
		t = gb_plan_refusal_text(p, r);
		j = offer_json(r->offer);
		json_object_set_new(j, "rule", json_string(
		        r->kind == GB_REFUSE_POLICY && r->policy >= 0 &&
		                        (size_t)r->policy < p->policy_names.n
		                ? p->policy_names.v[r->policy]
		                : kind_names[r->kind]));
		json_object_set_new(j, "reason", json_string(t));
		free(t);
		json_array_append_new(refs, j);
	}
	return refs;
}

json_t *gb_plan_to_json(const gb_plan *p, size_t limit, int explain)
{
	json_t *root = json_object(), *cands = json_array(), *counts = json_object();
	json_t *pols = json_array();
	size_t n = limit && limit < p->ncands ? limit : p->ncands;
	json_object_set_new(root, "pool", json_string(p->spec->name));
	json_object_set_new(root, "instances", json_integer(p->spec->count));
	for (size_t i = 0; i < n; i++) {
		const gb_candidate *c = &p->cands[i];
		json_t *j = offer_json(c->offer);
		json_object_set_new(j, "rank", json_integer((json_int_t)i + 1));
		json_object_set_new(j, "pool_price_per_hour", json_real(c->pool_price));
		json_object_set_new(j, "score", json_real(c->score));
		json_array_append_new(cands, j);
	}
	json_object_set_new(root, "candidates", cands);
	json_object_set_new(root, "candidate_count", json_integer((json_int_t)p->ncands));
	{
		/* the first choice, in parts where one offer has not room
		 * for the whole pool */
		int unplaced;
		double price;
		json_t *parts = gb_plan_parts_json(p, p->need, &unplaced, &price);
		json_object_set_new(root, "placement", parts);
		json_object_set_new(root, "placement_price_per_hour",
		                    json_real(price));
		if (unplaced)
			json_object_set_new(root, "unplaced",
			                    json_integer(unplaced));
	}
	json_object_set_new(root, "offers_considered",
	                    json_integer((json_int_t)p->considered));
	for (int k = 0; k < GB_REFUSE__COUNT; k++)
		if (p->counts[k])
			json_object_set_new(counts, kind_names[k],
			                    json_integer((json_int_t)p->counts[k]));
	json_object_set_new(root, "refused", counts);
	for (size_t i = 0; i < p->policy_names.n; i++)
		json_array_append_new(pols, json_pack("{s:s, s:s}", "name",
		                                      p->policy_names.v[i], "sha256",
		                                      p->policy_hashes.v[i]));
	json_object_set_new(root, "policies", pols);
	json_object_set_new(root, "catalog_sha256", json_string(p->catalog_hash));
	json_object_set_new(root, "scored_by", json_string(p->scored_by_policy
	                                                           ? "policies"
	                                                           : "price"));
	if (p->spec->source_hash)
		json_object_set_new(root, "spec_sha256",
		                    json_string(p->spec->source_hash));
	if (explain) {
		json_t *logs = json_array();
		json_object_set_new(root, "refusals", gb_plan_refusals_json(p, 0));
		for (size_t i = 0; i < p->logs.n; i++)
			json_array_append_new(logs, json_string(p->logs.v[i]));
		json_object_set_new(root, "policy_log", logs);
	}
	return root;
}

void gb_plan_policy_path(const gb_config *cfg, const char *extra,
                         gb_strv *out)
{
	if (extra)
		gb_strv_push(out, extra);
	if (cfg && cfg->policy_path.n) {
		for (size_t i = 0; i < cfg->policy_path.n; i++)
			gb_strv_push(out, cfg->policy_path.v[i]);
	} else {
		gb_strv_push(out, gb_policy_dir());
	}
}

int gb_plan_policy_arg(void *ud, const char *policy, const char *key,
                       const char *value, char *msg, size_t cap)
{
	gb_strv path = {0};
	int rc;
	gb_plan_policy_path(ud, NULL, &path);
	rc = gb_policy_check_arg(policy, &path, NULL, key, value, msg, cap);
	gb_strv_free(&path);
	return rc;
}

gb_policy_set *gb_plan_load_policies(const gb_config *cfg,
                                     const gb_pool_spec *spec,
                                     const char *extra_dir, int *failed,
                                     char *err, size_t cap)
{
	gb_strv path = {0};
	gb_strv none = {0};
	gb_policy_set *ps = NULL;
	const gb_strv *org = cfg ? &cfg->org_policies : &none;
	*failed = 0;
	if (!org->n && !spec->policies.n)
		return NULL;
	gb_plan_policy_path(cfg, extra_dir, &path);
	if (gb_policy_set_get(&ps, org, &spec->policies, &path, NULL, err, cap) !=
	    0) {
		*failed = 1;
		ps = NULL;
	}
	gb_strv_free(&path);
	return ps;
}
