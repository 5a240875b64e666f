/* onprem_inventory.c -- the on-prem inventory (YAML, libyaml's document
 * API) to typed sites and nodes.  Every problem is reported, each with
 * file:line:col and the key path, unknown keys with a did-you-mean; the
 * schema is in drivers/onprem/README.md. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "onprem.h"

#define MAX_BYTES (4u << 20)
#define MAX_ERRORS 100
#define MAX_NODES 10000
#define MAX_LIST 256

typedef struct iparse {
	const char *file;
	yaml_document_t *doc;
	drvc_buf errs;
	size_t nerr, dropped;
	onprem_inventory *inv;
	int *site_line;  /* line of each site, for duplicate messages */
} iparse;

static void perr_at(iparse *P, int line, int col, const char *path,
                    const char *fmt, ...) GB_PRINTF(5, 6);

static void perr_at(iparse *P, int line, int col, const char *path,
                    const char *fmt, ...)
{
	va_list ap;
	char msg[640];
	if (P->nerr >= MAX_ERRORS) {
		P->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	drvc_buf_addf(&P->errs, "%s:%d:%d: error: %s%s%s\n", P->file, line, col,
	              path && *path ? path : "", path && *path ? ": " : "",
	              msg);
	P->nerr++;
}

#define LINE(n) ((int)(n)->start_mark.line + 1)
#define COL(n) ((int)(n)->start_mark.column + 1)
#define perr(P, n, path, ...) perr_at((P), LINE(n), COL(n), (path), __VA_ARGS__)

static yaml_node_t *node_at(iparse *P, int idx)
{
	return yaml_document_get_node(P->doc, idx);
}

static const char *sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int is_null(const yaml_node_t *n)
{
	const char *s;
	if (n->type != YAML_SCALAR_NODE)
		return 0;
	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	s = sval(n);
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int is_plain(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* s for a message: at most 40 characters, control characters as '?'. */
static const char *shown(const char *s, char *buf, size_t cap)
{
	size_t o = 0, chars = 0;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch & 0xC0) != 0x80 && ++chars > 40) {
			if (o + 4 <= cap) {
				memcpy(buf + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (o + 5 > cap)
			break;
		buf[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	buf[o] = '\0';
	return buf;
}

static int looks_number(const char *s)
{
	char *end;
	if (!*s)
		return 0;
	errno = 0;
	(void)strtod(s, &end);
	return *end == '\0' && !isspace((unsigned char)*s);
}

static const char *describe(const yaml_node_t *n, char *buf, size_t cap)
{
	char t[200];
	if (!n)
		snprintf(buf, cap, "nothing");
	else if (n->type == YAML_MAPPING_NODE)
		snprintf(buf, cap, "a mapping");
	else if (n->type == YAML_SEQUENCE_NODE)
		snprintf(buf, cap, "a list");
	else if (is_null(n))
		snprintf(buf, cap, "an empty value");
	else if (is_plain(n) && looks_number(sval(n)))
		snprintf(buf, cap, "the number %s", shown(sval(n), t, sizeof(t)));
	else if (is_plain(n) &&
	         (!strcmp(sval(n), "true") || !strcmp(sval(n), "false")))
		snprintf(buf, cap, "the boolean %s", sval(n));
	else
		snprintf(buf, cap, "the string \"%s\"", shown(sval(n), t, sizeof(t)));
	return buf;
}

static char *path_key(const char *parent, const char *key)
{
	if (!parent || !*parent)
		return drvc_xstrdup(key);
	return drvc_xasprintf("%s.%s", parent, key);
}

static char *path_idx(const char *parent, size_t i)
{
	return drvc_xasprintf("%s[%zu]", parent, i);
}

/* ---------------------------------------------------------------- maps */

/* Check that n is a mapping whose keys are scalars, unique, and in
 * allowed.  Returns 0 when n is a mapping (even with bad keys, so the
 * rest is still checked), -1 when it is not one. */
static int check_map(iparse *P, yaml_node_t *n, const char *path,
                     const char *const *allowed)
{
	char what[256], t[200];
	yaml_node_pair_t *pr, *q;
	if (n->type != YAML_MAPPING_NODE) {
		perr(P, n, path, "expected a mapping, found %s",
		     describe(n, what, sizeof(what)));
		return -1;
	}
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node_at(P, pr->key);
		const char *ks;
		int ok = 0;
		if (!k || k->type != YAML_SCALAR_NODE) {
			if (k)
				perr(P, k, path, "keys must be strings, found %s",
				     describe(k, what, sizeof(what)));
			continue;
		}
		ks = sval(k);
		for (q = n->data.mapping.pairs.start; q < pr; q++) {
			yaml_node_t *k2 = node_at(P, q->key);
			if (k2 && k2->type == YAML_SCALAR_NODE &&
			    !strcmp(sval(k2), ks)) {
				char *kp = path_key(path, ks);
				perr(P, k, kp, "duplicate key (first given at "
				     "line %d)", LINE(k2));
				free(kp);
				break;
			}
		}
		for (size_t j = 0; allowed[j]; j++)
			if (!strcmp(allowed[j], ks))
				ok = 1;
		if (!ok) {
			const char *near = onprem_nearest(ks, allowed);
			char *kp = path_key(path, ks);
			if (near) {
				perr(P, k, kp, "unknown key \"%s\"; did you mean "
				     "\"%s\"?", shown(ks, t, sizeof(t)), near);
			} else {
				drvc_buf list = DRVC_BUF_INIT;
				char *l;
				for (size_t j = 0; allowed[j]; j++)
					drvc_buf_addf(&list, "%s%s", j ? ", " : "",
					              allowed[j]);
				l = drvc_buf_take(&list);
				perr(P, k, kp, "unknown key \"%s\"; valid keys "
				     "here: %s", shown(ks, t, sizeof(t)), l);
				free(l);
			}
			free(kp);
		}
	}
	return 0;
}

/* Value of key in mapping n, or NULL. */
static yaml_node_t *get(iparse *P, yaml_node_t *n, const char *key)
{
	yaml_node_pair_t *pr;
	if (!n || n->type != YAML_MAPPING_NODE)
		return NULL;
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node_at(P, pr->key);
		if (k && k->type == YAML_SCALAR_NODE && !strcmp(sval(k), key))
			return node_at(P, pr->value);
	}
	return NULL;
}

static yaml_node_t *need(iparse *P, yaml_node_t *map, const char *path,
                         const char *key, const char *hint)
{
	yaml_node_t *v = get(P, map, key);
	if (!v)
		perr(P, map, path, "required key \"%s\" is missing%s%s", key,
		     hint ? " " : "", hint ? hint : "");
	return v;
}

/* ---------------------------------------------------------------- scalars */

static int dec_str(iparse *P, yaml_node_t *n, const char *path, char **out)
{
	char what[256];
	if (n->type != YAML_SCALAR_NODE || is_null(n)) {
		perr(P, n, path, "expected a string, found %s",
		     describe(n, what, sizeof(what)));
		return -1;
	}
	*out = drvc_xstrdup(sval(n));
	return 0;
}

static int dec_int(iparse *P, yaml_node_t *n, const char *path, long long min,
                   long long max, long long *out)
{
	char what[256], *end;
	long long v;
	if (is_plain(n) && !is_null(n)) {
		errno = 0;
		v = strtoll(sval(n), &end, 10);
		if (!errno && *end == '\0' && v >= min && v <= max &&
		    !isspace((unsigned char)*sval(n))) {
			*out = v;
			return 0;
		}
	}
	perr(P, n, path, "expected an integer from %lld to %lld, found %s", min,
	     max, describe(n, what, sizeof(what)));
	return -1;
}

/* A number in [min, max] (min excluded when min_open). */
static int dec_num(iparse *P, yaml_node_t *n, const char *path, double min,
                   int min_open, double max, double *out)
{
	char what[256], *end;
	double v;
	if (is_plain(n) && !is_null(n)) {
		errno = 0;
		v = strtod(sval(n), &end);
		if (!errno && *end == '\0' && isfinite(v) &&
		    !isspace((unsigned char)*sval(n)) &&
		    (min_open ? v > min : v >= min) && v <= max) {
			*out = v;
			return 0;
		}
	}
	if (min_open)
		perr(P, n, path, "expected a number greater than %g and at most "
		     "%g, found %s", min, max, describe(n, what, sizeof(what)));
	else
		perr(P, n, path, "expected a number from %g to %g, found %s",
		     min, max, describe(n, what, sizeof(what)));
	return -1;
}

static int dec_bool(iparse *P, yaml_node_t *n, const char *path, int *out)
{
	char what[256];
	if (is_plain(n) && !strcmp(sval(n), "true")) {
		*out = 1;
		return 0;
	}
	if (is_plain(n) && !strcmp(sval(n), "false")) {
		*out = 0;
		return 0;
	}
	perr(P, n, path, "expected true or false, found %s",
	     describe(n, what, sizeof(what)));
	return -1;
}

/* One of values (NULL-terminated) -> index. */
static int dec_enum(iparse *P, yaml_node_t *n, const char *path,
                    const char *const *values, int *out)
{
	char what[256];
	drvc_buf list = DRVC_BUF_INIT;
	char *l;
	const char *near = NULL;
	if (n->type == YAML_SCALAR_NODE && !is_null(n)) {
		for (int i = 0; values[i]; i++)
			if (!strcmp(values[i], sval(n))) {
				*out = i;
				return 0;
			}
		near = onprem_nearest(sval(n), values);
	}
	for (int i = 0; values[i]; i++)
		drvc_buf_addf(&list, "%s%s", i == 0 ? "" : values[i + 1] ? ", " :
		              " or ", values[i]);
	l = drvc_buf_take(&list);
	if (near)
		perr(P, n, path, "expected %s, found %s; did you mean \"%s\"?", l,
		     describe(n, what, sizeof(what)), near);
	else
		perr(P, n, path, "expected %s, found %s", l,
		     describe(n, what, sizeof(what)));
	free(l);
	return -1;
}

/* A word: 1..max chars of [a-z0-9-] (plus extra), starting with a letter
 * or digit. */
static int word_ok(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n == 0 || n > max || !isalnum((unsigned char)s[0]))
		return 0;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || (extra && strchr(extra, ch)))
			continue;
		return 0;
	}
	return 1;
}

