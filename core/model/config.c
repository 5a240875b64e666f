/* config.c -- the broker's own configuration file (see config.h for the
 * schema): decoded with the same located errors as pool specs. */
#include "config_int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "yamldoc.h"

#define CFG_MAX_BYTES (1u << 20)
#define CFG_MAX_DEPTH 32
#define NAME_MAX_LEN 63

/* Every key of the file: the one table the decoder's key checks, the
 * validate command's config detection and the reference (`gpubroker help
 * config`, the man page, docs/config.md) come from.  Defaults are those
 * of gb_config_defaults (test_config checks the durations and numbers). */
static const gb_config_key keys[] = {
	{"", "broker_id", "string", "gpubroker", "tags every instance it "
	 "creates (1-32 of a-z, 0-9 and '-', starting with a letter); "
	 "replicas sharing a store use one id"},
	{"", "state", "path or URL", "$XDG_STATE_HOME/gpubroker/state.db "
	 "(else ~/.local/state/gpubroker/state.db)", "the state store: a "
	 "SQLite file, or postgresql://USER@HOST:PORT/DB?sslmode=require for "
	 "several replicas"},
	{"", "state_password", "source", "PGPASSWORD or ~/.pgpass", "the "
	 "PostgreSQL password as env:VARIABLE or file:/path (never inline)"},
	{"", "policy_path", "list of dirs", "the installed policies "
	 "(share/gpubroker/policies)", "where policy names are looked up, in "
	 "order"},
	{"", "org_policies", "list of names", "none", "policies every pool "
	 "runs first; pools cannot opt out"},
	{"", "drivers", "list", "every installed driver", "the drivers to "
	 "load, each with the drivers[] keys"},
	{"", "listen", "host:port", "127.0.0.1:7878", "the daemon's API "
	 "address (gpubroker serve)"},
	{"", "tls", "map", "none (plain HTTP)", "serve HTTPS: tls.cert and "
	 "tls.key"},
	{"", "tokens", "list", "none (the daemon then listens on loopback "
	 "only)", "API bearer tokens, each with the tokens[] keys"},
	{"", "teams", "list", "none (no quotas)", "team quotas and budgets, "
	 "each with the teams[] keys; tokens must then name a listed team"},
	{"", "reservations", "list", "none", "capacity already paid for, "
	 "each with the reservations[] keys"},
	{"", "onprem", "map", "none", "the on-prem driver's nodes: "
	 "onprem.inventory"},
	{"", "daemon", "map", "", "the daemon's settings: the daemon.* keys"},
	{"", "auth", "map", "none", "who may sign in without a stored token: "
	 "auth.oidc"},
	{"", "priorities", "map", "{production: 1000, batch: 100, dev: 10}",
	 "priority classes, name to 0-1000000 (higher first); pools name "
	 "one in priority: (default by purpose: inference production, "
	 "training batch, dev dev, else the lowest class)"},
	{"", "agent", "map", "none (no instance agents)", "the instance "
	 "agent (gpubroker-agent): the agent.* keys"},
	{"drivers[]", "name", "string", "required", "the driver: aws, azure, "
	 "gcp, lambda, onprem, or a third-party driver's name"},
	{"drivers[]", "path", "path", "the shipped driver", "a driver .so to "
	 "load instead"},
	{"drivers[]", "options", "map", "none", "the driver's options, "
	 "string to string (drivers/NAME/README.md)"},
	{"drivers[]", "credentials", "map", "none", "credential name to "
	 "source: env:VARIABLE or file:/path (never inline)"},
	{"tls", "cert", "path", "required", "the certificate, PEM"},
	{"tls", "key", "path", "required", "the private key, PEM"},
	{"tokens[]", "name", "string", "required", "the token's name (audit, "
	 "logs)"},
	{"tokens[]", "sha256", "hex", "required", "SHA-256 of the bearer "
	 "token (printf %s \"$TOKEN\" | sha256sum)"},
	{"tokens[]", "role", "viewer|operator|admin", "required", "viewer "
	 "reads, operator changes its team's pools, admin everything"},
	{"tokens[]", "team", "string", "none (an admin sees every team)",
	 "the team whose pools the token sees and changes"},
	{"teams[]", "name", "string", "required", "the team, as pools' team: "
	 "names it"},
	{"teams[]", "max_gpus", "integer", "no limit", "GPUs the team's pools "
	 "may hold in all"},
	{"teams[]", "max_price_per_hour", "number", "no limit", "USD per hour "
	 "for all the team's pools"},
	{"teams[]", "monthly_budget", "number", "no limit", "USD per month "
	 "for the team: what would bring the month's spend (so far plus "
	 "what runs, to the month's end or its TTL) over it is refused"},
	{"teams[]", "budget_warn_at", "number", "0.8", "the fraction of "
	 "monthly_budget spent this month at which a budget-warning event "
	 "is written (once a month), 0.01-1"},
	{"teams[]", "share", "number", "1", "the team's weight in the fair "
	 "share of contended GPUs (gpubroker queue), 0.01-10000"},
	{"reservations[]", "cloud", "string", "required", "the cloud it is "
	 "bought from"},
	{"reservations[]", "region", "string", "required", "its region"},
	{"reservations[]", "instance_type", "string", "required", "the type "
	 "reserved (validate checks the driver sells it there)"},
	{"reservations[]", "count", "integer", "required", "instances "
	 "reserved, 1-10000"},
	{"reservations[]", "price_per_hour", "number", "0", "what one "
	 "reserved instance costs per hour, USD"},
	{"onprem", "inventory", "path", "required", "the nodes file "
	 "(examples/onprem-inventory.yaml)"},
	{"daemon", "reconcile_period", "duration", "15s", "how often the "
	 "reconciler converges every pool (at least 1s)"},
	{"daemon", "log_format", "text|json", "text", "the daemon's log "
	 "lines"},
	{"daemon", "failover_cooldown", "duration", "3m", "how long a "
	 "candidate refused for capacity is skipped"},
	{"daemon", "workers", "integer", "64", "cloud calls one engine "
	 "operation makes in parallel, 1-256"},
	{"daemon", "jobs", "integer", "8", "pools the daemon converges at "
	 "once, 1-64"},
	{"daemon", "max_connections", "integer", "8192", "open API "
	 "connections in all, 16-1000000"},
	{"daemon", "max_connections_per_client", "integer", "512", "open "
	 "connections from one client address (0: no cap)"},
	{"daemon", "header_timeout", "duration", "10s", "a connection silent "
	 "this long before its headers are complete, or idle between "
	 "requests, is closed (1s-1h)"},
	{"daemon", "api_threads", "integer", "2", "connection (epoll) "
	 "threads, 1-64"},
	{"daemon", "api_workers", "integer", "16", "threads that run request "
	 "handlers, 1-256"},
	{"daemon", "audit_retention", "duration", "90d", "audit rows older "
	 "than this are deleted (0s: kept forever)"},
	{"daemon", "events_retention", "duration", "90d", "events older "
	 "than this are deleted (0s: kept forever)"},
	{"daemon", "heartbeats_retention", "duration", "30d", "GPU "
	 "utilisation samples for gpubroker usage are kept this long (0s: "
	 "forever)"},
	{"daemon", "state_size_warning", "size", "1GiB", "a warning is "
	 "logged when the state grows past this (0: none)"},
	{"daemon", "reconcile_per_minute", "integer", "6", "on-demand "
	 "reconciles (POST /v1/reconcile) per token a minute"},
	{"daemon", "refusals_per_minute", "integer", "60", "refused requests "
	 "audited per client address a minute"},
	{"daemon", "lease", "duration", "15s", "how long a replica's hold on "
	 "a pool outlives it, shared state only (2s-10m)"},
	{"daemon", "plan_per_minute", "integer", "600", "pools planned "
	 "through POST /v1/plan per token a minute (0: no limit); past it 429"},
	{"daemon", "plan_max_pools", "integer", "100", "pools one POST "
	 "/v1/plan may carry (1-1000); more: 413"},
	{"daemon", "plan_max_answer", "size", "16MiB", "the largest answer of "
	 "POST /v1/plan (64KiB-1GiB); past it 413 saying how to ask for less"},
	{"daemon", "allowed_hosts", "list of names", "[]", "DNS names the API "
	 "answers in a Host header besides loopback names, IP literals and the "
	 "listen host (checked without tokens or when set)"},
	{"agent", "broker_url", "URL", "none (pools' agent: true is refused)",
	 "the daemon's address as instances reach it; written into their "
	 "agent config"},
	{"agent", "bootstrap_ttl", "duration", "1h", "how long an instance's "
	 "one-time bootstrap token may be exchanged (1m-7d)"},
	{"agent", "interval", "duration", "15s", "how often an agent reports "
	 "its GPUs (1s-1h)"},
	{"agent", "package", "path", "none (the image carries the agent)",
	 "the agent's .deb (or its binary) that instances fetch from GET "
	 "/v1/agent/package, pinned by its SHA-256 in their user data"},
	{"agent", "ready_timeout", "duration", "10m", "an agent pool's instance "
	 "not ready this long after it ran is replaced, with an event (0s: "
	 "never)"},
	{"auth", "oidc", "list", "none", "trust rules of the OIDC token "
	 "exchange (POST /v1/auth/oidc), each with the auth.oidc[] keys"},
	{"auth.oidc[]", "issuer", "https URL", "required", "the ID tokens' iss "
	 "(http only to loopback)"},
	{"auth.oidc[]", "audience", "string", "required", "the aud the ID "
	 "token must carry"},
	{"auth.oidc[]", "jwks_url", "https URL", "from the issuer's discovery "
	 "document", "where the issuer's signing keys are"},
	{"auth.oidc[]", "claims", "map", "required (one at least)", "claim "
	 "name to an exact value or glob, every one must match"},
	{"auth.oidc[]", "role", "viewer|operator", "required", "the role of "
	 "the exchanged token (never admin)"},
	{"auth.oidc[]", "team", "string", "required", "the team of the "
	 "exchanged token"},
	{"auth.oidc[]", "max_ttl", "duration", "1h", "the exchanged token's "
	 "longest life (1m-24h), never past the ID token's exp"},
};

