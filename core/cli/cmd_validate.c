/* cmd_validate.c -- `gpubroker validate -f FILE...`: check pool specs and
 * broker configs without touching any cloud. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nodes.h"
#include "output.h"
#include "plan.h"
#include "runtime.h"
#include "spec.h"
#include "yamldoc.h"

#define READ_MAX ((size_t)1 << 20)

static gb_strv files;
static const char *kind_flag;
/* the loaded drivers, for what their creates need (gb_spec_warnings) */
static const gb_runtime *loaded;

static const gb_flag *validate_flags(void)
{
	static const gb_flag f[] = {
		{"file", 'f', "FILE", "spec or broker config to check (repeat; "
		 "- reads stdin)", NULL, NULL, &files},
		{"kind", 0, "KIND", "spec | config | auto (default auto: a "
		 "document with \"pool:\" is a spec)", &kind_flag, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

enum kind { KIND_AUTO, KIND_SPEC, KIND_CONFIG, KIND_INVENTORY };

/* A top-level broker-config key (gb_config_keys), to tell a config from a
 * spec with a typo'd root. */
static int is_config_key(const char *k)
{
	size_t n;
	const gb_config_key *c = gb_config_keys(&n);
	for (size_t i = 0; i < n; i++)
		if (!c[i].section[0] && strcmp(k, c[i].key) == 0)
			return 1;
	return 0;
}

/* Classifies a document by its top-level keys: 1 when decided. */
static int classify(const char *const *keys, size_t n, enum kind *k)
{
	int config = 0, inventory = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(keys[i], "pool") == 0) {
			*k = KIND_SPEC;
			return 1;
		}
		config |= is_config_key(keys[i]);
		inventory |= strcmp(keys[i], "nodes") == 0 ||
		             strcmp(keys[i], "sites") == 0;
	}
	if (config)
		*k = KIND_CONFIG;
	else if (inventory)
		*k = KIND_INVENTORY;
	return config || inventory;
}

/* Spec, broker config or on-prem inventory?  First from the block-style
 * keys at column 0 of the first document (works even when the file
 * does not parse), else from the parsed first document.  Default: spec,
 * whose errors are the most helpful for a file of unknown kind. */
static enum kind detect(const char *buf, size_t len)
{
	gb_yaml_opts yo;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	enum kind k = KIND_SPEC;
	const char *keys[64] = {0};
	char *owned[64];
	size_t nk = 0;
	size_t i = 0;

	while (i < len && nk < GB_ARRAY_LEN(keys)) {
		size_t e = i, c;
		while (e < len && buf[e] != '\n')
			e++;
		if (e - i >= 3 && memcmp(buf + i, "---", 3) == 0 && nk)
			break;
		c = i;
		while (c < e && (buf[c] == '_' || buf[c] == '-' ||
		                 (buf[c] >= 'a' && buf[c] <= 'z') ||
		                 (buf[c] >= 'A' && buf[c] <= 'Z') ||
		                 (buf[c] >= '0' && buf[c] <= '9')))
			c++;
		if (c > i && c < e && buf[c] == ':' && buf[i] != '-') {
			owned[nk] = gb_xstrndup(buf + i, c - i);
			keys[nk] = owned[nk];
			nk++;
		}
		i = e + 1;
	}
	if (classify(keys, nk, &k)) {
		for (size_t j = 0; j < nk; j++)
			free(owned[j]);
		return k;
	}
	for (size_t j = 0; j < nk; j++)
		free(owned[j]);

	memset(&yo, 0, sizeof(yo));
	yo.max_bytes = READ_MAX;
	gb_yaml_load("", buf, len, &yo, &docs, &d);
	for (size_t di = 0; di < docs.n; di++) {
		const gb_ynode *r = docs.docs[di];
		const char *rk[64];
		size_t n = 0;
		if (!r)
			continue;
		for (size_t j = 0; r->kind == GB_Y_MAP && j < r->n &&
		                   n < GB_ARRAY_LEN(rk); j++)
			rk[n++] = r->keys[j]->str;
		classify(rk, n, &k);
		break;
	}
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
	return k;
}

/* Reads FILE (or stdin for "-"); -1 with errno (EFBIG beyond READ_MAX).
 * Caller frees *buf. */
static int read_input(const char *path, char **buf, size_t *len)
{
	if (strcmp(path, "-") == 0) {
		gb_buf b = GB_BUF_INIT;
		char chunk[65536];
		ssize_t n;
		while ((n = read(0, chunk, sizeof(chunk))) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				gb_buf_free(&b);
				return -1;
			}
			gb_buf_append(&b, chunk, (size_t)n);
			if (b.len > READ_MAX) {
				gb_buf_free(&b);
				errno = EFBIG;
				return -1;
			}
		}
		*len = b.len;
		*buf = gb_buf_take(&b);
		return 0;
	}
	return gb_read_file(path, READ_MAX, buf, len);
}