/* A list of scalar words (tags). */
static void dec_tags(iparse *P, yaml_node_t *n, const char *path,
                     onprem_strv *out)
{
	char what[256], t[200];
	if (n->type != YAML_SEQUENCE_NODE) {
		perr(P, n, path, "expected a list of tags like [gdpr, hipaa], "
		     "found %s", describe(n, what, sizeof(what)));
		return;
	}
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *v = node_at(P, *it);
		size_t i = (size_t)(it - n->data.sequence.items.start);
		char *ip = path_idx(path, i);
		if (i >= MAX_LIST) {
			perr(P, v, ip, "too many entries (at most %d)", MAX_LIST);
			free(ip);
			break;
		}
		if (v->type != YAML_SCALAR_NODE || is_null(v))
			perr(P, v, ip, "expected a tag, found %s",
			     describe(v, what, sizeof(what)));
		else if (!word_ok(sval(v), 63, "_."))
			perr(P, v, ip, "\"%s\" is not a valid tag (lower-case "
			     "letters, digits, '-', '_' and '.'; at most 63)",
			     shown(sval(v), t, sizeof(t)));
		else if (!onprem_strv_has(out, sval(v)))
			onprem_strv_push(out, sval(v));
		free(ip);
	}
}

/* ---------------------------------------------------------------- sites */