const gb_config_key *gb_config_keys(size_t *n)
{
	*n = sizeof(keys) / sizeof(keys[0]);
	return keys;
}

/* The keys of section (NULL-terminated) into out[cap]: what the decoder
 * accepts there. */
const char *const *gb_config__keys_in(const char *section,
                                      const char **out, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && k + 1 < cap;
	     i++)
		if (strcmp(keys[i].section, section) == 0)
			out[k++] = keys[i].key;
	out[k] = NULL;
	return out;
}


static const char *const role_names[] = {"viewer", "operator", "admin", NULL};
static const char *const log_formats[] = {"text", "json", NULL};

size_t gb_config_clouds(const gb_config *c, const char **out, size_t cap)
{
	size_t n = 0;
	if (!cap)
		return 0;
	if (c && c->ndrivers) {
		for (size_t i = 0; i < c->ndrivers && n + 1 < cap; i++)
			if (c->drivers[i].name)
				out[n++] = c->drivers[i].name;
	} else {
		const char *const *dir = gb_driver_dir_names();
		for (size_t i = 0; dir[i] && n + 1 < cap; i++)
			out[n++] = dir[i];
	}
	out[n] = NULL;
	return n;
}

const char *gb_role_name(gb_role r)
{
	if ((unsigned)r < 3)
		return role_names[r];
	return "unknown";
}

/* ------------------------------------------------------------ defaults */

void gb_config_defaults(gb_config *c)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	memset(c, 0, sizeof(*c));
	c->broker_id = gb_xstrdup("gpubroker");
	if (xdg && xdg[0] == '/')
		c->state_path = gb_xasprintf("%s/gpubroker/state.db", xdg);
	else if (home && home[0] == '/')
		c->state_path =
			gb_xasprintf("%s/.local/state/gpubroker/state.db", home);
	else
		c->state_path = gb_xstrdup("gpubroker-state.db");
	c->listen = gb_xstrdup("127.0.0.1:7878");
	c->reconcile_period_s = 15;
	c->failover_cooldown_s = 180;
	c->workers = 64;
	c->jobs = 8;
	c->log_json = 0;
	c->max_connections = 8192;
	c->max_conn_per_client = 512;
	c->header_timeout_s = 10;
	c->api_threads = 2;
	c->api_workers = 16;
	c->audit_retention_s = 90 * 86400;
	c->events_retention_s = 90 * 86400;
	c->heartbeats_retention_s = 30 * 86400;
	c->state_size_warning = (int64_t)1 << 30;
	c->lease_s = 15;
	c->reconcile_per_minute = 6;
	c->refusals_per_minute = 60;
	c->plan_per_minute = 600;
	c->plan_max_pools = 100;
	c->plan_max_answer = (int64_t)16 << 20;
	gb_config__default_priorities(c);
	c->agent_bootstrap_ttl_s = 3600;
	c->agent_interval_s = 15;
	c->agent_ready_timeout_s = 600;
}

void gb_config_free(gb_config *c)
{
	free(c->file);
	free(c->broker_id);
	free(c->state_path);
	free(c->state_password);
	gb_strv_free(&c->policy_path);
	gb_strv_free(&c->org_policies);
	gb_strv_free(&c->allowed_hosts);
	for (size_t i = 0; i < c->ndrivers; i++) {
		free(c->drivers[i].name);
		free(c->drivers[i].path);
		gb_kvs_free(&c->drivers[i].options);
	}
	free(c->drivers);
	free(c->listen);
	free(c->agent_broker_url);
	free(c->agent_package);
	free(c->tls_cert);
	free(c->tls_key);
	for (size_t i = 0; i < c->ntokens; i++) {
		free(c->tokens[i].name);
		free(c->tokens[i].team);
	}
	free(c->tokens);
	for (size_t i = 0; i < c->nteams; i++)
		free(c->teams[i].name);
	free(c->teams);
	gb_config__free_auth(c);
	gb_config__free_priorities(c);
	for (size_t i = 0; i < c->nreservations; i++) {
		free(c->reservations[i].cloud);
		free(c->reservations[i].region);
		free(c->reservations[i].instance_type);
	}
	free(c->reservations);
	free(c->onprem_inventory);
	memset(c, 0, sizeof(*c));
}

const gb_team_cfg *gb_config_team(const gb_config *c, const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < c->nteams; i++)
		if (strcmp(c->teams[i].name, name) == 0)
			return &c->teams[i];
	return NULL;
}

/* ------------------------------------------------------------ helpers */

#define ERR(c, n, path, ...) gb_ydec_err((c), (n), (path), __VA_ARGS__)

