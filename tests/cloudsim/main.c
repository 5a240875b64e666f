/*
 * main.c -- cloudsim's command line: start the emulator from a scenario,
 * or one of the helper subcommands (check-scenario, gcp-keygen,
 * selftest-sigv4).  The first stdout line of a running cloudsim is one
 * JSON object with the base URLs; it exits cleanly on SIGTERM/SIGINT.
 */
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: cloudsim --scenario FILE [--port N] [--workdir DIR] "
	        "[-v]\n"
	        "       cloudsim check-scenario FILE\n"
	        "       cloudsim gcp-keygen FILE [--token-uri URL] "
	        "[--client-email EMAIL] [--project ID]\n"
	        "       cloudsim selftest-sigv4 DIR\n"
	        "\n"
	        "Emulates EC2, Azure Resource Manager, Compute Engine and the "
	        "Lambda Cloud API\non 127.0.0.1.\n"
	        "--port 0 (default) picks ephemeral ports; --port N uses N "
	        "(aws), N+1 (azure),\n"
	        "N+2 (gcp), N+3 (control), N+4 (lambda).  The first stdout line is a JSON "
	        "object with the\n"
	        "base URLs.  See tests/cloudsim/README.md.\n");
}

static int load_all(const char *scenario, gb_diags *d)
{
	int rc = 0;
	if (sim_scenario_load(&sim_g.sc, scenario, d) != 0)
		return -1;
	for (int c = 0; c < SIM_NCLOUD; c++) {
		if (!sim_g.sc.catalog_path[c])
			continue;
		if (access(sim_g.sc.catalog_path[c], R_OK) != 0) {
			gb_diag_add(d, scenario, 0, 0, "catalogs",
			            "the %s catalog %s cannot be read (%s); "
			            "fix the path (relative to the scenario's "
			            "folder) or remove the entry",
			            sim_cloud_name(c), sim_g.sc.catalog_path[c],
			            strerror(errno));
			rc = -1;
			continue;
		}
		if (sim_catalog_load(&sim_g.cat[c], c,
		                     sim_g.sc.catalog_path[c], d) != 0)
			rc = -1;
	}
	return rc;
}

static int check_main(int argc, char **argv)
{
	gb_diags d = GB_DIAGS_INIT;
	int rc;
	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	rc = load_all(argv[1], &d);
	if (rc != 0)
		gb_diags_print(&d, stderr);
	else
		printf("%s: ok\n", argv[1]);
	gb_diags_free(&d);
	sim_state_free();
	return rc ? 1 : 0;
}