static const char *const root_keys[] = {"sites", "nodes", NULL};
static const char *const site_keys[] = {
	"name", "display", "lat", "lon", "jurisdiction", "country", "tags",
	"carbon_g_per_kwh", NULL,
};

static void dec_site(iparse *P, yaml_node_t *n, const char *path,
                     onprem_site *s, int *line)
{
	yaml_node_t *v;
	char t[200];
	char *kp;
	s->carbon = -1;
	*line = LINE(n);
	if (check_map(P, n, path, site_keys) != 0)
		return;
#define KP(k) (free(kp), kp = path_key(path, k))
	kp = NULL;
	if ((v = need(P, n, path, "name", "(the site's name, e.g. fra1)"))) {
		KP("name");
		if (dec_str(P, v, kp, &s->name) == 0 && !word_ok(s->name, 63, NULL))
			perr(P, v, kp, "\"%s\" is not a valid site name "
			     "(lower-case letters, digits and '-', at most 63)",
			     shown(s->name, t, sizeof(t)));
	}
	if ((v = get(P, n, "display")))
		dec_str(P, v, KP("display"), &s->display);
	if ((v = need(P, n, path, "lat", "(degrees north, -90 to 90)")))
		dec_num(P, v, KP("lat"), -90, 0, 90, &s->lat);
	if ((v = need(P, n, path, "lon", "(degrees east, -180 to 180)")))
		dec_num(P, v, KP("lon"), -180, 0, 180, &s->lon);
	if ((v = need(P, n, path, "jurisdiction", "(EU, US, UK, CH, ...)"))) {
		KP("jurisdiction");
		if (dec_str(P, v, kp, &s->jurisdiction) == 0) {
			size_t len = strlen(s->jurisdiction), i;
			for (i = 0; i < len; i++)
				if (!isupper((unsigned char)s->jurisdiction[i]))
					break;
			if (len < 2 || len > 8 || i < len)
				perr(P, v, kp, "\"%s\" is not a jurisdiction code "
				     "(2 to 8 upper-case letters: EU, US, UK...)",
				     shown(s->jurisdiction, t, sizeof(t)));
		}
	}
	if ((v = need(P, n, path, "country", "(ISO 3166-1 alpha-2, e.g. DE)"))) {
		KP("country");
		if (dec_str(P, v, kp, &s->country) == 0 &&
		    (strlen(s->country) != 2 ||
		     !isupper((unsigned char)s->country[0]) ||
		     !isupper((unsigned char)s->country[1])))
			perr(P, v, kp, "\"%s\" is not an ISO 3166-1 alpha-2 "
			     "country code (two upper-case letters, e.g. DE)",
			     shown(s->country, t, sizeof(t)));
	}
	if ((v = get(P, n, "tags")))
		dec_tags(P, v, KP("tags"), &s->tags);
	if ((v = get(P, n, "carbon_g_per_kwh")))
		dec_num(P, v, KP("carbon_g_per_kwh"), 0, 0, 5000, &s->carbon);
	if (!s->display && s->name)
		s->display = drvc_xstrdup(s->name);
	free(kp);
#undef KP
}

