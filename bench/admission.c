/*
 * bench/admission.c -- issue 35's benchmark: a simulated week of pool
 * arrivals from four teams over shared GPUs, through the broker's own
 * admission decision (gb_admission_decide, core/engine/admission.h)
 * and through first-come-first-served, in one run with one seed.
 *
 *   admission
 *
 * The fabric: an on-prem site of 32 nodes (one node per instance) and a
 * 64-GPU cloud quota (an instance uses its GPU count).  Teams a, b, c, d
 * with shares 4:2:1:1, every team sending pools at the same rate (so the
 * small teams ask for more than their share and the shares decide);
 * weekday working hours four times the night's rate; the offered load at
 * the peak is about 1.4x the on-prem nodes and 1.6x the cloud quota.  A pool: half on-prem (1-4
 * nodes), half cloud (1-2 instances of 1, 2, 4 or 8 GPUs); class
 * production (10%, fixed size), batch (35%, a gang when larger than one
 * instance; half of them preemptible: checkpointing jobs) or dev (55%,
 * preemptible); a preemptible pool's floor is 0 (taken whole, it waits
 * again), the others' their count; grace 2m; its
 * work is count x a duration (exponential; production 4h, batch 3h, dev
 * 1.5h of instance-time), done at the rate of the instances it holds.
 *
 * Each 15 s (the daemon's default reconcile period) the pools waiting or
 * holding are handed to the decision; grants apply at once, preempted
 * instances go when their grace is over.  FCFS: the same arrivals, each
 * pool in arrival order gets what fits (a gang all or nothing), no
 * classes, no preemption.
 *
 * Measured for both:
 *   fairness      Jain's index of allocation / fair share per team, over
 *                 each resource at each step where some pool waits for
 *                 it, time-averaged.  The fair share: the resource
 *                 water-filled class by class (the top class's demands
 *                 first), within a class over the teams by their shares,
 *                 no team past what it asks for -- what priority plus
 *                 weighted fair share promise.  Target >= 0.95.
 *   inversions    steps where a pool of a lower class was given instances
 *                 of a resource while a higher-class pool waiting for it
 *                 would have fit in what was free before.  Target 0.
 *   utilisation   used / capacity of each resource at the steps where
 *                 some pool waits for it.  Target >= 0.95.
 *   top p99 wait  the 99th percentile of production pools' wait from
 *                 arrival to holding their full count.  Target <= one
 *                 reconcile period + the grace (135 s).
 *   preemptions   per hour (decisions, and instances).
 * Prints "RESULT admission[...]" lines for bench/run.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"

#define STEP_S 15
#define DAYS 7
#define GRACE_S 120
#define NTEAMS 4
#define NRES 2
#define MAXP 4096
#define MAXLIVE 1024

#define T_FAIR 0.95
#define T_UTIL 0.95
#define T_WAIT (STEP_S + GRACE_S)

enum { PROD = 1000, BATCH = 100, DEV = 10 };

static const char *const team_names[NTEAMS] = {"a", "b", "c", "d"};
static const double team_share[NTEAMS] = {4, 2, 1, 1};
static const int capacity[NRES] = {32, 64};
static const char *const res_names[NRES] = {"onprem:lab",
                                            "aws:us-east-1:P"};

typedef struct pool {
	char name[16];
	int team, prio, count, min, gang, preemptible;
	int per[NRES];
	int64_t arrival;
	double work;        /* instance-seconds to do */
	/* the run's state */
	int held, leaving;
	int64_t leave_at;
	double done;
	int64_t admitted_at; /* first time at full count; 0 never */
	int finished;
} pool;

static uint64_t rng;

static double uni(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ULL) >> 11) /
	       (double)(1ULL << 53);
}

static double expo(double mean)
{
	double u = uni();
	return -mean * log(u > 1e-12 ? u : 1e-12);
}