static int rm_entry(const char *p, const struct stat *st, int flag,
                    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void print_urls(void)
{
	json_t *o = json_object();
	char *s;
	json_object_set_new(o, "aws", json_string(sim_g.url[0]));
	json_object_set_new(o, "azure", json_string(sim_g.url[1]));
	json_object_set_new(o, "azure_login", json_string(sim_g.url[1]));
	json_object_set_new(o, "gcp", json_string(sim_g.url[2]));
	json_object_set_new(o, "gcp_token", json_string(sim_g.url[4]));
	json_object_set_new(o, "lambda", json_string(sim_g.url[5]));
	json_object_set_new(o, "control", json_string(sim_g.url[3]));
	json_object_set_new(o, "workdir", json_string(sim_g.workdir));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	printf("%s\n", s);
	fflush(stdout);
	free(s);
	json_decref(o);
}

static int run_main(int argc, char **argv)
{
	const char *scenario = NULL, *workdir = NULL;
	int64_t port = 0;
	gb_diags d = GB_DIAGS_INIT;
	sigset_t set;
	int sig = 0, rc = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc) {
			scenario = argv[++i];
		} else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
			if (gb_parse_int64(argv[++i], &port) != 0 || port < 0 ||
			    port > 65531) {
				fprintf(stderr, "cloudsim: --port wants 0..65531, "
				        "got \"%s\"\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--workdir") == 0 && i + 1 < argc) {
			workdir = argv[++i];
		} else if (strcmp(argv[i], "-v") == 0 ||
		           strcmp(argv[i], "--verbose") == 0) {
			sim_g.verbose = 1;
		} else if (strcmp(argv[i], "-h") == 0 ||
		           strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "cloudsim: unknown argument \"%s\"\n",
			        argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!scenario) {
		fprintf(stderr, "cloudsim: --scenario FILE is required\n");
		usage(stderr);
		return 2;
	}
	/* Signals are taken synchronously by this thread only. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (load_all(scenario, &d) != 0) {
		gb_diags_print(&d, stderr);
		gb_diags_free(&d);
		sim_state_free();
		return 2;
	}
	sim_regions_derive();
	sim_lambda_keys_reset();
	sim_g.rng = sim_g.sc.seed;
	sim_g.t0 = sim_now();
	for (size_t i = 0; i < sim_g.sc.nsched; i++)
		sim_g.sc.sched[i].base = sim_g.t0;
	sim_g.spot_price_time = (sim_g.t0 / 3600000 - 1) * 3600000;
	if (workdir) {
		sim_g.workdir = gb_xstrdup(workdir);
		if (mkdir(workdir, 0700) != 0 && errno != EEXIST) {
			fprintf(stderr, "cloudsim: cannot create --workdir %s: "
			        "%s\n", workdir, strerror(errno));
			goto out;
		}
	} else {
		const char *tmp = getenv("TMPDIR");
		char *tpl = gb_xasprintf("%s/cloudsim.XXXXXX",
		                         tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tpl)) {
			fprintf(stderr, "cloudsim: cannot create a work "
			        "folder %s: %s\n", tpl, strerror(errno));
			free(tpl);
			goto out;
		}
		sim_g.workdir = tpl;
		sim_g.own_workdir = 1;
	}
	if (sim_server_start((int)port) != 0)
		goto out;
	sim_g.url[0] = gb_xasprintf("http://127.0.0.1:%d", sim_g.port[0]);
	sim_g.url[1] = gb_xasprintf("http://127.0.0.1:%d", sim_g.port[1]);
	sim_g.url[2] = gb_xasprintf("http://127.0.0.1:%d", sim_g.port[2]);
	sim_g.url[3] = gb_xasprintf("http://127.0.0.1:%d", sim_g.port[3]);
	sim_g.url[4] = gb_xasprintf("http://127.0.0.1:%d/token", sim_g.port[2]);
	sim_g.url[5] = gb_xasprintf("http://127.0.0.1:%d", sim_g.port[4]);
	if (sim_gcp_key_setup(sim_g.workdir, &d) != 0) {
		gb_diags_print(&d, stderr);
		goto out_server;
	}
	if (sim_ticker_start() != 0) {
		fprintf(stderr, "cloudsim: cannot start the ticker thread\n");
		goto out_server;
	}
	print_urls();
	fprintf(stderr,
	        "cloudsim: serving %s (aws %d, azure %d, gcp %d, control %d, "
	        "lambda %d)\n",
	        scenario, sim_g.port[0], sim_g.port[1], sim_g.port[2],
	        sim_g.port[3], sim_g.port[4]);
	while (sigwait(&set, &sig) != 0)
		;
	fprintf(stderr, "cloudsim: signal %d, shutting down\n", sig);
	rc = 0;
	sim_ticker_stop(); /* sets sim_g.stopping */
out_server:
	sim_g.stopping = 1;
	sim_server_stop();
out:
	gb_diags_free(&d);
	if (sim_g.own_workdir && sim_g.workdir)
		nftw(sim_g.workdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	sim_gcp_key_free();
	for (int i = 0; i < 6; i++)
		free(sim_g.url[i]);
	free(sim_g.workdir);
	sim_state_free();
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check-scenario") == 0)
		return check_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "gcp-keygen") == 0)
		return sim_gcp_keygen_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "selftest-sigv4") == 0)
		return sim_sigv4_selftest_main(argc - 1, argv + 1);
	return run_main(argc, argv);
}
