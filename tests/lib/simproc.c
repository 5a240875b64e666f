/* simproc.c -- cloudsim as a child process for C tests (see simproc.h). */
#include "simproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

struct simproc {
	pid_t pid;
	int out_fd;       /* read end of the child's stdout */
	json_t *urls;     /* the first line */
	char *control;    /* control base URL */
	char **env_names; /* from /_sim/env */
	char **env_vals;
	size_t nenv;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		abort();
	return d;
}

/* ---- HTTP (libcurl, loopback only) ---- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
} sbuf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
	sbuf *b = ud;
	size_t n = size * nmemb;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p)
			abort();
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, ptr, n);
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

static long http(const char *method, const char *url, const char *body,
                 char **out)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	sbuf b = {NULL, 0, 0};
	long status = 0;
	if (out)
		*out = NULL;
	if (!h)
		return 0;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	if (strcmp(method, "POST") == 0) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
	}
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (out)
		*out = b.p ? b.p : xstrdup("");
	else
		free(b.p);
	return status;
}

long simproc_get(simproc *sp, const char *path, char **body)
{
	char url[2048];
	snprintf(url, sizeof(url), "%s%s", sp->control, path);
	return http("GET", url, NULL, body);
}

long simproc_post(simproc *sp, const char *path, const char *json,
                  char **body)
{
	char url[2048];
	snprintf(url, sizeof(url), "%s%s", sp->control, path);
	return http("POST", url, json, body);
}

json_t *simproc_get_json(simproc *sp, const char *path)
{
	char *body = NULL;
	json_t *j = NULL;
	if (simproc_get(sp, path, &body) == 200)
		j = json_loads(body, 0, NULL);
	free(body);
	return j;
}

int simproc_scenario(simproc *sp, const char *json)
{
	char *body = NULL;
	long st = simproc_post(sp, "/_sim/scenario", json, &body);
	if (st != 200)
		fprintf(stderr, "simproc: POST /_sim/scenario %s -> %ld %s\n",
		        json, st, body ? body : "");
	free(body);
	return st == 200 ? 0 : -1;
}

int simproc_reclaim(simproc *sp, const char *id)
{
	json_t *req = json_pack("{s:[s]}", "ids", id), *ans, *done;
	char *txt = json_dumps(req, JSON_COMPACT), *body = NULL;
	long st = simproc_post(sp, "/_sim/reclaim", txt, &body);
	int ok = 0;
	json_decref(req);
	free(txt);
	if (st == 200 && (ans = json_loads(body, 0, NULL))) {
		done = json_object_get(ans, "reclaimed");
		ok = json_is_array(done) && json_array_size(done) == 1;
		json_decref(ans);
	}
	if (!ok)
		fprintf(stderr, "simproc: reclaim %s -> %ld %s\n", id, st,
		        body ? body : "");
	free(body);
	return ok ? 0 : -1;
}

int simproc_reset(simproc *sp)
{
	return simproc_post(sp, "/_sim/reset", "{}", NULL) == 200 ? 0 : -1;
}

static long long counter(simproc *sp, const char *section, const char *cloud,
                         const char *key)
{
	json_t *j = simproc_get_json(sp, "/_sim/counters"), *v;
	long long n = -1;
	if (!j)
		return -1;
	v = json_object_get(json_object_get(json_object_get(j, section),
	                                    cloud), key);
	if (json_is_integer(v))
		n = (long long)json_integer_value(v);
	else if (json_object_get(json_object_get(j, section), cloud))
		n = 0; /* an operation never called is not listed */
	json_decref(j);
	return n;
}

long long simproc_calls(simproc *sp, const char *cloud, const char *op)
{
	return counter(sp, "calls", cloud, op);
}

long long simproc_faults(simproc *sp, const char *cloud, const char *kind)
{
	return counter(sp, "faults_by_cloud", cloud, kind);
}

/* ---- /_sim/env ---- */

/* Shell single-quote unescaping of `export NAME=value` values. */
static char *unquote(const char *v)
{
	size_t n = strlen(v), o = 0;
	char *out = malloc(n + 1);
	if (!out)
		abort();
	for (size_t i = 0; i < n;) {
		if (v[i] == '\'') {
			i++;
			while (i < n && v[i] != '\'')
				out[o++] = v[i++];
			i++; /* closing quote */
		} else if (v[i] == '\\' && i + 1 < n) {
			out[o++] = v[i + 1];
			i += 2;
		} else {
			out[o++] = v[i++];
		}
	}
	out[o] = '\0';
	return out;
}

