/*
 * state.c -- the one global state: instances and their lifecycle,
 * capacity and quota usage, operations, bearer tokens, garbage
 * collection and reset.  Every function here expects sim_g.mu held
 * (except sim_lock/sim_unlock themselves).
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

sim_state sim_g = {.mu = PTHREAD_MUTEX_INITIALIZER};

static const char *const cloud_names[SIM_NCLOUD] = {"aws", "azure", "gcp",
                                                    "lambda"};

const char *sim_cloud_name(int cloud)
{
	return cloud >= 0 && cloud < SIM_NCLOUD ? cloud_names[cloud] : "any";
}

int sim_cloud_parse(const char *s)
{
	for (int i = 0; i < SIM_NCLOUD; i++)
		if (strcmp(s, cloud_names[i]) == 0)
			return i;
	return -1;
}

int64_t sim_now(void)
{
	return gb_now_ms();
}

void sim_lock(void)
{
	pthread_mutex_lock(&sim_g.mu);
}

void sim_unlock(void)
{
	pthread_mutex_unlock(&sim_g.mu);
}

void sim_hex_id(char *out, size_t n)
{
	char buf[65];
	size_t nb = (n + 1) / 2;
	if (nb > 32 || gb_random_hex(buf, nb) != 0)
		abort();
	memcpy(out, buf, n);
	out[n] = '\0';
}

void sim_ips(int64_t seq, char priv[16], char pub[16])
{
	uint64_t s = (uint64_t)seq;
	snprintf(priv, 16, "10.%u.%u.%u", (unsigned)(s / 62500 % 250),
	         (unsigned)(s / 250 % 250), (unsigned)(s % 250 + 4));
	snprintf(pub, 16, "198.%u.%u.%u", (unsigned)(18 + s / 62500 % 2),
	         (unsigned)(s / 250 % 250), (unsigned)(s % 250 + 4));
}

/* ------------------------------------------------------------------ */
/* phases                                                              */

sim_phase sim_inst_phase(const sim_inst *in, int64_t now)
{
	if (in->t_stop) {
		if (now < in->t_gone)
			return SIM_PH_STOPPING;
		return in->keep ? SIM_PH_STOPPED : SIM_PH_GONE;
	}
	if (in->failed)
		return now < in->t_running ? SIM_PH_PENDING : SIM_PH_FAILED;
	return now < in->t_running ? SIM_PH_PENDING : SIM_PH_RUNNING;
}

const char *sim_phase_name(sim_phase ph)
{
	switch (ph) {
	case SIM_PH_PENDING: return "pending";
	case SIM_PH_RUNNING: return "running";
	case SIM_PH_STOPPING: return "stopping";
	case SIM_PH_STOPPED: return "stopped";
	case SIM_PH_GONE: return "terminated";
	case SIM_PH_FAILED: return "failed";
	}
	return "unknown";
}

/* ------------------------------------------------------------------ */
/* instances                                                           */

static void inst_free(void *p)
{
	sim_inst *in = p;
	if (!in)
		return;
	if (in->bill)
		in->bill->inst = NULL;
	free(in->key);
	free(in->id);
	free(in->name);
	free(in->region);
	free(in->zone);
	free(in->type);
	free(in->gpu);
	gb_kvs_free(&in->tags);
	free(in->fail_code);
	free(in->fail_msg);
	free(in->cap_key);
	for (int i = 0; i < 3; i++)
		free(in->quse[i].key);
	free(in->image_id);
	free(in->client_token);
	free(in->ctoken_key);
	free(in->reservation_id);
	free(in->spot_req_id);
	free(in->key_name);
	free(in->subnet_id);
	free(in->rg);
	free(in->location);
	json_decref(in->az_body);
	free(in->lambda_host);
	json_decref(in->gce_body);
	free(in->gce_accel);
	free(in->gce_machine);
	free(in);
}

sim_inst *sim_inst_new(int cloud, const char *key)
{
	sim_inst *in = gb_xcalloc(1, sizeof(*in));
	in->cloud = cloud;
	in->key = gb_xstrdup(key);
	in->seq = ++sim_g.next_seq;
	sim_ips(in->seq, in->priv_ip, in->pub_ip);
	sim_map_put(&sim_g.insts, key, in);
	sim_g.ninsts++;
	return in;
}

int sim_state_full(void)
{
	return (int64_t)sim_g.ninsts >= sim_g.sc.max_instances;
}