/* The trace: arrivals for a week from Monday 00:00. */
static size_t make_trace(pool *ps)
{
	size_t n = 0;
	rng = 0x2545f4914f6cdd1dULL;
	for (int64_t t = 0; t < DAYS * 86400 && n < MAXP; t += 60) {
		int day = (int)(t / 86400);
		double h = (double)(t % 86400) / 3600.0;
		int busy = day < 5 && h >= 8 && h < 19;
		/* pools per hour, per team */
		double rate = busy ? 4.0 : 1.0;
		for (int tm = 0; tm < NTEAMS; tm++) {
			if (uni() >= rate / 60.0)
				continue;
			pool *p = &ps[n];
			memset(p, 0, sizeof *p);
			snprintf(p->name, sizeof p->name, "%s%zu",
			         team_names[tm], n);
			p->team = tm;
			p->arrival = t;
			double c = uni(), mean;
			if (c < 0.10) {
				p->prio = PROD;
				mean = 4 * 3600;
			} else if (c < 0.45) {
				p->prio = BATCH;
				mean = 3 * 3600;
			} else {
				p->prio = DEV;
				mean = 1.5 * 3600;
			}
			if (uni() < 0.5) {
				p->count = 1 + (int)(uni() * 4);
				p->per[0] = 1;
			} else {
				static const int gpus[4] = {1, 2, 4, 8};
				p->count = 1 + (int)(uni() * 2);
				p->per[1] = gpus[(int)(uni() * 4)];
			}
			p->gang = p->prio == BATCH && p->count > 1;
			p->preemptible = p->prio == DEV ||
			                 (p->prio == BATCH && uni() < 0.5);
			/* a fixed pool's floor; a preemptible one may be
			 * taken whole (it then waits again) */
			p->min = p->preemptible ? 0 : p->count;
			p->work = p->count * expo(mean);
			if (p->work < 600)
				p->work = 600;
			n++;
		}
	}
	return n;
}

typedef struct stats {
	double fair_sum, fair_w;      /* Jain's, time-weighted */
	double util_sum, util_w;
	long inversions;
	long preempt_events, preempt_instances;
	double *waits;                /* production pools' waits (s) */
	size_t nwaits;
	long admitted, finished;
} stats;

/* The fair share of each team on resource r: water-filling, class by
 * class, by the teams' shares, no team past its demand.  ent[team]. */
static void fair_shares(const pool *ps, const size_t *live, size_t nlive,
                        int r, double *ent)
{
	static const int classes[3] = {PROD, BATCH, DEV};
	double left = capacity[r];
	for (int t = 0; t < NTEAMS; t++)
		ent[t] = 0;
	for (int k = 0; k < 3 && left > 1e-9; k++) {
		double dem[NTEAMS] = {0};
		for (size_t i = 0; i < nlive; i++) {
			const pool *p = &ps[live[i]];
			if (p->prio == classes[k] && p->per[r] > 0)
				dem[p->team] += (double)p->count * p->per[r];
		}
		int active[NTEAMS];
		for (int t = 0; t < NTEAMS; t++)
			active[t] = dem[t] > 1e-9;
		for (;;) {
			double w = 0;
			for (int t = 0; t < NTEAMS; t++)
				if (active[t])
					w += team_share[t];
			if (w <= 0 || left <= 1e-9)
				break;
			/* the smallest level at which a team is satisfied */
			double level = left / w;
			int sat = -1;
			for (int t = 0; t < NTEAMS; t++)
				if (active[t] && dem[t] / team_share[t] < level) {
					level = dem[t] / team_share[t];
					sat = t;
				}
			for (int t = 0; t < NTEAMS; t++)
				if (active[t]) {
					double g = level * team_share[t];
					ent[t] += g;
					dem[t] -= g;
					left -= g;
				}
			if (sat < 0)
				break;
			active[sat] = 0;
			for (int t = 0; t < NTEAMS; t++)
				if (active[t] && dem[t] <= 1e-9)
					active[t] = 0;
		}
	}
}