/* ---------------------------------------------------------------- nodes */

static const char *const node_keys[] = {
	"name", "address", "site", "transport", "ssh", "gpus", "vcpus",
	"ram_gb", "price_per_gpu_hour", "capacity", "shape", "tags", "setup",
	"teardown", "mig", NULL,
};
static const char *const ssh_keys[] = {"user", "port", "key", "options",
                                       NULL};
static const char *const gpus_keys[] = {"model", "count", "memory_gb", NULL};
static const char *const mig_keys[] = {"enabled", "profiles", NULL};
static const char *const transports[] = {"ssh", "local", NULL};
static const char *const capacities[] = {"on-demand", "reserved", NULL};

/* Host names and IP addresses only: no blanks, quotes or shell
 * metacharacters, and no leading '-' (it would read as an option). */
static int address_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253 || s[0] == '-')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(".-:_%", *s))
			return 0;
	return 1;
}

static int user_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32 || s[0] == '-')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

static void dec_ssh(iparse *P, yaml_node_t *n, const char *path,
                    onprem_node *nd)
{
	yaml_node_t *v;
	char *kp = NULL, t[200], what[256];
	long long port;
	if (check_map(P, n, path, ssh_keys) != 0)
		return;
#define KP(k) (free(kp), kp = path_key(path, k))
	if ((v = get(P, n, "user")) &&
	    dec_str(P, v, KP("user"), &nd->ssh_user) == 0 &&
	    !user_ok(nd->ssh_user))
		perr(P, v, kp, "\"%s\" is not a valid user name (letters, "
		     "digits, '.', '_' and '-'; no leading '-')",
		     shown(nd->ssh_user, t, sizeof(t)));
	if ((v = get(P, n, "port")) &&
	    dec_int(P, v, KP("port"), 1, 65535, &port) == 0)
		nd->ssh_port = (int)port;
	if ((v = get(P, n, "key")) &&
	    dec_str(P, v, KP("key"), &nd->ssh_key) == 0 &&
	    (nd->ssh_key[0] == '-' || strchr(nd->ssh_key, '\n')))
		perr(P, v, kp, "\"%s\" is not a usable key file path",
		     shown(nd->ssh_key, t, sizeof(t)));
	if ((v = get(P, n, "options"))) {
		KP("options");
		if (v->type != YAML_SEQUENCE_NODE) {
			perr(P, v, kp, "expected a list of ssh options like "
			     "[\"Ciphers=aes256-gcm@openssh.com\"], found %s",
			     describe(v, what, sizeof(what)));
		} else {
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				yaml_node_t *o = node_at(P, *it);
				size_t i = (size_t)(it - v->data.sequence.items.start);
				char *ip = path_idx(kp, i), *s = NULL;
				const char *eq;
				size_t k = 0;
				if (dec_str(P, o, ip, &s) == 0) {
					eq = strchr(s, '=');
					while (isalnum((unsigned char)s[k]))
						k++;
					if (!eq || k == 0 || s + k != eq ||
					    strchr(s, '\n'))
						perr(P, o, ip, "\"%s\" is not an ssh "
						     "option: write Name=value (see "
						     "ssh_config(5))",
						     shown(s, t, sizeof(t)));
					else
						onprem_strv_push(&nd->ssh_options, s);
				}
				free(s);
				free(ip);
			}
		}
	}
	free(kp);
#undef KP
}

