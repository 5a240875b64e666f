/* onprem_driver.c -- the on-prem driver's descriptor, init/fini (options,
 * state directories, the inventory) and its `command` verbs: nodes,
 * probe, sites, mig. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "drvc_opts.h"
#include "drvc_util.h"
#include "drvc_json.h"
#include "onprem.h"

#define ONPREM_VERSION "0.1.0"

void onprem_log(const onprem_ctx *c, gb_log_level lvl, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	if (!c->host || !c->host->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->host->log(c->host->ctx, lvl, "%s", buf);
}

int64_t onprem_now(const onprem_ctx *c)
{
	if (c->host && c->host->now_ms)
		return c->host->now_ms(c->host->ctx) / 1000;
	return (int64_t)time(NULL);
}

/* ---------------------------------------------------------------- options */

/* "90", "90s", "30m", "24h", "2d" -> seconds; -1 when malformed. */
static int64_t parse_duration(const char *s)
{
	char *end;
	long long v;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		return v;
	if (!strcmp(end, "m"))
		return v * 60;
	if (!strcmp(end, "h"))
		return v * 3600;
	if (!strcmp(end, "d"))
		return v * 86400;
	return -1;
}

static int opt_duration(const gb_host *h, const char *key, int64_t def,
                        int64_t min, int64_t max, int64_t *out, gb_error *err)
{
	const char *v = drvc_opt(h, key);
	int64_t d;
	*out = def;
	if (!v)
		return 0;
	d = parse_duration(v);
	if (d < min || d > max) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
		         "option %s: expected a duration like 90s, 30m, 24h or "
		         "2d from %llds to %llds, found \"%s\"", key,
		         (long long)min, (long long)max, v);
		return -1;
	}
	*out = d;
	return 0;
}

static int mkdirs(const char *path, mode_t mode)
{
	char *p = drvc_xstrdup(path);
	int rc = 0;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST)
			rc = -1;
		*s = '/';
	}
	if (mkdir(p, mode) != 0 && errno != EEXIST)
		rc = -1;
	free(p);
	return rc;
}

static void ctx_free(onprem_ctx *c)
{
	if (!c)
		return;
	onprem_inventory_free(&c->inv);
	free(c->state_dir);
	free(c->lease_dir);
	free(c->probe_dir);
	free(c->known_hosts);
	free(c->broker_id);
	free(c->probe_path);
	free(c->probe_remote);
	free(c->ssh_bin);
	free(c->nvidia_smi);
	free(c);
}

static char *default_state_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	if (x && *x)
		return drvc_xasprintf("%s/gpubroker/drivers/onprem", x);
	if (home && *home)
		return drvc_xasprintf("%s/.local/state/gpubroker/drivers/onprem",
		                      home);
	return drvc_xstrdup("/var/lib/gpubroker/drivers/onprem");
}

/* Every inventory problem into the log, and as many as fit into err. */
static void inventory_error(onprem_ctx *c, const char *path,
                            const char *errors, gb_error *err)
{
	size_t count = 0;
	drvc_buf b = DRVC_BUF_INIT;
	char *msg;
	const char *p = errors;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len) {
			onprem_log(c, GB_LOG_ERROR, "%.*s", (int)len, p);
			count++;
		}
		p = nl ? nl + 1 : p + len;
	}
	drvc_buf_addf(&b, "the on-prem inventory %s has %zu error%s: ", path,
	              count, count == 1 ? "" : "s");
	p = errors;
	for (size_t i = 0; p && *p; i++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		drvc_buf_addf(&b, "%s%.*s", i ? "; " : "", (int)len, p);
		p = nl ? nl + 1 : p + len;
	}
	msg = drvc_buf_take(&b);
	if (strlen(msg) >= sizeof(err->message)) {
		const char *more = " ... (every error is in the log)";
		size_t keep = sizeof(err->message) - strlen(more) - 1;
		memcpy(msg + keep, more, strlen(more) + 1);
	}
	drvc_err(err, GB_ERR_INVALID, 0, "InvalidInventory", "%s", msg);
	free(msg);
}

