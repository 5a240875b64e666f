/*
 * bench/autoscale.c -- issue 21's benchmark: a compressed 7-day diurnal
 * demand trace replayed against three pools in one run.
 *
 *   autoscale [-t TARGET]...
 *
 * The trace (deterministic: a fixed seed): demand, in instances' worth of
 * work (one instance serves 1.0 at 100% utilisation), every 30 s for a
 * week from a Monday 00:00 UTC.  Weekdays rise from 1 at 02:00 to 8 at
 * 14:00 and fall back; weekends peak at 2.5; every step has +-10% noise.
 *
 * The pools (min 1, max 12, one GPU per instance):
 *   fixed       sized for the trace's peak, all week;
 *   autoscaled  the daemon's own decision, gb_autoscale_decide
 *               (core/engine/autoscale.h), fed each step with the
 *               heartbeats the instances would send (each ready
 *               instance's utilisation = served / ready); up_after 1m,
 *               down_after 10m, max_step 2; an added instance serves
 *               BOOT_S after the decision (the scale-up's delay) and
 *               sends no heartbeat until then; removed instances are
 *               the ones gb_autoscale_victims picks;
 *   oracle      exactly ceil(demand) instances at every step, no delay.
 *
 * Reported per pool: GPU-hours bought, demand left unserved (in
 * instance-seconds of demand, and how much of it fell within a
 * scale-up's delay: while the pool waits out up_after above its target,
 * or an added instance still boots), and the number of scale actions.  Targets
 * (issue 21): autoscaled <= 1.25 x the oracle's GPU-hours and <= 0.6 x
 * the fixed pool's, with unserved demand only during scale-ups' delays.
 * It runs once per gpu_util_target (default: 0.7, the README's example,
 * and 0.85).  Prints "RESULT autoscale ..." lines for bench/run.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autoscale.h"

#define STEP_S 30
#define DAYS 7
#define BOOT_S 120
#define POOL_MIN 1
#define POOL_MAX 12
#define MAX_INST POOL_MAX

#define TARGET_VS_ORACLE 1.25
#define TARGET_VS_FIXED 0.6

typedef struct inst {
	int64_t id, created_at, ready_at;
} inst;

typedef struct pool_result {
	double gpu_hours;
	double unserved;         /* instance-seconds of demand */
	double unserved_booting; /* of which within a scale-up's delay */
	int actions;
} pool_result;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: uniform in [-1, 1] */
static double noise(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ULL) >> 11) /
	               (double)(1ULL << 53) * 2.0 - 1.0;
}

/* The trace's demand at step k (t seconds after Monday 00:00 UTC). */
static double demand_at(int64_t t)
{
	int day = (int)(t / 86400);
	double h = (double)(t % 86400) / 3600.0;
	double shape = 0.5 - 0.5 * cos(2.0 * M_PI * (h - 2.0) / 24.0);
	double peak = day < 5 ? 7.0 : 1.5;
	double d = (1.0 + peak * shape) * (1.0 + 0.1 * noise());
	return d > 0 ? d : 0;
}

static void run_autoscaled(const double *dem, size_t nsteps, int64_t t0,
                           double target, pool_result *r)
{
	gb_autoscale as;
	gb_as_state st;
	inst v[MAX_INST];
	gb_as_sample s[MAX_INST];
	int64_t victims[MAX_INST], next_id = 1;
	int n = POOL_MIN;
	memset(&as, 0, sizeof(as));
	memset(&st, 0, sizeof(st));
	memset(r, 0, sizeof(*r));
	as.enabled = 1;
	as.gpu_util_target = target;
	as.up_after_s = 60;
	as.down_after_s = 600;
	as.max_step = 2;
	for (int i = 0; i < n; i++)
		v[i] = (inst){next_id++, t0, t0};
	for (size_t k = 0; k < nsteps; k++) {
		int64_t now = t0 + (int64_t)k * STEP_S;
		int ready = 0, booting = 0;
		double served, util;
		gb_as_input in;
		gb_as_decision out;
		for (int i = 0; i < n; i++) {
			if (v[i].ready_at <= now)
				ready++;
			else
				booting = 1;
		}
		served = dem[k] < ready ? dem[k] : ready;
		util = ready ? served / ready : 0;
		r->gpu_hours += (double)n * STEP_S / 3600.0;
		for (int i = 0; i < n; i++) {
			s[i].id = v[i].id;
			s[i].created_at = v[i].created_at;
			s[i].util = util;
			s[i].at = v[i].ready_at <= now ? now : 0;
		}
		memset(&in, 0, sizeof(in));
		in.min = POOL_MIN;
		in.max = POOL_MAX;
		in.as = &as;
		in.current = n;
		in.samples = s;
		in.nsamples = (size_t)n;
		in.now = now;
		in.fresh_s = GB_AS_FRESH_S;
		gb_autoscale_decide(&in, &st, &out);
		/* demand left unserved this step; within a scale-up's delay
		 * when the pool is waiting out up_after (its clock runs) or
		 * an added instance is still booting */
		if (dem[k] > served) {
			r->unserved += (dem[k] - served) * STEP_S;
			if (booting || st.above_since || out.desired > n)
				r->unserved_booting += (dem[k] - served) * STEP_S;
		}
		if (out.desired > n) {
			while (n < out.desired)
				v[n++] = (inst){next_id++, now, now + BOOT_S};
			r->actions++;
		} else if (out.desired < n) {
			size_t nv = gb_autoscale_victims(s, (size_t)n, now,
			                                 GB_AS_FRESH_S,
			                                 (size_t)(n - out.desired),
			                                 victims);
			for (size_t j = 0; j < nv; j++)
				for (int i = 0; i < n; i++)
					if (v[i].id == victims[j]) {
						v[i] = v[--n];
						break;
					}
			r->actions++;
		}
	}
}