static json_t *diags_json(const gb_diags *d, size_t from)
{
	json_t *a = json_array();
	for (size_t i = from; i < d->n; i++)
		json_array_append_new(
			a, json_pack("{s:s, s:i, s:i, s:s, s:s}", "file",
			             d->v[i].file, "line", d->v[i].line, "column",
			             d->v[i].col, "path", d->v[i].path, "message",
			             d->v[i].msg));
	return a;
}

static void pool_summary(const gb_pool_spec *p, const char *file)
{
	char *models = gb_strv_join(&p->gpu_models, "/");
	if (p->min != p->max)
		printf("ok  %s: pool %s (%s, %d [%d..%d] x %d %s)\n", file,
		       p->name, gb_purpose_name(p->purpose), p->count, p->min,
		       p->max, p->gpu_count, models);
	else
		printf("ok  %s: pool %s (%s, %d x %d %s)\n", file, p->name,
		       gb_purpose_name(p->purpose), p->count, p->gpu_count,
		       models);
	free(models);
}

/* Each reservation must be of an instance type its cloud's driver sells
 * in its region (the drivers' offers: shipped catalogs and stored
 * prices; no cloud is contacted).  A cloud whose driver did not load or
 * lists no offers is not judged.  0 = fine, -1 with errors in d. */
static int check_reservations(const gb_config *cfg, gb_diags *d)
{
	gb_runtime rt;
	size_t n;
	const char **types;
	int bad = 0;
	if (!cfg->nreservations)
		return 0;
	gb_runtime_open(cfg, NULL, &rt, 1);
	n = rt.cat ? gb_catalog_count(rt.cat) : 0;
	types = gb_xcalloc(n + 1, sizeof(*types));
	for (size_t i = 0; i < cfg->nreservations; i++) {
		const gb_reservation_cfg *r = &cfg->reservations[i];
		const char *near, *elsewhere = NULL;
		size_t nt = 0, ncloud = 0;
		char kp[64];
		int sold = 0;
		if (!r->cloud || !r->region || !r->instance_type)
			continue;
		for (size_t j = 0; j < n && !sold; j++) {
			const gb_coffer *o = gb_catalog_at(rt.cat, j);
			if (strcmp(o->cloud, r->cloud) != 0)
				continue;
			ncloud++;
			if (strcmp(o->instance_type, r->instance_type) == 0) {
				if (strcmp(o->region, r->region) == 0)
					sold = 1;
				else if (!elsewhere)
					elsewhere = o->region;
			} else if (strcmp(o->region, r->region) == 0) {
				types[nt++] = o->instance_type;
				types[nt] = NULL;
			}
		}
		if (sold || !ncloud)
			continue;
		near = nt ? gb_nearest(r->instance_type, types) : NULL;
		snprintf(kp, sizeof(kp), "reservations[%zu].instance_type", i);
		gb_diag_add(d, cfg->file, r->type_line, r->type_col, kp,
		            "%s sells no \"%s\" in %s%s%s%s%s%s%s; reserve a "
		            "type it offers there (gpubroker offers --cloud %s "
		            "--region %s)",
		            r->cloud, r->instance_type, r->region,
		            near ? " (did you mean \"" : "", near ? near : "",
		            near ? "\"?)" : "",
		            elsewhere ? " (it is sold in " : "",
		            elsewhere ? elsewhere : "", elsewhere ? ")" : "",
		            r->cloud, r->region);
		bad = 1;
	}
	free(types);
	gb_runtime_free(&rt);
	return bad ? -1 : 0;
}