static void ctoken_unref(const sim_inst *in)
{
	sim_ctoken *ct;
	if (!in->ctoken_key)
		return;
	ct = sim_map_get(&sim_g.ctokens, in->ctoken_key);
	if (ct && --ct->refs <= 0) {
		sim_map_del(&sim_g.ctokens, in->ctoken_key);
		free(ct->hash);
		free(ct->reservation_id);
		gb_strv_free(&ct->ids);
		free(ct);
	}
}

void sim_inst_purge(sim_inst *in)
{
	sim_map_del(&sim_g.insts, in->key);
	sim_g.ninsts--;
	sim_inst_release(in, sim_now());
	ctoken_unref(in);
	inst_free(in);
}

sim_inst *sim_inst_find(const char *key)
{
	sim_inst *in = sim_map_get(&sim_g.insts, key);
	if (in && in->t_purge && sim_now() >= in->t_purge) {
		sim_inst_purge(in);
		return NULL;
	}
	return in;
}

static int by_seq(const void *a, const void *b)
{
	const sim_inst *x = *(sim_inst *const *)a, *y = *(sim_inst *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

sim_inst **sim_inst_list(int cloud, size_t *n)
{
	sim_inst **v = gb_xcalloc(sim_g.ninsts + 1, sizeof(*v));
	int64_t now = sim_now();
	size_t k = 0;
	for (size_t i = 0; i < sim_g.insts.cap; i++) {
		sim_inst *in = sim_map_slot(&sim_g.insts, i, NULL);
		if (!in || (cloud >= 0 && in->cloud != cloud))
			continue;
		if (in->t_purge && now >= in->t_purge)
			continue;
		v[k++] = in;
	}
	qsort(v, k, sizeof(*v), by_seq);
	*n = k;
	return v;
}

void sim_inst_allocate(sim_inst *in, int64_t now)
{
	if (in->counted)
		return;
	in->counted = 1;
	if (in->cap_key)
		sim_count_add(&sim_g.usage, in->cap_key, 1);
	for (int i = 0; i < 3; i++)
		if (in->quse[i].key)
			sim_count_add(&sim_g.usage, in->quse[i].key,
			              in->quse[i].amount);
	(void)now;
	sim_bill_add(in);
}

void sim_inst_release(sim_inst *in, int64_t now)
{
	if (!in->counted)
		return;
	in->counted = 0;
	if (in->cap_key)
		sim_count_add(&sim_g.usage, in->cap_key, -1);
	for (int i = 0; i < 3; i++)
		if (in->quse[i].key)
			sim_count_add(&sim_g.usage, in->quse[i].key,
			              -in->quse[i].amount);
	sim_bill_end(in, now);
}

void sim_inst_stop(sim_inst *in, int64_t now, int reason, int keep)
{
	in->t_stop = now;
	in->t_gone = now + sim_g.sc.stopping_ms[in->cloud];
	in->keep = keep;
	if (!in->end_reason || reason == SIM_END_SPOT)
		in->end_reason = reason;
	if (keep)
		in->t_purge = 0;
	else if (in->cloud == SIM_AWS)
		in->t_purge = in->t_gone + sim_g.sc.aws_terminated_visible_ms;
	else if (in->cloud == SIM_LAMBDA)
		in->t_purge = in->t_gone + sim_g.sc.lambda_terminated_visible_ms;
	else
		in->t_purge = in->t_gone;
	if (in->t_purge == now)
		in->t_purge = now + 1;
	sim_inst_release(in, now);
}

/* ------------------------------------------------------------------ */
/* regions                                                             */

static void region_add(sim_regions *rs, const char *name, const char *zone)
{
	sim_region *r = NULL;
	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->v[i].name, name) == 0)
			r = &rs->v[i];
	if (!r) {
		rs->v = gb_xrealloc(rs->v, (rs->n + 1) * sizeof(*rs->v));
		r = &rs->v[rs->n++];
		memset(r, 0, sizeof(*r));
		r->name = gb_xstrdup(name);
	}
	if (zone && *zone && !gb_strv_contains(&r->zones, zone))
		gb_strv_push(&r->zones, zone);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sim_regions_derive(void)
{
	for (int c = 0; c < SIM_NCLOUD; c++) {
		sim_regions *rs = &sim_g.regions[c];
		const sim_regions *given = &sim_g.sc.regions[c];
		if (given->n) {
			for (size_t i = 0; i < given->n; i++) {
				region_add(rs, given->v[i].name, NULL);
				for (size_t z = 0; z < given->v[i].zones.n; z++)
					region_add(rs, given->v[i].name,
					           given->v[i].zones.v[z]);
			}
			continue;
		}
		for (size_t t = 0; t < sim_g.cat[c].ntypes; t++) {
			const sim_ctype *ct = &sim_g.cat[c].types[t];
			for (size_t r = 0; r < ct->nregs; r++) {
				region_add(rs, ct->regs[r].region, NULL);
				for (size_t z = 0; z < ct->regs[r].nzones; z++)
					region_add(rs, ct->regs[r].region,
					           ct->regs[r].zones[z]);
			}
		}
		for (size_t i = 0; i < rs->n; i++)
			if (rs->v[i].zones.n)
				qsort(rs->v[i].zones.v, rs->v[i].zones.n,
				      sizeof(char *), cmp_str);
	}
}

const sim_region *sim_region_find(int cloud, const char *region)
{
	const sim_regions *rs = &sim_g.regions[cloud];
	for (size_t i = 0; region && i < rs->n; i++)
		if (strcmp(rs->v[i].name, region) == 0)
			return &rs->v[i];
	return NULL;
}

const sim_region *sim_zone_region(int cloud, const char *zone)
{
	const sim_regions *rs = &sim_g.regions[cloud];
	for (size_t i = 0; zone && i < rs->n; i++)
		if (gb_strv_contains(&rs->v[i].zones, zone))
			return &rs->v[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* capacity                                                            */

int64_t sim_capacity_left(int cloud, const char *region, const char *zone,
                          const char *type, int spot, char **key)
{
	const sim_scenario *sc = &sim_g.sc;
	*key = gb_xasprintf("cap|%s|%s|%s|%s|%s", sim_cloud_name(cloud), region,
	                    zone ? zone : "", type, spot ? "spot" : "on-demand");
	for (size_t i = 0; i < sc->ncaps; i++) {
		const sim_caprule *r = &sc->caps[i];
		if (r->cloud >= 0 && r->cloud != cloud)
			continue;
		if (!gb_glob(r->region, region) ||
		    !gb_glob(r->zone, zone ? zone : "") ||
		    !gb_glob(r->type, type))
			continue;
		if (r->market == SIM_MARKET_ONDEMAND && spot)
			continue;
		if (r->market == SIM_MARKET_SPOT && !spot)
			continue;
		{
			int64_t used = sim_count_get(&sim_g.usage, *key);
			return r->count > used ? r->count - used : 0;
		}
	}
	return INT64_MAX;
}

/* ------------------------------------------------------------------ */
/* operations                                                          */

static void op_free(void *p)
{
	sim_op *op = p;
	if (!op)
		return;
	free(op->id);
	free(op->numeric_id);
	free(op->kind);
	free(op->project);
	free(op->zone);
	free(op->target);
	free(op->target_id);
	free(op->request_id);
	free(op->user);
	free(op->err_code);
	free(op->err_msg);
	free(op);
}

sim_op *sim_op_new(int cloud, const char *id)
{
	sim_op *op = gb_xcalloc(1, sizeof(*op));
	op->cloud = cloud;
	op->id = gb_xstrdup(id);
	op->seq = ++sim_g.next_seq;
	op->t_start = sim_now();
	sim_map_put(&sim_g.ops, id, op);
	return op;
}

sim_op *sim_op_find(const char *id)
{
	return sim_map_get(&sim_g.ops, id);
}

static void op_drop(sim_op *op)
{
	sim_map_del(&sim_g.ops, op->id);
	if (op->request_id)
		sim_map_del(&sim_g.gce_rids, op->request_id);
	op_free(op);
}

/* ------------------------------------------------------------------ */
/* tokens                                                              */

void sim_token_issue(int cloud, int64_t lifetime_s, char *out, size_t cap)
{
	char hex[65];
	sim_token *t = gb_xcalloc(1, sizeof(*t));
	int64_t now = sim_now();
	sim_hex_id(hex, 48);
	snprintf(out, cap, "%s%s", cloud == SIM_GCP ? "ya29.sim." : "simaz.",
	         hex);
	t->cloud = cloud;
	t->expires = now + lifetime_s * 1000;
	t->purge = t->expires + 3600 * 1000;
	/* Bounded: drop expired tokens when the table is large. */
	if (sim_g.tokens.n >= 100000) {
		for (size_t i = 0; i < sim_g.tokens.cap; i++) {
			const char *k;
			sim_token *o = sim_map_slot(&sim_g.tokens, i, &k);
			if (o && o->expires <= now) {
				char *kk = gb_xstrdup(k);
				free(sim_map_del(&sim_g.tokens, kk));
				free(kk);
			}
		}
	}
	if (sim_g.tokens.n < 200000)
		sim_map_put(&sim_g.tokens, out, t);
	else
		free(t);
}

int sim_token_check(int cloud, const char *token, int64_t *expires)
{
	sim_token *t = sim_map_get(&sim_g.tokens, token);
	if (!t || t->cloud != cloud)
		return -1;
	if (expires)
		*expires = t->expires;
	return sim_now() >= t->expires ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* gc / reset                                                          */

void sim_state_gc(int64_t now)
{
	gb_strv dead = {NULL, 0};
	for (size_t i = 0; i < sim_g.insts.cap; i++) {
		const char *k;
		sim_inst *in = sim_map_slot(&sim_g.insts, i, &k);
		if (in && in->t_purge && now >= in->t_purge)
			gb_strv_push(&dead, k);
	}
	for (size_t i = 0; i < dead.n; i++) {
		sim_inst *in = sim_map_get(&sim_g.insts, dead.v[i]);
		if (in)
			sim_inst_purge(in);
	}
	gb_strv_free(&dead);
	/* operations: an hour after they finished, or oldest first when
	 * there are too many */
	for (size_t i = 0; i < sim_g.ops.cap; i++) {
		const char *k;
		sim_op *op = sim_map_slot(&sim_g.ops, i, &k);
		if (op && ((op->t_purge && now >= op->t_purge) ||
		           (sim_g.ops.n > 100000 && op->t_done <= now)))
			gb_strv_push(&dead, k);
	}
	for (size_t i = 0; i < dead.n; i++) {
		sim_op *op = sim_map_get(&sim_g.ops, dead.v[i]);
		if (op)
			op_drop(op);
	}
	gb_strv_free(&dead);
	for (size_t i = 0; i < sim_g.tokens.cap; i++) {
		const char *k;
		sim_token *t = sim_map_slot(&sim_g.tokens, i, &k);
		if (t && now >= t->purge)
			gb_strv_push(&dead, k);
	}
	for (size_t i = 0; i < dead.n; i++)
		free(sim_map_del(&sim_g.tokens, dead.v[i]));
	gb_strv_free(&dead);
}

static void ctoken_free(void *p)
{
	sim_ctoken *ct = p;
	free(ct->hash);
	free(ct->reservation_id);
	gb_strv_free(&ct->ids);
	free(ct);
}

static void drop_instances(void)
{
	sim_map_free(&sim_g.insts, inst_free);
	sim_g.ninsts = 0;
	sim_map_free(&sim_g.ops, op_free);
	sim_map_free(&sim_g.gce_rids, NULL);
	sim_map_free(&sim_g.ctokens, ctoken_free);
	sim_map_free(&sim_g.usage, free);
}

void sim_state_reset(void)
{
	drop_instances();
	sim_map_free(&sim_g.buckets, free);
	sim_map_free(&sim_g.calls, free);
	memset(sim_g.faults, 0, sizeof(sim_g.faults));
	sim_bill_free_all();
	sim_lambda_keys_reset();
	sim_g.t0 = sim_now();
	for (size_t i = 0; i < sim_g.sc.nsched; i++) {
		sim_g.sc.sched[i].done = 0;
		sim_g.sc.sched[i].base = sim_g.t0;
	}
}

void sim_state_free(void)
{
	drop_instances();
	sim_map_free(&sim_g.buckets, free);
	sim_map_free(&sim_g.calls, free);
	sim_map_free(&sim_g.tokens, free);
	sim_bill_free_all();
	sim_lambda_keys_free();
	for (int c = 0; c < SIM_NCLOUD; c++) {
		sim_regions *rs = &sim_g.regions[c];
		for (size_t i = 0; i < rs->n; i++) {
			free(rs->v[i].name);
			gb_strv_free(&rs->v[i].zones);
		}
		free(rs->v);
		rs->v = NULL;
		rs->n = 0;
		sim_catalog_free(&sim_g.cat[c]);
	}
	sim_scenario_free(&sim_g.sc);
}
