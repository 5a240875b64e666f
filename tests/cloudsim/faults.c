/*
 * faults.c -- the scenario's fault machinery: a seeded generator, latency,
 * injected errors and lost responses, throttling (token buckets for EC2
 * and ARM, synchronized minute windows for GCE) and the counters that
 * /_sim/counters reports.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

const char *const sim_fault_names[SIM_F_N] = {
	"throttled", "error", "lost_response", "capacity", "quota", "reclaimed",
	"auth_refused",
};

/* splitmix64: small, seedable, good enough for fault draws. */
uint64_t sim_rand_u64(void)
{
	uint64_t z = (sim_g.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double sim_rand(void)
{
	return (double)(sim_rand_u64() >> 11) / 9007199254740992.0;
}

void sim_latency(int cloud, const char *op)
{
	const sim_opval *v;
	int64_t ms = 0, end;
	sim_lock();
	v = sim_optab_find(&sim_g.sc.latency[cloud], op);
	if (v) {
		ms = (int64_t)v->a;
		if (v->b > 0)
			ms += (int64_t)(sim_rand() * (v->b + 1));
	}
	sim_unlock();
	end = gb_mono_ms() + ms;
	while (!sim_g.stopping) {
		int64_t left = end - gb_mono_ms();
		if (left <= 0)
			break;
		gb_sleep_ms(left > 100 ? 100 : left);
	}
}

void sim_count_call(int cloud, const char *op)
{
	char key[128];
	snprintf(key, sizeof(key), "%s|%s", sim_cloud_name(cloud), op);
	sim_count_add(&sim_g.calls, key, 1);
}

void sim_count_fault(int cloud, int kind)
{
	if (cloud >= 0 && cloud < SIM_NCLOUD && kind >= 0 && kind < SIM_F_N)
		sim_g.faults[cloud][kind]++;
}

static int draw(const sim_optab *t, const char *op)
{
	const sim_opval *v = sim_optab_find(t, op);
	if (!v || v->a <= 0)
		return 0;
	return sim_rand() < v->a;
}

int sim_fault_error(int cloud, const char *op)
{
	if (!draw(&sim_g.sc.errors[cloud], op))
		return 0;
	sim_count_fault(cloud, SIM_F_ERROR);
	return 1;
}

int sim_fault_lost(int cloud, const char *op)
{
	if (!draw(&sim_g.sc.lost[cloud], op))
		return 0;
	sim_count_fault(cloud, SIM_F_LOST);
	return 1;
}

static sim_bucket *bucket_get(int cloud, const char *region,
                              const char *name, const sim_opval **cfg)
{
	char key[256];
	sim_bucket *b;
	*cfg = NULL;
	for (size_t i = 0; i < sim_g.sc.throttle[cloud].n; i++)
		if (strcmp(sim_g.sc.throttle[cloud].v[i].op, name) == 0)
			*cfg = &sim_g.sc.throttle[cloud].v[i];
	if (!*cfg)
		return NULL;
	snprintf(key, sizeof(key), "%s|%s|%s", sim_cloud_name(cloud),
	         region ? region : "", name);
	b = sim_map_get(&sim_g.buckets, key);
	if (!b) {
		b = gb_xcalloc(1, sizeof(*b));
		b->tokens = (*cfg)->a;
		b->last_ms = gb_mono_ms();
		b->window = -1;
		sim_map_put(&sim_g.buckets, key, b);
	}
	return b;
}

static void refill(sim_bucket *b, const sim_opval *cfg, int64_t now)
{
	double add = (double)(now - b->last_ms) / 1000.0 * cfg->b;
	b->tokens += add;
	if (b->tokens > cfg->a)
		b->tokens = cfg->a;
	b->last_ms = now;
}

int sim_throttle(int cloud, const char *region, const char *name, double n,
                 int64_t *retry_ms, int64_t *remaining)
{
	const sim_opval *cfg;
	sim_bucket *b = bucket_get(cloud, region, name, &cfg);
	int64_t now = gb_mono_ms();
	*retry_ms = 0;
	if (remaining)
		*remaining = 1000000;
	if (!b)
		return 0;
	if (cloud == SIM_GCP) {
		int64_t win = (int64_t)cfg->b * 1000;
		int64_t idx = sim_now() / win;
		if (idx != b->window) {
			b->window = idx;
			b->used = 0;
		}
		if ((double)b->used + n > cfg->a) {
			*retry_ms = (idx + 1) * win - sim_now();
			if (remaining)
				*remaining = 0;
			sim_count_fault(cloud, SIM_F_THROTTLED);
			return 1;
		}
		b->used += (int64_t)n;
		if (remaining)
			*remaining = (int64_t)cfg->a - b->used;
		return 0;
	}
	refill(b, cfg, now);
	if (b->tokens + 1e-9 < n) {
		double need = n - b->tokens;
		*retry_ms = cfg->b > 0 ? (int64_t)ceil(need / cfg->b * 1000.0)
		                       : 3600000;
		if (remaining)
			*remaining = 0;
		sim_count_fault(cloud, SIM_F_THROTTLED);
		return 1;
	}
	b->tokens -= n;
	if (remaining)
		*remaining = (int64_t)floor(b->tokens);
	return 0;
}

void sim_throttle_charge(int cloud, const char *region, const char *name,
                         double n)
{
	const sim_opval *cfg;
	sim_bucket *b = bucket_get(cloud, region, name, &cfg);
	if (!b)
		return;
	refill(b, cfg, gb_mono_ms());
	b->tokens -= n;
	if (b->tokens < 0)
		b->tokens = 0;
}

int64_t sim_throttle_peek(int cloud, const char *region, const char *name)
{
	const sim_opval *cfg;
	sim_bucket *b = bucket_get(cloud, region, name, &cfg);
	if (!b)
		return INT64_MAX;
	refill(b, cfg, gb_mono_ms());
	return (int64_t)floor(b->tokens);
}