static int onprem_init(const gb_host *host, void **out, gb_error *err)
{
	onprem_ctx *c = drvc_xcalloc(1, sizeof(*c));
	const char *v, *inv;
	int64_t d;
	char *errors = NULL;

	*out = NULL;
	c->host = host;
	c->state_dir = (v = drvc_opt(host, "state_dir")) ? drvc_xstrdup(v)
	                                            : default_state_dir();
	c->lease_dir = drvc_xasprintf("%s/leases", c->state_dir);
	c->probe_dir = drvc_xasprintf("%s/probe", c->state_dir);
	c->known_hosts = drvc_xasprintf("%s/known_hosts", c->state_dir);
	c->broker_id = drvc_xstrdup((v = drvc_opt(host, "broker_id")) ? v
	                                                         : "gpubroker");
	if ((v = drvc_opt(host, "probe_path")))
		c->probe_path = drvc_xstrdup(v);
	else if ((v = drvc_opt(host, "bin_dir")))
		c->probe_path = drvc_xasprintf("%s/gpuprobe", v);
	else
		c->probe_path = drvc_xstrdup("gpuprobe");
	c->probe_remote = drvc_xstrdup((v = drvc_opt(host, "probe_remote_path"))
	                                       ? v : ".gpubroker/gpuprobe");
	c->ssh_bin = drvc_xstrdup((v = drvc_opt(host, "ssh")) ? v : "ssh");
	c->nvidia_smi = drvc_xstrdup((v = drvc_opt(host, "nvidia_smi")) ? v
	                                                           : "nvidia-smi");
	if (opt_duration(host, "probe_max_age", 86400, 1, 366 * 86400,
	                 &c->probe_max_age_s, err) != 0 ||
	    drvc_opt_bool(host, "require_probe", 0, &c->require_probe, err) != 0 ||
	    drvc_opt_bool(host, "probe_full", 0, &c->probe_full, err) != 0 ||
	    opt_duration(host, "probe_timeout", 900, 1, 86400, &d, err) != 0)
		goto fail;
	c->probe_timeout_s = (int)d;
	if (opt_duration(host, "setup_timeout", 1800, 1, 86400, &d, err) != 0)
		goto fail;
	c->setup_timeout_s = (int)d;
	if (opt_duration(host, "ssh_connect_timeout", 10, 1, 600, &d, err) != 0)
		goto fail;
	c->ssh_connect_timeout_s = (int)d;
	if (strchr(c->probe_remote, '\n') || strchr(c->nvidia_smi, '\n')) {
		drvc_err(err, GB_ERR_INVALID, 0, "BadOption",
		         "options probe_remote_path and nvidia_smi must be "
		         "single-line paths");
		goto fail;
	}

	inv = drvc_opt(host, "inventory");
	if (!inv) {
		onprem_log(c, GB_LOG_INFO, "no inventory configured (onprem: "
		           "{inventory: PATH} in the broker config): no on-prem "
		           "nodes");
		*out = c;
		return 0;
	}
	if (onprem_inventory_load(inv, &c->inv, &errors) != 0) {
		inventory_error(c, inv, errors, err);
		free(errors);
		goto fail;
	}
	c->have_inventory = 1;
	if (mkdirs(c->state_dir, 0700) != 0 || mkdirs(c->lease_dir, 0755) != 0 ||
	    mkdirs(c->probe_dir, 0755) != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "StateDir",
		         "cannot create the on-prem state directory %s: %s "
		         "(set the driver option state_dir)", c->state_dir,
		         strerror(errno));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	ctx_free(c);
	return -1;
}

static void onprem_fini(void *ctx)
{
	ctx_free(ctx);
}

/* ---------------------------------------------------------------- command */

typedef struct probe_jobs {
	const onprem_ctx *c;
	const onprem_node **nodes;
	json_t **docs;
	size_t n, next;
	pthread_mutex_t mu;
} probe_jobs;

static void *probe_worker(void *arg)
{
	probe_jobs *pj = arg;
	for (;;) {
		size_t i;
		pthread_mutex_lock(&pj->mu);
		i = pj->next++;
		pthread_mutex_unlock(&pj->mu);
		if (i >= pj->n)
			return NULL;
		pj->docs[i] = onprem_probe_node(pj->c, pj->nodes[i]);
	}
}

static int need_inventory(const onprem_ctx *c, gb_error *err)
{
	if (c->have_inventory)
		return 0;
	drvc_err(err, GB_ERR_NOT_FOUND, 0, "NoInventory",
	         "no on-prem inventory is configured: set onprem: {inventory: "
	         "PATH} in the broker config (schema: drivers/onprem/README.md)");
	return -1;
}