static void dec_gpus(iparse *P, yaml_node_t *n, const char *path,
                     onprem_node *nd)
{
	yaml_node_t *v;
	char *kp = NULL, *model = NULL, t[200];
	long long ll;
	int ok = 1;
	if (check_map(P, n, path, gpus_keys) != 0)
		return;
#define KP(k) (free(kp), kp = path_key(path, k))
	if ((v = need(P, n, path, "model", "(H100, A100-80GB, L4, ...)"))) {
		KP("model");
		if (dec_str(P, v, kp, &model) == 0) {
			nd->gpu = onprem_gpu_lookup(model);
			if (!nd->gpu) {
				const char *near =
					onprem_nearest(model, onprem_gpu_names());
				if (near)
					perr(P, v, kp, "unknown GPU model \"%s\"; "
					     "did you mean \"%s\"?",
					     shown(model, t, sizeof(t)), near);
				else
					perr(P, v, kp, "unknown GPU model \"%s\" "
					     "(known: H200, H100, A100-80GB, A100, "
					     "L40S, L40, L4, A10G, A10, T4, V100, "
					     "V100-32GB, RTX-A6000, B200, MI300X, "
					     "MI250X)", shown(model, t, sizeof(t)));
				ok = 0;
			}
		} else {
			ok = 0;
		}
	} else {
		ok = 0;
	}
	if ((v = need(P, n, path, "count", "(GPUs in the node)"))) {
		if (dec_int(P, v, KP("count"), 1, 64, &ll) == 0)
			nd->gpu_count = (int)ll;
		else
			ok = 0;
	} else {
		ok = 0;
	}
	if ((v = get(P, n, "memory_gb"))) {
		if (dec_int(P, v, KP("memory_gb"), 1, 1024, &ll) == 0)
			nd->gpu_memory_gb = (int)ll;
		else
			ok = 0;
	} else if (nd->gpu) {
		nd->gpu_memory_gb = nd->gpu->memory_gb;
	}
	nd->has_gpus = ok;
	free(model);
	free(kp);
#undef KP
}

static void dec_mig(iparse *P, yaml_node_t *n, const char *path,
                    onprem_node *nd)
{
	yaml_node_t *v, *en;
	char *kp = NULL, t[200], what[256];
	if (check_map(P, n, path, mig_keys) != 0)
		return;
#define KP(k) (free(kp), kp = path_key(path, k))
	if ((en = get(P, n, "enabled")))
		dec_bool(P, en, KP("enabled"), &nd->mig_enabled);
	v = get(P, n, "profiles");
	if (nd->mig_enabled && !v)
		perr(P, n, path, "required key \"profiles\" is missing (the "
		     "GPU-instance profiles to offer, e.g. [1g.10gb, 3g.40gb])");
	if (v) {
		KP("profiles");
		if (v->type != YAML_SEQUENCE_NODE ||
		    v->data.sequence.items.start == v->data.sequence.items.top) {
			perr(P, v, kp, "expected a non-empty list of MIG profiles "
			     "like [1g.10gb, 3g.40gb], found %s",
			     describe(v, what, sizeof(what)));
		} else {
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				yaml_node_t *o = node_at(P, *it);
				size_t i = (size_t)(it - v->data.sequence.items.start);
				char *ip = path_idx(kp, i), *s = NULL;
				if (i >= MAX_LIST) {
					free(ip);
					break;
				}
				if (dec_str(P, o, ip, &s) != 0) {
					free(ip);
					continue;
				}
				if (!onprem_mig_syntax(s)) {
					perr(P, o, ip, "\"%s\" is not a MIG profile "
					     "name (like 1g.10gb: compute slices "
					     "'g.' memory 'gb')",
					     shown(s, t, sizeof(t)));
				} else if (nd->has_gpus && nd->gpu && nd->gpu->mig &&
				           !onprem_mig_find(nd->gpu, s)) {
					const char *names[16];
					size_t k = 0;
					const char *near;
					drvc_buf b = DRVC_BUF_INIT;
					char *l;
					for (const onprem_mig_profile *p = nd->gpu->mig;
					     p->name && k < 15; p++) {
						names[k++] = p->name;
						drvc_buf_addf(&b, "%s%s", k > 1 ? ", " : "",
						              p->name);
					}
					names[k] = NULL;
					near = onprem_nearest(s, names);
					l = drvc_buf_take(&b);
					if (near)
						perr(P, o, ip, "%s has no MIG profile "
						     "\"%s\"; did you mean \"%s\"?",
						     nd->gpu->name, s, near);
					else
						perr(P, o, ip, "%s has no MIG profile "
						     "\"%s\" (its profiles: %s)",
						     nd->gpu->name, s, l);
					free(l);
				} else if (!onprem_strv_has(&nd->mig_profiles, s)) {
					onprem_strv_push(&nd->mig_profiles, s);
				}
				free(s);
				free(ip);
			}
		}
	}
	if (en && nd->mig_enabled && nd->has_gpus && nd->gpu &&
	    !nd->gpu->mig)
		perr(P, en, KP("enabled"), "%s GPUs do not support MIG (A100, "
		     "A100-80GB, H100 and H200 do)", nd->gpu->name);
	free(kp);
#undef KP
}