/* The checks of a loaded broker config that look outside the file: the
 * files it names (relative to the file, or to the working directory for
 * stdin) and the reservations against the drivers' offers.  0 = fine,
 * -1 with errors in d. */
static int config_checks(gb_config *cfg, const char *path, gb_diags *d)
{
	int rc;
	if (strcmp(path, "-") != 0)
		gb_config_resolve_paths(cfg, path);
	rc = gb_config_check_files(cfg, d);
	if (check_reservations(cfg, d) != 0)
		rc = -1;
	return rc;
}

/* An on-prem inventory: the onprem driver (its own schema) checks it
 * through its check-inventory verb, every error at its file:line:col.
 * Without the driver (not installed, not in the config) the file is
 * reported as skipped, and that is not a pass either: 0 = valid. */
static int check_inventory(gb_cli *cli, const char *path, const char *name,
                           json_t *res, gb_diags *d)
{
	gb_drv *drv = loaded ? gb_drivers_find(&loaded->drivers, "onprem")
	                     : NULL;
	json_t *doc, *errs, *e;
	char err[1024];
	size_t i;
	if (!drv || !drv->path || strcmp(path, "-") == 0) {
		gb_diag_add(d, name, 0, 0, "", "an on-prem inventory, but %s: "
		            "give it as a file, with a config (-c) whose "
		            "drivers include onprem", strcmp(path, "-") == 0
		                    ? "it cannot be checked from stdin"
		                    : "the onprem driver is not loaded");
		json_object_set_new(res, "skipped", json_true());
		return -1;
	}
	if (gb_nodes_check_inventory(drv->path, path, &doc, err,
	                             sizeof(err)) != 0) {
		gb_diag_add(d, name, 0, 0, "", "cannot check the inventory: %s",
		            err);
		return -1;
	}
	errs = json_object_get(doc, "errors");
	json_array_foreach(errs, i, e) {
		/* "FILE:LINE:COL: error: KEY: message" */
		const char *l = json_string_value(e), *p;
		size_t plen = strlen(path);
		int line = 0, col = 0, n = 0;
		if (!l)
			continue;
		p = strncmp(l, path, plen) == 0 && l[plen] == ':' ? l + plen + 1
		                                                  : NULL;
		if (p && sscanf(p, "%d:%d: error: %n", &line, &col, &n) == 2 &&
		    n > 0) {
			const char *msg = p + n, *sep = strstr(msg, ": ");
			char key[256] = "";
			if (sep && (size_t)(sep - msg) < sizeof(key) &&
			    !memchr(msg, ' ', (size_t)(sep - msg))) {
				snprintf(key, sizeof(key), "%.*s",
				         (int)(sep - msg), msg);
				msg = sep + 2;
			}
			gb_diag_add(d, name, line, col, key, "%s", msg);
		} else {
			gb_diag_add(d, name, 0, 0, "", "%s", l);
		}
	}
	if (!json_array_size(errs)) {
		if (cli->out == GB_OUT_TABLE)
			printf("ok  %s: on-prem inventory (%lld sites, %lld "
			       "nodes)\n", name,
			       (long long)json_integer_value(
				       json_object_get(doc, "sites")),
			       (long long)json_integer_value(
				       json_object_get(doc, "nodes")));
		json_object_set(res, "sites", json_object_get(doc, "sites"));
		json_object_set(res, "nodes", json_object_get(doc, "nodes"));
	}
	i = json_array_size(errs);
	json_decref(doc);
	return i ? -1 : 0;
}