static const onprem_node *node_arg(const onprem_ctx *c, const char *name,
                                   gb_error *err)
{
	const onprem_node *n = onprem_node_find(&c->inv, name);
	const char **names;
	const char *near;
	if (n)
		return n;
	names = drvc_xcalloc(c->inv.nnodes + 1, sizeof(char *));
	for (size_t i = 0; i < c->inv.nnodes; i++)
		names[i] = c->inv.nodes[i].name;
	near = onprem_nearest(name, names);
	drvc_err(err, GB_ERR_NOT_FOUND, 0, "UnknownNode",
	         "no node \"%s\" in the inventory %s%s%s%s", name, c->inv.path,
	         near ? "; did you mean \"" : "", near ? near : "",
	         near ? "\"?" : "");
	free(names);
	return NULL;
}

/* The views of nodes[0..n) as JSON, each with docs[i] (taken; may be
 * NULL) as "probe".  New reference, or NULL with err (docs released). */
static json_t *nodes_now(const onprem_ctx *c, const onprem_node **nodes,
                         size_t n, json_t **docs, gb_error *err)
{
	onprem_view *v;
	size_t nv;
	onprem_leases all;
	json_t *out;
	if (onprem_views(c, &v, &nv, &all, err) != 0) {
		for (size_t i = 0; docs && i < n; i++)
			json_decref(docs[i]);
		return NULL;
	}
	out = json_array();
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < nv; j++) {
			json_t *o;
			if (v[j].n != nodes[i])
				continue;
			o = onprem_view_json(c, &v[j]);
			if (docs) {
				json_object_set_new(o, "probe", docs[i]);
				docs[i] = NULL;
			}
			json_array_append_new(out, o);
		}
		if (docs)
			json_decref(docs[i]);
	}
	onprem_views_free(v, nv, &all);
	return out;
}

/* `clear NODE...`: forget that the nodes failed -- the driver's mark
 * (setup failed, unreachable while set up) and a failing probe report --
 * so they are offered again as their inventory entry says.  A healthy
 * report is kept (its measured figures stay). */
static json_t *cmd_clear(const onprem_ctx *c, int argc,
                         const char *const *argv, gb_error *err)
{
	const onprem_node **nodes;
	json_t *out;
	size_t n = 0;
	if (argc < 1) {
		drvc_err(err, GB_ERR_INVALID, 0, "Usage",
		         "usage: clear NODE... (the nodes whose failure is fixed)");
		return NULL;
	}
	nodes = drvc_xcalloc((size_t)argc + 1, sizeof(*nodes));
	for (int i = 0; i < argc; i++)
		if (!(nodes[n++] = node_arg(c, argv[i], err))) {
			free(nodes);
			return NULL;
		}
	for (size_t i = 0; i < n; i++) {
		onprem_health h;
		if (onprem_mark_remove(c, nodes[i]->name) < 0) {
			drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
			         "cannot remove the mark of node %s in %s: %s",
			         nodes[i]->name, c->probe_dir, strerror(errno));
			free(nodes);
			return NULL;
		}
		onprem_health_get(c, nodes[i], &h);
		if (h.state == ONPREM_H_UNHEALTHY ||
		    h.state == ONPREM_H_UNREACHABLE) {
			char *path = drvc_xasprintf("%s/%s.json", c->probe_dir,
			                            nodes[i]->name);
			if (unlink(path) != 0 && errno != ENOENT)
				onprem_log(c, GB_LOG_ERROR, "cannot remove %s: %s",
				           path, strerror(errno));
			free(path);
		}
		onprem_health_free(&h);
		onprem_log(c, GB_LOG_INFO, "node %s cleared", nodes[i]->name);
	}
	out = nodes_now(c, nodes, n, NULL, err);
	free(nodes);
	return out;
}

/* `check-inventory FILE`: parse and check an inventory file as init
 * would, without using it (for `gpubroker validate`): {file, sites,
 * nodes, errors: ["FILE:LINE:COL: error: KEY.PATH: message", ...]}. */
