/* main.c -- gpubroker-agent: runs on a GPU instance, exchanges its
 * one-time bootstrap token for an instance credential, then reports the
 * GPUs NVML sees (model, memory, utilisation) every interval.  See
 * gpubroker-agent(8). */
#include "agent.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_VERSION "0.1"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "gpubroker-agent: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* The broker's error message from its error shape, or "". */
static const char *api_message(json_t *j)
{
	const char *m = json_string_value(json_object_get(
	        json_object_get(j, "error"), "message"));
	return m ? m : "";
}

static int read_credential(const char *file, char *out, size_t cap)
{
	FILE *f = fopen(file, "r");
	size_t n;
	if (!f)
		return -1;
	n = fread(out, 1, cap - 1, f);
	fclose(f);
	out[n] = '\0';
	while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	return n ? 0 : -1;
}

static int write_credential(const char *file, const char *cred)
{
	char tmp[600];
	int fd;
	size_t n = strlen(cred);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, cred, n) != (ssize_t)n || fsync(fd) != 0) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	return rename(tmp, file);
}

/* Exchanges the bootstrap token for the instance credential.  0, -1
 * (try again later), -2 (refused for good). */
static int enroll(const gba_conf *c, char *cred, size_t cap)
{
	char url[600], *resp = NULL, *body;
	json_t *req, *j;
	long st;
	const char *got;
	int rc = -1;
	if (!*c->bootstrap_token) {
		say("%s: no credential and no bootstrap_token in the config%s",
		    c->credential_file, "");
		return -2;
	}
	{
		char pid[256];
		int m = gba_metadata_id(c, pid, sizeof(pid));
		if (m < 0) {
			say("the instance's metadata service: %s; retrying", pid,
			    "");
			return -1;
		}
		req = json_pack("{s:s, s:s, s:s}", "instance", c->instance,
		                "bootstrap_token", c->bootstrap_token,
		                "agent_version", AGENT_VERSION);
		if (m == 0)
			json_object_set_new(req, "provider_id", json_string(pid));
	}
	snprintf(url, sizeof(url), "%s/v1/agent/register", c->broker_url);
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	st = gba_post(c, url, NULL, body, &resp);
	free(body);
	j = resp ? json_loads(resp, 0, NULL) : NULL;
	got = json_string_value(json_object_get(j, "credential"));
	if (st == 200 && got && strlen(got) < cap) {
		snprintf(cred, cap, "%s", got);
		if (write_credential(c->credential_file, cred) != 0)
			say("cannot keep the credential in %s: %s (it is "
			    "used from memory until the agent stops)",
			    c->credential_file, strerror(errno));
		rc = 0;
	} else if (st == 0 || st == 429 || st >= 500 || st == 404) {
		/* 404: the broker has not recorded the instance yet */
		say("register: no answer from the broker yet (%s); retrying",
		    st ? api_message(j) : c->broker_url, "");
	} else {
		say("register refused: %s%s", api_message(j),
		    " (a bootstrap token works once: a reinstalled instance "
		    "needs a new one)");
		rc = -2;
	}
	json_decref(j);
	free(resp);
	return rc;
}

/* One report.  0, -1 (try again), -2 (credential refused). */
static int report(const gba_conf *c, const char *cred, int ready_rc,
                  char *last, size_t cap)
{
	gba_gpu g[GBA_MAX_GPUS];
	char err[512] = "", url[600], *body, *resp = NULL;
	int n = gba_nvml_read(c->nvml_library, g, GBA_MAX_GPUS, err,
	                      sizeof(err));
	json_t *req = json_object(), *gpus = json_array(), *j;
	long st;
	int rc = 0;
	for (int i = 0; i < n; i++) {
		json_t *o = json_pack("{s:i, s:s, s:I, s:I, s:f}", "index", i,
		                      "name", g[i].name, "memory_total",
		                      (json_int_t)g[i].mem_total, "memory_used",
		                      (json_int_t)g[i].mem_used, "util",
		                      g[i].util_gpu / 100.0);
		if (g[i].ecc_known)
			json_object_set_new(o, "ecc_errors", json_integer(
			        (json_int_t)g[i].ecc_errors));
		json_array_append_new(gpus, o);
	}
	json_object_set_new(req, "instance", json_string(c->instance));
	json_object_set_new(req, "gpus", gpus);
	if (n < 0)
		json_object_set_new(req, "error", json_string(err));
	if (ready_rc >= 0)
		json_object_set_new(req, "ready_command_exit",
		                    json_integer(ready_rc));
	body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	snprintf(url, sizeof(url), "%s/v1/agent/report", c->broker_url);
	st = gba_post(c, url, cred, body, &resp);
	free(body);
	j = resp ? json_loads(resp, 0, NULL) : NULL;
	if (st == 401 || st == 403) {
		say("report refused: %s%s", api_message(j),
		    " (the instance is gone or its credential was revoked)");
		rc = -2;
	} else if (st != 200) {
		snprintf(last, cap, "report: HTTP %ld %s", st, api_message(j));
		rc = -1;
	} else {
		last[0] = '\0';
	}
	json_decref(j);
	free(resp);
	return rc;
}

