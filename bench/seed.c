/*
 * bench/seed.c -- fills a state file and the cloudsim its config points
 * at with real pools for the benchmarks: bench/reconcile (1,000 pools x
 * 10 instances) and the API benchmark (1,000 pools x 1 instance).
 *
 *   seed -c CONFIG [-i INSTANCES] [-s POOL_SIZE] [-t THREADS]
 *
 * Applies INSTANCES / POOL_SIZE pools (default 1,000 x 10) through the
 * engine (gb_engine_apply, as `gpubroker apply` does, from THREADS
 * threads, default 8): clouds in turn, each pool pinned to one region of
 * its cloud (the first 8 regions, by name, that sell 1 x T4 on-demand,
 * in turn), then refreshes until every instance runs.  Exit 0 when every
 * pool was applied and every instance runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_app.h"
#include "spec.h"
#include "util.h"

static int open_session(const char *config, gb_cli *cli, gb_session *s)
{
	memset(cli, 0, sizeof(*cli));
	cli->prog = "seed";
	cli->command = "bench";
	cli->config_path = config;
	cli->quiet = 1;
	if (gb_cli_config(cli) != 0)
		return -1;
	if (gb_cli_session(cli, s, NULL, NULL, NULL) != 0)
		return -1;
	return 0;
}

typedef struct seed_ctx {
	gb_session *s;
	gb_strv specs;      /* YAML of every pool */
	atomic_size_t next;
	atomic_int failed;
} seed_ctx;

static void *seed_worker(void *arg)
{
	seed_ctx *c = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&c->next, 1);
		gb_spec_set set;
		gb_diags dg = GB_DIAGS_INIT;
		gb_spec_opts so;
		gb_engine_result res;
		if (i >= c->specs.n)
			break;
		memset(&so, 0, sizeof(so));
		if (gb_spec_load_buf("seed.yaml", c->specs.v[i],
		                     strlen(c->specs.v[i]), &so, &set, &dg) != 0) {
			gb_diags_print(&dg, stderr);
			gb_diags_free(&dg);
			atomic_fetch_add(&c->failed, 1);
			continue;
		}
		gb_diags_free(&dg);
		if (gb_engine_apply(c->s->eng, &set.pools[0], &res) != 0 ||
		    res.partial) {
			fprintf(stderr, "seed: seed %s: %s\n",
			        set.pools[0].name, res.message);
			atomic_fetch_add(&c->failed, 1);
		}
		gb_engine_result_free(&res);
		gb_spec_set_free(&set);
	}
	return NULL;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regions of `cloud` that sell 1 x T4 on-demand, sorted, at most max. */
static size_t t4_regions(const gb_catalog *cat, const char *cloud,
                         gb_strv *out, size_t max)
{
	for (size_t i = 0; i < gb_catalog_count(cat); i++) {
		const gb_coffer *o = gb_catalog_at(cat, i);
		if (strcmp(o->cloud, cloud) != 0 || strcmp(o->gpu_model, "T4") != 0 ||
		    o->gpu_count != 1 || o->capacity != GB_CAPACITY_ON_DEMAND ||
		    gb_strv_contains(out, o->region))
			continue;
		gb_strv_push(out, o->region);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(char *), str_cmp);
	while (out->n > max)
		free(out->v[--out->n]);
	return out->n;
}

static int seed(gb_session *s, int instances, int pool_size, int threads)
{
	static const char *const clouds[3] = {"aws", "azure", "gcp"};
	gb_strv regions[3] = {{0}, {0}, {0}};
	seed_ctx c;
	pthread_t *th;
	int npools = (instances + pool_size - 1) / pool_size;
	int64_t t0 = gb_mono_ms();
	size_t live = 0, running = 0;

	memset(&c, 0, sizeof(c));
	c.s = s;
	for (int k = 0; k < 3; k++)
		if (!t4_regions(s->rt.cat, clouds[k], &regions[k], 8)) {
			fprintf(stderr, "seed: no %s offer of 1 x T4 "
			                "on-demand (is the driver configured?)\n",
			        clouds[k]);
			return -1;
		}
	for (int i = 0; i < npools; i++) {
		int k = i % 3;
		const char *region = regions[k].v[(size_t)(i / 3) % regions[k].n];
		int count = i == npools - 1 ? instances - pool_size * (npools - 1)
		                            : pool_size;
		gb_strv_push_take(&c.specs, gb_xasprintf(
			"pool:\n"
			"  name: bench-%04d\n"
			"  team: research\n"
			"  purpose: inference\n"
			"  count: %d\n"
			"  gpu: {model: T4, count: 1}\n"
			"  capacity: [on-demand]\n"
			"  placement: {clouds: [%s], regions: [%s], colocate: none}\n"
			"  ssh_keys: [\"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3Rr"
			"ZXl0ZXN0a2V5dGVzdGtleXRlc3RrZXk1 bench\"]\n",
			i, count, clouds[k], region));
	}
	printf("seed: seeding %d pools of %d (aws %zu regions, azure %zu, "
	       "gcp %zu) with %d threads\n", npools, pool_size, regions[0].n,
	       regions[1].n, regions[2].n, threads);
	fflush(stdout);
	th = gb_xcalloc((size_t)threads, sizeof(*th));
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, seed_worker, &c);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	free(th);
	printf("seed: applied in %.1f s (%d failed)\n",
	       (double)(gb_mono_ms() - t0) / 1e3, atomic_load(&c.failed));
	/* until every instance runs (the store learns it by refresh) */
	for (int round = 0; round < 600; round++) {
		gb_inst_row *rows;
		size_t n;
		/* what it saw is read below; a failed describe polls again */
		GB_IGNORE(gb_engine_refresh(s->eng, NULL));
		if (gb_store_inst_list(s->store, NULL, 1, &rows, &n) != 0)
			return -1;
		live = n;
		running = 0;
		for (size_t i = 0; i < n; i++)
			running += strcmp(rows[i].state, "running") == 0;
		gb_inst_list_free(rows, n);
		if (running == (size_t)instances)
			break;
		gb_sleep_ms(500);
	}
	printf("seed: %zu live, %zu running after %.1f s\n", live,
	       running, (double)(gb_mono_ms() - t0) / 1e3);
	for (int k = 0; k < 3; k++)
		gb_strv_free(&regions[k]);
	gb_strv_free(&c.specs);
	return running == (size_t)instances && !atomic_load(&c.failed) ? 0 : -1;
}


static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s -c CONFIG [-i INSTANCES] [-s POOL_SIZE] "
	                "[-t THREADS]\n", prog);
	return 2;
}

int main(int argc, char **argv)
{
	const char *config = NULL;
	int instances = 10000, pool_size = 10, threads = 8, opt, rc;
	gb_cli cli;
	gb_session s;

	while ((opt = getopt(argc, argv, "c:i:s:t:")) != -1) {
		switch (opt) {
		case 'c': config = optarg; break;
		case 'i': instances = atoi(optarg); break;
		case 's': pool_size = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		default: return usage(argv[0]);
		}
	}
	if (!config || instances < 1 || pool_size < 1 || threads < 1 ||
	    optind != argc)
		return usage(argv[0]);
	if (open_session(config, &cli, &s) != 0)
		return 1;
	rc = seed(&s, instances, pool_size, threads) == 0 ? 0 : 1;
	gb_session_close(&s);
	gb_cli_free(&cli);
	return rc;
}