/* FCFS: arrival order, what fits; gangs all or nothing. */
static void fcfs(pool *ps, const size_t *live, size_t nlive, int *granted)
{
	int used[NRES] = {0};
	for (size_t i = 0; i < nlive; i++) {
		const pool *p = &ps[live[i]];
		granted[i] = p->held;
		for (int r = 0; r < NRES; r++)
			used[r] += p->held * p->per[r];
	}
	for (size_t i = 0; i < nlive; i++) {
		const pool *p = &ps[live[i]];
		int lack = p->count - granted[i];
		while (lack > 0) {
			int n = p->gang ? lack : 1, fits = 1;
			for (int r = 0; r < NRES; r++)
				if (used[r] + n * p->per[r] > capacity[r])
					fits = 0;
			if (!fits)
				break;
			for (int r = 0; r < NRES; r++)
				used[r] += n * p->per[r];
			granted[i] += n;
			lack -= n;
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void run(pool *trace, size_t ntrace, int use_adm, stats *st)
{
	pool *ps = malloc(ntrace * sizeof *ps);
	size_t live[MAXLIVE];
	gb_adm_demand dem[MAXLIVE];
	int granted[MAXLIVE];
	gb_adm_resource res[NRES];
	gb_adm_team teams[NTEAMS];
	size_t next = 0;
	memcpy(ps, trace, ntrace * sizeof *ps);
	memset(st, 0, sizeof *st);
	st->waits = calloc(ntrace + 1, sizeof *st->waits);
	for (int r = 0; r < NRES; r++) {
		res[r].name = res_names[r];
		res[r].kind = r == 0 ? GB_ADM_ONPREM : GB_ADM_CLOUD_QUOTA;
		res[r].capacity = capacity[r];
	}
	for (int t = 0; t < NTEAMS; t++) {
		teams[t].name = team_names[t];
		teams[t].share = team_share[t];
	}
	for (int64_t now = 0; now < DAYS * 86400; now += STEP_S) {
		/* arrivals; preempted instances whose grace is over */
		while (next < ntrace && ps[next].arrival <= now)
			next++;
		size_t nlive = 0;
		for (size_t i = 0; i < next && nlive < MAXLIVE; i++) {
			pool *p = &ps[i];
			if (p->finished)
				continue;
			if (p->leaving && now >= p->leave_at) {
				p->held -= p->leaving;
				p->leaving = 0;
			}
			live[nlive++] = i;
		}
		int before[NRES] = {0};
		for (size_t i = 0; i < nlive; i++)
			for (int r = 0; r < NRES; r++)
				before[r] += ps[live[i]].held * ps[live[i]].per[r];
		if (use_adm) {
			for (size_t i = 0; i < nlive; i++) {
				pool *p = &ps[live[i]];
				gb_adm_demand *d = &dem[i];
				d->pool = p->name;
				d->team = team_names[p->team];
				d->priority = p->prio;
				d->count = p->count;
				d->min = p->min;
				d->held = p->held;
				d->leaving = p->leaving;
				d->per = p->per;
				d->gang = p->gang;
				d->preemptible = p->preemptible;
				d->arrival = p->arrival;
			}
			gb_adm_input in = {res, NRES, dem, nlive, teams, NTEAMS,
			                   now};
			gb_adm_result out;
			gb_admission_decide(&in, &out);
			for (size_t i = 0; i < nlive; i++)
				granted[i] = out.granted[i];
			for (size_t k = 0; k < out.npreempt; k++) {
				pool *v = &ps[live[out.preempt[k].victim]];
				v->leaving += out.preempt[k].count;
				v->leave_at = now + GRACE_S;
				st->preempt_events++;
				st->preempt_instances += out.preempt[k].count;
			}
			gb_admission_free(&out);
		} else {
			fcfs(ps, live, nlive, granted);
		}
		/* inversions: a lower class given room a higher one waiting
		 * for the same resource would have fit in */
		for (size_t i = 0; i < nlive; i++) {
			const pool *lo = &ps[live[i]];
			if (granted[i] <= lo->held)
				continue;
			int inv = 0;
			for (size_t j = 0; j < nlive && !inv; j++) {
				const pool *hi = &ps[live[j]];
				if (hi->prio <= lo->prio || granted[j] >= hi->count)
					continue;
				int step = hi->gang ? hi->count - granted[j] : 1;
				int fits = 1, shares = 0;
				for (int r = 0; r < NRES; r++) {
					if (hi->per[r] == 0)
						continue;
					if (lo->per[r] > 0)
						shares = 1;
					if (capacity[r] - before[r] < step * hi->per[r])
						fits = 0;
				}
				inv = shares && fits;
			}
			st->inversions += inv;
		}
		for (size_t i = 0; i < nlive; i++) {
			pool *p = &ps[live[i]];
			p->held = granted[i];
			if (p->held >= p->count && !p->admitted_at) {
				p->admitted_at = now > p->arrival ? now : p->arrival + 1;
				st->admitted++;
				if (p->prio == PROD)
					st->waits[st->nwaits++] =
					        (double)(now - p->arrival);
			}
		}
		/* the measures at this step, per resource */
		for (int r = 0; r < NRES; r++) {
			int used = 0, waiting = 0;
			double alloc[NTEAMS] = {0}, ent[NTEAMS];
			for (size_t i = 0; i < nlive; i++) {
				const pool *p = &ps[live[i]];
				if (p->per[r] == 0)
					continue;
				used += p->held * p->per[r];
				alloc[p->team] += (double)(p->held - p->leaving) *
				                  p->per[r];
				if (p->held < p->count)
					waiting = 1;
			}
			if (!waiting)
				continue;
			st->util_sum += (double)used / capacity[r];
			st->util_w += 1;
			fair_shares(ps, live, nlive, r, ent);
			double s = 0, s2 = 0;
			int n = 0;
			for (int t = 0; t < NTEAMS; t++) {
				if (ent[t] <= 1e-9)
					continue;
				double x = alloc[t] / ent[t];
				s += x;
				s2 += x * x;
				n++;
			}
			if (n > 0 && s2 > 0) {
				st->fair_sum += s * s / (n * s2);
				st->fair_w += 1;
			}
		}
		/* work done; finished pools leave */
		for (size_t i = 0; i < nlive; i++) {
			pool *p = &ps[live[i]];
			p->done += (double)(p->held - p->leaving) * STEP_S;
			if (p->done >= p->work) {
				p->finished = 1;
				st->finished++;
			}
		}
	}
	free(ps);
}

static double fairness(const stats *st)
{
	return st->fair_w > 0 ? st->fair_sum / st->fair_w : 1;
}

/* base: the FCFS run, named in the fairness line; NULL for FCFS's own */
static void report(const char *name, stats *st, const stats *base)
{
	double fair = fairness(st);
	int targets = base != NULL;
	double util = st->util_w > 0 ? st->util_sum / st->util_w : 1;
	double p99 = 0;
	if (st->nwaits) {
		qsort(st->waits, st->nwaits, sizeof *st->waits, cmp_double);
		size_t k = (size_t)ceil(0.99 * (double)st->nwaits);
		p99 = st->waits[k ? k - 1 : 0];
	}
	double hours = DAYS * 24.0;
	printf("admission: %s: %ld pools admitted, %ld finished; contended "
	       "resource-steps %.0f; production pools %zu\n",
	       name, st->admitted, st->finished, st->util_w, st->nwaits);
	if (!targets) {
		printf("RESULT admission[%s] fairness_jain %.3f inversions %ld "
		       "utilisation %.3f top_p99_wait_s %.0f preemptions_per_h "
		       "%.2f (baseline: no targets)\n",
		       name, fair, st->inversions, util, p99,
		       st->preempt_events / hours);
		return;
	}
	printf("RESULT admission[fairness] jain %.3f target>=%.2f %s "
	       "(fcfs %.3f)\n", fair, T_FAIR, fair >= T_FAIR ? "PASS" : "MISS",
	       fairness(base));
	printf("RESULT admission[inversions] %ld target 0 %s\n",
	       st->inversions, st->inversions == 0 ? "PASS" : "MISS");
	printf("RESULT admission[utilisation] %.3f target>=%.2f %s "
	       "(while a pool waits for the resource)\n",
	       util, T_UTIL, util >= T_UTIL ? "PASS" : "MISS");
	printf("RESULT admission[top_p99_wait] %.0f s target<=%d s %s "
	       "(production, %zu pools)\n",
	       p99, T_WAIT, p99 <= T_WAIT ? "PASS" : "MISS", st->nwaits);
	printf("RESULT admission[preemptions] %.2f per hour (%.2f instances "
	       "per hour; reported, no target)\n",
	       st->preempt_events / hours, st->preempt_instances / hours);
}

int main(void)
{
	pool *trace = calloc(MAXP, sizeof *trace);
	size_t n = make_trace(trace);
	stats adm, base;
	printf("admission: %zu pools over %d days, teams a:b:c:d shares "
	       "4:2:1:1, %d on-prem nodes and a %d-GPU cloud quota, a pass "
	       "each %d s, grace %d s\n",
	       n, DAYS, capacity[0], capacity[1], STEP_S, GRACE_S);
	run(trace, n, 1, &adm);
	run(trace, n, 0, &base);
	report("broker", &adm, &base);
	report("fcfs", &base, NULL);
	free(adm.waits);
	free(base.waits);
	free(trace);
	return 0;
}
