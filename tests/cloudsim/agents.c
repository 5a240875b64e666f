/*
 * agents.c -- cloudsim "boots" agent pools' instances: once configured
 * (POST /_sim/agents), the ticker starts a real gpubroker-agent process
 * for each running GCE instance whose recorded user data carries the
 * broker's agent config (what cloud-init would write to
 * /etc/gpubroker-agent.conf), delay_ms after the instance ran, pointed at
 * the instance's metadata service here (/_sim/meta/<id>) and at the
 * tests' fake NVML (FAKE_NVML_FILE = gpus_dir/<instance name>, else
 * gpus_dir/default).  An instance that stops takes its agent with it
 * (SIGTERM).  Files: dir/<name>.conf, .cred, .log.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"

extern char **environ;

static struct {
	char *binary, *nvml, *gpus_dir, *dir;
	int64_t delay_ms;
} cfg;

static void set(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? gb_xstrdup(v) : NULL;
}

void sim_agents_configure(sim_req *req, sim_resp *resp)
{
	json_error_t je;
	json_t *b = json_loadb(req->body, req->body_len, 0, &je);
	const char *bin = json_string_value(json_object_get(b, "binary"));
	const char *nvml = json_string_value(json_object_get(b, "nvml_library"));
	const char *gd = json_string_value(json_object_get(b, "gpus_dir"));
	const char *dir = json_string_value(json_object_get(b, "dir"));
	json_t *d = json_object_get(b, "delay_ms");
	if (!bin || !nvml || !gd || !dir || (d && !json_is_integer(d))) {
		json_decref(b);
		sim_resp_json(resp, 400, json_pack("{s:s}", "error",
		        "body: {\"binary\", \"nvml_library\", \"gpus_dir\", "
		        "\"dir\", \"delay_ms\"}"));
		return;
	}
	set(&cfg.binary, bin);
	set(&cfg.nvml, nvml);
	set(&cfg.gpus_dir, gd);
	set(&cfg.dir, dir);
	cfg.delay_ms = d ? json_integer_value(d) : 0;
	json_decref(b);
	sim_resp_json(resp, 200, json_pack("{s:b}", "ok", 1));
}

/* The agent config lines of user data ("      key = value" in the
 * cloud-config part) into f; 0 when it has one. */
static int write_conf(FILE *f, const char *ud)
{
	static const char *const keys[] = {"broker_url", "instance",
	                                   "bootstrap_token", "interval",
	                                   "metadata", NULL};
	int found = 0;
	for (const char *l = ud; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		for (size_t k = 0; keys[k]; k++) {
			char pre[64];
			int pn = snprintf(pre, sizeof(pre), "      %s = ", keys[k]);
			if (n > (size_t)pn && strncmp(l, pre, (size_t)pn) == 0) {
				fprintf(f, "%.*s\n", (int)(n - 6), l + 6);
				found |= strcmp(keys[k], "instance") == 0;
			}
		}
		l = e ? e + 1 : NULL;
	}
	return found ? 0 : -1;
}

static void boot(sim_inst *in)
{
	const char *ud = sim_gce_user_data(in->gce_body);
	char *conf, *log, *gpus, *env_nvml;
	FILE *f;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char *argv[4];
	char **envp;
	size_t ne = 0;
	pid_t pid;
	in->agent_booted = 1;
	if (!ud)
		return;
	conf = gb_xasprintf("%s/%s.conf", cfg.dir, in->name);
	if (!(f = fopen(conf, "w"))) {
		sim_log("agents: cannot write %s: %s", conf, strerror(errno));
		free(conf);
		return;
	}
	if (write_conf(f, ud) != 0) {
		fclose(f);
		unlink(conf);
		free(conf);
		return; /* not an agent pool's instance */
	}
	fprintf(f, "metadata_url = %s/_sim/meta/%s\n", sim_g.url[3], in->name);
	fprintf(f, "credential_file = %s/%s.cred\n", cfg.dir, in->name);
	fprintf(f, "nvml_library = %s\n", cfg.nvml);
	fclose(f);
	gpus = gb_xasprintf("%s/%s", cfg.gpus_dir, in->name);
	if (access(gpus, R_OK) != 0) {
		free(gpus);
		gpus = gb_xasprintf("%s/default", cfg.gpus_dir);
	}
	env_nvml = gb_xasprintf("FAKE_NVML_FILE=%s", gpus);
	while (environ[ne])
		ne++;
	envp = gb_xcalloc(ne + 2, sizeof(*envp));
	memcpy(envp, environ, ne * sizeof(*envp));
	envp[ne] = env_nvml;
	log = gb_xasprintf("%s/%s.log", cfg.dir, in->name);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT |
	                                 O_APPEND, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addclose(&fa, 0);
	/* cloudsim's threads block the signals it sigwaits for: the agent
	 * gets them back (SIGTERM stops it) */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	                                      POSIX_SPAWN_SETSIGDEF);
	argv[0] = cfg.binary;
	argv[1] = (char *)"-c";
	argv[2] = conf;
	argv[3] = NULL;
	if (posix_spawn(&pid, cfg.binary, &fa, &at, argv, envp) == 0) {
		in->agent_pid = (int)pid;
		sim_log("agents: booted %s (pid %d)", in->name, (int)pid);
	} else {
		sim_log("agents: cannot start %s for %s", cfg.binary, in->name);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(envp);
	free(env_nvml);
	free(log);
	free(gpus);
	free(conf);
}

void sim_agents_tick(int64_t now)
{
	/* reap what ended by itself */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (!cfg.binary)
		return;
	for (size_t i = 0; i < sim_g.insts.cap; i++) {
		sim_inst *in = sim_map_slot(&sim_g.insts, i, NULL);
		sim_phase ph;
		if (!in || in->cloud != SIM_GCP)
			continue;
		ph = sim_inst_phase(in, now);
		if (ph == SIM_PH_RUNNING && !in->agent_booted &&
		    now - in->t_running >= cfg.delay_ms)
			boot(in);
		else if (ph != SIM_PH_RUNNING && ph != SIM_PH_PENDING &&
		         in->agent_pid) {
			kill((pid_t)in->agent_pid, SIGTERM);
			in->agent_pid = 0;
		}
	}
}

void sim_agents_stop(void)
{
	for (size_t i = 0; i < sim_g.insts.cap; i++) {
		sim_inst *in = sim_map_slot(&sim_g.insts, i, NULL);
		if (in && in->agent_pid) {
			kill((pid_t)in->agent_pid, SIGTERM);
			waitpid((pid_t)in->agent_pid, NULL, 0);
			in->agent_pid = 0;
		}
	}
	set(&cfg.binary, NULL);
	set(&cfg.nvml, NULL);
	set(&cfg.gpus_dir, NULL);
	set(&cfg.dir, NULL);
}
