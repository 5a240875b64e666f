/*
 * config.h -- the broker's own configuration (YAML), with ${VAR}.
 *
 *   broker_id: my-broker             # tags every instance; default "gpubroker"
 *   state: /var/lib/gpubroker/state.db   # default $XDG_STATE_HOME/gpubroker/state.db
 *   # or, for several replicas: postgresql://USER@HOST:PORT/DB?sslmode=verify-full
 *   state_password: env:GPUBROKER_DB_PASSWORD  # a SOURCE; or PGPASSWORD/.pgpass
 *   policy_path: [./policies, /usr/local/share/gpubroker/policies]
 *   org_policies: [org-compliance]   # run first, pools cannot opt out
 *   drivers:
 *     - name: aws
 *       path: /opt/x/aws.so          # optional; default: shipped driver
 *       options: {endpoint: "${AWS_SIM_URL}", regions: "us-east-1,eu-west-1"}
 *       credentials: {access_key_id: env:AWS_ACCESS_KEY_ID, ...}  # SOURCES only
 *   listen: 127.0.0.1:7878
 *   tls: {cert: /path/cert.pem, key: /path/key.pem}
 *   tokens:
 *     - {name: ci, sha256: <hex>, role: operator, team: research}
 *   auth:
 *     oidc:                          # CI jobs sign in with their ID token
 *       - {issuer: https://token.actions.githubusercontent.com,
 *          audience: gpubroker, jwks_url: (default: the issuer's discovery
 *          document), claims: {repository: org/repo, ref: refs/heads/main},
 *          role: operator, team: research, max_ttl: 1h}
 *   teams:
 *     - {name: research, max_gpus: 64, max_price_per_hour: 500, monthly_budget: 20000}
 *   reservations: [{cloud: aws, region: us-east-1, instance_type: p5.48xlarge, count: 2, price_per_hour: 60}]
 *   onprem: {inventory: /etc/gpubroker/nodes.yaml}
 *   daemon: {reconcile_period: 15s, log_format: text|json, failover_cooldown: 3m,
 *            workers: 64, jobs: 8,
 *            max_connections: 8192, max_connections_per_client: 512,
 *            header_timeout: 10s, api_threads: 2, api_workers: 16,
 *            audit_retention: 90d, events_retention: 90d,
 *            heartbeats_retention: 30d,
 *            state_size_warning: 1GiB, reconcile_per_minute: 6,
 *            refusals_per_minute: 60, lease: 15s,
 *            plan_per_minute: 600, plan_max_pools: 100,
 *            plan_max_answer: 16MiB, allowed_hosts: [broker.example.com]}
 *
 * Secrets are never written inline: credentials map a name to a *source*
 * ("env:NAME" or "file:/path").  A value that is neither is refused.
 */
#ifndef GB_CONFIG_H
#define GB_CONFIG_H

#include <stdint.h>

#include "diag.h"
#include "util.h"

/* API tokens shorter than this are refused: a configured hash of a
 * token known to be shorter (every 1- and 2-character one, and common
 * words) at load, with its location; any other at use (the daemon
 * answers 401). */
#define GB_TOKEN_MIN_LEN 12

typedef enum gb_role {
	GB_ROLE_VIEWER = 0,
	GB_ROLE_OPERATOR,
	GB_ROLE_ADMIN
} gb_role;

typedef struct gb_driver_cfg {
	char *name;
	char *path;          /* NULL = shipped driver */
	gb_kvs options;      /* includes credential sources as
	                        "credentials.<name>" -> source */
} gb_driver_cfg;

typedef struct gb_token_cfg {
	char *name;
	char sha256[65];     /* hex digest of the bearer token */
	gb_role role;
	char *team;          /* NULL for admins without a team */
} gb_token_cfg;

/* auth.oidc: one trust rule (config_auth.c).  An ID token of `issuer`
 * for `audience` whose claims match every entry of `claims` (exact, or a
 * glob when the value has * ? or [) is exchanged for a broker token of
 * `role` and `team` (POST /v1/auth/oidc). */