static json_t *cmd_check_inventory(int argc, const char *const *argv,
                                   gb_error *err)
{
	onprem_inventory inv;
	char *errors = NULL;
	json_t *o, *errs = json_array();
	if (argc != 1) {
		json_decref(errs);
		drvc_err(err, GB_ERR_INVALID, 0, "Usage",
		         "usage: check-inventory FILE");
		return NULL;
	}
	memset(&inv, 0, sizeof(inv));
	if (onprem_inventory_load(argv[0], &inv, &errors) != 0) {
		char *p = errors ? errors : (char *)"";
		while (*p) {
			size_t len = strcspn(p, "\n");
			if (len)
				json_array_append_new(errs,
				                      json_stringn(p, len));
			p += len + (p[len] != 0);
		}
	}
	o = json_pack("{s:s, s:I, s:I, s:o}", "file", argv[0], "sites",
	              (json_int_t)inv.nsites, "nodes", (json_int_t)inv.nnodes,
	              "errors", errs);
	onprem_inventory_free(&inv);
	free(errors);
	return o;
}

static json_t *cmd_probe(const onprem_ctx *c, int argc,
                         const char *const *argv, gb_error *err)
{
	probe_jobs pj;
	pthread_t th[8];
	size_t nt, k;
	json_t *out;
	struct stat st;
	memset(&pj, 0, sizeof(pj));
	if (stat(c->probe_path, &st) != 0 || !S_ISREG(st.st_mode)) {
		drvc_err(err, GB_ERR_INVALID, 0, "NoProbe",
		         "the probe %s does not exist: build it with 'make' "
		         "(needs nvcc) or set the onprem driver option "
		         "probe_path", c->probe_path);
		return NULL;
	}
	pj.c = c;
	pj.nodes = drvc_xcalloc(c->inv.nnodes + (size_t)argc + 1,
	                        sizeof(*pj.nodes));
	if (argc == 0) {
		for (size_t i = 0; i < c->inv.nnodes; i++)
			pj.nodes[pj.n++] = &c->inv.nodes[i];
	} else {
		for (int i = 0; i < argc; i++) {
			const onprem_node *n = node_arg(c, argv[i], err);
			int dup = 0;
			if (!n) {
				free(pj.nodes);
				return NULL;
			}
			for (size_t j = 0; j < pj.n; j++)
				dup |= pj.nodes[j] == n;
			if (!dup)
				pj.nodes[pj.n++] = n;
		}
	}
	pj.docs = drvc_xcalloc(pj.n + 1, sizeof(json_t *));
	pthread_mutex_init(&pj.mu, NULL);
	nt = pj.n < 8 ? pj.n : 8;
	for (k = 0; nt > 1 && k < nt; k++)
		if (pthread_create(&th[k], NULL, probe_worker, &pj) != 0)
			break;
	if (nt <= 1 || k == 0)
		probe_worker(&pj);
	for (size_t t = 0; nt > 1 && t < k; t++)
		pthread_join(th[t], NULL);
	pthread_mutex_destroy(&pj.mu);

	/* the nodes as they are now, each with the report just stored */
	out = nodes_now(c, pj.nodes, pj.n, pj.docs, err);
	free(pj.docs);
	free(pj.nodes);
	return out;
}

static json_t *cmd_mig(const onprem_ctx *c, int argc, const char *const *argv,
                       gb_error *err)
{
	const onprem_node *n;
	onprem_leases mine;
	onprem_runres r;
	char *smi, *cmd, tail[400];
	json_t *o;
	int on;
	if (argc != 2 || (strcmp(argv[1], "enable") && strcmp(argv[1], "disable"))) {
		drvc_err(err, GB_ERR_INVALID, 0, "Usage",
		         "usage: mig NODE enable|disable");
		return NULL;
	}
	if (!(n = node_arg(c, argv[0], err)))
		return NULL;
	on = !strcmp(argv[1], "enable");
	if (onprem_leases_list(c, n->name, &mine, err) != 0)
		return NULL;
	if (mine.n) {
		drvc_err(err, GB_ERR_CONFLICT, 0, "NodeLeased",
		         "node %s is leased (%zu lease%s): MIG mode can only be "
		         "changed on a free node", n->name, mine.n,
		         mine.n == 1 ? "" : "s");
		onprem_leases_free(&mine);
		return NULL;
	}
	onprem_leases_free(&mine);
	smi = onprem_shquote(c->nvidia_smi);
	cmd = drvc_xasprintf("%s -mig %d", smi, on);
	free(smi);
	if (onprem_run(c, n, cmd, NULL, 0, 300, &r) != 0) {
		if (r.host_key)
			onprem_run_err(c, n, err, &r, "nvidia-smi -mig");
		else
			drvc_err(err, GB_ERR_TRANSIENT, 0, "Unreachable",
			         "node %s: %s", n->name, r.what);
		onprem_runres_free(&r);
		free(cmd);
		return NULL;
	}
	onprem_tail(tail, sizeof(tail), *r.err ? r.err : r.out, 300);
	if (r.exit_code != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "MigModeFailed",
		         "nvidia-smi -mig %d on node %s failed (exit %d): %s", on,
		         n->name, r.exit_code, tail);
		onprem_runres_free(&r);
		free(cmd);
		return NULL;
	}
	o = json_object();
	json_object_set_new(o, "node", json_string(n->name));
	json_object_set_new(o, "mig", json_boolean(on));
	json_object_set_new(o, "output", json_string(r.out));
	json_object_set_new(o, "note", json_string(
		"MIG mode takes effect after a GPU reset; set mig.enabled in the "
		"inventory to offer slices"));
	onprem_runres_free(&r);
	free(cmd);
	return o;
}