static void dec_node(iparse *P, yaml_node_t *n, const char *path,
                     onprem_node *nd)
{
	yaml_node_t *v, *sshn;
	char *kp = NULL, *site = NULL, t[200];
	long long ll;
	int e;
	nd->line = LINE(n);
	nd->ssh_port = 22;
	nd->site = (size_t)-1;
	if (check_map(P, n, path, node_keys) != 0)
		return;
#define KP(k) (free(kp), kp = path_key(path, k))
	if ((v = need(P, n, path, "name", "(e.g. fra1-h100-01)"))) {
		KP("name");
		if (dec_str(P, v, kp, &nd->name) == 0 &&
		    !word_ok(nd->name, 63, NULL)) {
			perr(P, v, kp, "\"%s\" is not a valid node name "
			     "(lower-case letters, digits and '-', at most 63)",
			     shown(nd->name, t, sizeof(t)));
			free(nd->name);
			nd->name = NULL;
		}
	}
	if ((v = get(P, n, "transport")) &&
	    dec_enum(P, v, KP("transport"), transports, &e) == 0)
		nd->transport = (onprem_transport_kind)e;
	if ((v = get(P, n, "address"))) {
		KP("address");
		if (dec_str(P, v, kp, &nd->address) == 0 &&
		    !address_ok(nd->address))
			perr(P, v, kp, "\"%s\" is not a host name or IP address "
			     "(letters, digits, '.', '-', ':' and '_' only; no "
			     "blanks or shell characters)",
			     shown(nd->address, t, sizeof(t)));
	} else if (nd->transport == ONPREM_SSH) {
		perr(P, n, path, "required key \"address\" is missing (host "
		     "name or IP address ssh connects to)");
	} else {
		nd->address = drvc_xstrdup("127.0.0.1");
	}
	if ((v = need(P, n, path, "site", "(name of an entry in sites)"))) {
		KP("site");
		if (dec_str(P, v, kp, &site) == 0) {
			for (size_t i = 0; i < P->inv->nsites; i++)
				if (P->inv->sites[i].name &&
				    !strcmp(P->inv->sites[i].name, site))
					nd->site = i;
			if (nd->site == (size_t)-1) {
				const char **names = drvc_xcalloc(
					P->inv->nsites + 1, sizeof(char *));
				const char *near;
				size_t k = 0;
				for (size_t i = 0; i < P->inv->nsites; i++)
					if (P->inv->sites[i].name)
						names[k++] = P->inv->sites[i].name;
				near = onprem_nearest(site, names);
				if (near)
					perr(P, v, kp, "no site named \"%s\" in "
					     "sites; did you mean \"%s\"?",
					     shown(site, t, sizeof(t)), near);
				else
					perr(P, v, kp, "no site named \"%s\" in "
					     "sites", shown(site, t, sizeof(t)));
				free(names);
			}
		}
	}
	if ((sshn = get(P, n, "ssh"))) {
		KP("ssh");
		if (nd->transport != ONPREM_SSH)
			perr(P, sshn, kp, "only used with transport: ssh (this "
			     "node's transport is local)");
		dec_ssh(P, sshn, kp, nd);
	}
	if ((v = get(P, n, "gpus")))
		dec_gpus(P, v, KP("gpus"), nd);
	if ((v = get(P, n, "vcpus")) &&
	    dec_int(P, v, KP("vcpus"), 1, 4096, &ll) == 0)
		nd->vcpus = (int)ll;
	if ((v = get(P, n, "ram_gb")))
		dec_num(P, v, KP("ram_gb"), 0, 1, 1 << 20, &nd->ram_gb);
	if ((v = need(P, n, path, "price_per_gpu_hour",
	              "(amortised USD per GPU-hour, e.g. 1.85)")))
		dec_num(P, v, KP("price_per_gpu_hour"), 0, 1, 10000,
		        &nd->price_per_gpu_hour);
	nd->capacity = GB_CAPACITY_ON_DEMAND;
	if ((v = get(P, n, "capacity")) &&
	    dec_enum(P, v, KP("capacity"), capacities, &e) == 0)
		nd->capacity = e == 0 ? GB_CAPACITY_ON_DEMAND
		                      : GB_CAPACITY_RESERVED;
	if ((v = get(P, n, "shape"))) {
		KP("shape");
		if (dec_str(P, v, kp, &nd->shape) == 0 &&
		    (!word_ok(nd->shape, 63, "._") || strstr(nd->shape, "-mig-")))
			perr(P, v, kp, "\"%s\" is not a valid shape name "
			     "(lower-case letters, digits, '-', '_', '.'; at "
			     "most 63; not containing \"-mig-\")",
			     shown(nd->shape, t, sizeof(t)));
	}
	if ((v = get(P, n, "tags")))
		dec_tags(P, v, KP("tags"), &nd->tags);
	if ((v = get(P, n, "setup")))
		dec_str(P, v, KP("setup"), &nd->setup);
	if ((v = get(P, n, "teardown")))
		dec_str(P, v, KP("teardown"), &nd->teardown);
	if ((v = get(P, n, "mig")))
		dec_mig(P, v, KP("mig"), nd);
	free(site);
	free(kp);
#undef KP
}

/* Nodes of one (site, shape, capacity) must agree on GPUs and price:
 * they are sold as one offer. */