/* Validates one input; appends its JSON result to results.  0 = valid. */
static int validate_one(gb_cli *cli, const char *path, enum kind want,
                        const gb_spec_opts *so, json_t *results)
{
	char *buf = NULL;
	size_t len = 0;
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	gb_diags d = GB_DIAGS_INIT;
	json_t *res = json_object();
	enum kind k = want;
	int rc;

	json_object_set_new(res, "file", json_string(name));
	if (read_input(path, &buf, &len) != 0) {
		if (errno == EFBIG)
			gb_diag_add(&d, name, 0, 0, "", "file is larger than "
			            "the limit of %zu bytes (1 MiB); refusing to "
			            "load it", READ_MAX);
		else
			gb_diag_add(&d, name, 0, 0, "", "cannot read: %s",
			            strerror(errno));
		rc = -1;
		k = want == KIND_CONFIG ? KIND_CONFIG : KIND_SPEC;
	} else {
		if (k == KIND_AUTO)
			k = detect(buf, len);
		if (k == KIND_INVENTORY) {
			rc = check_inventory(cli, path, name, res, &d);
		} else if (k == KIND_SPEC) {
			gb_spec_set set = {NULL, 0};
			json_t *pools = json_array(), *warnings = json_array();
			rc = gb_spec_load_buf(name, buf, len, so, &set, &d);
			for (size_t i = 0; rc == 0 && i < set.n; i++) {
				json_t *w = gb_spec_warnings(
					loaded ? &loaded->drivers : NULL,
					loaded ? loaded->cat : NULL,
					&set.pools[i], NULL);
				json_array_extend(warnings, w);
				json_decref(w);
			}
			for (size_t i = 0; rc == 0 && i < set.n; i++) {
				char *js = gb_pool_spec_to_json(&set.pools[i]);
				json_t *pj = json_loads(js, 0, NULL);
				json_t *pool = json_object_get(pj, "pool");
				json_object_set_new(
					pool, "source_hash",
					json_string(set.pools[i].source_hash));
				json_array_append(pools, pool);
				json_decref(pj);
				free(js);
				if (cli->out == GB_OUT_TABLE)
					pool_summary(&set.pools[i], name);
			}
			json_object_set_new(res, "pools", pools);
			if (cli->out == GB_OUT_TABLE) {
				size_t i;
				json_t *w;
				json_array_foreach(warnings, i, w)
					gb_cli_info(cli, "warning: %s: %s", name,
					            json_string_value(w));
			}
			json_object_set_new(res, "warnings", warnings);
			gb_spec_set_free(&set);
		} else {
			gb_config cfg;
			rc = gb_config_load_buf(name, buf, len, &cfg, &d);
			if (rc == 0 && config_checks(&cfg, path, &d) != 0) {
				gb_config_free(&cfg);
				rc = -1;
			}
			if (rc == 0) {
				if (cli->out == GB_OUT_TABLE)
					printf("ok  %s: broker config %s (%zu "
					       "drivers%s, %zu tokens, %zu teams)\n",
					       name, cfg.broker_id, cfg.ndrivers,
					       cfg.ndrivers ? "" : " = the shipped ones",
					       cfg.ntokens, cfg.nteams);
				json_object_set_new(res, "broker_id",
				                    json_string(cfg.broker_id));
				gb_config_free(&cfg);
			}
		}
	}
	free(buf);
	json_object_set_new(res, "kind",
	                    json_string(k == KIND_CONFIG      ? "config"
	                                : k == KIND_INVENTORY ? "inventory"
	                                                      : "spec"));
	json_object_set_new(res, "valid", json_boolean(rc == 0));
	json_object_set_new(res, "errors", diags_json(&d, 0));
	if (d.n || d.dropped) {
		gb_diags_print(&d, stderr);
		gb_cli_err(cli, "%s: %zu error%s", name, d.n + d.dropped,
		           d.n + d.dropped == 1 ? "" : "s");
	}
	json_array_append_new(results, res);
	gb_diags_free(&d);
	return rc == 0 ? 0 : -1;
}