static const char *shown(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 4 < cap; s++)
		buf[o++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	if (*s) {
		while (o > 0 && ((unsigned char)buf[o - 1] & 0xC0) == 0x80)
			o--;
		if (o > 0 && (unsigned char)buf[o - 1] >= 0xC0)
			o--;
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* 1..max of [a-z0-9] plus the characters in `extra`, starting with a
 * letter. */
static int valid_ident(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n < 1 || n > max || !(s[0] >= 'a' && s[0] <= 'z'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr(extra, s[i])))
			return 0;
	return 1;
}

int gb_config__valid_name(const char *s)
{
	return valid_ident(s, NAME_MAX_LEN, "_.-");
}

static int valid_var_name(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return 0;
	return 1;
}

static int valid_policy_ref(const char *s)
{
	size_t n = strlen(s);
	if (n >= 5 && n <= 4096 && strcmp(s + n - 4, ".lua") == 0)
		return 1;
	if (n < 1 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return 0;
	return 1;
}

/* A non-empty string without control characters. */
static int dec_text(gb_ydec *c, const gb_ynode *n, const char *path,
                    const char *what, char **out)
{
	char *s;
	if (gb_ydec_str(c, n, path, &s) != 0)
		return -1;
	for (const char *q = s; *q; q++) {
		if ((unsigned char)*q < 0x20 || *q == 0x7f) {
			ERR(c, n, path, "%s contains control characters", what);
			free(s);
			return -1;
		}
	}
	if (!*s) {
		ERR(c, n, path, "%s is empty", what);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

static void set_str(char **dst, char *s)
{
	free(*dst);
	*dst = s;
}

/* The items of a list of mappings; NULL after an error. */
static const gb_ynode *list_of_maps(gb_ydec *c, const gb_ynode *n,
                                    const char *path, const char *what)
{
	char d[128];
	if (n && n->invalid)
		return NULL;
	if (!n || n->kind != GB_Y_SEQ) {
		ERR(c, n, path, "expected a list of %s (each starting with "
		    "\"- \"), found %s", what, gb_ydescribe(n, d, sizeof(d)));
		return NULL;
	}
	return n;
}

static void policy_list(gb_ydec *c, const gb_ynode *n, const char *path,
                        gb_strv *out)
{
	gb_strv tmp = {NULL, 0};
	char t[80];
	if (gb_ydec_strlist(c, n, path, &tmp) != 0) {
		gb_strv_free(&tmp);
		return;
	}
	for (size_t i = 0; i < tmp.n; i++) {
		const gb_ynode *it = n->kind == GB_Y_SEQ ? n->items[i] : n;
		char *ip = n->kind == GB_Y_SEQ ? gb_ypath_idx(path, i)
		                               : gb_xstrdup(path);
		if (!valid_policy_ref(tmp.v[i]))
			ERR(c, it, ip, "\"%s\" is neither a policy name "
			    "(lowercase letters, digits, '_' and '-') nor a "
			    "path to a .lua file", shown(tmp.v[i], t, sizeof(t)));
		else if (gb_strv_contains(out, tmp.v[i]))
			ERR(c, it, ip, "policy \"%s\" is listed twice",
			    tmp.v[i]);
		else
			gb_strv_push(out, tmp.v[i]);
		free(ip);
	}
	gb_strv_free(&tmp);
}

/* ------------------------------------------------------------ sections */

static int valid_source(const char *s)
{
	if (strncmp(s, "env:", 4) == 0)
		return valid_var_name(s + 4);
	if (strncmp(s, "file:", 5) == 0)
		return s[5] == '/' && s[6] != '\0';
	return 0;
}

static int secret_looking_option(const char *k)
{
	return strstr(k, "secret") || strstr(k, "password") ||
	       strstr(k, "private_key") || strstr(k, "passphrase");
}

static void dec_driver(gb_ydec *c, const gb_ynode *n, const char *path,
                       gb_config *cfg)
{
	gb_driver_cfg dc;
	const gb_ynode *v;
	char kp[192], t[80];
	memset(&dc, 0, sizeof(dc));
	if (gb_ydec_map(c, n, path, GB_CONFIG_KEYS("drivers[]")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	snprintf(kp, sizeof(kp), "%s.name", path);
	if (!(v = gb_ymap_get(n, "name"))) {
		ERR(c, n, kp, "required key \"name\" is missing (e.g. name: "
		    "aws)");
	} else if (gb_ydec_str(c, v, kp, &dc.name) == 0) {
		if (!valid_ident(dc.name, 32, "_")) {
			ERR(c, v, kp, "invalid driver name \"%s\": use 1 to 32 "
			    "lowercase letters, digits and '_', starting with a "
			    "letter", shown(dc.name, t, sizeof(t)));
		} else {
			for (size_t i = 0; i < cfg->ndrivers; i++)
				if (strcmp(cfg->drivers[i].name, dc.name) == 0)
					ERR(c, v, kp, "driver \"%s\" is listed "
					    "twice; names must be unique",
					    dc.name);
		}
	}
	snprintf(kp, sizeof(kp), "%s.path", path);
	if ((v = gb_ymap_get(n, "path")))
		dec_text(c, v, kp, "the driver path", &dc.path);
	snprintf(kp, sizeof(kp), "%s.options", path);
	if ((v = gb_ymap_get(n, "options")) &&
	    (gb_ydec_strmap(c, v, kp, &dc.options) == 0 ||
	     v->kind == GB_Y_MAP)) {
		for (size_t i = 0; i < v->n; i++) {
			const char *k = v->keys[i]->str;
			char okp[256];
			snprintf(okp, sizeof(okp), "%s.%s", kp,
			         shown(k, t, sizeof(t)));
			if (strncmp(k, "credentials.", 12) == 0)
				ERR(c, v->keys[i], okp, "credential sources go "
				    "under \"credentials:\", not options");
			else if (secret_looking_option(k))
				ERR(c, v->keys[i], okp, "\"%s\" looks like a "
				    "secret: secrets are never written in the "
				    "config; put a source (env:VAR or "
				    "file:/path) under \"credentials:\"",
				    shown(k, t, sizeof(t)));
		}
	}
	snprintf(kp, sizeof(kp), "%s.credentials", path);
	if ((v = gb_ymap_get(n, "credentials")) &&
	    gb_ydec_map(c, v, kp, NULL) == 0) {
		for (size_t i = 0; i < v->n; i++) {
			const gb_ynode *k = v->keys[i], *src = v->items[i];
			char ckp[256], *okey;
			char d[128];
			snprintf(ckp, sizeof(ckp), "%s.%s", kp,
			         shown(k->str, t, sizeof(t)));
			if (k->invalid || src->invalid)
				continue;
			if (!valid_ident(k->str, 64, "_")) {
				ERR(c, k, ckp, "invalid credential name \"%s\": "
				    "use lowercase letters, digits and '_'",
				    shown(k->str, t, sizeof(t)));
				continue;
			}
			if (src->kind != GB_Y_SCALAR || src->is_null) {
				ERR(c, src, ckp, "expected a credential source "
				    "(env:VAR or file:/path), found %s",
				    gb_ydescribe(src, d, sizeof(d)));
				continue;
			}
			/* Never echo the value: it may be the secret. */
			if (!valid_source(src->str)) {
				ERR(c, src, ckp, "not a credential source: "
				    "secrets are never written inline; write "
				    "env:VARIABLE or file:/absolute/path (the "
				    "value is not shown)");
				continue;
			}
			okey = gb_xasprintf("credentials.%s", k->str);
			gb_kvs_set(&dc.options, okey, src->str);
			free(okey);
		}
	}
	cfg->drivers = gb_xrealloc(cfg->drivers,
	                           (cfg->ndrivers + 1) * sizeof(*cfg->drivers));
	if (!dc.name)
		dc.name = gb_xstrdup("");
	cfg->drivers[cfg->ndrivers++] = dc;
}

/* Hashes of tokens known to be too short or common: every token of 1
 * or 2 printable ASCII characters, and a few words people try first.
 * Built once per process (about 9,000 SHA-256s, a few ms), sorted. */
static const char *const weak_words[] = {
	"admin", "token", "secret", "password", "passw0rd", "changeme",
	"test", "testing", "demo", "root", "gpubroker", "letmein", "123",
	"1234", "12345", "123456", "1234567", "12345678", "123456789",
	"qwerty", "abc", "abcd", "default", "example", "operator", "viewer",
	NULL,
};
#define WEAK_N (95 + 95 * 95 + GB_ARRAY_LEN(weak_words))
static char (*weak_hex)[65];
static unsigned char *weak_len;
static size_t weak_n;
static pthread_once_t weak_once = PTHREAD_ONCE_INIT;

static int hexcmp(const void *a, const void *b)
{
	return memcmp(a, b, 64);
}

static void weak_build(void)
{
	char t[3];
	size_t n = 0;
	/* the length rides in the 65th byte of each entry while sorting */
	weak_hex = gb_xcalloc(WEAK_N, sizeof(*weak_hex));
	for (int a = 32; a < 127; a++) {
		t[0] = (char)a;
		gb_sha256_hex(t, 1, weak_hex[n]);
		weak_hex[n++][64] = 1;
		for (int b = 32; b < 127; b++) {
			t[1] = (char)b;
			gb_sha256_hex(t, 2, weak_hex[n]);
			weak_hex[n++][64] = 2;
		}
	}
	for (size_t i = 0; weak_words[i]; i++) {
		gb_sha256_hex(weak_words[i], strlen(weak_words[i]), weak_hex[n]);
		weak_hex[n++][64] = (char)strlen(weak_words[i]);
	}
	qsort(weak_hex, n, sizeof(*weak_hex), hexcmp);
	weak_len = gb_xcalloc(n, 1);
	for (size_t i = 0; i < n; i++) {
		weak_len[i] = (unsigned char)weak_hex[i][64];
		weak_hex[i][64] = '\0';
	}
	weak_n = n;
}

/* The length of the token whose SHA-256 is hex when it is a known weak
 * one, else 0. */
static int weak_token(const char *hex)
{
	const char *hit;
	pthread_once(&weak_once, weak_build);
	hit = bsearch(hex, weak_hex, weak_n, sizeof(*weak_hex), hexcmp);
	return hit ? weak_len[(size_t)(hit - weak_hex[0]) / sizeof(*weak_hex)]
	           : 0;
}

static void dec_token(gb_ydec *c, const gb_ynode *n, const char *path,
                      gb_config *cfg)
{
	gb_token_cfg tc;
	const gb_ynode *v, *vname = NULL;
	char kp[192], t[80];
	int role = -1;
	memset(&tc, 0, sizeof(tc));
	if (gb_ydec_map(c, n, path, GB_CONFIG_KEYS("tokens[]")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	snprintf(kp, sizeof(kp), "%s.name", path);
	if (!(vname = gb_ymap_get(n, "name"))) {
		ERR(c, n, kp, "required key \"name\" is missing (who holds "
		    "the token, e.g. name: ci)");
	} else if (gb_ydec_str(c, vname, kp, &tc.name) == 0) {
		if (!valid_ident(tc.name, NAME_MAX_LEN, "_.-"))
			ERR(c, vname, kp, "invalid token name \"%s\": use "
			    "lowercase letters, digits, '_', '.' and '-', "
			    "starting with a letter",
			    shown(tc.name, t, sizeof(t)));
		for (size_t i = 0; i < cfg->ntokens; i++)
			if (strcmp(cfg->tokens[i].name, tc.name) == 0)
				ERR(c, vname, kp, "token name \"%s\" is used "
				    "twice; names must be unique",
				    shown(tc.name, t, sizeof(t)));
	}
	snprintf(kp, sizeof(kp), "%s.sha256", path);
	if (!(v = gb_ymap_get(n, "sha256"))) {
		ERR(c, n, kp, "required key \"sha256\" is missing: give the "
		    "SHA-256 of the token (printf %%s TOKEN | sha256sum), "
		    "never the token itself");
	} else if (!v->invalid) {
		int ok = v->kind == GB_Y_SCALAR && v->len == 64;
		for (size_t i = 0; ok && i < 64; i++)
			ok = (v->str[i] >= '0' && v->str[i] <= '9') ||
			     (v->str[i] >= 'a' && v->str[i] <= 'f');
		/* Never echo the value: it may be the token itself. */
		if (!ok) {
			ERR(c, v, kp, "expected the SHA-256 of the token as 64 "
			    "lowercase hex characters (printf %%s TOKEN | "
			    "sha256sum); the value is not shown");
		} else {
			int weak;
			memcpy(tc.sha256, v->str, 65);
			if ((weak = weak_token(tc.sha256)) > 0)
				ERR(c, v, kp, "this is the hash of a %s "
				    "(%d character%s): API tokens need at least "
				    "%d characters; make one with openssl rand "
				    "-hex 24 and give its SHA-256",
				    weak <= 2 ? "token that is far too short"
				              : "common word",
				    weak, weak == 1 ? "" : "s", GB_TOKEN_MIN_LEN);
			for (size_t i = 0; i < cfg->ntokens; i++)
				if (strcmp(cfg->tokens[i].sha256, tc.sha256) == 0)
					ERR(c, v, kp, "the same token hash is "
					    "given to \"%s\" already; every token "
					    "must be different",
					    cfg->tokens[i].name);
		}
	}
	snprintf(kp, sizeof(kp), "%s.role", path);
	if (!(v = gb_ymap_get(n, "role")))
		ERR(c, n, kp, "required key \"role\" is missing (viewer, "
		    "operator or admin)");
	else if (gb_ydec_enum(c, v, kp, role_names, &role) == 0)
		tc.role = (gb_role)role;
	snprintf(kp, sizeof(kp), "%s.team", path);
	if ((v = gb_ymap_get(n, "team"))) {
		if (gb_ydec_str(c, v, kp, &tc.team) == 0 &&
		    !valid_ident(tc.team, NAME_MAX_LEN, "_.-"))
			ERR(c, v, kp, "invalid team name \"%s\": use lowercase "
			    "letters, digits, '_', '.' and '-', starting with "
			    "a letter", shown(tc.team, t, sizeof(t)));
	} else if (role == GB_ROLE_VIEWER || role == GB_ROLE_OPERATOR) {
		ERR(c, n, kp, "required key \"team\" is missing: %s tokens act "
		    "for one team (only admin tokens may leave it out)",
		    role_names[role]);
	}
	cfg->tokens = gb_xrealloc(cfg->tokens,
	                          (cfg->ntokens + 1) * sizeof(*cfg->tokens));
	if (!tc.name)
		tc.name = gb_xstrdup("");
	cfg->tokens[cfg->ntokens++] = tc;
}

static void dec_team(gb_ydec *c, const gb_ynode *n, const char *path,
                     gb_config *cfg)
{
	gb_team_cfg tm;
	const gb_ynode *v;
	char kp[192], t[80];
	int64_t x;
	memset(&tm, 0, sizeof(tm));
	if (gb_ydec_map(c, n, path, GB_CONFIG_KEYS("teams[]")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	snprintf(kp, sizeof(kp), "%s.name", path);
	if (!(v = gb_ymap_get(n, "name"))) {
		ERR(c, n, kp, "required key \"name\" is missing");
	} else if (gb_ydec_str(c, v, kp, &tm.name) == 0) {
		if (!valid_ident(tm.name, NAME_MAX_LEN, "_.-"))
			ERR(c, v, kp, "invalid team name \"%s\": use 1 to %d "
			    "lowercase letters, digits, '_', '.' and '-', "
			    "starting with a letter",
			    shown(tm.name, t, sizeof(t)), NAME_MAX_LEN);
		for (size_t i = 0; i < cfg->nteams; i++)
			if (strcmp(cfg->teams[i].name, tm.name) == 0)
				ERR(c, v, kp, "team \"%s\" is listed twice; "
				    "names must be unique",
				    shown(tm.name, t, sizeof(t)));
	}
	snprintf(kp, sizeof(kp), "%s.max_gpus", path);
	if ((v = gb_ymap_get(n, "max_gpus")) &&
	    gb_ydec_int(c, v, kp, 0, 1000000, &x) == 0)
		tm.max_gpus = (int)x;
	snprintf(kp, sizeof(kp), "%s.max_price_per_hour", path);
	if ((v = gb_ymap_get(n, "max_price_per_hour")))
		gb_ydec_num(c, v, kp, 0, 1e7, &tm.max_price_per_hour);
	snprintf(kp, sizeof(kp), "%s.monthly_budget", path);
	if ((v = gb_ymap_get(n, "monthly_budget")))
		gb_ydec_num(c, v, kp, 0, 1e10, &tm.monthly_budget);
	tm.share = 1;
	snprintf(kp, sizeof(kp), "%s.share", path);
	if ((v = gb_ymap_get(n, "share")))
		gb_ydec_num(c, v, kp, 0.01, 10000, &tm.share);
	tm.budget_warn_at = 0.8;
	snprintf(kp, sizeof(kp), "%s.budget_warn_at", path);
	if ((v = gb_ymap_get(n, "budget_warn_at")))
		gb_ydec_num(c, v, kp, 0.01, 1, &tm.budget_warn_at);
	cfg->teams = gb_xrealloc(cfg->teams,
	                         (cfg->nteams + 1) * sizeof(*cfg->teams));
	if (!tm.name)
		tm.name = gb_xstrdup("");
	cfg->teams[cfg->nteams++] = tm;
}

/* With teams: given, a token's team must be one of them: a team missing
 * there has no quota at all (gb_config_team() finds nothing), which is
 * almost always a typo.  Without teams:, a token's team only scopes what
 * it sees (core/daemon/api.c) and any name is fine. */
static void check_token_teams(gb_ydec *c, const gb_ynode *toks,
                              const gb_config *cfg)
{
	const char **names = gb_xcalloc(cfg->nteams + 1, sizeof(*names));
	char kp[192], t[80];
	for (size_t i = 0; i < cfg->nteams; i++)
		names[i] = cfg->teams[i].name;
	for (size_t i = 0; i < toks->n; i++) {
		const gb_ynode *v = gb_ymap_get(toks->items[i], "team");
		const char *near;
		if (!v || v->kind != GB_Y_SCALAR || v->invalid ||
		    gb_config_team(cfg, v->str))
			continue;
		snprintf(kp, sizeof(kp), "tokens[%zu].team", i);
		near = gb_nearest(v->str, names);
		ERR(c, v, kp, "team \"%s\" is not listed under teams:%s%s%s; "
		    "add it there (- {name: %s}) or use a listed team",
		    shown(v->str, t, sizeof(t)), near ? " (did you mean \"" : "",
		    near ? near : "", near ? "\"?)" : "",
		    shown(v->str, t, sizeof(t)));
	}
	free(names);
}

static void dec_reservation(gb_ydec *c, const gb_ynode *n, const char *path,
                            gb_config *cfg)
{
	gb_reservation_cfg r;
	const gb_ynode *v;
	char kp[192];
	int64_t x;
	int ci;
	memset(&r, 0, sizeof(r));
	if (gb_ydec_map(c, n, path, GB_CONFIG_KEYS("reservations[]")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	r.line = n->line;
	r.col = n->col;
	snprintf(kp, sizeof(kp), "%s.cloud", path);
	if (!(v = gb_ymap_get(n, "cloud"))) {
		ERR(c, n, kp, "required key \"cloud\" is missing");
	} else {
		/* the clouds are the drivers (decoded before reservations) */
		const char *clouds[GB_MAX_CLOUDS];
		gb_config_clouds(cfg, clouds, GB_ARRAY_LEN(clouds));
		if (!clouds[0])
			ERR(c, v, kp, "no driver is configured or installed, so "
			    "no cloud can hold a reservation: list the drivers "
			    "under drivers: (name, path)");
		else if (gb_ydec_enum(c, v, kp, clouds, &ci) == 0)
			r.cloud = gb_xstrdup(clouds[ci]);
	}
	snprintf(kp, sizeof(kp), "%s.region", path);
	if (!(v = gb_ymap_get(n, "region")))
		ERR(c, n, kp, "required key \"region\" is missing");
	else
		dec_text(c, v, kp, "the region", &r.region);
	snprintf(kp, sizeof(kp), "%s.instance_type", path);
	if (!(v = gb_ymap_get(n, "instance_type")))
		ERR(c, n, kp, "required key \"instance_type\" is missing");
	else if (dec_text(c, v, kp, "the instance type",
	                  &r.instance_type) == 0) {
		r.type_line = v->line;
		r.type_col = v->col;
	}
	snprintf(kp, sizeof(kp), "%s.count", path);
	if (!(v = gb_ymap_get(n, "count")))
		ERR(c, n, kp, "required key \"count\" is missing");
	else if (gb_ydec_int(c, v, kp, 1, 10000, &x) == 0)
		r.count = (int)x;
	snprintf(kp, sizeof(kp), "%s.price_per_hour", path);
	if ((v = gb_ymap_get(n, "price_per_hour")))
		gb_ydec_num(c, v, kp, 0, 1e6, &r.price_per_hour);
	cfg->reservations = gb_xrealloc(
		cfg->reservations,
		(cfg->nreservations + 1) * sizeof(*cfg->reservations));
	cfg->reservations[cfg->nreservations++] = r;
}

/* "host:port", "[v6]:port", ":port" or a bare port -> normalised
 * "host:port" (host defaults to 127.0.0.1); NULL after an error. */
static char *parse_listen(gb_ydec *c, const gb_ynode *n)
{
	const char *s = n->str, *colon, *host, *port;
	size_t hlen;
	int64_t p;
	char t[80];
	int ok = 1;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			goto bad;
		host = s;
		hlen = (size_t)(rb - s) + 1;
		port = rb + 2;
		for (const char *q = s + 1; q < rb; q++)
			if (!isxdigit((unsigned char)*q) && *q != ':' &&
			    *q != '.')
				ok = 0;
		if (hlen < 3)
			ok = 0;
	} else if ((colon = strrchr(s, ':'))) {
		host = s;
		hlen = (size_t)(colon - s);
		port = colon + 1;
		for (size_t i = 0; i < hlen; i++)
			if (!isalnum((unsigned char)s[i]) && s[i] != '.' &&
			    s[i] != '-')
				ok = 0;
	} else {
		host = "127.0.0.1";
		hlen = 9;
		port = s;
	}
	if (!ok)
		goto bad;
	for (const char *q = port; *q; q++)
		if (!isdigit((unsigned char)*q))
			goto bad;
	if (gb_parse_int64(port, &p) != 0)
		goto bad;
	if (p < 0 || p > 65535) {
		ERR(c, n, "listen",
		    "port %lld is out of range: use 1 to 65535 (or 0 for any "
		    "free port)", (long long)p);
		return NULL;
	}
	if (hlen == 0) {
		host = "127.0.0.1";
		hlen = 9;
	}
	return gb_xasprintf("%.*s:%lld", (int)hlen, host, (long long)p);
bad:
	ERR(c, n, "listen", "expected host:port such as 127.0.0.1:7878, "
	    "[::1]:7878 or :7878, found \"%s\"", shown(s, t, sizeof(t)));
	return NULL;
}

/* A size in bytes: a whole number with an optional unit (B, KiB, MiB,
 * GiB, TiB, or KB, MB, GB, TB in powers of 1000); "0" = none. */
static void dec_size(gb_ydec *c, const gb_ynode *n, const char *path,
                     int64_t *out)
{
	static const struct {
		const char *unit;
		int64_t mult;
	} units[] = {
		{"", 1}, {"B", 1}, {"KiB", 1LL << 10}, {"MiB", 1LL << 20},
		{"GiB", 1LL << 30}, {"TiB", 1LL << 40}, {"KB", 1000},
		{"MB", 1000000}, {"GB", 1000000000}, {"TB", 1000000000000LL},
	};
	char what[128];
	const char *s = n && n->kind == GB_Y_SCALAR && !n->is_null ? n->str
	                                                            : NULL;
	if (n && n->invalid)
		return;
	if (s && isdigit((unsigned char)s[0])) {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		for (size_t i = 0; i < GB_ARRAY_LEN(units); i++)
			if (strcmp(end, units[i].unit) == 0 &&
			    v <= (unsigned long long)(INT64_MAX / units[i].mult)) {
				*out = (int64_t)v * units[i].mult;
				return;
			}
	}
	ERR(c, n, path, "expected a size such as 512MiB, 2GiB or 0 (no "
	    "limit), found %s", gb_ydescribe(n, what, sizeof(what)));
}

/* daemon.allowed_hosts: DNS names (no port, no scheme) the API answers
 * in a Host header, besides loopback names and IP literals. */
static void dec_allowed_hosts(gb_ydec *c, const gb_ynode *v, gb_config *cfg)
{
	gb_strv tmp = {NULL, 0};
	if (gb_ydec_strlist(c, v, "daemon.allowed_hosts", &tmp) != 0)
		return;
	for (size_t i = 0; i < tmp.n; i++) {
		const char *h = tmp.v[i];
		size_t len = strlen(h);
		int ok = len > 0 && len <= 253;
		for (const char *q = h; ok && *q; q++)
			ok = isalnum((unsigned char)*q) || *q == '.' || *q == '-' ||
			     *q == '_';
		if (!ok) {
			gb_ydec_err(c, v, "daemon.allowed_hosts",
			            "\"%.64s\" is not a host name: give DNS names "
			            "only (letters, digits, '.', '-'), without a "
			            "port or scheme", h);
			gb_strv_free(&tmp);
			return;
		}
	}
	gb_strv_free(&cfg->allowed_hosts);
	cfg->allowed_hosts = tmp;
}

static void dec_daemon(gb_ydec *c, const gb_ynode *n, gb_config *cfg)
{
	const gb_ynode *v;
	int64_t x;
	int i;
	if (gb_ydec_map(c, n, "daemon", GB_CONFIG_KEYS("daemon")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if ((v = gb_ymap_get(n, "reconcile_period")) &&
	    gb_ydec_duration(c, v, "daemon.reconcile_period", &x) == 0) {
		if (x < 1)
			ERR(c, v, "daemon.reconcile_period", "must be at least "
			    "1s");
		else
			cfg->reconcile_period_s = x;
	}
	if ((v = gb_ymap_get(n, "failover_cooldown")) &&
	    gb_ydec_duration(c, v, "daemon.failover_cooldown", &x) == 0)
		cfg->failover_cooldown_s = x;
	if ((v = gb_ymap_get(n, "log_format")) &&
	    gb_ydec_enum(c, v, "daemon.log_format", log_formats, &i) == 0)
		cfg->log_json = i == 1;
	if ((v = gb_ymap_get(n, "workers")) &&
	    gb_ydec_int(c, v, "daemon.workers", 1, 256, &x) == 0)
		cfg->workers = (int)x;
	if ((v = gb_ymap_get(n, "jobs")) &&
	    gb_ydec_int(c, v, "daemon.jobs", 1, 64, &x) == 0)
		cfg->jobs = (int)x;
	if ((v = gb_ymap_get(n, "max_connections")) &&
	    gb_ydec_int(c, v, "daemon.max_connections", 16, 1000000, &x) == 0)
		cfg->max_connections = (int)x;
	if ((v = gb_ymap_get(n, "max_connections_per_client")) &&
	    gb_ydec_int(c, v, "daemon.max_connections_per_client", 0, 1000000,
	                &x) == 0)
		cfg->max_conn_per_client = (int)x;
	if ((v = gb_ymap_get(n, "header_timeout")) &&
	    gb_ydec_duration(c, v, "daemon.header_timeout", &x) == 0) {
		if (x < 1 || x > 3600)
			ERR(c, v, "daemon.header_timeout", "must be from 1s to "
			    "1h");
		else
			cfg->header_timeout_s = x;
	}
	if ((v = gb_ymap_get(n, "api_threads")) &&
	    gb_ydec_int(c, v, "daemon.api_threads", 1, 64, &x) == 0)
		cfg->api_threads = (int)x;
	if ((v = gb_ymap_get(n, "api_workers")) &&
	    gb_ydec_int(c, v, "daemon.api_workers", 1, 256, &x) == 0)
		cfg->api_workers = (int)x;
	if ((v = gb_ymap_get(n, "audit_retention")) &&
	    gb_ydec_duration(c, v, "daemon.audit_retention", &x) == 0)
		cfg->audit_retention_s = x;
	if ((v = gb_ymap_get(n, "events_retention")) &&
	    gb_ydec_duration(c, v, "daemon.events_retention", &x) == 0)
		cfg->events_retention_s = x;
	if ((v = gb_ymap_get(n, "heartbeats_retention")) &&
	    gb_ydec_duration(c, v, "daemon.heartbeats_retention", &x) == 0)
		cfg->heartbeats_retention_s = x;
	if ((v = gb_ymap_get(n, "state_size_warning")))
		dec_size(c, v, "daemon.state_size_warning",
		         &cfg->state_size_warning);
	if ((v = gb_ymap_get(n, "reconcile_per_minute")) &&
	    gb_ydec_int(c, v, "daemon.reconcile_per_minute", 1, 100000, &x) == 0)
		cfg->reconcile_per_minute = (int)x;
	if ((v = gb_ymap_get(n, "refusals_per_minute")) &&
	    gb_ydec_int(c, v, "daemon.refusals_per_minute", 0, 1000000, &x) == 0)
		cfg->refusals_per_minute = (int)x;
	if ((v = gb_ymap_get(n, "plan_per_minute")) &&
	    gb_ydec_int(c, v, "daemon.plan_per_minute", 0, 1000000, &x) == 0)
		cfg->plan_per_minute = (int)x;
	if ((v = gb_ymap_get(n, "plan_max_pools")) &&
	    gb_ydec_int(c, v, "daemon.plan_max_pools", 1, 1000, &x) == 0)
		cfg->plan_max_pools = (int)x;
	if ((v = gb_ymap_get(n, "plan_max_answer"))) {
		int64_t b = cfg->plan_max_answer;
		dec_size(c, v, "daemon.plan_max_answer", &b);
		if (b < (1 << 16) || b > ((int64_t)1 << 30))
			ERR(c, v, "daemon.plan_max_answer", "must be from 64KiB "
			    "to 1GiB");
		else
			cfg->plan_max_answer = b;
	}
	if ((v = gb_ymap_get(n, "allowed_hosts")))
		dec_allowed_hosts(c, v, cfg);
	if ((v = gb_ymap_get(n, "lease")) &&
	    gb_ydec_duration(c, v, "daemon.lease", &x) == 0) {
		if (x < 2 || x > 600)
			ERR(c, v, "daemon.lease", "must be from 2s to 10m (how "
			    "long a replica's hold on a pool outlives it)");
		else
			cfg->lease_s = x;
	}
}

/* agent: the instance agent's broker address and timings */
static void dec_agent(gb_ydec *c, const gb_ynode *n, gb_config *cfg)
{
	const gb_ynode *v;
	int64_t x;
	char *s;
	if (gb_ydec_map(c, n, "agent", GB_CONFIG_KEYS("agent")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if ((v = gb_ymap_get(n, "broker_url")) &&
	    dec_text(c, v, "agent.broker_url", "the broker URL", &s) == 0) {
		if (strncmp(s, "https://", 8) != 0 &&
		    strncmp(s, "http://", 7) != 0) {
			ERR(c, v, "agent.broker_url", "must be an https:// URL "
			    "(http:// only for a test on loopback)");
			free(s);
		} else {
			size_t l = strlen(s);
			while (l && s[l - 1] == '/')
				s[--l] = '\0';
			set_str(&cfg->agent_broker_url, s);
		}
	}
	if ((v = gb_ymap_get(n, "bootstrap_ttl")) &&
	    gb_ydec_duration(c, v, "agent.bootstrap_ttl", &x) == 0) {
		if (x < 60 || x > 7 * 86400)
			ERR(c, v, "agent.bootstrap_ttl", "must be from 1m to 7d");
		else
			cfg->agent_bootstrap_ttl_s = x;
	}
	if ((v = gb_ymap_get(n, "interval")) &&
	    gb_ydec_duration(c, v, "agent.interval", &x) == 0) {
		if (x < 1 || x > 3600)
			ERR(c, v, "agent.interval", "must be from 1s to 1h");
		else
			cfg->agent_interval_s = x;
	}
	if ((v = gb_ymap_get(n, "package")) &&
	    dec_text(c, v, "agent.package", "the agent package path", &s) == 0)
		set_str(&cfg->agent_package, s);
	if ((v = gb_ymap_get(n, "ready_timeout")) &&
	    gb_ydec_duration(c, v, "agent.ready_timeout", &x) == 0)
		cfg->agent_ready_timeout_s = x;
}

static void dec_config(gb_ydec *c, const gb_ynode *root, gb_config *cfg)
{
	const gb_ynode *v;
	char *s, t[80], ip[64];
	if (gb_ydec_map(c, root, "", GB_CONFIG_KEYS("")) != 0 &&
	    root->kind != GB_Y_MAP)
		return;
	if ((v = gb_ymap_get(root, "broker_id")) &&
	    gb_ydec_str(c, v, "broker_id", &s) == 0) {
		if (!valid_ident(s, 32, "-") || s[strlen(s) - 1] == '-') {
			ERR(c, v, "broker_id", "invalid broker id \"%s\": use 1 "
			    "to 32 lowercase letters, digits and '-', starting "
			    "with a letter (it tags every instance)",
			    shown(s, t, sizeof(t)));
			free(s);
		} else {
			set_str(&cfg->broker_id, s);
		}
	}
	if ((v = gb_ymap_get(root, "state")) &&
	    dec_text(c, v, "state", "the state path", &s) == 0)
		set_str(&cfg->state_path, s);
	if ((v = gb_ymap_get(root, "state_password"))) {
		char d[128];
		/* Never echo the value: it may be the password itself. */
		if (v->kind != GB_Y_SCALAR || v->is_null)
			ERR(c, v, "state_password", "expected a credential "
			    "source (env:VAR or file:/path), found %s",
			    gb_ydescribe(v, d, sizeof(d)));
		else if (!valid_source(v->str))
			ERR(c, v, "state_password", "not a credential source: "
			    "the database password is never written inline; "
			    "write env:VARIABLE or file:/absolute/path (or use "
			    "PGPASSWORD / PGPASSFILE) (the value is not shown)");
		else
			set_str(&cfg->state_password, gb_xstrdup(v->str));
	}
	if ((v = gb_ymap_get(root, "policy_path"))) {
		gb_strv tmp = {NULL, 0};
		int bad = gb_ydec_strlist(c, v, "policy_path", &tmp) != 0;
		for (size_t i = 0; !bad && i < tmp.n; i++) {
			if (!tmp.v[i][0]) {
				gb_ydec_err(c, v, "policy_path",
				            "an empty directory name (an unset "
				            "${VAR}?): remove it or give a directory");
				bad = 1;
			}
			for (const char *q = tmp.v[i]; !bad && *q; q++)
				if ((unsigned char)*q < 0x20 || *q == 0x7f) {
					/* as for state and driver paths: a
					 * newline or escape would forge log
					 * lines and error messages */
					gb_ydec_err(c, v, "policy_path",
					            "directory \"%s\" contains control "
					            "characters",
					            shown(tmp.v[i], t, sizeof(t)));
					bad = 1;
				}
		}
		if (!bad) {
			gb_strv_free(&cfg->policy_path);
			cfg->policy_path = tmp;
		} else {
			gb_strv_free(&tmp);
		}
	}
	if ((v = gb_ymap_get(root, "org_policies")))
		policy_list(c, v, "org_policies", &cfg->org_policies);
	if ((v = gb_ymap_get(root, "drivers")) &&
	    list_of_maps(c, v, "drivers", "drivers"))
		for (size_t i = 0; i < v->n; i++) {
			snprintf(ip, sizeof(ip), "drivers[%zu]", i);
			dec_driver(c, v->items[i], ip, cfg);
		}
	if ((v = gb_ymap_get(root, "listen")) && !v->invalid) {
		char d[128];
		if (v->kind != GB_Y_SCALAR || v->is_null) {
			ERR(c, v, "listen", "expected host:port, found %s",
			    gb_ydescribe(v, d, sizeof(d)));
		} else if ((s = parse_listen(c, v))) {
			set_str(&cfg->listen, s);
		}
	}
	if ((v = gb_ymap_get(root, "tls")) &&
	    (gb_ydec_map(c, v, "tls", GB_CONFIG_KEYS("tls")) == 0 || v->kind == GB_Y_MAP)) {
		const gb_ynode *cert = gb_ymap_get(v, "cert");
		const gb_ynode *key = gb_ymap_get(v, "key");
		if (!cert || !key)
			ERR(c, v, cert ? "tls.key" : "tls.cert", "TLS needs both "
			    "cert and key (PEM file paths)");
		if (cert)
			dec_text(c, cert, "tls.cert", "the certificate path",
			         &cfg->tls_cert);
		if (key)
			dec_text(c, key, "tls.key", "the key path",
			         &cfg->tls_key);
	}
	if ((v = gb_ymap_get(root, "tokens")) &&
	    list_of_maps(c, v, "tokens", "tokens"))
		for (size_t i = 0; i < v->n; i++) {
			snprintf(ip, sizeof(ip), "tokens[%zu]", i);
			dec_token(c, v->items[i], ip, cfg);
		}
	if ((v = gb_ymap_get(root, "teams")) &&
	    list_of_maps(c, v, "teams", "teams"))
		for (size_t i = 0; i < v->n; i++) {
			snprintf(ip, sizeof(ip), "teams[%zu]", i);
			dec_team(c, v->items[i], ip, cfg);
		}
	if (cfg->nteams && (v = gb_ymap_get(root, "tokens")) &&
	    v->kind == GB_Y_SEQ)
		check_token_teams(c, v, cfg);
	if ((v = gb_ymap_get(root, "auth")))
		gb_config__dec_auth(c, v, cfg);
	if ((v = gb_ymap_get(root, "priorities")))
		gb_config__dec_priorities(c, v, cfg);
	if ((v = gb_ymap_get(root, "reservations")) &&
	    list_of_maps(c, v, "reservations", "reservations"))
		for (size_t i = 0; i < v->n; i++) {
			snprintf(ip, sizeof(ip), "reservations[%zu]", i);
			dec_reservation(c, v->items[i], ip, cfg);
		}
	if ((v = gb_ymap_get(root, "onprem")) &&
	    (gb_ydec_map(c, v, "onprem", GB_CONFIG_KEYS("onprem")) == 0 ||
	     v->kind == GB_Y_MAP)) {
		const gb_ynode *inv = gb_ymap_get(v, "inventory");
		if (!inv)
			ERR(c, v, "onprem.inventory", "required key "
			    "\"inventory\" is missing (path of the nodes file)");
		else if (dec_text(c, inv, "onprem.inventory",
		                  "the inventory path", &s) == 0) {
			set_str(&cfg->onprem_inventory, s);
			cfg->inventory_line = inv->line;
			cfg->inventory_col = inv->col;
		}
	}
	if ((v = gb_ymap_get(root, "daemon")))
		dec_daemon(c, v, cfg);
	if ((v = gb_ymap_get(root, "agent")))
		dec_agent(c, v, cfg);
}

/* ------------------------------------------------------------ loading */

/* Relative paths in a config file are relative to the file's directory
 * (as nginx and Terraform do), not to wherever gpubroker is started. */
static void resolve(const char *dir, char **p)
{
	char *abs;
	if (!*p || !**p || (*p)[0] == '/' || !dir)
		return;
	abs = gb_xasprintf("%s/%s", dir, *p);
	free(*p);
	*p = abs;
}

void gb_config_resolve_paths(gb_config *c, const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir = slash ? gb_xstrndup(file, (size_t)(slash - file))
	                  : gb_xstrdup(".");
	if (!gb_config_state_is_url(c->state_path))
		resolve(dir, &c->state_path);
	resolve(dir, &c->tls_cert);
	resolve(dir, &c->tls_key);
	resolve(dir, &c->onprem_inventory);
	resolve(dir, &c->agent_package);
	for (size_t i = 0; i < c->policy_path.n; i++)
		resolve(dir, &c->policy_path.v[i]);
	for (size_t i = 0; i < c->ndrivers; i++)
		resolve(dir, &c->drivers[i].path);
	free(dir);
}

static int finish(const char *name, gb_ydocs *docs, gb_config *out,
                  gb_diags *d, size_t d0, size_t s0)
{
	gb_ydec c = {name, d};
	const gb_ynode *root = NULL;
	char what[128];
	size_t nroots = 0;
	gb_config_defaults(out);
	out->file = gb_xstrdup(name);
	for (size_t i = 0; i < docs->n; i++) {
		if (!docs->docs[i])
			continue;
		if (++nroots == 1)
			root = docs->docs[i];
		else
			ERR(&c, docs->docs[i], "", "a broker config is a single "
			    "document; remove this one or the \"---\" before it");
	}
	if (root && root->kind != GB_Y_MAP)
		ERR(&c, root, "", "expected the broker config (a mapping such "
		    "as \"listen: 127.0.0.1:7878\"), found %s",
		    gb_ydescribe(root, what, sizeof(what)));
	else if (root)
		dec_config(&c, root, out);
	gb_ydocs_free(docs);
	gb_diags_sort(d, s0);
	if (d->n + d->dropped != d0) {
		gb_config_free(out);
		return -1;
	}
	return 0;
}

static void cfg_yaml_opts(gb_yaml_opts *yo)
{
	memset(yo, 0, sizeof(*yo));
	yo->max_bytes = CFG_MAX_BYTES;
	yo->max_depth = CFG_MAX_DEPTH;
	yo->expand_env = 1;
}

int gb_config_load_buf(const char *name, const char *buf, size_t len,
                       gb_config *out, gb_diags *d)
{
	gb_yaml_opts yo;
	gb_ydocs docs;
	size_t d0 = d->n + d->dropped, s0 = d->n;
	cfg_yaml_opts(&yo);
	gb_yaml_load(name, buf, len, &yo, &docs, d);
	return finish(name, &docs, out, d, d0, s0);
}

int gb_config_load(const char *path, gb_config *out, gb_diags *d)
{
	gb_yaml_opts yo;
	gb_ydocs docs;
	size_t d0 = d->n + d->dropped, s0 = d->n;
	if (!path) {
		gb_config_defaults(out);
		return 0;
	}
	cfg_yaml_opts(&yo);
	gb_yaml_load_file(path, &yo, &docs, d);
	if (finish(path, &docs, out, d, d0, s0) != 0)
		return -1;
	gb_config_resolve_paths(out, path);
	return 0;
}

int gb_config_check_files(const gb_config *c, gb_diags *d)
{
	FILE *f;
	int e;
	if (!c->onprem_inventory)
		return 0;
	if ((f = fopen(c->onprem_inventory, "r"))) {
		/* a folder opens too, and fails only when read */
		e = fgetc(f) == EOF && ferror(f) ? errno : 0;
		fclose(f);
		if (!e)
			return 0;
	} else {
		e = errno;
	}
	gb_diag_add(d, c->file ? c->file : "<config>", c->inventory_line,
	            c->inventory_col, "onprem.inventory",
	            "cannot read the on-prem inventory %s: %s; create it "
	            "(schema: drivers/onprem/README.md) or fix the path "
	            "(a relative path is relative to the config file)",
	            c->onprem_inventory, strerror(e));
	return -1;
}

int gb_config_state_is_url(const char *state)
{
	return state && (strncmp(state, "postgresql://", 13) == 0 ||
	                 strncmp(state, "postgres://", 11) == 0);
}