static void check_shapes(iparse *P, yaml_node_t *seq)
{
	onprem_inventory *inv = P->inv;
	for (size_t i = 0; i < inv->nnodes; i++) {
		onprem_node *a = &inv->nodes[i];
		char sa[96];
		if (!a->name || a->site == (size_t)-1 || !a->has_gpus)
			continue;
		if (a->shape)
			snprintf(sa, sizeof(sa), "%s", a->shape);
		else
			snprintf(sa, sizeof(sa), "%dx%s", a->gpu_count,
			         a->gpu->name);
		for (size_t j = 0; j < i; j++) {
			onprem_node *b = &inv->nodes[j];
			char sb[96];
			yaml_node_t *an;
			char *ip;
			if (!b->name || b->site != a->site || !b->has_gpus ||
			    b->capacity != a->capacity)
				continue;
			if (b->shape)
				snprintf(sb, sizeof(sb), "%s", b->shape);
			else
				snprintf(sb, sizeof(sb), "%dx%s", b->gpu_count,
				         b->gpu->name);
			if (strcmp(sa, sb) != 0)
				continue;
			if (a->gpu == b->gpu && a->gpu_count == b->gpu_count &&
			    a->gpu_memory_gb == b->gpu_memory_gb &&
			    a->price_per_gpu_hour == b->price_per_gpu_hour &&
			    a->vcpus == b->vcpus && a->ram_gb == b->ram_gb)
				break;
			an = node_at(P, seq->data.sequence.items.start[i]);
			ip = path_idx("nodes", i);
			perr(P, an, ip, "shape \"%s\" at site %s is already "
			     "defined by nodes[%zu] (line %d) with other GPUs, "
			     "price, vcpus or ram_gb; nodes sold as one shape "
			     "must match: give this node its own shape name",
			     sa, inv->sites[a->site].name, j, b->line);
			free(ip);
			break;
		}
	}
}

static void dec_root(iparse *P, yaml_node_t *root)
{
	yaml_node_t *sites, *nodes;
	char what[256], t[200];
	onprem_inventory *inv = P->inv;
	if (check_map(P, root, "", root_keys) != 0)
		return;
	sites = get(P, root, "sites");
	nodes = get(P, root, "nodes");
	if (!sites)
		perr(P, root, "", "required key \"sites\" is missing (the data "
		     "centres nodes live in: name, lat, lon, jurisdiction, "
		     "country)");
	if (!nodes)
		perr(P, root, "", "required key \"nodes\" is missing");
	if (sites && sites->type != YAML_SEQUENCE_NODE) {
		perr(P, sites, "sites", "expected a list of sites, found %s",
		     describe(sites, what, sizeof(what)));
	} else if (sites) {
		size_t n = (size_t)(sites->data.sequence.items.top -
		                    sites->data.sequence.items.start);
		if (n > MAX_LIST) {
			perr(P, sites, "sites", "too many sites (at most %d)",
			     MAX_LIST);
			n = MAX_LIST;
		}
		inv->sites = drvc_xcalloc(n, sizeof(onprem_site));
		P->site_line = drvc_xcalloc(n, sizeof(int));
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *sn = node_at(P, sites->data.sequence.items.start[i]);
			char *ip = path_idx("sites", i);
			onprem_site *s = &inv->sites[i];
			inv->nsites++;
			dec_site(P, sn, ip, s, &P->site_line[i]);
			for (size_t j = 0; s->name && j < i; j++)
				if (inv->sites[j].name &&
				    !strcmp(inv->sites[j].name, s->name)) {
					char *np = path_key(ip, "name");
					yaml_node_t *nn = get(P, sn, "name");
					perr(P, nn, np, "duplicate site name \"%s\" "
					     "(first at line %d)",
					     shown(s->name, t, sizeof(t)),
					     P->site_line[j]);
					free(np);
					free(s->name);
					s->name = NULL;
					break;
				}
			free(ip);
		}
	}
	if (nodes && nodes->type != YAML_SEQUENCE_NODE) {
		perr(P, nodes, "nodes", "expected a list of nodes, found %s",
		     describe(nodes, what, sizeof(what)));
	} else if (nodes) {
		size_t n = (size_t)(nodes->data.sequence.items.top -
		                    nodes->data.sequence.items.start);
		if (n > MAX_NODES) {
			perr(P, nodes, "nodes", "too many nodes (at most %d)",
			     MAX_NODES);
			n = MAX_NODES;
		}
		inv->nodes = drvc_xcalloc(n ? n : 1, sizeof(onprem_node));
		for (size_t i = 0; i < n; i++) {
			yaml_node_t *nn = node_at(P, nodes->data.sequence.items.start[i]);
			char *ip = path_idx("nodes", i);
			onprem_node *nd = &inv->nodes[i];
			inv->nnodes++;
			dec_node(P, nn, ip, nd);
			for (size_t j = 0; nd->name && j < i; j++)
				if (inv->nodes[j].name &&
				    !strcmp(inv->nodes[j].name, nd->name)) {
					char *np = path_key(ip, "name");
					perr(P, get(P, nn, "name"), np,
					     "duplicate node name \"%s\" (first "
					     "at line %d)", nd->name,
					     inv->nodes[j].line);
					free(np);
					break;
				}
			free(ip);
		}
		check_shapes(P, nodes);
	}
}

