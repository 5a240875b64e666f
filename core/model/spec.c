/* spec.c -- pool specs: YAML (or JSON from the API) to gb_pool_spec, with
 * every problem of a file reported, located and explained. */
#include "spec.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "region_glob.h"
#include "url.h"
#include "regions.h"
#include "yamldoc.h"

#define SPEC_MAX_BYTES (1u << 20)
#define SPEC_MAX_DEPTH 32
#define SPEC_MAX_NODES 100000
#define SPEC_MAX_POOLS 1000
#define NAME_MAX_LEN 48
#define LABEL_MAX_LEN 63
#define MAX_LABELS 32
#define MAX_GPUS_PER_INSTANCE 16
#define MAX_GPU_MEMORY_GB 1024
#define MAX_PRICE_PER_HOUR 1e6
#define USER_DATA_MAX (16u << 10)
#define MAX_CHOICES 64

static const char *const pool_keys[] = {
	"name",     "team",      "labels",    "purpose", "count",
	"min",      "max",       "gpu",       "capacity", "placement",
	"limits",   "lifecycle", "policy",    "image",   "ssh_keys",
	"user_data", "autoscale", "priority", "serve", "agent", NULL};
static const char *const gpu_keys[] = {"model", "count", "memory_gb", NULL};
static const char *const placement_keys[] = {"clouds", "regions", "colocate",
                                             "data", "compliance", "spread",
                                             NULL};
static const char *const mix_keys[] = {"on_demand_base", "spot_share", NULL};
static const char *const spread_names[] = {"none", "zone", NULL};
static const char *const serve_keys[] = {"port", "webhook", NULL};
static const char *const data_keys[] = {"region", NULL};
static const char *const limits_keys[] = {"max_price_per_hour", NULL};
static const char *const lifecycle_keys[] = {"ttl", "idle_timeout",
                                             "consolidate", "preemptible",
                                             "preempt_grace", NULL};

/* Index order matches gb_purpose / gb_colocate / gb_capacity. */
static const char *const purpose_names[] = {"training", "inference", "dev",
                                            NULL};
static const char *const colocate_names[] = {"none", "region", "zone", NULL};
static const char *const capacity_names[] = {"on-demand", "spot", "reserved",
                                             NULL};

static const char *const ssh_key_prefixes[] = {
	"ssh-ed25519 ", "ssh-rsa ", "ssh-dss ", "ecdsa-sha2-", "sk-", NULL};

const char *gb_purpose_name(gb_purpose p)
{
	if ((unsigned)p < 3)
		return purpose_names[p];
	return "unknown";
}

const char *gb_colocate_name(gb_colocate c)
{
	if ((unsigned)c < 3)
		return colocate_names[c];
	return "unknown";
}

/* ------------------------------------------------------------ helpers */

typedef struct sdec {
	gb_ydec y;
	const char *const *clouds; /* NULL: any driver-like name */
	const gb_catalog *cat;     /* NULL: region globs not checked */
	const gb_spec_opts *opts;  /* NULL: policy args not checked */
} sdec;

/* Appended to an unknown cloud's error. */
#define CLOUD_HINT                                                         \
	" (the clouds are the loaded drivers; to use another cloud, list its " \
	"driver under drivers: in the broker config: - {name: NAME, path: "  \
	"/path/to/NAME.so})"

#define ERR(c, n, path, ...) gb_ydec_err(&(c)->y, (n), (path), __VA_ARGS__)

/* "parent.key" into buf (truncated when absurdly long). */
static const char *kpath(char *buf, size_t cap, const char *parent,
                         const char *key)
{
	snprintf(buf, cap, "%s.%s", parent, key);
	return buf;
}

static const char *ipath(char *buf, size_t cap, const char *parent,
                         size_t i)
{
	snprintf(buf, cap, "%s[%zu]", parent, i);
	return buf;
}

/* "a, b, c or d" of a NULL-terminated list; caller frees. */
static char *join_or(const char *const *v)
{
	gb_buf b = GB_BUF_INIT;
	for (size_t i = 0; v[i]; i++) {
		if (i)
			gb_buf_puts(&b, v[i + 1] ? ", " : " or ");
		gb_buf_puts(&b, v[i]);
	}
	return gb_buf_take(&b);
}

/* Printable, bounded copy of user text for messages. */
static const char *shown(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 4 < cap; s++)
		buf[o++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	if (*s) {
		while (o > 0 && ((unsigned char)buf[o - 1] & 0xC0) == 0x80)
			o--; /* do not cut a UTF-8 sequence */
		if (o > 0 && (unsigned char)buf[o - 1] >= 0xC0)
			o--;
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static void lower_copy(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap; s++)
		buf[o++] = (char)tolower((unsigned char)*s);
	buf[o] = '\0';
}

/* Collects the scalar items of a list, or a single scalar as a list of
 * one, with each item's path.  Reports non-scalars.  Returns -1 when
 * n itself is not a list/scalar or is empty (after an error).  `what`
 * is plural ("GPU models"); `required` keys have no default. */
typedef struct item {
	const gb_ynode *n;
	char path[160];
} item;

static int list_items(sdec *c, const gb_ynode *n, const char *path,
                      const char *what, int required, item **out,
                      size_t *nout)
{
	char d[128];
	*out = NULL;
	*nout = 0;
	if (n && n->invalid)
		return -1;
	if (n && n->kind == GB_Y_SCALAR && !n->is_null) {
		*out = gb_xcalloc(1, sizeof(item));
		(*out)[0].n = n;
		snprintf((*out)[0].path, sizeof((*out)[0].path), "%s", path);
		*nout = 1;
		return 0;
	}
	if (!n || n->kind != GB_Y_SEQ) {
		ERR(c, n, path, "expected a list of %s, found %s", what,
		    gb_ydescribe(n, d, sizeof(d)));
		return -1;
	}
	if (n->n == 0) {
		ERR(c, n, path, "the list of %s is empty: give at least one%s",
		    what, required ? "" : ", or leave the key out for the "
		    "default");
		return -1;
	}
	*out = gb_xcalloc(n->n, sizeof(item));
	for (size_t i = 0; i < n->n; i++) {
		const gb_ynode *it = n->items[i];
		char ip[160];
		ipath(ip, sizeof(ip), path, i);
		if (it->invalid)
			continue;
		if (it->kind != GB_Y_SCALAR || it->is_null) {
			ERR(c, it, ip, "expected a string, found %s",
			    gb_ydescribe(it, d, sizeof(d)));
			continue;
		}
		(*out)[*nout].n = it;
		snprintf((*out)[*nout].path, sizeof((*out)[*nout].path), "%s",
		         ip);
		(*nout)++;
	}
	return 0;
}

/* One of `values` (case-insensitive); *idx is its index.  `what` names
 * the kind of value in messages ("cloud"). */
static int choice(sdec *c, const gb_ynode *n, const char *path,
                  const char *what, const char *const *values,
                  const char *hint, int *idx)
{
	char low[64], t[80];
	const char *near;
	char *list;
	if (strlen(n->str) < sizeof(low)) {
		for (int i = 0; values[i]; i++) {
			if (strcasecmp(values[i], n->str) == 0) {
				*idx = i;
				return 0;
			}
		}
	}
	lower_copy(n->str, low, sizeof(low));
	near = gb_region_tag_canonical(low);
	if (near != low) { /* an older name of a region tag */
		for (int i = 0; values[i]; i++)
			if (strcmp(values[i], near) == 0) {
				ERR(c, n, path, "\"%s\" is now called \"%s\" "
				    "(region tags and compliance tags are one "
				    "vocabulary); write %s", n->str, near, near);
				return -1;
			}
	}
	near = gb_nearest(low, values);
	list = join_or(values);
	if (near)
		ERR(c, n, path, "unknown %s \"%s\"; did you mean \"%s\"? "
		    "(expected %s)%s", what, shown(n->str, t, sizeof(t)), near,
		    list, hint);
	else
		ERR(c, n, path, "unknown %s \"%s\"; expected %s%s", what,
		    shown(n->str, t, sizeof(t)), list, hint);
	free(list);
	return -1;
}

/* A list of distinct choices; indexes into out (at most MAX_CHOICES).
 * Returns 0 when every item was valid. */
static int choice_list(sdec *c, const gb_ynode *n, const char *path,
                       const char *what, const char *plural,
                       const char *const *values, const char *hint,
                       int *out, size_t *nout)
{
	item *items;
	size_t ni;
	int rc = 0;
	*nout = 0;
	if (list_items(c, n, path, plural, 0, &items, &ni) != 0)
		return -1;
	if (n->kind == GB_Y_SEQ && ni != n->n)
		rc = -1;
	for (size_t i = 0; i < ni; i++) {
		int idx, dup = 0;
		if (choice(c, items[i].n, items[i].path, what, values, hint,
		           &idx)) {
			rc = -1;
			continue;
		}
		for (size_t k = 0; k < *nout; k++)
			if (out[k] == idx)
				dup = 1;
		if (dup) {
			ERR(c, items[i].n, items[i].path,
			    "\"%s\" is listed twice; remove one", values[idx]);
			rc = -1;
			continue;
		}
		if (*nout < MAX_CHOICES)
			out[(*nout)++] = idx;
	}
	free(items);
	return rc;
}

static int is_lower_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* Pool names become part of cloud resource names and GCP labels. */
static int valid_pool_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > NAME_MAX_LEN || !(s[0] >= 'a' && s[0] <= 'z') ||
	    s[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return 0;
	return 1;
}

/* A valid name close to s ("Train_1" -> "train-1"), or "" when none. */
static void suggest_name(const char *s, char *out, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 1 < cap && o < NAME_MAX_LEN; s++) {
		char ch = (char)tolower((unsigned char)*s);
		if (ch == '_' || ch == '.' || ch == ' ')
			ch = '-';
		if (!is_lower_alnum(ch) && ch != '-')
			continue;
		if (o == 0 && !(ch >= 'a' && ch <= 'z'))
			continue;
		if (ch == '-' && o > 0 && out[o - 1] == '-')
			continue;
		out[o++] = ch;
	}
	while (o > 0 && out[o - 1] == '-')
		o--;
	out[o] = '\0';
}