static int load_env(simproc *sp, char *err, size_t cap)
{
	char *body = NULL, *line, *save = NULL;
	long st = simproc_get(sp, "/_sim/env", &body);
	if (st != 200) {
		snprintf(err, cap, "GET %s/_sim/env answered %ld", sp->control,
		         st);
		free(body);
		return -1;
	}
	for (line = strtok_r(body, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq;
		if (strncmp(line, "export ", 7) != 0 || !(eq = strchr(line, '=')))
			continue;
		*eq = '\0';
		sp->env_names = realloc(sp->env_names,
		                        (sp->nenv + 1) * sizeof(char *));
		sp->env_vals = realloc(sp->env_vals,
		                       (sp->nenv + 1) * sizeof(char *));
		if (!sp->env_names || !sp->env_vals)
			abort();
		sp->env_names[sp->nenv] = xstrdup(line + 7);
		sp->env_vals[sp->nenv] = unquote(eq + 1);
		sp->nenv++;
	}
	free(body);
	if (sp->nenv == 0) {
		snprintf(err, cap, "GET /_sim/env gave no export lines");
		return -1;
	}
	return 0;
}

const char *simproc_env(const simproc *sp, const char *name)
{
	for (size_t i = 0; i < sp->nenv; i++)
		if (strcmp(sp->env_names[i], name) == 0)
			return sp->env_vals[i];
	return NULL;
}

size_t simproc_apply_env(const simproc *sp)
{
	for (size_t i = 0; i < sp->nenv; i++)
		setenv(sp->env_names[i], sp->env_vals[i], 1);
	return sp->nenv;
}

const char *simproc_url(const simproc *sp, const char *which)
{
	return json_string_value(json_object_get(sp->urls, which));
}

pid_t simproc_pid(const simproc *sp)
{
	return sp->pid;
}

/* ---- process ---- */

/* Reads one line from fd within timeout_ms; caller frees.  NULL on EOF
 * or timeout. */
static char *read_line(int fd, int timeout_ms)
{
	sbuf b = {NULL, 0, 0};
	int64_t end = mono_ms() + timeout_ms;
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		int64_t left = end - mono_ms();
		char c;
		ssize_t r;
		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) <= 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (c == '\n')
			return b.p ? b.p : xstrdup("");
		on_data(&c, 1, 1, &b);
	}
	free(b.p);
	return NULL;
}

static const char *default_binary(char *buf, size_t cap)
{
	const char *b = getenv("GB_BUILD");
	snprintf(buf, cap, "%s/bin/cloudsim", b && *b ? b : "build");
	return buf;
}

static void free_sp(simproc *sp)
{
	if (sp->out_fd >= 0)
		close(sp->out_fd);
	json_decref(sp->urls);
	free(sp->control);
	for (size_t i = 0; i < sp->nenv; i++) {
		free(sp->env_names[i]);
		free(sp->env_vals[i]);
	}
	free(sp->env_names);
	free(sp->env_vals);
	free(sp);
}

simproc *simproc_start(const char *cloudsim, const char *scenario, char *err,
                       size_t cap)
{
	char bin[4096];
	int pfd[2];
	pid_t parent = getpid();
	simproc *sp;
	char *line;
	const char *ctl;
	/* Before any thread exists (drivers use libcurl from workers). */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!cloudsim)
		cloudsim = default_binary(bin, sizeof(bin));
	if (access(cloudsim, X_OK) != 0) {
		snprintf(err, cap, "cloudsim is not at %s (%s): build it with "
		         "make BUILD=... all", cloudsim, strerror(errno));
		return NULL;
	}
	if (pipe(pfd) != 0) {
		snprintf(err, cap, "pipe: %s", strerror(errno));
		return NULL;
	}
	fflush(NULL);
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		abort();
	sp->out_fd = -1;
	sp->pid = fork();
	if (sp->pid < 0) {
		snprintf(err, cap, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		free(sp);
		return NULL;
	}
	if (sp->pid == 0) {
		/* The child: stdout into the pipe, stderr shared. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(cloudsim, cloudsim, "--scenario", scenario, "--port", "0",
		      (char *)NULL);
		fprintf(stderr, "simproc: exec %s: %s\n", cloudsim,
		        strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	sp->out_fd = pfd[0];
	fcntl(sp->out_fd, F_SETFD, FD_CLOEXEC);
	line = read_line(sp->out_fd, 20000);
	if (!line || !(sp->urls = json_loads(line, 0, NULL)) ||
	    !(ctl = json_string_value(json_object_get(sp->urls, "control")))) {
		snprintf(err, cap, "cloudsim (%s --scenario %s) printed no URL "
		         "line%s%.300s (see its stderr above)", cloudsim,
		         scenario, line ? ": " : "", line ? line : "");
		free(line);
		simproc_stop(sp);
		return NULL;
	}
	free(line);
	sp->control = xstrdup(ctl);
	if (load_env(sp, err, cap) != 0) {
		simproc_stop(sp);
		return NULL;
	}
	return sp;
}

int simproc_stop(simproc *sp)
{
	int status = 0, rc;
	int64_t end;
	pid_t r = 0;
	if (!sp)
		return 0;
	if (sp->pid > 0) {
		kill(sp->pid, SIGTERM);
		end = mono_ms() + 20000;
		while ((r = waitpid(sp->pid, &status, WNOHANG)) == 0 &&
		       mono_ms() < end)
			usleep(10000);
		if (r == 0) {
			fprintf(stderr, "simproc: cloudsim (pid %d) ignored "
			        "SIGTERM for 20 s; killing it\n", (int)sp->pid);
			kill(sp->pid, SIGKILL);
			waitpid(sp->pid, &status, 0);
			free_sp(sp);
			return 137;
		}
	}
	if (r < 0)
		rc = -1;
	else if (WIFEXITED(status))
		rc = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		rc = 128 + WTERMSIG(status);
	else
		rc = -1;
	free_sp(sp);
	return rc;
}