static void site_free(onprem_site *s)
{
	free(s->name);
	free(s->display);
	free(s->jurisdiction);
	free(s->country);
	onprem_strv_free(&s->tags);
}

static void node_free(onprem_node *n)
{
	free(n->name);
	free(n->address);
	free(n->ssh_user);
	free(n->ssh_key);
	onprem_strv_free(&n->ssh_options);
	free(n->shape);
	onprem_strv_free(&n->tags);
	free(n->setup);
	free(n->teardown);
	onprem_strv_free(&n->mig_profiles);
}

void onprem_inventory_free(onprem_inventory *inv)
{
	for (size_t i = 0; i < inv->nsites; i++)
		site_free(&inv->sites[i]);
	for (size_t i = 0; i < inv->nnodes; i++)
		node_free(&inv->nodes[i]);
	free(inv->sites);
	free(inv->nodes);
	free(inv->path);
	memset(inv, 0, sizeof(*inv));
}

int onprem_inventory_parse(const char *name, const char *buf, size_t len,
                           onprem_inventory *inv, char **errors)
{
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	iparse P;
	yaml_node_t *root;
	int rc;

	memset(&P, 0, sizeof(P));
	P.file = name;
	P.inv = inv;
	P.doc = &doc;
	*errors = NULL;
	if (!inv->path)
		inv->path = drvc_xstrdup(name);
	if (!yaml_parser_initialize(&parser)) {
		*errors = drvc_xasprintf("%s: cannot initialise the YAML parser",
		                         name);
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		perr_at(&P, (int)parser.problem_mark.line + 1,
		        (int)parser.problem_mark.column + 1, "",
		        "YAML syntax: %s%s%s",
		        parser.problem ? parser.problem : "malformed input",
		        parser.context ? " " : "",
		        parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		*errors = drvc_buf_take(&P.errs);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		perr_at(&P, 1, 1, "", "the inventory is empty: expected a "
		        "mapping with sites and nodes");
	} else {
		dec_root(&P, root);
		if (yaml_parser_load(&parser, &extra)) {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);
			if (r2)
				perr(&P, r2, "", "only one YAML document is "
				     "expected (remove the '---' and what follows)");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(P.site_line);
	if (P.dropped)
		drvc_buf_addf(&P.errs, "... and %zu more errors\n", P.dropped);
	rc = P.nerr ? -1 : 0;
	if (rc) {
		*errors = drvc_buf_take(&P.errs);
	} else {
		drvc_buf_free(&P.errs);
	}
	return rc;
}

int onprem_inventory_load(const char *path, onprem_inventory *inv,
                          char **errors)
{
	FILE *f;
	struct stat st;
	char *buf;
	size_t n;
	int rc;
	*errors = NULL;
	f = fopen(path, "rb");
	if (!f) {
		*errors = drvc_xasprintf("%s: cannot open the on-prem inventory: "
		                         "%s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
		fclose(f);
		*errors = drvc_xasprintf("%s: the on-prem inventory is not a "
		                         "regular file", path);
		return -1;
	}
	if ((size_t)st.st_size > MAX_BYTES) {
		fclose(f);
		*errors = drvc_xasprintf("%s: the on-prem inventory is larger "
		                         "than %u bytes", path, MAX_BYTES);
		return -1;
	}
	buf = drvc_xmalloc((size_t)st.st_size + 1);
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	buf[n] = '\0';
	inv->path = drvc_xstrdup(path);
	inv->mtime = (int64_t)st.st_mtime;
	rc = onprem_inventory_parse(path, buf, n, inv, errors);
	free(buf);
	return rc;
}

const onprem_node *onprem_node_find(const onprem_inventory *inv,
                                    const char *name)
{
	for (size_t i = 0; name && i < inv->nnodes; i++)
		if (inv->nodes[i].name && !strcmp(inv->nodes[i].name, name))
			return &inv->nodes[i];
	return NULL;
}

const onprem_site *onprem_site_find(const onprem_inventory *inv,
                                    const char *name)
{
	for (size_t i = 0; name && i < inv->nsites; i++)
		if (inv->sites[i].name && !strcmp(inv->sites[i].name, name))
			return &inv->sites[i];
	return NULL;
}