static int run_ready_command(const char *cmd)
{
	int st;
	if (!*cmd)
		return -1;
	st = system(cmd);
	return st == -1 ? 127 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpubroker-agent [-c CONFIG] [--once] "
	           "[--print-gpus] [--print-id]\n"
	           "  -c CONFIG      config file (default "
	           "/etc/gpubroker-agent.conf)\n"
	           "  --once         register if needed, report once, exit\n"
	           "  --print-gpus   print what NVML sees and exit\n"
	           "  --print-id     print the instance's id from its metadata "
	           "service and exit\n"
	           "See gpubroker-agent(8).\n");
}

static int print_gpus(const gba_conf *c)
{
	gba_gpu g[GBA_MAX_GPUS];
	char err[512];
	int n = gba_nvml_read(c->nvml_library, g, GBA_MAX_GPUS, err,
	                      sizeof(err));
	if (n < 0) {
		fprintf(stderr, "gpubroker-agent: %s\n", err);
		return 1;
	}
	for (int i = 0; i < n; i++)
		printf("%d %s total=%llu used=%llu util=%u%%\n", i, g[i].name,
		       g[i].mem_total, g[i].mem_used, g[i].util_gpu);
	return 0;
}

int main(int argc, char **argv)
{
	const char *file = "/etc/gpubroker-agent.conf";
	int once = 0, gpus = 0, ids = 0, ready_rc = -1, ran_ready = 0;
	char err[1024], cred[256] = "", last[512] = "";
	gba_conf c;
	struct sigaction sa;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else if (strcmp(argv[i], "--print-gpus") == 0)
			gpus = 1;
		else if (strcmp(argv[i], "--print-id") == 0)
			ids = 1;
		else if (strcmp(argv[i], "--help") == 0 ||
		         strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("gpubroker-agent %s\n", AGENT_VERSION);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (gba_conf_load(file, &c, err, sizeof(err)) != 0) {
		fprintf(stderr, "gpubroker-agent: %s\n", err);
		return 2;
	}
	if (gpus)
		return print_gpus(&c);
	if (ids) {
		int m;
		curl_global_init(CURL_GLOBAL_DEFAULT);
		m = gba_metadata_id(&c, err, sizeof(err));
		curl_global_cleanup();
		if (m == 0)
			printf("%s\n", err);
		else
			fprintf(stderr, "gpubroker-agent: %s\n", m > 0 ?
			        "the config names no metadata service" : err);
		return m == 0 ? 0 : 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	read_credential(c.credential_file, cred, sizeof(cred));
	while (!stop) {
		int rc = 0;
		if (!*cred)
			rc = enroll(&c, cred, sizeof(cred));
		if (rc == 0) {
			if (!ran_ready) {
				ready_rc = run_ready_command(c.ready_command);
				ran_ready = 1;
			}
			rc = report(&c, cred, ready_rc, last, sizeof(last));
			if (rc == -1)
				say("%s%s", last, "");
		}
		if (rc == -2) {
			curl_global_cleanup();
			return 1;
		}
		if (once && rc == 0)
			break;
		for (int s = 0; s < c.interval_s && !stop; s++)
			sleep(1);
	}
	curl_global_cleanup();
	return 0;
}
