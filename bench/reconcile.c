/*
 * bench/reconcile.c -- one reconciler pass over 10,000 live instances:
 * CPU time and peak RSS (issue 9, item 4).
 *
 *   reconcile -c CONFIG [-n PASSES] [-B]
 *
 * Opens the state the config names (seeded by bench/seed: 1,000 pools x
 * 10 instances, live in the cloudsim the config points at) the way
 * `gpubroker serve` does before serving (drivers, catalog, store,
 * engine, recovery of open intents), then runs gb_daemon_reconcile
 * PASSES times (default 8).  Per pass: CPU time (getrusage RUSAGE_SELF,
 * user + sys, every thread of this process: the describe calls run on
 * worker threads), wall time, RSS before the pass and the peak RSS during
 * it (VmHWM, reset through /proc/self/clear_refs before each pass).
 * cloudsim's CPU (another process) is not counted.
 *
 * The daemon's pass 1 (and every 4th after it: 5, 9, ...) also runs
 * orphan gc, which describes every region of the catalog: reported
 * separately as reconcile[gc], from pass 5 (a process whose caches and
 * converges are warm, as a serving daemon's are) or pass 1 when there
 * are fewer passes.  Pass 1 of a fresh process (every pool's first
 * converge, every Azure VM's NIC looked up once, and gc) is reported as
 * reconcile[first], without a target.  The main figure is the median of
 * the passes after the first that run no gc.
 * After the passes a breakdown: each driver's describes alone (one per
 * region, one after another), then the refresh and the converges as
 * separate steps (-B: no breakdown).
 *
 * Prints "RESULT reconcile ..." lines that bench/run.sh collects.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "daemon.h"
#include "engine_int.h"
#include "cli_app.h"
#include "util.h"

#define TARGET_CPU_MS 100.0
#define TARGET_GC_CPU_MS 200.0 /* issue 17 */
#define TARGET_RSS_MB 64.0

static int64_t rss_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int64_t v = -1;
	size_t n = strlen(field);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			v = strtoll(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0).  0 when it worked. */