/* Label keys and team names: 1..63 of [a-z0-9_.-], starting with a
 * letter (every cloud accepts these as tag/label keys). */
static int valid_label_key(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > LABEL_MAX_LEN || !(s[0] >= 'a' && s[0] <= 'z'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '_' && s[i] != '.' &&
		    s[i] != '-')
			return 0;
	return 1;
}

static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/* ------------------------------------------------------------ fields */

static void dec_name(sdec *c, const gb_ynode *n, const char *path,
                     gb_pool_spec *p)
{
	char t[80], sug[NAME_MAX_LEN + 1];
	char *s;
	if (gb_ydec_str(&c->y, n, path, &s) != 0)
		return;
	if (valid_pool_name(s)) {
		p->name = s;
		return;
	}
	suggest_name(s, sug, sizeof(sug));
	if (!*s)
		ERR(c, n, path, "the name is empty: use 1 to %d lowercase "
		    "letters, digits and '-'", NAME_MAX_LEN);
	else if (strlen(s) > NAME_MAX_LEN)
		ERR(c, n, path, "the name \"%s\" is %zu characters long; the "
		    "limit is %d (it becomes part of cloud resource names)",
		    shown(s, t, sizeof(t)), strlen(s), NAME_MAX_LEN);
	else if (*sug && valid_pool_name(sug))
		ERR(c, n, path, "invalid name \"%s\": use lowercase letters, "
		    "digits and '-', starting with a letter and not ending "
		    "with '-' (it becomes part of cloud resource names); "
		    "did you mean \"%s\"?", shown(s, t, sizeof(t)), sug);
	else
		ERR(c, n, path, "invalid name \"%s\": use lowercase letters, "
		    "digits and '-', starting with a letter and not ending "
		    "with '-' (it becomes part of cloud resource names)",
		    shown(s, t, sizeof(t)));
	free(s);
}

static void dec_team(sdec *c, const gb_ynode *n, const char *path,
                     gb_pool_spec *p)
{
	char t[80];
	char *s;
	if (gb_ydec_str(&c->y, n, path, &s) != 0)
		return;
	if (!valid_label_key(s)) {
		ERR(c, n, path, "invalid team \"%s\": use 1 to %d lowercase "
		    "letters, digits, '_', '.' and '-', starting with a letter",
		    shown(s, t, sizeof(t)), LABEL_MAX_LEN);
		free(s);
		return;
	}
	free(p->team);
	p->team = s;
}