typedef struct gb_oidc_rule {
	char *issuer;        /* https://..., or http:// on loopback (tests) */
	char *audience;
	char *jwks_url;      /* NULL = the issuer's discovery document */
	gb_kvs claims;       /* claim name -> value or glob */
	gb_role role;        /* viewer or operator */
	char *team;
	int64_t max_ttl_s;   /* default 3600 */
} gb_oidc_rule;

typedef struct gb_team_cfg {
	char *name;
	int max_gpus;              /* 0 = unlimited */
	double max_price_per_hour; /* all pools of the team; 0 = unlimited */
	double monthly_budget;     /* USD; 0 = unlimited */
	double share;              /* weight in the fair share; default 1 */
	double budget_warn_at;     /* fraction of monthly_budget spent that
	                              writes a budget-warning event; 0.8 */
} gb_team_cfg;

/* A priority class (priorities:): name -> value, higher first. */
typedef struct gb_priority_cfg {
	char *name;
	int value;
} gb_priority_cfg;

typedef struct gb_reservation_cfg {
	char *cloud;
	char *region;
	char *instance_type;
	int count;
	double price_per_hour;
	int line, col;           /* the entry's position in the file */
	int type_line, type_col; /* instance_type's (0 = unknown) */
} gb_reservation_cfg;

typedef struct gb_config {
	char *file;                /* where it came from, NULL = defaults */
	char *broker_id;
	char *state_path;          /* a SQLite path or a postgresql:// URL */
	char *state_password;      /* a source (env:NAME, file:PATH); NULL =
	                              libpq's PGPASSWORD / PGPASSFILE */
	gb_strv policy_path;
	gb_strv org_policies;
	gb_driver_cfg *drivers;    /* empty = every driver installed in the
	                              driver directory (gb_config_clouds) */
	size_t ndrivers;
	char *listen;              /* host:port */
	char *tls_cert, *tls_key;
	gb_token_cfg *tokens;
	size_t ntokens;
	gb_team_cfg *teams;
	size_t nteams;
	gb_priority_cfg *priorities; /* the classes; defaults production
	                                1000, batch 100, dev 10 */
	size_t npriorities;
	gb_oidc_rule *oidc;        /* auth.oidc, in order (first match wins) */
	size_t noidc;
	gb_reservation_cfg *reservations;
	size_t nreservations;
	char *onprem_inventory;
	int inventory_line, inventory_col; /* where onprem.inventory was
	                                      written; 0 = not from a file */
	int64_t reconcile_period_s;
	int64_t failover_cooldown_s;
	int workers;               /* cloud calls one engine operation makes
	                              in parallel */
	int jobs;                  /* pools the daemon converges at once */
	int log_json;
	/* the API's limits (daemon.*; README, 'The daemon') */
	int max_connections;       /* open connections in all */
	int max_conn_per_client;   /* from one client address; 0 = no cap */
	int64_t header_timeout_s;  /* a connection silent this long before
	                              its request's headers are complete, or
	                              idle between requests, is closed */
	int api_threads;           /* connection (epoll) threads */
	int api_workers;           /* threads that run request handlers */
	int64_t audit_retention_s;  /* 0 = keep forever */
	int64_t events_retention_s; /* 0 = keep forever */
	int64_t heartbeats_retention_s; /* samples for `usage`; 0 = forever */
	int64_t state_size_warning; /* bytes; 0 = no warning */
	int reconcile_per_minute;  /* on-demand reconciles per token */
	int refusals_per_minute;   /* audited refusals per client address */
	int plan_per_minute;       /* pools POST /v1/plan plans per token */
	int plan_max_pools;        /* pools in one POST /v1/plan */
	int64_t plan_max_answer;   /* bytes of one POST /v1/plan answer */
	gb_strv allowed_hosts;     /* Host names the API answers besides
	                              loopback and IP literals (empty: any
	                              when tokens are set; README) */
	int64_t lease_s;           /* daemon.lease: a replica's hold on a pool
	                              (shared state only); default 15 */
	/* agent.*: the instance agent (gpubroker-agent) */
	char *agent_broker_url;    /* NULL = agent pools refused */
	char *agent_package;       /* NULL = the image carries the agent */
	int64_t agent_bootstrap_ttl_s;
	int64_t agent_interval_s;
	int64_t agent_ready_timeout_s; /* 0 = never replaced */
} gb_config;