static void print_pool(const char *name, double target,
                       const pool_result *r, double total_demand)
{
	printf("  %-22s %9.1f GPU-h  unserved %9.0f demand-s (%.3f%% of demand; "
	       "%9.0f of it within a scale-up's delay)  %5d scale actions\n",
	       name, r->gpu_hours, r->unserved,
	       total_demand > 0 ? 100.0 * r->unserved / total_demand : 0,
	       r->unserved_booting, r->actions);
	(void)target;
}

int main(int argc, char **argv)
{
	double targets[8] = {0.7, 0.85};
	int ntargets = 2, given = 0;
	size_t nsteps = (size_t)DAYS * 86400 / STEP_S;
	double *dem = calloc(nsteps, sizeof(*dem)), peak = 0, total = 0;
	struct tm monday = {0};
	int64_t t0;
	pool_result fixed, oracle;
	int nfixed, prev = -1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-t") == 0 && i + 1 < argc && given < 8) {
			targets[given++] = atof(argv[++i]);
			ntargets = given;
		} else {
			fprintf(stderr, "usage: %s [-t TARGET]...\n", argv[0]);
			return 2;
		}
	}
	if (!dem)
		return 1;
	/* Monday 2026-11-23 00:00 UTC */
	monday.tm_year = 2026 - 1900;
	monday.tm_mon = 10;
	monday.tm_mday = 23;
	t0 = (int64_t)timegm(&monday);
	for (size_t k = 0; k < nsteps; k++) {
		dem[k] = demand_at((int64_t)k * STEP_S);
		total += dem[k] * STEP_S;
		if (dem[k] > peak)
			peak = dem[k];
	}
	/* fixed at peak: never short */
	memset(&fixed, 0, sizeof(fixed));
	nfixed = (int)ceil(peak);
	fixed.gpu_hours = (double)nfixed * (double)nsteps * STEP_S / 3600.0;
	/* the oracle: exactly what each step needs, at once */
	memset(&oracle, 0, sizeof(oracle));
	for (size_t k = 0; k < nsteps; k++) {
		int need = (int)ceil(dem[k]);
		need = need < POOL_MIN ? POOL_MIN : need;
		oracle.gpu_hours += (double)need * STEP_S / 3600.0;
		if (prev >= 0 && need != prev)
			oracle.actions++;
		prev = need;
	}
	printf("autoscale: a 7-day diurnal trace (weekday peak %.2f, %.0f "
	       "demand-s in all, %zu steps of %d s), pool min %d max %d, "
	       "scale-up delay %d s\n",
	       peak, total, nsteps, STEP_S, POOL_MIN, POOL_MAX, BOOT_S);
	print_pool("fixed at peak", 0, &fixed, total);
	print_pool("oracle", 0, &oracle, total);
	for (int i = 0; i < ntargets; i++) {
		pool_result a;
		char name[64];
		double vs_oracle, vs_fixed;
		int ok;
		run_autoscaled(dem, nsteps, t0, targets[i], &a);
		snprintf(name, sizeof(name), "autoscaled (target %.2f)",
		         targets[i]);
		print_pool(name, targets[i], &a, total);
		vs_oracle = a.gpu_hours / oracle.gpu_hours;
		vs_fixed = a.gpu_hours / fixed.gpu_hours;
		ok = vs_oracle <= TARGET_VS_ORACLE && vs_fixed <= TARGET_VS_FIXED &&
		     a.unserved_booting >= a.unserved - 1e-9;
		printf("RESULT autoscale[target %.2f] gpu_hours %.1f vs_oracle "
		       "%.2fx target<=%.2fx vs_fixed %.2fx target<=%.2fx "
		       "unserved_demand_s %.0f outside_scale_up_delay %.0f "
		       "actions %d %s\n",
		       targets[i], a.gpu_hours, vs_oracle, TARGET_VS_ORACLE,
		       vs_fixed, TARGET_VS_FIXED, a.unserved,
		       a.unserved - a.unserved_booting, a.actions,
		       ok ? "PASS" : "MISS");
	}
	free(dem);
	return 0;
}