static int run_validate(gb_cli *cli)
{
	enum kind want = KIND_AUTO;
	gb_spec_opts so;
	const char *clouds[GB_MAX_CLOUDS], *classes[64];
	gb_runtime rt;
	json_t *results;
	int bad = 0;

	for (size_t i = 0; i < cli->args.n; i++)
		gb_strv_push(&files, cli->args.v[i]);
	if (kind_flag) {
		if (strcmp(kind_flag, "spec") == 0)
			want = KIND_SPEC;
		else if (strcmp(kind_flag, "config") == 0)
			want = KIND_CONFIG;
		else if (strcmp(kind_flag, "auto") != 0) {
			gb_strv_free(&files);
			return gb_cli_usage(cli, "--kind: expected spec, config "
			                    "or auto, found \"%s\"", kind_flag);
		}
	}
	if (files.n == 0)
		return gb_cli_usage(cli, "no input: give -f FILE (repeatable)");

	memset(&so, 0, sizeof(so));
	/* policy args are checked against what the policies declare */
	so.policy_arg = gb_plan_policy_arg;
	if (cli->config_path) {
		/* The broker config decides which clouds exist. */
		if (gb_cli_config(cli) != 0) {
			gb_strv_free(&files);
			return GB_EXIT_FAIL;
		}
	}
	/* The clouds are the config's drivers (or the installed ones); their
	 * offers (and the sites they register) are the regions a region
	 * glob must name. */
	memset(&rt, 0, sizeof(rt));
	if (gb_cli_config(cli) == 0) {
		gb_config_clouds(&cli->cfg, clouds, GB_ARRAY_LEN(clouds));
		so.policy_ud = &cli->cfg;
		so.clouds = clouds;
		so.priorities = gb_config_priority_names(&cli->cfg, classes,
		                                         GB_ARRAY_LEN(classes));
		gb_runtime_open(&cli->cfg, NULL, &rt, 1);
		so.catalog = rt.cat;
		loaded = &rt;
	}
	results = json_array();
	for (size_t i = 0; i < files.n; i++)
		if (validate_one(cli, files.v[i], want, &so, results) != 0)
			bad = 1;
	loaded = NULL;
	gb_runtime_free(&rt);
	if (cli->out != GB_OUT_TABLE)
		gb_out_render(cli, stdout, results, NULL, NULL);
	json_decref(results);
	gb_strv_free(&files);
	return bad ? GB_EXIT_FAIL : GB_EXIT_OK;
}

const gb_cmd gb_cmd_validate = {
	"validate",
	"check pool specs and broker configs (no cloud is contacted)",
	"-f FILE [-f FILE...] [--kind spec|config|auto]",
	"Checks every pool of every file against the schema and prints all\n"
	"errors with file:line:col and the key path.  A file whose document\n"
	"has the key \"pool\" is a pool spec; one with broker keys (listen,\n"
	"drivers, tokens, ...) is a broker config; an on-prem inventory\n"
	"(nodes:, sites:) is checked by the onprem driver's schema (every\n"
	"error at its file:line:col; without the onprem driver it is an\n"
	"error, not a pass).  With -c CONFIG, the clouds a spec names are\n"
	"checked against the config's drivers (else the installed ones), and\n"
	"each placement.regions glob must match a region of the pool's\n"
	"clouds (region names differ per cloud: \"eu-*\" is AWS's naming).\n"
	"A broker config is also\n"
	"checked for what its keys point at: onprem.inventory must be a\n"
	"readable file (relative to the config's folder), and with teams:\n"
	"given, every token's team must be listed there; each reservation\n"
	"must be of an instance type its driver sells in its region (the\n"
	"drivers are loaded for their offers; no cloud is contacted).\n"
	"Files may also be given without -f.\n"
	"Exit status: 0 all valid, 1 any invalid, 2 usage.",
	validate_flags,
	run_validate,
};