static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	int rc;
	if (!f)
		return -1;
	rc = fputs("5", f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

static double cpu_ms(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec * 1e3 +
	       (double)ru.ru_utime.tv_usec / 1e3 +
	       (double)ru.ru_stime.tv_sec * 1e3 +
	       (double)ru.ru_stime.tv_usec / 1e3;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), dcmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int open_session(const char *config, gb_cli *cli, gb_session *s)
{
	memset(cli, 0, sizeof(*cli));
	cli->prog = "reconcile";
	cli->command = "bench";
	cli->config_path = config;
	cli->quiet = 1;
	if (gb_cli_config(cli) != 0)
		return -1;
	if (gb_cli_session(cli, s, NULL, NULL, NULL) != 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* pass */

static int passes(gb_cli *cli, gb_session *s, int n, int breakdown)
{
	gb_daemon d;
	gb_inst_row *rows;
	size_t live = 0, npools = 0;
	gb_pool_row *pools;
	double *cpu, *wall, *plain, steady, peak_mb = 0, gc_peak_mb = 0;
	size_t nplain = 0;
	int gcpass = n >= 5 ? 4 : 0; /* the reported gc pass (0-based) */
	int peak_ok = reset_peak() == 0;

	if (gb_store_inst_list(s->store, NULL, 1, &rows, &live) == 0)
		gb_inst_list_free(rows, live);
	if (gb_store_pool_list(s->store, NULL, 0, &pools, &npools) == 0)
		gb_pool_list_free(pools, npools);
	memset(&d, 0, sizeof(d));
	d.config_path = cli->config_path;
	d.cfg = &cli->cfg;
	d.store = s->store;
	d.eng = s->eng;
	pthread_rwlock_init(&d.cfg_lock, NULL);
	pthread_mutex_init(&d.mu, NULL);
	pthread_mutex_init(&d.mmu, NULL);
	pthread_cond_init(&d.job_cv, NULL);
	pthread_cond_init(&d.recon_cv, NULL);
	printf("reconcile: state holds %zu pools, %zu live instances; engine "
	       "workers %d\n", npools, live, cli->cfg.workers);
	cpu = gb_xcalloc((size_t)n, sizeof(double));
	wall = gb_xcalloc((size_t)n, sizeof(double));
	plain = gb_xcalloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		double c0, c1, w0, w1;
		int64_t rss0, peak, after;
		struct rusage ru;
		if (peak_ok)
			reset_peak();
		rss0 = rss_kb("VmRSS");
		c0 = cpu_ms();
		w0 = (double)gb_mono_ns() / 1e6;
		gb_daemon_reconcile(&d);
		w1 = (double)gb_mono_ns() / 1e6;
		c1 = cpu_ms();
		after = rss_kb("VmRSS");
		getrusage(RUSAGE_SELF, &ru);
		peak = peak_ok ? rss_kb("VmHWM") : (int64_t)ru.ru_maxrss;
		cpu[i] = c1 - c0;
		wall[i] = w1 - w0;
		printf("reconcile: pass %d%s: cpu %.1f ms, wall %.1f ms, rss "
		       "before %.1f MB, peak during %.1f MB%s, after %.1f MB; "
		       "%zu of %zu pools steady (converge skipped)\n",
		       i + 1, i % 4 == 0 ? " (with gc)" : "", cpu[i], wall[i],
		       (double)rss0 / 1024, (double)peak / 1024,
		       peak_ok ? "" : " (process peak: clear_refs failed)",
		       (double)after / 1024, d.pools_skipped, d.pools_held);
		if (i == gcpass)
			gc_peak_mb = (double)peak / 1024;
		if (i > 0 && (double)peak / 1024 > peak_mb)
			peak_mb = (double)peak / 1024;
		if (i > 0 && i % 4 != 0)
			plain[nplain++] = cpu[i];
		fflush(stdout);
	}
	steady = nplain ? median(plain, nplain) : cpu[0];
	if (n < 2)
		peak_mb = gc_peak_mb;
	/* where a pass goes: the describes alone (as the refresh makes them:
	 * one per region, or one per driver with describe-all-regions; here
	 * one after another), then the same steps as the pass one at a time */
	if (breakdown &&
	    gb_store_inst_list(s->store, NULL, 1, &rows, &live) == 0) {
		static const char *const clouds[3] = {"aws", "azure", "gcp"};
		for (int k = 0; k < 3; k++) {
			gb_strv regs = {0};
			size_t seen = 0;
			double c0 = cpu_ms(), w0 = (double)gb_mono_ns() / 1e6;
			gb_drv *drv = gb_engine__drv(s->eng, clouds[k]);
			int all = drv && drv->d &&
			          (drv->d->caps & GB_DRV_CAP_DESCRIBE_ALL_REGIONS);
			for (size_t i = 0; i < live; i++)
				if (strcmp(rows[i].cloud, clouds[k]) == 0 &&
				    !gb_strv_contains(&regs, all ? "" : rows[i].region))
					gb_strv_push(&regs, all ? "" : rows[i].region);
			for (size_t i = 0; drv && i < regs.n; i++) {
				gb_describe_req req;
				gb_seen_list l = {0};
				gb_error err;
				memset(&req, 0, sizeof(req));
				memset(&err, 0, sizeof(err));
				req.region = *regs.v[i] ? regs.v[i] : NULL;
				req.broker_id = cli->cfg.broker_id;
				req.include_terminated = 1;
				drv->d->describe(drv->ctx, &req, gb_engine__collect, &l,
				                 &err);
				seen += l.n;
				gb_seen_list_free(&l);
			}
			printf("reconcile: breakdown: %s describe of %s: "
			       "%zu instances reported, %.1f ms cpu, %.1f ms wall\n",
			       clouds[k], all ? "every region at once" : "each region",
			       seen, cpu_ms() - c0,
			       (double)gb_mono_ns() / 1e6 - w0);
			gb_strv_free(&regs);
		}
		gb_inst_list_free(rows, live);
	}
	if (breakdown) {
		double c0 = cpu_ms(), c1, c2;
		/* timed, not checked: a failed describe costs the same */
		GB_IGNORE(gb_engine_refresh(s->eng, NULL));
		c1 = cpu_ms();
		if (gb_store_pool_list(s->store, NULL, 0, &pools, &npools) == 0) {
			for (size_t i = 0; i < npools; i++) {
				gb_engine_result res;
				GB_IGNORE(gb_engine_converge_fresh(
					s->eng, pools[i].name, &res));
				gb_engine_result_free(&res);
			}
			gb_pool_list_free(pools, npools);
		}
		c2 = cpu_ms();
		printf("reconcile: breakdown: refresh of every live instance "
		       "%.1f ms cpu, converge of %zu pools %.1f ms cpu\n",
		       c1 - c0, npools, c2 - c1);
	}
	if (live < 10000)
		printf("reconcile: NOTE only %zu live instances (target is "
		       "stated for 10,000)\n", live);
	printf("RESULT reconcile cpu_ms %.1f target<=%.0f ratio %.2f %s "
	       "(median of the %zu passes after the first without gc)\n",
	       steady, TARGET_CPU_MS, steady / TARGET_CPU_MS,
	       steady <= TARGET_CPU_MS ? "PASS" : "MISS", nplain);
	printf("RESULT reconcile peak_rss_mb %.1f target<=%.0f ratio %.2f %s "
	       "(process peak during passes 2..%d)\n", peak_mb, TARGET_RSS_MB,
	       peak_mb / TARGET_RSS_MB, peak_mb <= TARGET_RSS_MB ? "PASS" : "MISS",
	       n);
	printf("RESULT reconcile[gc] cpu_ms %.1f target<=%.0f ratio %.2f %s "
	       "(pass %d: also gc of every catalog region; every 4th pass)\n",
	       cpu[gcpass], TARGET_GC_CPU_MS, cpu[gcpass] / TARGET_GC_CPU_MS,
	       cpu[gcpass] <= TARGET_GC_CPU_MS ? "PASS" : "MISS", gcpass + 1);
	printf("RESULT reconcile[gc] peak_rss_mb %.1f target<=%.0f ratio %.2f "
	       "%s\n", gc_peak_mb, TARGET_RSS_MB, gc_peak_mb / TARGET_RSS_MB,
	       gc_peak_mb <= TARGET_RSS_MB ? "PASS" : "MISS");
	printf("RESULT reconcile[first] cpu_ms %.1f (pass 1 of a fresh "
	       "process: every pool's first converge, Azure NIC lookups, gc; "
	       "no target)\n", cpu[0]);
	free(cpu);
	free(wall);
	free(plain);
	pthread_mutex_destroy(&d.mu);
	pthread_mutex_destroy(&d.mmu);
	pthread_rwlock_destroy(&d.cfg_lock);
	return 0;
}

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s -c CONFIG [-n PASSES] [-B]\n", prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *config = NULL;
	int npasses = 8, breakdown = 1, opt;
	gb_cli cli;
	gb_session s;
	int rc;

	while ((opt = getopt(argc, argv, "c:n:B")) != -1) {
		switch (opt) {
		case 'c': config = optarg; break;
		case 'n': npasses = atoi(optarg); break;
		case 'B': breakdown = 0; break;
		default: return usage(argv[0]);
		}
	}
	if (!config || npasses < 1 || optind != argc)
		return usage(argv[0]);
	gb_mem_limit_arenas(); /* as `gpubroker serve` does */
	if (open_session(config, &cli, &s) != 0)
		return 1;
	rc = passes(&cli, &s, npasses, breakdown);
	gb_session_close(&s);
	gb_cli_free(&cli);
	return rc;
}