static void dec_labels(sdec *c, const gb_ynode *n, const char *path,
                       gb_pool_spec *p)
{
	char t[80], kp[160];
	if (gb_ydec_strmap(&c->y, n, path, &p->labels) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if (n->n > MAX_LABELS)
		ERR(c, n, path, "%zu labels; at most %d are allowed", n->n,
		    MAX_LABELS);
	for (size_t i = 0; i < n->n; i++) {
		const gb_ynode *k = n->keys[i], *v = n->items[i];
		if (k->invalid)
			continue;
		kpath(kp, sizeof(kp), path, shown(k->str, t, sizeof(t)));
		if (strncmp(k->str, "gpubroker-", 10) == 0)
			ERR(c, k, kp, "label keys starting with \"gpubroker-\" are "
			    "reserved for the broker's own tags; choose another "
			    "key");
		else if (!valid_label_key(k->str))
			ERR(c, k, kp, "invalid label key \"%s\": use 1 to %d "
			    "lowercase letters, digits, '_', '.' and '-', "
			    "starting with a letter (every cloud must accept it)",
			    shown(k->str, t, sizeof(t)), LABEL_MAX_LEN);
		if (v->kind == GB_Y_SCALAR && !v->invalid && !v->is_null) {
			size_t chars = 0;
			for (const char *q = v->str; *q; q++)
				if (((unsigned char)*q & 0xC0) != 0x80)
					chars++;
			if (chars > LABEL_MAX_LEN)
				ERR(c, v, kp, "label value is %zu characters "
				    "long; the limit is %d", chars,
				    LABEL_MAX_LEN);
			else if (has_control(v->str))
				ERR(c, v, kp, "label value contains control "
				    "characters");
		}
	}
}

static void dec_count(sdec *c, const gb_ynode *pool, gb_pool_spec *p)
{
	const gb_ynode *nc = gb_ymap_get(pool, "count");
	const gb_ynode *nmin = gb_ymap_get(pool, "min");
	const gb_ynode *nmax = gb_ymap_get(pool, "max");
	int64_t count = 1, mn = 0, mx = 0;
	int okc = 1, okmin = 1, okmax = 1;
	if (nc)
		okc = gb_ydec_int(&c->y, nc, "pool.count", 1,
		                  GB_POOL_MAX_INSTANCES, &count) == 0;
	if (nmin)
		okmin = gb_ydec_int(&c->y, nmin, "pool.min", 1,
		                    GB_POOL_MAX_INSTANCES, &mn) == 0;
	if (nmax)
		okmax = gb_ydec_int(&c->y, nmax, "pool.max", 1,
		                    GB_POOL_MAX_INSTANCES, &mx) == 0;
	if (!okc || !okmin || !okmax) {
		p->count = p->min = p->max = 1;
		return;
	}
	if (!nmin && !nmax) {
		p->count = p->min = p->max = (int)count;
		return;
	}
	if (!nmin)
		mn = nc ? (count < mx ? count : mx) : 1;
	if (!nmax)
		mx = nc && count > mn ? count : mn;
	if (!nc)
		count = mn;
	p->count = (int)count;
	p->min = (int)mn;
	p->max = (int)mx;
	if (mn > mx) {
		ERR(c, nmax ? nmax : nmin, nmax ? "pool.max" : "pool.min",
		    "max (%lld) is less than min (%lld)", (long long)mx,
		    (long long)mn);
		return;
	}
	if (nc && (count < mn || count > mx))
		ERR(c, nc, "pool.count", "count %lld is outside min..max "
		    "(%lld..%lld)", (long long)count, (long long)mn,
		    (long long)mx);
}

static void dec_gpu(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *m, *v;
	item *items;
	size_t ni;
	int64_t x;
	if (gb_ydec_map(&c->y, n, "pool.gpu", gpu_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if ((v = gb_ymap_get(n, "count")) &&
	    gb_ydec_int(&c->y, v, "pool.gpu.count", 1, MAX_GPUS_PER_INSTANCE,
	                &x) == 0)
		p->gpu_count = (int)x;
	if ((v = gb_ymap_get(n, "memory_gb")) &&
	    gb_ydec_int(&c->y, v, "pool.gpu.memory_gb", 0, MAX_GPU_MEMORY_GB,
	                &x) == 0)
		p->gpu_memory_gb = (int)x;
	m = gb_ymap_get(n, "model");
	if (!m) {
		ERR(c, n, "pool.gpu.model", "required key \"model\" is missing "
		    "(e.g. model: H100, or model: [H100, A100-80GB])");
		return;
	}
	if (list_items(c, m, "pool.gpu.model", "GPU models", 1, &items, &ni))
		return;
	for (size_t i = 0; i < ni; i++) {
		const char *canon = gb_gpu_canonical(items[i].n->str);
		char t[80];
		if (!canon) {
			const char *near = gb_gpu_suggest(items[i].n->str);
			if (near)
				ERR(c, items[i].n, items[i].path,
				    "unknown GPU model \"%s\"; did you mean "
				    "\"%s\"?", shown(items[i].n->str, t,
				                     sizeof(t)), near);
			else
				ERR(c, items[i].n, items[i].path,
				    "unknown GPU model \"%s\"; known models: "
				    "B200, H200, H100, A100-80GB, A100, L40S, "
				    "L40, L4, A10G, A10, T4, V100, V100-32GB, "
				    "RTX-A6000, MI300X, MI250X",
				    shown(items[i].n->str, t, sizeof(t)));
			continue;
		}
		if (gb_strv_contains(&p->gpu_models, canon)) {
			ERR(c, items[i].n, items[i].path, "GPU model %s is "
			    "listed twice; remove one", canon);
			continue;
		}
		gb_strv_push(&p->gpu_models, canon);
	}
	free(items);
	/* A minimum memory no listed model has can never be satisfied. */
	if (p->gpu_memory_gb > 0 && p->gpu_models.n > 0 &&
	    (v = gb_ymap_get(n, "memory_gb"))) {
		int best = 0;
		const char *bestm = NULL;
		for (size_t i = 0; i < p->gpu_models.n; i++) {
			int mem = gb_gpu_memory_gb(p->gpu_models.v[i]);
			if (mem > best) {
				best = mem;
				bestm = p->gpu_models.v[i];
			}
		}
		if (bestm && best < p->gpu_memory_gb)
			ERR(c, v, "pool.gpu.memory_gb", "no listed GPU model has "
			    "%d GB (the largest, %s, has %d GB); lower "
			    "memory_gb or list a larger model", p->gpu_memory_gb,
			    bestm, best);
	}
}

/* capacity: {on_demand_base: N, spot_share: 0..1}: a mix, placed from
 * [spot, on-demand] (engine_create.c). */
static void dec_mix(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *v;
	int64_t x;
	if (gb_ydec_map(&c->y, n, "pool.capacity", mix_keys) != 0)
		return;
	if (!gb_ymap_get(n, "on_demand_base") && !gb_ymap_get(n, "spot_share")) {
		ERR(c, n, "pool.capacity", "a capacity mix needs on_demand_base "
		    "or spot_share (e.g. capacity: {on_demand_base: 2, "
		    "spot_share: 0.7}), or write a list: [spot, on-demand]");
		return;
	}
	p->mix = 1;
	if ((v = gb_ymap_get(n, "on_demand_base")) &&
	    gb_ydec_int(&c->y, v, "pool.capacity.on_demand_base", 0,
	                GB_POOL_MAX_INSTANCES, &x) == 0)
		p->on_demand_base = (int)x;
	if ((v = gb_ymap_get(n, "spot_share")))
		gb_ydec_num(&c->y, v, "pool.capacity.spot_share", 0, 1,
		            &p->spot_share);
	p->ncapacity = 0;
	p->capacity[p->ncapacity++] = GB_CAPACITY_SPOT;
	p->capacity[p->ncapacity++] = GB_CAPACITY_ON_DEMAND;
}

static void dec_capacity(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	int idx[MAX_CHOICES];
	size_t k;
	if (n && n->kind == GB_Y_MAP) {
		dec_mix(c, n, p);
		return;
	}
	if (choice_list(c, n, "pool.capacity", "capacity", "capacity kinds",
	                capacity_names, "", idx, &k) != 0)
		return;
	p->ncapacity = 0;
	for (size_t i = 0; i < k && i < GB_MAX_CAPACITY_KINDS; i++)
		p->capacity[p->ncapacity++] = (gb_capacity)idx[i];
}

static void default_capacity(gb_pool_spec *p)
{
	p->ncapacity = 0;
	if (p->purpose == GB_PURPOSE_INFERENCE) {
		p->capacity[p->ncapacity++] = GB_CAPACITY_ON_DEMAND;
	} else {
		p->capacity[p->ncapacity++] = GB_CAPACITY_SPOT;
		p->capacity[p->ncapacity++] = GB_CAPACITY_ON_DEMAND;
	}
}

static int region_glob_char(char ch)
{
	return isalnum((unsigned char)ch) || strchr("-_.*?[]!", ch);
}

static void dec_data(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *r;
	char *s;
	char t[80];
	if (gb_ydec_map(&c->y, n, "pool.placement.data", data_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	r = gb_ymap_get(n, "region");
	if (!r) {
		ERR(c, n, "pool.placement.data.region", "required key "
		    "\"region\" is missing (where the data lives, e.g. "
		    "region: eu-west-1)");
		return;
	}
	if (gb_ydec_str(&c->y, r, "pool.placement.data.region", &s) != 0)
		return;
	if (!gb_region_find(NULL, s)) {
		size_t nr = gb_region_count();
		const char **names = gb_xcalloc(nr + 1, sizeof(char *));
		const char *near;
		char low[64];
		for (size_t i = 0; i < nr; i++)
			names[i] = gb_region_at(i)->name;
		lower_copy(s, low, sizeof(low));
		near = gb_nearest(low, names);
		if (near)
			ERR(c, r, "pool.placement.data.region", "unknown region "
			    "\"%s\"; did you mean \"%s\"?",
			    shown(s, t, sizeof(t)), near);
		else
			ERR(c, r, "pool.placement.data.region", "unknown region "
			    "\"%s\": give a provider region id such as "
			    "eu-west-1, westeurope or europe-west4",
			    shown(s, t, sizeof(t)));
		free(names);
		free(s);
		return;
	}
	p->data_region = s;
}

/* 1 when s could name a driver: 1-32 of [a-z0-9_-] (case folded). */
static int driver_like(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 32)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = (char)tolower((unsigned char)s[i]);
		if (!is_lower_alnum(ch) && ch != '_' && ch != '-')
			return 0;
	}
	return 1;
}

/* The cloud n names, lower case: one of c->clouds (the loaded drivers),
 * or, when the loader was given none (a stored spec; a client that hands
 * its spec to a daemon, which checks it against its own drivers), any
 * driver-like name.  Returns the name (borrowed from c->clouds, or
 * written into buf), or NULL after reporting the problem. */
static const char *cloud_name(sdec *c, const gb_ynode *n, const char *path,
                              char *buf, size_t cap)
{
	char t[80];
	int idx;
	if (c->clouds) {
		if (!c->clouds[0]) {
			ERR(c, n, path, "unknown cloud \"%s\": no driver is "
			    "loaded%s", shown(n->str, t, sizeof(t)), CLOUD_HINT);
			return NULL;
		}
		if (choice(c, n, path, "cloud", c->clouds, CLOUD_HINT, &idx))
			return NULL;
		return c->clouds[idx];
	}
	if (!driver_like(n->str)) {
		ERR(c, n, path, "invalid cloud name \"%s\": a cloud is named "
		    "by its driver (1-32 of a-z, 0-9, _ and -)",
		    shown(n->str, t, sizeof(t)));
		return NULL;
	}
	lower_copy(n->str, buf, cap);
	return buf;
}

static void dec_clouds(sdec *c, const gb_ynode *v, gb_pool_spec *p)
{
	item *items;
	size_t ni;
	if (list_items(c, v, "pool.placement.clouds", "clouds", 0, &items,
	               &ni) != 0)
		return;
	for (size_t i = 0; i < ni; i++) {
		char buf[64];
		const char *name = cloud_name(c, items[i].n, items[i].path, buf,
		                              sizeof(buf));
		if (!name)
			continue;
		if (gb_strv_contains(&p->clouds, name)) {
			ERR(c, items[i].n, items[i].path,
			    "\"%s\" is listed twice; remove one", name);
			continue;
		}
		if (p->clouds.n < MAX_CHOICES)
			gb_strv_push(&p->clouds, name);
	}
	free(items);
}

/* A glob must name a region of the pool's clouds (placement.clouds,
 * decoded before, or every loaded one): "eu-*" is AWS's naming only. */
static int check_region_glob(sdec *c, const gb_ynode *n, const char *path,
                             const gb_pool_spec *p)
{
	const char *cl[MAX_CHOICES + 1];
	const char *const *clouds = c->clouds;
	char *msg;
	if (!c->cat || !c->clouds)
		return 0;
	if (p->clouds.n) {
		size_t k = 0;
		for (; k < p->clouds.n && k < MAX_CHOICES; k++)
			cl[k] = p->clouds.v[k];
		cl[k] = NULL;
		clouds = cl;
	}
	if (!(msg = gb_region_glob_problem(n->str, clouds, c->cat)))
		return 0;
	ERR(c, n, path, "%s", msg);
	free(msg);
	return 1;
}

/* Each cloud placement.clouds lists must have a region among the globs
 * (else it can never be used: clouds [aws, gcp, azure] with regions
 * ["us-*"] leaves Azure out, whose US regions are eastus, westus2, ...).
 * Judged as check_region_glob judges one glob, once every glob names
 * some region. */
static void check_clouds_covered(sdec *c, const gb_ynode *n,
                                 const gb_pool_spec *p)
{
	if (!c->cat || !c->clouds || !p->regions.n)
		return;
	for (size_t k = 0; k < p->clouds.n; k++) {
		const char *one[2] = {p->clouds.v[k], NULL};
		char *first = NULL;
		int named = 0;
		for (size_t g = 0; g < p->regions.n && !named; g++) {
			char *msg = gb_region_glob_problem(p->regions.v[g], one,
			                                   c->cat);
			named = !msg;
			if (!first)
				first = msg;
			else
				free(msg);
		}
		if (!named)
			ERR(c, n, "pool.placement.regions", "no glob here names "
			    "a region of %s, which placement.clouds lists: add "
			    "its own names, or take it out of clouds; %s",
			    one[0], first);
		free(first);
	}
}

static void dec_placement(sdec *c, const gb_ynode *n, gb_pool_spec *p,
                          int *colocate_set)
{
	const gb_ynode *v;
	int idx[MAX_CHOICES];
	size_t k;
	if (gb_ydec_map(&c->y, n, "pool.placement", placement_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if ((v = gb_ymap_get(n, "clouds")))
		dec_clouds(c, v, p);
	if ((v = gb_ymap_get(n, "regions"))) {
		item *items;
		size_t ni;
		int bad = 0;
		if (list_items(c, v, "pool.placement.regions",
		               "region names or globs", 0, &items, &ni) == 0) {
			for (size_t i = 0; i < ni; i++) {
				const char *s = items[i].n->str;
				int ok = *s && strlen(s) <= 64;
				char t[80];
				for (const char *q = s; ok && *q; q++)
					ok = region_glob_char(*q);
				if (!ok) {
					ERR(c, items[i].n, items[i].path,
					    "invalid region glob \"%s\": use a "
					    "region id or a pattern such as "
					    "\"eu-*\" (letters, digits, - _ . "
					    "* ? [ ])", shown(s, t, sizeof(t)));
					continue;
				}
				if (!gb_strv_contains(&p->regions, s))
					gb_strv_push(&p->regions, s);
				bad |= check_region_glob(c, items[i].n,
				                         items[i].path, p);
			}
			free(items);
			if (!bad)
				check_clouds_covered(c, v, p);
		}
	}
	if ((v = gb_ymap_get(n, "colocate"))) {
		int i;
		if (gb_ydec_enum(&c->y, v, "pool.placement.colocate",
		                 colocate_names, &i) == 0) {
			p->colocate = (gb_colocate)i;
			*colocate_set = 1;
		}
	}
	if ((v = gb_ymap_get(n, "spread"))) {
		int i;
		if (gb_ydec_enum(&c->y, v, "pool.placement.spread",
		                 spread_names, &i) == 0) {
			p->spread_zone = i == 1;
			p->spread_set = 1;
		}
	}
	if ((v = gb_ymap_get(n, "data")))
		dec_data(c, v, p);
	/* Only the tags the region table (regions_data.c) records per
	 * region: a requirement no region can meet would refuse every plan
	 * (PCI DSS is not among them: the table does not say where it
	 * holds).  Region tags and compliance tags are one vocabulary. */
	if ((v = gb_ymap_get(n, "compliance"))) {
		size_t nt;
		const gb_region_tag *tags = gb_region_tags(&nt);
		const char *names[MAX_CHOICES + 1];
		if (nt > MAX_CHOICES)
			nt = MAX_CHOICES;
		for (size_t i = 0; i < nt; i++)
			names[i] = tags[i].name;
		names[nt] = NULL;
		if (choice_list(c, v, "pool.placement.compliance",
		                "compliance tag", "compliance tags", names,
		                " (the region tags: gpubroker help policy)",
		                idx, &k) == 0)
			for (size_t i = 0; i < k; i++)
				gb_strv_push(&p->compliance, names[idx[i]]);
	}
}

static void dec_limits(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *v;
	double x;
	if (gb_ydec_map(&c->y, n, "pool.limits", limits_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if (!(v = gb_ymap_get(n, "max_price_per_hour")))
		return;
	if (gb_ydec_num(&c->y, v, "pool.limits.max_price_per_hour", 0,
	                MAX_PRICE_PER_HOUR, &x) != 0)
		return;
	if (x <= 0) {
		ERR(c, v, "pool.limits.max_price_per_hour", "must be more than "
		    "0 (USD per hour for the whole pool); leave it out for no "
		    "limit");
		return;
	}
	p->max_price_per_hour = x;
}

static void dec_positive_duration(sdec *c, const gb_ynode *v,
                                  const char *path, int64_t *out)
{
	int64_t x;
	if (gb_ydec_duration(&c->y, v, path, &x) != 0)
		return;
	if (x <= 0) {
		ERR(c, v, path, "must be longer than 0s; leave it out for none");
		return;
	}
	*out = x;
}

static void dec_lifecycle(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *v;
	if (gb_ydec_map(&c->y, n, "pool.lifecycle", lifecycle_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if ((v = gb_ymap_get(n, "ttl")))
		dec_positive_duration(c, v, "pool.lifecycle.ttl", &p->ttl_s);
	if ((v = gb_ymap_get(n, "idle_timeout")))
		dec_positive_duration(c, v, "pool.lifecycle.idle_timeout",
		                      &p->idle_timeout_s);
	if ((v = gb_ymap_get(n, "consolidate"))) {
		int on = 1;
		if (gb_ydec_bool(&c->y, v, "pool.lifecycle.consolidate", &on) == 0)
			p->no_consolidate = !on;
	}
	if ((v = gb_ymap_get(n, "preemptible"))) {
		int b;
		if (gb_ydec_bool(&c->y, v, "pool.lifecycle.preemptible", &b) == 0)
			p->preemptible = b ? 1 : 0;
	}
	if ((v = gb_ymap_get(n, "preempt_grace"))) {
		int64_t x;
		if (gb_ydec_duration(&c->y, v, "pool.lifecycle.preempt_grace",
		                     &x) == 0) {
			if (x > 86400)
				ERR(c, v, "pool.lifecycle.preempt_grace", "must be "
				    "at most 1d (how long a preempted instance "
				    "keeps running after its notice)");
			else
				p->preempt_grace_s = x;
		}
	}
}

/* priority: a class of the broker config's priorities: (when the
 * caller gives them; else any class-like name, checked when admitted) */
static void dec_priority(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	char t[80];
	char *s;
	if (gb_ydec_str(&c->y, n, "pool.priority", &s) != 0)
		return;
	const char *const *known = c->opts ? c->opts->priorities : NULL;
	if (known) {
		size_t i;
		for (i = 0; known[i]; i++)
			if (strcmp(known[i], s) == 0)
				break;
		if (!known[i]) {
			char list[256];
			size_t len = 0;
			list[0] = 0;
			for (size_t k = 0; known[k] && len < sizeof(list); k++)
				len += (size_t)snprintf(list + len,
				        sizeof(list) - len, "%s%s", k ? ", " : "",
				        known[k]);
			ERR(c, n, "pool.priority", "unknown priority class "
			    "\"%s\": the broker config's priorities: are %s "
			    "(add the class there, or name one of these)",
			    shown(s, t, sizeof(t)), list);
			free(s);
			return;
		}
	} else if (!valid_label_key(s)) {
		ERR(c, n, "pool.priority", "invalid priority class \"%s\": "
		    "use 1 to %d lowercase letters, digits, '_', '.' and '-', "
		    "starting with a letter", shown(s, t, sizeof(t)),
		    LABEL_MAX_LEN);
		free(s);
		return;
	}
	free(p->priority);
	p->priority = s;
}

/* ------------------------------------------------------------ autoscale */

static const char *const day_names[] = {"mon", "tue", "wed", "thu",
                                        "fri", "sat", "sun", NULL};

static int day_index(const char *s, size_t len)
{
	for (int i = 0; day_names[i]; i++)
		if (len == 3 && strncasecmp(s, day_names[i], 3) == 0)
			return i;
	return -1;
}

/* "mon-fri", "sat,sun", "fri-mon" (wraps), "daily" -> bit mask; 0 when
 * malformed. */
static unsigned parse_days(const char *s)
{
	unsigned mask = 0;
	if (strcasecmp(s, "daily") == 0)
		return 0x7f;
	while (*s) {
		size_t l = strcspn(s, ",-");
		int a = day_index(s, l), b;
		if (a < 0)
			return 0;
		s += l;
		b = a;
		if (*s == '-') {
			s++;
			l = strcspn(s, ",-");
			if ((b = day_index(s, l)) < 0)
				return 0;
			s += l;
		}
		for (int i = a;; i = (i + 1) % 7) {
			mask |= 1u << i;
			if (i == b)
				break;
		}
		if (*s == ',')
			s++;
		else if (*s)
			return 0;
		while (*s == ' ')
			s++;
	}
	return mask;
}

/* "HH:MM" (00:00..24:00) -> minutes; -1 when malformed. */
static int parse_hhmm(const char *s)
{
	int h, m, used = 0;
	if (strlen(s) != 5 || sscanf(s, "%2d:%2d%n", &h, &m, &used) != 2 ||
	    used != 5 || !isdigit((unsigned char)s[0]) ||
	    !isdigit((unsigned char)s[3]) || h < 0 || m < 0 || m > 59 ||
	    h > 24 || (h == 24 && m != 0))
		return -1;
	return h * 60 + m;
}

/* "UTC", "Z", "+01:00", "UTC-05:30" -> offset minutes in *out. */
static int parse_tz(const char *s, int *out)
{
	int sign, h, m, used = 0;
	if (strncasecmp(s, "UTC", 3) == 0)
		s += 3;
	if (!*s || strcasecmp(s, "Z") == 0) {
		*out = 0;
		return 0;
	}
	if (*s != '+' && *s != '-')
		return -1;
	sign = *s == '-' ? -1 : 1;
	s++;
	if (strlen(s) != 5 || !isdigit((unsigned char)s[0]) ||
	    sscanf(s, "%2d:%2d%n", &h, &m, &used) != 2 || used != 5 ||
	    h > 14 || m > 59)
		return -1;
	*out = sign * (h * 60 + m);
	return 0;
}

/* A few zones for "did you mean" (the full list is the zoneinfo tree). */
static const char *const common_zones[] = {
	"UTC", "Europe/Berlin", "Europe/London", "Europe/Paris",
	"Europe/Amsterdam", "Europe/Madrid", "Europe/Rome", "Europe/Zurich",
	"Europe/Stockholm", "Europe/Warsaw", "Europe/Helsinki",
	"America/New_York", "America/Chicago", "America/Denver",
	"America/Los_Angeles", "America/Toronto", "America/Sao_Paulo",
	"Asia/Tokyo", "Asia/Shanghai", "Asia/Singapore", "Asia/Kolkata",
	"Asia/Seoul", "Australia/Sydney", NULL};

/* tz: a fixed offset, else an IANA zone loaded (and cached) now. */
static void dec_window_tz(sdec *c, const gb_ynode *v, const char *path,
                          const char *s, gb_autoscale_window *out)
{
	char err[256], hint[96] = "";
	const char *near;
	if (parse_tz(s, &out->tz_min) == 0 ||
	    (out->zone = gb_tz_get(s, err, sizeof(err))))
		return;
	if ((near = gb_nearest(s, common_zones)))
		snprintf(hint, sizeof(hint), "did you mean %s? ", near);
	ERR(c, v, path, "%s; %sexpected an IANA zone name such as "
	    "Europe/Berlin (see %s; install tzdata if it is missing), UTC or "
	    "a fixed offset such as \"+01:00\" or \"UTC-05:30\"", err, hint,
	    GB_ZONEINFO_DIR);
}

static int dec_window_str(sdec *c, const gb_ynode *w, const char *parent,
                          const char *key, char **out)
{
	char path[160];
	const gb_ynode *v = gb_ymap_get(w, key);
	kpath(path, sizeof(path), parent, key);
	if (!v) {
		ERR(c, w, path, "required key \"%s\" is missing (e.g. {days: "
		    "mon-fri, from: \"08:00\", to: \"20:00\", min: 4})", key);
		return -1;
	}
	return gb_ydec_str(&c->y, v, path, out);
}

/* A window's from or to as minutes after midnight; -1 after an error. */
static int dec_window_time(sdec *c, const gb_ynode *w, const char *wp,
                           const char *key)
{
	char path[160], *s = NULL;
	int m = -1;
	if (dec_window_str(c, w, wp, key, &s) == 0 &&
	    (m = parse_hhmm(s)) < 0)
		ERR(c, gb_ymap_get(w, key), kpath(path, sizeof(path), wp, key),
		    "expected a time \"HH:MM\" such as \"08:00\" (quote it; "
		    "24:00 is the end of the day), found \"%s\"", s);
	free(s);
	return m;
}

static const char *const window_keys[] = {"days", "from", "to", "tz", "min",
                                          NULL};

static void dec_window(sdec *c, const gb_ynode *w, const char *wp,
                       gb_pool_spec *p, gb_autoscale_window *out)
{
	char path[160], *s = NULL;
	const gb_ynode *v;
	int64_t x;
	memset(out, 0, sizeof(*out));
	out->from_min = out->to_min = -1;
	if (gb_ydec_map(&c->y, w, wp, window_keys) != 0 &&
	    (!w || w->kind != GB_Y_MAP))
		return;
	if (dec_window_str(c, w, wp, "days", &s) == 0 &&
	    !(out->days = parse_days(s)))
		ERR(c, gb_ymap_get(w, "days"), kpath(path, sizeof(path), wp,
		    "days"), "expected days such as mon-fri, sat,sun, fri-mon "
		    "or daily (mon tue wed thu fri sat sun), found \"%s\"", s);
	free(s);
	s = NULL;
	out->from_min = dec_window_time(c, w, wp, "from");
	out->to_min = dec_window_time(c, w, wp, "to");
	if (out->from_min >= 0 && out->to_min >= 0 &&
	    out->to_min <= out->from_min)
		ERR(c, gb_ymap_get(w, "to"), kpath(path, sizeof(path), wp,
		    "to"), "must be after from; for a window across midnight "
		    "write two windows (..-24:00 and 00:00-..)");
	if ((v = gb_ymap_get(w, "tz")) &&
	    gb_ydec_str(&c->y, v, kpath(path, sizeof(path), wp, "tz"),
	                &s) == 0)
		dec_window_tz(c, v, path, s, out);
	free(s);
	kpath(path, sizeof(path), wp, "min");
	if (!(v = gb_ymap_get(w, "min")))
		ERR(c, w, path, "required key \"min\" is missing (the floor "
		    "during the window, within the pool's min..max %d..%d)",
		    p->min, p->max);
	else if (gb_ydec_int(&c->y, v, path, p->min, p->max, &x) == 0)
		out->min = (int)x;
}

static void dec_schedule(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	char path[48];
	gb_autoscale *a = &p->autoscale;
	if (!n || n->kind != GB_Y_SEQ) {
		char what[128];
		ERR(c, n, "pool.autoscale.schedule", "expected a list of windows "
		    "such as - {days: mon-fri, from: \"08:00\", to: \"20:00\", "
		    "min: 4}, found %s", gb_ydescribe(n, what, sizeof(what)));
		return;
	}
	if (n->n > GB_AUTOSCALE_MAX_WINDOWS) {
		ERR(c, n, "pool.autoscale.schedule", "at most %d windows, found "
		    "%zu", GB_AUTOSCALE_MAX_WINDOWS, n->n);
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		dec_window(c, n->items[i],
		           ipath(path, sizeof(path), "pool.autoscale.schedule", i),
		           p, &a->windows[a->nwindows++]);
}

static const char *const autoscale_keys[] = {
	"gpu_util_target", "up_after", "down_after", "max_step", "schedule",
	NULL};

static void dec_autoscale(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *v;
	gb_autoscale *a = &p->autoscale;
	int64_t x;
	if (gb_ydec_map(&c->y, n, "pool.autoscale", autoscale_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if (p->min >= p->max) {
		ERR(c, n, "pool.autoscale", "autoscale needs room to move: give "
		    "the pool a range with min < max (e.g. min: 1, max: 8; "
		    "purpose inference or dev)");
		return;
	}
	a->enabled = 1;
	a->up_after_s = 60;
	a->down_after_s = 600;
	a->max_step = 1;
	if (!(v = gb_ymap_get(n, "gpu_util_target")))
		ERR(c, n, "pool.autoscale.gpu_util_target", "required key "
		    "\"gpu_util_target\" is missing (the mean GPU utilisation "
		    "to keep, e.g. gpu_util_target: 0.7)");
	else if (gb_ydec_num(&c->y, v, "pool.autoscale.gpu_util_target", 0, 1,
	                     &a->gpu_util_target) == 0 &&
	         a->gpu_util_target <= 0)
		ERR(c, v, "pool.autoscale.gpu_util_target", "must be more than 0 "
		    "(a fraction of 1, e.g. 0.7)");
	if ((v = gb_ymap_get(n, "up_after")))
		dec_positive_duration(c, v, "pool.autoscale.up_after",
		                      &a->up_after_s);
	if ((v = gb_ymap_get(n, "down_after")))
		dec_positive_duration(c, v, "pool.autoscale.down_after",
		                      &a->down_after_s);
	if ((v = gb_ymap_get(n, "max_step")) &&
	    gb_ydec_int(&c->y, v, "pool.autoscale.max_step", 1,
	                GB_POOL_MAX_INSTANCES, &x) == 0)
		a->max_step = (int)x;
	if ((v = gb_ymap_get(n, "schedule")))
		dec_schedule(c, v, p);
}

static int valid_policy_ref(const char *s)
{
	size_t n = strlen(s);
	if (n >= 5 && n <= 4096 && strcmp(s + n - 4, ".lua") == 0)
		return !has_control(s);
	if (n < 1 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

static const char *const policy_entry_keys[] = {"name", "args", NULL};

/* One entry of policy: a name (or path) node and, for the {name:, args:}
 * form, its args mapping (NULL when none): each value a scalar, checked
 * against the policy's declaration when c->opts has policy_arg. */
static void dec_policy_entry(sdec *c, const gb_ynode *name,
                             const gb_ynode *args, const char *path,
                             gb_pool_spec *p)
{
	const char *s = name->str;
	char t[80], kp[200], msg[512];
	gb_kvs kv = {0};
	int bad = 0;
	if (!valid_policy_ref(s)) {
		ERR(c, name, path, "\"%s\" is neither a policy name (lowercase "
		    "letters, digits, '_' and '-', as in policies/NAME.lua) nor "
		    "a path to a .lua file", shown(s, t, sizeof(t)));
		return;
	}
	if (gb_strv_contains(&p->policies, s)) {
		ERR(c, name, path, "policy \"%s\" is listed twice; remove one",
		    shown(s, t, sizeof(t)));
		return;
	}
	if (args) {
		snprintf(kp, sizeof(kp), "%s.args", path);
		if (gb_ydec_strmap(&c->y, args, kp, &kv) != 0)
			bad = 1;
		if (!bad && c->opts && c->opts->policy_arg &&
		    c->opts->policy_arg(c->opts->policy_ud, s, NULL, NULL, msg,
		                        sizeof(msg)) != 0) {
			ERR(c, name, path, "%s", msg);
			bad = 1;
		}
		for (size_t i = 0; !bad && c->opts && c->opts->policy_arg &&
		                   i < args->n; i++) {
			const char *k = args->keys[i]->str;
			char akp[260];
			snprintf(akp, sizeof(akp), "%s.%s", kp,
			         shown(k, t, sizeof(t)));
			if (c->opts->policy_arg(c->opts->policy_ud, s, k,
			                        args->items[i]->str, msg,
			                        sizeof(msg)) != 0) {
				ERR(c, args->keys[i], akp, "%s", msg);
				bad = 2;
			}
		}
	}
	if (bad == 1) {
		gb_kvs_free(&kv);
		return;
	}
	p->policy_args = gb_xrealloc(p->policy_args, (p->policies.n + 1) *
	                                             sizeof(*p->policy_args));
	p->policy_args[p->policies.n] = kv;
	gb_strv_push(&p->policies, s);
}

static void dec_policy(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	item *items;
	size_t ni;
	if (n && n->kind == GB_Y_SEQ && n->n > 0) {
		for (size_t i = 0; i < n->n; i++) {
			const gb_ynode *it = n->items[i], *name;
			char ip[160], d[128];
			ipath(ip, sizeof(ip), "pool.policy", i);
			if (it->invalid)
				continue;
			if (it->kind == GB_Y_SCALAR && !it->is_null) {
				dec_policy_entry(c, it, NULL, ip, p);
				continue;
			}
			if (it->kind != GB_Y_MAP) {
				ERR(c, it, ip, "expected a policy name or {name: "
				    "NAME, args: {...}}, found %s",
				    gb_ydescribe(it, d, sizeof(d)));
				continue;
			}
			if (gb_ydec_map(&c->y, it, ip, policy_entry_keys) != 0)
				continue;
			name = gb_ymap_get(it, "name");
			if (!name || name->kind != GB_Y_SCALAR || name->is_null) {
				char np[180];
				snprintf(np, sizeof(np), "%s.name", ip);
				ERR(c, name ? name : it, np, "expected the policy's "
				    "name, found %s", gb_ydescribe(name, d,
				                                   sizeof(d)));
				continue;
			}
			dec_policy_entry(c, name, gb_ymap_get(it, "args"), ip,
			                 p);
		}
		return;
	}
	if (list_items(c, n, "pool.policy", "policy names", 0, &items, &ni))
		return;
	for (size_t i = 0; i < ni; i++)
		dec_policy_entry(c, items[i].n, NULL, items[i].path, p);
	free(items);
}

/* Is k (not a loaded cloud) an image for a cloud this pool does not use,
 * so harmless here: placement.clouds is given, does not name it, and it
 * is not a near miss of a cloud it does name (a typo must not pass)?  A
 * spec shared by brokers with different drivers keeps its images for
 * the others. */
static int image_elsewhere(const sdec *c, const gb_pool_spec *p,
                           const char *k)
{
	const char *use[MAX_CHOICES + 1];
	char low[64];
	size_t n = 0;
	if (!c->clouds || !p->clouds.n || !driver_like(k))
		return 0;
	for (size_t i = 0; c->clouds[i]; i++)
		if (strcasecmp(c->clouds[i], k) == 0)
			return 0;
	lower_copy(k, low, sizeof(low));
	for (size_t i = 0; i < p->clouds.n && n < MAX_CHOICES; i++) {
		if (strcmp(p->clouds.v[i], low) == 0)
			return 0;
		use[n++] = p->clouds.v[i];
	}
	use[n] = NULL;
	return gb_nearest(low, use) == NULL;
}

/* image: {CLOUD: id}: its keys are clouds, checked as placement.clouds
 * (except an image for a cloud the pool does not use: image_elsewhere). */
static void dec_image(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	char kp[160], t[80], d[64];
	if (!n || n->kind != GB_Y_MAP) {
		if (n && !n->invalid)
			ERR(c, n, "pool.image", "expected a mapping of cloud to "
			    "image id (e.g. aws: ami-0abc...), found %s",
			    gb_ydescribe(n, d, sizeof(d)));
		return;
	}
	for (size_t i = 0; i < n->n; i++) {
		const gb_ynode *k = n->keys[i], *v = n->items[i];
		const char *cloud;
		char buf[64];
		char *s;
		if (k->invalid)
			continue;
		kpath(kp, sizeof(kp), "pool.image", k->str);
		if (image_elsewhere(c, p, k->str)) {
			lower_copy(k->str, buf, sizeof(buf));
			cloud = buf;
		} else if (!(cloud = cloud_name(c, k, kp, buf, sizeof(buf)))) {
			continue;
		}
		if (gb_ydec_str(&c->y, v, kp, &s) != 0)
			continue;
		if (!*s || strlen(s) > 1024 || has_control(s))
			ERR(c, v, kp, "invalid image \"%s\": give the image id or "
			    "path for %s (at most 1024 characters)",
			    shown(s, t, sizeof(t)), cloud);
		else
			gb_kvs_set(&p->images, cloud, s);
		free(s);
	}
}

static void dec_ssh_keys(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	item *items;
	size_t ni;
	if (list_items(c, n, "pool.ssh_keys", "SSH public keys", 0, &items,
	               &ni))
		return;
	for (size_t i = 0; i < ni; i++) {
		const char *s = items[i].n->str;
		const char *sp;
		int prefix = 0;
		/* Never echo the value: a pasted private key must not end up
		 * in logs. */
		if (strstr(s, "PRIVATE KEY")) {
			ERR(c, items[i].n, items[i].path, "this is a PRIVATE key; "
			    "give the public key (the .pub file, e.g. "
			    "\"ssh-ed25519 AAAA... you@host\") and keep the "
			    "private key secret");
			continue;
		}
		for (size_t k = 0; ssh_key_prefixes[k]; k++)
			if (strncmp(s, ssh_key_prefixes[k],
			            strlen(ssh_key_prefixes[k])) == 0)
				prefix = 1;
		sp = strchr(s, ' ');
		if (!prefix || !sp || sp[1] == '\0' || sp[1] == ' ' ||
		    strchr(s, '\n') || strlen(s) > 16384) {
			ERR(c, items[i].n, items[i].path, "not an OpenSSH public "
			    "key: expected one line such as \"ssh-ed25519 "
			    "AAAA... you@host\" (types ssh-ed25519, ssh-rsa, "
			    "ecdsa-sha2-*, sk-*)");
			continue;
		}
		gb_strv_push(&p->ssh_keys, s);
	}
	free(items);
}

static void dec_user_data(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	char *s;
	if (gb_ydec_str(&c->y, n, "pool.user_data", &s) != 0)
		return;
	if (strlen(s) > USER_DATA_MAX) {
		ERR(c, n, "pool.user_data", "user_data is %zu bytes; the limit "
		    "is %u (16 KiB): fetch larger scripts from the image or a "
		    "URL", strlen(s), USER_DATA_MAX);
		free(s);
		return;
	}
	p->user_data = s;
}

/* placement.spread and a capacity mix place instances one by one over
 * zones and kinds: not with a co-located pool.  Spread defaults to zone
 * for inference pools that are not co-located. */
static void check_spread(sdec *c, const gb_ynode *pool, gb_pool_spec *p)
{
	const gb_ynode *pl = gb_ymap_get(pool, "placement");
	if (p->colocate != GB_COLOCATE_NONE) {
		if (p->spread_zone)
			ERR(c, gb_ymap_get(pl, "spread"), "pool.placement.spread",
			    "spread: zone puts instances in different zones, "
			    "colocate: %s in one %s: choose one (spread: none, "
			    "or colocate: none)", gb_colocate_name(p->colocate),
			    gb_colocate_name(p->colocate));
		if (p->mix)
			ERR(c, gb_ymap_get(pool, "capacity"), "pool.capacity",
			    "a capacity mix (on_demand_base, spot_share) places "
			    "instances one by one; it cannot be co-located "
			    "(colocate: %s): set placement.colocate: none or "
			    "write capacity as a list", gb_colocate_name(p->colocate));
		return;
	}
	if (!p->spread_set && p->purpose == GB_PURPOSE_INFERENCE)
		p->spread_zone = 1;
}

/* "scheme://user:pass@host/...": a '@' in the authority part */
static int url_has_userinfo(const char *url)
{
	const char *a = strstr(url, "://");
	size_t n;
	if (!a)
		return 0;
	a += 3;
	n = strcspn(a, "/?#");
	return memchr(a, '@', n) != NULL;
}

/* serve: {port: 1-65535, webhook: URL}: the port a pool's instances
 * serve on, for GET /v1/pools/NAME/targets, and where the daemon POSTs
 * that list when it changes (https://, or http:// to loopback only,
 * unless GPUBROKER_ALLOW_INSECURE_HTTP: gb_http_url_check). */
static void dec_serve(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *v;
	int64_t x;
	if (gb_ydec_map(&c->y, n, "pool.serve", serve_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if (!(v = gb_ymap_get(n, "port"))) {
		ERR(c, n, "pool.serve.port", "required key \"port\" is missing "
		    "(e.g. serve: {port: 8000})");
		return;
	}
	if (gb_ydec_int(&c->y, v, "pool.serve.port", 1, 65535, &x) == 0)
		p->serve_port = (int)x;
	if ((v = gb_ymap_get(n, "webhook"))) {
		char *url = NULL, why[512];
		if (gb_ydec_str(&c->y, v, "pool.serve.webhook", &url) != 0)
			return;
		/* plain http off loopback: refused where the user's spec is
		 * checked (validate, apply: clouds known) unless opted in; a
		 * stored spec still loads in a daemon started without the
		 * opt-in (its transport refuses the delivery instead) */
		if (gb_url_check(url, gb_http_insecure_env() || !c->clouds,
		                 "the pool's addresses",
		                 "GPUBROKER_ALLOW_INSECURE_HTTP=1 in the "
		                 "environment of the daemon (and of validate)",
		                 why, sizeof(why)) < 0) {
			ERR(c, v, "pool.serve.webhook", "%s", why);
			free(url);
			return;
		}
		if (url_has_userinfo(url)) {
			/* the URL goes to logs and events: no secret in it */
			ERR(c, v, "pool.serve.webhook", "the URL carries a user "
			    "or password (before '@'); it would be logged: give "
			    "the receiver a secret path or check the caller by "
			    "network instead");
			free(url);
			return;
		}
		p->serve_webhook = url;
	}
}

/* Decodes one `pool:` mapping into p (which starts zeroed).  Errors go
 * to c; p holds whatever was valid. */
static void dec_pool(sdec *c, const gb_ynode *n, gb_pool_spec *p)
{
	const gb_ynode *v;
	int colocate_set = 0;

	p->team = gb_xstrdup("default");
	p->purpose = GB_PURPOSE_TRAINING;
	p->count = p->min = p->max = 1;
	p->gpu_count = 1;
	p->preemptible = -1;
	if (n && n->kind == GB_Y_SEQ) {
		ERR(c, n, "pool", "expected a mapping (key: value), found a "
		    "list: write one pool per document and separate pools "
		    "with ---");
		return;
	}
	if (gb_ydec_map(&c->y, n, "pool", pool_keys) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;

	if ((v = gb_ymap_get(n, "name")))
		dec_name(c, v, "pool.name", p);
	else
		ERR(c, n, "pool.name", "required key \"name\" is missing "
		    "(e.g. name: train-llm)");
	if ((v = gb_ymap_get(n, "team")))
		dec_team(c, v, "pool.team", p);
	if ((v = gb_ymap_get(n, "labels")))
		dec_labels(c, v, "pool.labels", p);
	if ((v = gb_ymap_get(n, "purpose"))) {
		int i;
		if (gb_ydec_enum(&c->y, v, "pool.purpose", purpose_names,
		                 &i) == 0)
			p->purpose = (gb_purpose)i;
	}
	dec_count(c, n, p);
	if (p->purpose == GB_PURPOSE_TRAINING && p->min != p->max) {
		v = gb_ymap_get(n, "max") ? gb_ymap_get(n, "max")
		                          : gb_ymap_get(n, "min");
		ERR(c, v, v == gb_ymap_get(n, "max") ? "pool.max" : "pool.min",
		    "training pools have a fixed size: give count (or min "
		    "equal to max); min/max ranges are for inference and dev "
		    "pools");
	}
	if ((v = gb_ymap_get(n, "gpu")))
		dec_gpu(c, v, p);
	else
		ERR(c, n, "pool.gpu", "required key \"gpu\" is missing (e.g. "
		    "gpu: {model: H100, count: 8})");
	if ((v = gb_ymap_get(n, "capacity")))
		dec_capacity(c, v, p);
	if (p->ncapacity == 0)
		default_capacity(p);
	if ((v = gb_ymap_get(n, "placement")))
		dec_placement(c, v, p, &colocate_set);
	if (!colocate_set)
		p->colocate = p->purpose == GB_PURPOSE_TRAINING && p->count > 1 &&
		                      !p->mix && !p->spread_zone
		                      ? GB_COLOCATE_ZONE
		                      : GB_COLOCATE_NONE;
	check_spread(c, n, p);
	if ((v = gb_ymap_get(n, "limits")))
		dec_limits(c, v, p);
	if ((v = gb_ymap_get(n, "lifecycle")))
		dec_lifecycle(c, v, p);
	if (p->preemptible < 0)
		p->preemptible = p->purpose == GB_PURPOSE_DEV;
	if ((v = gb_ymap_get(n, "priority")))
		dec_priority(c, v, p);
	if ((v = gb_ymap_get(n, "policy")))
		dec_policy(c, v, p);
	if ((v = gb_ymap_get(n, "image")))
		dec_image(c, v, p);
	if ((v = gb_ymap_get(n, "serve")))
		dec_serve(c, v, p);
	if ((v = gb_ymap_get(n, "ssh_keys")))
		dec_ssh_keys(c, v, p);
	if ((v = gb_ymap_get(n, "user_data")))
		dec_user_data(c, v, p);
	if ((v = gb_ymap_get(n, "autoscale")))
		dec_autoscale(c, v, p);
	if ((v = gb_ymap_get(n, "agent")))
		gb_ydec_bool(&c->y, v, "pool.agent", &p->agent);
}

/* ------------------------------------------------------------ files */

static size_t diag_total(const gb_diags *d)
{
	return d->n + d->dropped;
}

static void set_push(gb_spec_set *s, gb_pool_spec *p)
{
	s->pools = gb_xrealloc(s->pools, (s->n + 1) * sizeof(*s->pools));
	s->pools[s->n++] = *p;
	memset(p, 0, sizeof(*p));
}

static void finish_hash(gb_pool_spec *p)
{
	char *json = gb_pool_spec_to_json(p);
	char hex[65];
	gb_sha256_hex(json, strlen(json), hex);
	free(p->source_hash);
	p->source_hash = gb_xstrdup(hex);
	free(json);
}

static int decode_docs(const char *name, const gb_ydocs *docs,
                       const gb_spec_opts *opts, gb_spec_set *out,
                       gb_diags *d, size_t d0)
{
	static const char *const root_keys[] = {"pool", NULL};
	sdec c;
	char what[128];
	size_t npools = 0;

	c.y.file = name;
	c.y.d = d;
	c.clouds = opts ? opts->clouds : NULL;
	c.cat = opts ? opts->catalog : NULL;
	c.opts = opts;
	for (size_t i = 0; i < docs->n; i++) {
		const gb_ynode *root = docs->docs[i], *pn;
		gb_pool_spec p;
		if (!root)
			continue; /* empty document between --- */
		if (root->kind != GB_Y_MAP) {
			ERR(&c, root, "", "expected a pool spec (a mapping with "
			    "the key \"pool\"), found %s",
			    gb_ydescribe(root, what, sizeof(what)));
			continue;
		}
		pn = gb_ymap_get(root, "pool");
		if (!pn) {
			int looks_pool = 0, near = 0;
			for (size_t k = 0; k < root->n; k++) {
				for (size_t j = 0; pool_keys[j]; j++)
					if (strcmp(pool_keys[j],
					           root->keys[k]->str) == 0)
						looks_pool = 1;
				if (gb_nearest(root->keys[k]->str, root_keys))
					near = 1;
			}
			if (looks_pool && !near) {
				/* The settings without the `pool:` above
				 * them: one message, not one per key. */
				ERR(&c, root, "", "these look like pool settings "
				    "but \"pool:\" is missing: write \"pool:\" "
				    "and indent the settings under it");
				continue;
			}
			gb_ydec_map(&c.y, root, "", root_keys);
			if (!near)
				ERR(&c, root, "pool", "required key \"pool\" is "
				    "missing: a spec document starts with "
				    "\"pool:\"");
			continue;
		}
		gb_ydec_map(&c.y, root, "", root_keys);
		if (++npools > SPEC_MAX_POOLS) {
			ERR(&c, root, "pool", "more than %d pools in one file; "
			    "split it", SPEC_MAX_POOLS);
			break;
		}
		memset(&p, 0, sizeof(p));
		dec_pool(&c, pn, &p);
		for (size_t k = 0; k < root->n; k++)
			if (root->items[k] == pn)
				p.line = root->keys[k]->line;
		p.file = gb_xstrdup(name);
		/* duplicate names, located at the second */
		if (p.name) {
			const gb_ynode *nn = gb_ymap_get(pn, "name");
			for (size_t k = 0; k < out->n; k++) {
				if (out->pools[k].name &&
				    strcmp(out->pools[k].name, p.name) == 0) {
					ERR(&c, nn, "pool.name", "pool name \"%s\" "
					    "is already used by the pool at line "
					    "%d; names must be unique",
					    p.name, out->pools[k].line);
					break;
				}
			}
		}
		set_push(out, &p);
	}
	if (npools == 0 && diag_total(d) == d0)
		gb_diag_add(d, name, 1, 1, "",
		            "no pool in this file: a spec is a document "
		            "starting with \"pool:\" (see examples/)");
	if (diag_total(d) != d0) {
		gb_spec_set_free(out);
		return -1;
	}
	for (size_t i = 0; i < out->n; i++)
		finish_hash(&out->pools[i]);
	return 0;
}

static void yaml_opts(gb_yaml_opts *yo, const gb_spec_opts *opts)
{
	memset(yo, 0, sizeof(*yo));
	yo->max_bytes = SPEC_MAX_BYTES;
	yo->max_depth = SPEC_MAX_DEPTH;
	yo->max_nodes = SPEC_MAX_NODES;
	yo->expand_env = 1;
	if (opts) {
		yo->getenv_fn = opts->getenv_fn;
		yo->getenv_ud = opts->getenv_ud;
	}
}

int gb_spec_load_buf(const char *name, const char *buf, size_t len,
                     const gb_spec_opts *opts, gb_spec_set *out,
                     gb_diags *d)
{
	gb_yaml_opts yo;
	gb_ydocs docs;
	size_t d0 = diag_total(d), s0 = d->n;
	int rc;
	out->pools = NULL;
	out->n = 0;
	yaml_opts(&yo, opts);
	gb_yaml_load(name, buf, len, &yo, &docs, d);
	rc = decode_docs(name, &docs, opts, out, d, d0);
	gb_ydocs_free(&docs);
	gb_diags_sort(d, s0);
	return rc;
}

int gb_spec_load_file(const char *path, const gb_spec_opts *opts,
                      gb_spec_set *out, gb_diags *d)
{
	gb_yaml_opts yo;
	gb_ydocs docs;
	size_t d0 = diag_total(d), s0 = d->n;
	int rc;
	out->pools = NULL;
	out->n = 0;
	yaml_opts(&yo, opts);
	gb_yaml_load_file(path, &yo, &docs, d);
	rc = decode_docs(path, &docs, opts, out, d, d0);
	gb_ydocs_free(&docs);
	gb_diags_sort(d, s0);
	return rc;
}

/* ------------------------------------------------------------ JSON */

typedef struct jconv {
	size_t nodes;
	int too_deep, too_many;
} jconv;

static gb_ynode *jnode(gb_ykind kind)
{
	gb_ynode *n = gb_xcalloc(1, sizeof(*n));
	n->kind = kind;
	return n;
}

static gb_ynode *jscalar(const char *s, int quoted, int is_null)
{
	gb_ynode *n = jnode(GB_Y_SCALAR);
	n->str = gb_xstrdup(s);
	n->len = strlen(s);
	n->quoted = quoted;
	n->is_null = is_null;
	return n;
}

/* The jansson value as a node tree (no positions, no ${VAR} expansion:
 * API input must never read the daemon's environment). */
static gb_ynode *json_to_node(jconv *jc, json_t *j, int depth)
{
	gb_ynode *n;
	char num[64];
	if (++jc->nodes > SPEC_MAX_NODES) {
		jc->too_many = 1;
		return jscalar("", 0, 1);
	}
	if (depth > SPEC_MAX_DEPTH &&
	    (json_is_object(j) || json_is_array(j))) {
		jc->too_deep = 1;
		return jscalar("", 0, 1);
	}
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *v;
		n = jnode(GB_Y_MAP);
		n->items = gb_xcalloc(json_object_size(j) + 1,
		                      sizeof(gb_ynode *));
		n->keys = gb_xcalloc(json_object_size(j) + 1,
		                     sizeof(gb_ynode *));
		json_object_foreach(j, k, v) {
			n->keys[n->n] = jscalar(k, 1, 0);
			n->items[n->n] = json_to_node(jc, v, depth + 1);
			n->n++;
		}
		return n;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *v;
		n = jnode(GB_Y_SEQ);
		n->items = gb_xcalloc(json_array_size(j) + 1,
		                      sizeof(gb_ynode *));
		json_array_foreach(j, i, v)
			n->items[n->n++] = json_to_node(jc, v, depth + 1);
		return n;
	}
	case JSON_STRING:
		return jscalar(json_string_value(j), 1, 0);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		         json_integer_value(j));
		return jscalar(num, 0, 0);
	case JSON_REAL:
		gb_format_real(json_real_value(j), num, sizeof(num));
		return jscalar(num, 0, 0);
	case JSON_TRUE:
		return jscalar("true", 0, 0);
	case JSON_FALSE:
		return jscalar("false", 0, 0);
	case JSON_NULL:
	default:
		return jscalar("", 0, 1);
	}
}

int gb_spec_load_json(const char *name, const char *json, size_t len,
                      const gb_spec_opts *opts, gb_spec_set *out,
                      gb_diags *d)
{
	json_error_t err;
	json_t *root;
	gb_ydocs docs = {NULL, 0};
	jconv jc = {0, 0, 0};
	size_t d0 = diag_total(d), s0 = d->n;
	int rc;
	out->pools = NULL;
	out->n = 0;
	if (len > SPEC_MAX_BYTES) {
		gb_diag_add(d, name, 0, 0, "", "the spec is %zu bytes, larger "
		            "than the limit of %u bytes", len, SPEC_MAX_BYTES);
		return -1;
	}
	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &err);
	if (!root) {
		gb_diag_add(d, name, err.line > 0 ? err.line : 0,
		            err.column > 0 ? err.column : 0, "",
		            "invalid JSON: %s", err.text);
		return -1;
	}
	if (json_is_array(root)) {
		size_t i;
		json_t *v;
		docs.docs = gb_xcalloc(json_array_size(root) + 1,
		                       sizeof(gb_ynode *));
		json_array_foreach(root, i, v)
			docs.docs[docs.n++] = json_to_node(&jc, v, 1);
	} else {
		docs.docs = gb_xcalloc(1, sizeof(gb_ynode *));
		docs.docs[docs.n++] = json_to_node(&jc, root, 0);
	}
	json_decref(root);
	if (jc.too_deep || jc.too_many) {
		if (jc.too_deep)
			gb_diag_add(d, name, 0, 0, "", "nesting deeper than %d "
			            "levels; refusing to load it", SPEC_MAX_DEPTH);
		if (jc.too_many)
			gb_diag_add(d, name, 0, 0, "", "document has more than "
			            "%d values; refusing to load it",
			            SPEC_MAX_NODES);
		gb_ydocs_free(&docs);
		return -1;
	}
	rc = decode_docs(name, &docs, opts, out, d, d0);
	gb_ydocs_free(&docs);
	gb_diags_sort(d, s0);
	return rc;
}

/* ------------------------------------------------------------ output */

static json_t *strv_json(const gb_strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

/* Canonical: durations in seconds, days as a list of names joined by
 * commas, times HH:MM, tz an IANA name, UTC or +HH:MM. */
static json_t *autoscale_json(const gb_autoscale *a)
{
	json_t *o = json_object(), *sch = json_array();
	json_object_set_new(o, "gpu_util_target", json_real(a->gpu_util_target));
	json_object_set_new(o, "up_after", json_integer(a->up_after_s));
	json_object_set_new(o, "down_after", json_integer(a->down_after_s));
	json_object_set_new(o, "max_step", json_integer(a->max_step));
	for (int i = 0; i < a->nwindows; i++) {
		const gb_autoscale_window *w = &a->windows[i];
		char days[32] = "", from[32], to[32], tz[GB_TZ_NAME_MAX];
		int off = w->tz_min < 0 ? -w->tz_min : w->tz_min;
		for (int d = 0; d < 7; d++)
			if (w->days & (1u << d)) {
				if (days[0])
					strcat(days, ",");
				strcat(days, day_names[d]);
			}
		snprintf(from, sizeof(from), "%02d:%02d", w->from_min / 60,
		         w->from_min % 60);
		snprintf(to, sizeof(to), "%02d:%02d", w->to_min / 60,
		         w->to_min % 60);
		if (w->zone)
			snprintf(tz, sizeof(tz), "%s", gb_tz_name(w->zone));
		else if (w->tz_min == 0)
			snprintf(tz, sizeof(tz), "UTC");
		else
			snprintf(tz, sizeof(tz), "%c%02d:%02d",
			         w->tz_min < 0 ? '-' : '+', off / 60, off % 60);
		json_array_append_new(sch, json_pack("{s:s,s:s,s:s,s:s,s:i}",
		                      "days", days, "from", from, "to", to,
		                      "tz", tz, "min", w->min));
	}
	if (a->nwindows)
		json_object_set_new(o, "schedule", sch);
	else
		json_decref(sch);
	return o;
}

static json_t *kvs_json(const gb_kvs *kv)
{
	json_t *o = json_object();
	for (size_t i = 0; i < kv->n; i++)
		json_object_set_new(o, kv->keys[i], json_string(kv->vals[i]));
	return o;
}

/* policy: names, and {"name", "args"} for an entry with args. */
static json_t *policy_json(const gb_pool_spec *p)
{
	json_t *a = json_array();
	for (size_t i = 0; i < p->policies.n; i++) {
		const gb_kvs *kv = p->policy_args ? &p->policy_args[i] : NULL;
		if (!kv || !kv->n) {
			json_array_append_new(a, json_string(p->policies.v[i]));
			continue;
		}
		json_array_append_new(a, json_pack("{s:s, s:o}", "name",
		                                   p->policies.v[i], "args",
		                                   kvs_json(kv)));
	}
	return a;
}

char *gb_pool_spec_to_json(const gb_pool_spec *p)
{
	json_t *o = json_object(), *gpu, *cap, *pl, *top;
	char *s, *r;
	json_object_set_new(o, "name", json_string(p->name ? p->name : ""));
	json_object_set_new(o, "team", json_string(p->team ? p->team : ""));
	json_object_set_new(o, "labels", kvs_json(&p->labels));
	json_object_set_new(o, "purpose",
	                    json_string(gb_purpose_name(p->purpose)));
	json_object_set_new(o, "count", json_integer(p->count));
	json_object_set_new(o, "min", json_integer(p->min));
	json_object_set_new(o, "max", json_integer(p->max));
	gpu = json_object();
	json_object_set_new(gpu, "model", strv_json(&p->gpu_models));
	json_object_set_new(gpu, "count", json_integer(p->gpu_count));
	json_object_set_new(gpu, "memory_gb", json_integer(p->gpu_memory_gb));
	json_object_set_new(o, "gpu", gpu);
	if (p->mix) {
		cap = json_pack("{s:i, s:f}", "on_demand_base", p->on_demand_base,
		                "spot_share", p->spot_share);
	} else {
		cap = json_array();
		for (int i = 0; i < p->ncapacity; i++)
			json_array_append_new(cap, json_string(gb_capacity_name(
			                                   p->capacity[i])));
	}
	json_object_set_new(o, "capacity", cap);
	pl = json_object();
	if (p->clouds.n)
		json_object_set_new(pl, "clouds", strv_json(&p->clouds));
	if (p->regions.n)
		json_object_set_new(pl, "regions", strv_json(&p->regions));
	json_object_set_new(pl, "colocate",
	                    json_string(gb_colocate_name(p->colocate)));
	if (p->spread_set)
		json_object_set_new(pl, "spread", json_string(
		                                 p->spread_zone ? "zone" : "none"));
	if (p->data_region)
		json_object_set_new(pl, "data",
		                    json_pack("{s:s}", "region", p->data_region));
	if (p->compliance.n)
		json_object_set_new(pl, "compliance", strv_json(&p->compliance));
	json_object_set_new(o, "placement", pl);
	if (p->max_price_per_hour > 0)
		json_object_set_new(o, "limits",
		                    json_pack("{s:f}", "max_price_per_hour",
		                              p->max_price_per_hour));
	/* preemptible only where it differs from the purpose's default,
	 * so the JSON (and source_hash) of older pools does not change */
	int pre_given = p->preemptible != (p->purpose == GB_PURPOSE_DEV);
	if (p->ttl_s > 0 || p->idle_timeout_s > 0 || p->no_consolidate ||
	    pre_given || p->preempt_grace_s > 0) {
		json_t *lc = json_object();
		if (p->ttl_s > 0)
			json_object_set_new(lc, "ttl", json_integer(p->ttl_s));
		if (p->idle_timeout_s > 0)
			json_object_set_new(lc, "idle_timeout",
			                    json_integer(p->idle_timeout_s));
		if (p->no_consolidate)
			json_object_set_new(lc, "consolidate", json_false());
		if (pre_given)
			json_object_set_new(lc, "preemptible",
			                    json_boolean(p->preemptible));
		if (p->preempt_grace_s > 0)
			json_object_set_new(lc, "preempt_grace",
			                    json_integer(p->preempt_grace_s));
		json_object_set_new(o, "lifecycle", lc);
	}
	if (p->priority)
		json_object_set_new(o, "priority", json_string(p->priority));
	if (p->policies.n)
		json_object_set_new(o, "policy", policy_json(p));
	if (p->images.n)
		json_object_set_new(o, "image", kvs_json(&p->images));
	if (p->serve_port) {
		json_t *sv = json_pack("{s:i}", "port", p->serve_port);
		if (p->serve_webhook)
			json_object_set_new(sv, "webhook",
			                    json_string(p->serve_webhook));
		json_object_set_new(o, "serve", sv);
	}
	if (p->ssh_keys.n)
		json_object_set_new(o, "ssh_keys", strv_json(&p->ssh_keys));
	if (p->user_data)
		json_object_set_new(o, "user_data", json_string(p->user_data));
	if (p->autoscale.enabled)
		json_object_set_new(o, "autoscale", autoscale_json(&p->autoscale));
	if (p->agent)
		json_object_set_new(o, "agent", json_true());
	top = json_object();
	json_object_set_new(top, "pool", o);
	s = json_dumps(top, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(top);
	if (!s) {
		fprintf(stderr, "gpubroker: out of memory encoding a pool\n");
		abort();
	}
	r = gb_xstrdup(s);
	free(s);
	return r;
}

/* ------------------------------------------------------------ memory */

static void strv_copy(gb_strv *dst, const gb_strv *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		gb_strv_push(dst, src->v[i]);
}

static void kvs_copy(gb_kvs *dst, const gb_kvs *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		gb_kvs_set(dst, src->keys[i], src->vals[i]);
}

void gb_pool_spec_copy(gb_pool_spec *dst, const gb_pool_spec *src)
{
	*dst = *src;
	dst->name = gb_xstrdup(src->name);
	dst->team = gb_xstrdup(src->team);
	dst->priority = gb_xstrdup(src->priority);
	kvs_copy(&dst->labels, &src->labels);
	strv_copy(&dst->gpu_models, &src->gpu_models);
	strv_copy(&dst->clouds, &src->clouds);
	strv_copy(&dst->regions, &src->regions);
	dst->data_region = gb_xstrdup(src->data_region);
	strv_copy(&dst->compliance, &src->compliance);
	strv_copy(&dst->policies, &src->policies);
	dst->policy_args = NULL;
	if (src->policy_args) {
		dst->policy_args = gb_xcalloc(src->policies.n ? src->policies.n
		                                              : 1,
		                              sizeof(*dst->policy_args));
		for (size_t i = 0; i < src->policies.n; i++)
			kvs_copy(&dst->policy_args[i], &src->policy_args[i]);
	}
	kvs_copy(&dst->images, &src->images);
	strv_copy(&dst->ssh_keys, &src->ssh_keys);
	dst->user_data = gb_xstrdup(src->user_data);
	dst->serve_webhook = gb_xstrdup(src->serve_webhook);
	dst->file = gb_xstrdup(src->file);
	dst->source_hash = gb_xstrdup(src->source_hash);
}

void gb_pool_spec_free(gb_pool_spec *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->team);
	free(p->priority);
	gb_kvs_free(&p->labels);
	gb_strv_free(&p->gpu_models);
	gb_strv_free(&p->clouds);
	gb_strv_free(&p->regions);
	free(p->data_region);
	gb_strv_free(&p->compliance);
	for (size_t i = 0; p->policy_args && i < p->policies.n; i++)
		gb_kvs_free(&p->policy_args[i]);
	free(p->policy_args);
	gb_strv_free(&p->policies);
	gb_kvs_free(&p->images);
	gb_strv_free(&p->ssh_keys);
	free(p->user_data);
	free(p->serve_webhook);
	free(p->file);
	free(p->source_hash);
	memset(p, 0, sizeof(*p));
}

void gb_spec_set_free(gb_spec_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		gb_pool_spec_free(&s->pools[i]);
	free(s->pools);
	s->pools = NULL;
	s->n = 0;
}