/* One key of the file: its section ("" top level, "daemon", "tls",
 * "onprem", or a list's entries: "drivers[]", "tokens[]", "teams[]",
 * "reservations[]"), name, type, default and meaning (one line each).
 * The decoder accepts exactly these keys; `gpubroker help config`, the
 * man page and docs/config.md list them. */
typedef struct gb_config_key {
	const char *section, *key, *type, *def, *meaning;
} gb_config_key;
/* Every key, top level first; *n set to the count.  Static storage. */
const gb_config_key *gb_config_keys(size_t *n);

/* Load and validate; 0 ok, -1 with all errors in d (then *out is freed
 * and zeroed).  path NULL = defaults only.  Relative paths in the file
 * (state, tls, onprem.inventory, policy_path, driver paths) are taken
 * relative to the file's directory. */
int gb_config_load(const char *path, gb_config *out, gb_diags *d);
int gb_config_load_buf(const char *name, const char *buf, size_t len,
                       gb_config *out, gb_diags *d);
/* Take the relative paths in c (state, tls, onprem.inventory,
 * policy_path, driver paths) relative to file's directory, as
 * gb_config_load does; for a config loaded with gb_config_load_buf. */
void gb_config_resolve_paths(gb_config *c, const char *file);
/* What loading does not check because it touches the filesystem: the
 * files the config names exist and can be read (onprem.inventory).
 * Errors go into d at the key's file:line:col; 0 ok, -1 errors. */
int gb_config_check_files(const gb_config *c, gb_diags *d);
/* Defaults (state under XDG_STATE_HOME, the installed drivers...). */
void gb_config_defaults(gb_config *c);
void gb_config_free(gb_config *c);

/* Whether a state setting names a PostgreSQL database (postgresql:// or
 * postgres://) rather than a SQLite file. */
int gb_config_state_is_url(const char *state);

/* Most clouds (drivers) one broker may have. */
#define GB_MAX_CLOUDS 64
/* The clouds this config has drivers for, in order: the names listed
 * under drivers:, or, when none is listed, one per NAME.so installed in
 * the driver directory (gb_driver_dir_names(), sorted).  Writes at most
 * cap-1 names and a NULL into out (borrowed from c or from the process-
 * lifetime directory list) and returns their count.  Spec validation,
 * reservations and the defaults of placement.clouds all use this one
 * list: a cloud is whatever a driver is loaded for. */
size_t gb_config_clouds(const gb_config *c, const char **out, size_t cap);

/* An OIDC issuer or JWKS URL the broker may fetch: https://HOST..., or
 * http:// only to a loopback host (127.0.0.0/8, [::1], localhost), for
 * test issuers.  1 = allowed. */
int gb_oidc_url_ok(const char *url);

const gb_team_cfg *gb_config_team(const gb_config *c, const char *name);
/* A team's share (teams[].share; 1 for a team not listed). */
double gb_config_team_share(const gb_config *c, const char *name);
/* The class `name`, or NULL when the config has none of that name. */
const gb_priority_cfg *gb_config_priority(const gb_config *c,
                                          const char *name);
/* The class a pool gets without priority: its purpose's default
 * ("production" for inference, "batch" for training, "dev" for dev)
 * when the config has it, else the lowest class.  Borrowed from c. */
/* The class names, NULL-terminated, into out[cap] (borrowed from c),
 * for gb_spec_opts.priorities.  Returns out. */
const char *const *gb_config_priority_names(const gb_config *c,
                                            const char **out, size_t cap);
const gb_priority_cfg *gb_config_priority_default(const gb_config *c,
                                                  const char *purpose);
const char *gb_role_name(gb_role r);

#endif