static int onprem_command(void *ctx, const char *verb, int argc,
                          const char *const *argv,
                          void (*out)(void *ud, const char *json), void *ud,
                          gb_error *err)
{
	onprem_ctx *c = ctx;
	json_t *res = NULL;
	if (!verb || !strcmp(verb, "nodes")) {
		if (argc) {
			drvc_err(err, GB_ERR_INVALID, 0, "Usage",
			         "nodes takes no arguments");
			return -1;
		}
		if (need_inventory(c, err) != 0 ||
		    !(res = onprem_nodes_json(c, err)))
			return -1;
	} else if (!strcmp(verb, "probe")) {
		if (need_inventory(c, err) != 0 ||
		    !(res = cmd_probe(c, argc, argv, err)))
			return -1;
	} else if (!strcmp(verb, "check-inventory")) {
		if (!(res = cmd_check_inventory(argc, argv, err)))
			return -1;
	} else if (!strcmp(verb, "clear")) {
		if (need_inventory(c, err) != 0 ||
		    !(res = cmd_clear(c, argc, argv, err)))
			return -1;
	} else if (!strcmp(verb, "sites")) {
		res = onprem_sites_json(c);
	} else if (!strcmp(verb, "mig")) {
		if (need_inventory(c, err) != 0 ||
		    !(res = cmd_mig(c, argc, argv, err)))
			return -1;
	} else {
		drvc_err(err, GB_ERR_INVALID, 0, "UnknownCommand",
		         "the onprem driver has no command \"%s\" (nodes, probe "
		         "[NODE...], clear NODE..., sites, mig NODE "
		         "enable|disable, check-inventory FILE)", verb);
		return -1;
	}
	return drvc_command_answer(res, out, ud, err);
}

/* ---------------------------------------------------------------- entry */

/* Every option the driver reads (see drivers/onprem/README.md);
 * state_dir, broker_id and inventory are filled by the host. */
static const char *const onprem_options[] = {
	"inventory", "state_dir", "broker_id", "probe_path", "probe_remote_path",
	"ssh", "nvidia_smi", "probe_max_age", "require_probe", "probe_full",
	"probe_timeout", "setup_timeout", "ssh_connect_timeout",
	NULL,
};

static const gb_driver descriptor = {
	GB_DRIVER_V1,
	.name = "onprem",
	.version = ONPREM_VERSION,
	.description = "on-prem nodes from an inventory (ssh or local), health "
	               "from gpuprobe, MIG slices",
	.caps = GB_DRV_CAP_PROBE | GB_DRV_CAP_BATCH_CREATE |
	        GB_DRV_CAP_ATOMIC_CREATE, /* leases only: a refusal undoes
	                                     them before any node is set up */
	.init = onprem_init,
	.fini = onprem_fini,
	.list_offers = onprem_list_offers,
	.create = onprem_create,
	.describe = onprem_describe,
	.terminate = onprem_terminate,
	.refresh_prices = NULL,
	.quota = NULL,
	.command = onprem_command,
	.default_rates = NULL,
	.options = onprem_options,
	/* own machines: no provider bill */
	.billing_minimum_s = 0,
};

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major);

GB_DRIVER_EXPORT const gb_driver *gb_driver_entry(uint32_t host_abi_major)
{
	return host_abi_major == GB_DRIVER_ABI_MAJOR ? &descriptor : NULL;
}

const gb_driver *onprem_descriptor(void)
{
	return &descriptor;
}
