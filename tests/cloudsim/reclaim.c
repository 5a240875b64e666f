/*
 * reclaim.c -- spot reclamation as each cloud shows it, and the ticker
 * thread that drives the scenario's random and scheduled reclaims and the
 * garbage collection of expired records.
 *
 *   EC2:   shutting-down, then terminated (48) with stateReason
 *          Server.SpotInstanceTermination.
 *   Azure: evictionPolicy Deallocate -> PowerState/deallocated (the VM
 *          stays, billing stops); Delete -> the VM disappears.
 *   GCE:   a compute.instances.preempted operation in the zone, then
 *          TERMINATED (instanceTerminationAction STOP) or deleted (DELETE).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

static int eligible(const sim_inst *in, int64_t now)
{
	sim_phase ph;
	if (!in->spot)
		return 0;
	ph = sim_inst_phase(in, now);
	return ph == SIM_PH_PENDING || ph == SIM_PH_RUNNING;
}

static void gce_preempt_op(sim_inst *in, int64_t now)
{
	char hex[17], name[96];
	sim_op *op;
	sim_hex_id(hex, 16);
	snprintf(name, sizeof(name), "systemevent-%lld-%s",
	         (long long)now, hex);
	op = sim_op_new(SIM_GCP, name);
	op->kind = gb_xstrdup("compute.instances.preempted");
	op->project = gb_xstrdup(sim_g.sc.gcp_project);
	op->zone = gb_xstrdup(in->zone);
	op->target = gb_xstrdup(in->name);
	op->target_id = gb_xstrdup(in->id);
	op->user = gb_xstrdup("system");
	op->t_start = now;
	op->t_done = now;
	op->t_purge = now + 3600 * 1000;
	{
		char nid[24];
		snprintf(nid, sizeof(nid), "%llu",
		         (unsigned long long)(sim_rand_u64() >> 2));
		op->numeric_id = gb_xstrdup(nid);
	}
}

int sim_reclaim(sim_inst *in, int64_t now)
{
	if (!eligible(in, now))
		return -1;
	switch (in->cloud) {
	case SIM_AWS:
		sim_inst_stop(in, now, SIM_END_SPOT, 0);
		break;
	case SIM_AZURE:
		sim_inst_stop(in, now, SIM_END_SPOT, !in->az_evict_delete);
		break;
	case SIM_GCP:
		gce_preempt_op(in, now);
		sim_inst_stop(in, now, SIM_END_SPOT, !in->gce_term_delete);
		break;
	}
	sim_count_fault(in->cloud, SIM_F_RECLAIMED);
	sim_log("reclaimed %s spot instance %s", sim_cloud_name(in->cloud),
	        in->cloud == SIM_AWS ? in->id : in->name);
	return 0;
}

static int in_pool(const sim_inst *in, const char *pool)
{
	const char *v;
	if (!pool)
		return 1;
	v = gb_kvs_get(&in->tags, "gpubroker-pool");
	return v && strcmp(v, pool) == 0;
}

void sim_reclaim_fraction(int cloud, const char *pool, double fraction,
                          int64_t now, gb_strv *out)
{
	size_t n = 0, want;
	sim_inst **v = sim_inst_list(cloud, &n);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (eligible(v[i], now) && in_pool(v[i], pool))
			v[k++] = v[i];
	want = (size_t)floor(fraction * (double)k + 0.5);
	if (want == 0 && fraction > 0 && k > 0)
		want = 1;
	if (want > k)
		want = k;
	for (size_t i = 0; i < want; i++) {
		size_t j = i + (size_t)(sim_rand_u64() % (k - i));
		sim_inst *t = v[i];
		v[i] = v[j];
		v[j] = t;
		if (sim_reclaim(v[i], now) == 0 && out)
			gb_strv_push(out, v[i]->cloud == SIM_AWS ? v[i]->id
			                                         : v[i]->name);
	}
	free(v);
}

/* ------------------------------------------------------------------ */
/* ticker                                                              */

static pthread_t ticker;
static pthread_cond_t tick_cv = PTHREAD_COND_INITIALIZER;
static int ticker_running;

static void random_reclaims(int64_t now)
{
	double rate = sim_g.sc.spot_rate_per_hour;
	int64_t dt = now - sim_g.last_tick;
	double p;
	if (rate <= 0 || dt <= 0)
		return;
	if (dt > 10000)
		dt = 10000;
	p = 1.0 - exp(-rate * (double)dt / 3600000.0);
	for (size_t i = 0; i < sim_g.insts.cap; i++) {
		sim_inst *in = sim_map_slot(&sim_g.insts, i, NULL);
		if (in && eligible(in, now) && sim_rand() < p)
			sim_reclaim(in, now);
	}
}

static void scheduled_reclaims(int64_t now)
{
	for (size_t i = 0; i < sim_g.sc.nsched; i++) {
		sim_sched *s = &sim_g.sc.sched[i];
		if (s->done || now - s->base < s->at_ms)
			continue;
		s->done = 1;
		if (s->fraction >= 0)
			sim_reclaim_fraction(s->cloud, s->pool, s->fraction,
			                     now, NULL);
		for (size_t j = 0; j < s->ids.n; j++) {
			for (size_t k = 0; k < sim_g.insts.cap; k++) {
				sim_inst *in = sim_map_slot(&sim_g.insts, k,
				                            NULL);
				if (in && (strcmp(in->id, s->ids.v[j]) == 0 ||
				           (in->name &&
				            strcmp(in->name, s->ids.v[j]) == 0)))
					sim_reclaim(in, now);
			}
		}
	}
}

static void *tick_main(void *arg)
{
	int64_t last_gc = 0;
	(void)arg;
	sim_lock();
	sim_g.last_tick = sim_now();
	while (!sim_g.stopping) {
		struct timespec ts;
		int64_t now;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&tick_cv, &sim_g.mu, &ts);
		if (sim_g.stopping)
			break;
		now = sim_now();
		random_reclaims(now);
		scheduled_reclaims(now);
		sim_agents_tick(now);
		sim_g.last_tick = now;
		if (now - last_gc >= 1000) {
			sim_state_gc(now);
			last_gc = now;
		}
	}
	sim_unlock();
	return NULL;
}

int sim_ticker_start(void)
{
	if (pthread_create(&ticker, NULL, tick_main, NULL) != 0)
		return -1;
	ticker_running = 1;
	return 0;
}

void sim_ticker_stop(void)
{
	if (!ticker_running)
		return;
	sim_lock();
	sim_g.stopping = 1;
	pthread_cond_broadcast(&tick_cv);
	sim_unlock();
	pthread_join(ticker, NULL);
	ticker_running = 0;
	sim_lock();
	sim_agents_stop();
	sim_unlock();
}
