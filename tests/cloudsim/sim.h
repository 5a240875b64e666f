/*
 * sim.h -- cloudsim internals shared between its files: the catalog, the
 * scenario, the one global state (instances, operations, tokens, usage,
 * counters) and the fault machinery.
 *
 * Locking: everything in sim_g below `mu` is protected by sim_g.mu.  A
 * handler parses its request without the lock, sleeps its injected
 * latency without the lock, then takes the lock once to authenticate,
 * throttle, inject faults and act, and releases it before the response is
 * sent.  Nothing sleeps while holding the lock.
 *
 * Time: instance and operation timestamps are wall-clock unix
 * milliseconds (sim_now()).  States are pure functions of those
 * timestamps, so every reader sees the same transitions without a
 * background thread having to run first.
 */
#ifndef SIM_H
#define SIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "diag.h"
#include "http.h"
#include "util.h"
#include "yamldoc.h"

typedef enum sim_cloud {
	SIM_AWS = 0, SIM_AZURE, SIM_GCP, SIM_LAMBDA, SIM_NCLOUD
} sim_cloud;

const char *sim_cloud_name(int cloud);
/* -1 when unknown. */
int sim_cloud_parse(const char *s);

int64_t sim_now(void);

/* ------------------------------------------------------------------ */
/* String-keyed hash map (open addressing); keys are copied.           */
/* ------------------------------------------------------------------ */
typedef struct sim_map {
	char **keys;   /* NULL = empty, SIM_MAP_TOMB = deleted */
	void **vals;
	size_t cap, n, tomb;
} sim_map;

void *sim_map_get(const sim_map *m, const char *key);
/* Inserts or replaces; returns the previous value (or NULL). */
void *sim_map_put(sim_map *m, const char *key, void *val);
/* Removes; returns the value (or NULL). */
void *sim_map_del(sim_map *m, const char *key);
/* Value of slot i when occupied (key in *key), else NULL. */
void *sim_map_slot(const sim_map *m, size_t i, const char **key);
void sim_map_free(sim_map *m, void (*free_val)(void *));

/* Counters keyed by string (usage, calls). */
int64_t sim_count_get(const sim_map *m, const char *key);
void sim_count_add(sim_map *m, const char *key, int64_t delta);

/* ------------------------------------------------------------------ */
/* Catalog (drivers/common/drvc_catalog.h format)                      */
/* ------------------------------------------------------------------ */
#define SIM_NO_SPOT (-2.0)

typedef struct sim_creg {
	char *region;
	double on_demand;  /* < 0: none */
	double spot;       /* < 0: no spot market */
	char **zones;      /* normalised (Azure: "1", "2", ...) */
	double *zone_spot; /* per zone; -1: use `spot`; SIM_NO_SPOT: none */
	size_t nzones;
} sim_creg;

typedef struct sim_ctype {
	char *type;        /* catalog string (GCP N1: "n1-standard-8/nvidia-tesla-t4:1") */
	char *machine;     /* GCP: machine type part; others: = type */
	char *accel;       /* GCP N1: accelerator type, else NULL */
	int accel_count;
	char *gpu;         /* canonical model: H100, A100-80GB, ... */
	int gpus;
	int gpu_mem_gb;
	int vcpus;
	double ram_gb;
	sim_creg *regs;
	size_t nregs;
} sim_ctype;

typedef struct sim_catalog {
	char *path;
	char *source;
	char *fetched_at;
	sim_ctype *types;
	size_t ntypes;
} sim_catalog;

int sim_catalog_load(sim_catalog *c, int cloud, const char *path,
                     gb_diags *d);
void sim_catalog_free(sim_catalog *c);
/* Borrowed; NULL when absent. */
const sim_ctype *sim_catalog_type(const sim_catalog *c, const char *type);
const sim_creg *sim_ctype_region(const sim_ctype *t, const char *region);
int sim_creg_has_zone(const sim_creg *r, const char *zone);
/* Price per hour for (zone, market) or -1 when not sold. */
double sim_creg_price(const sim_creg *r, const char *zone, int spot);
/* "1" from "eastus-1" / "1"; writes into buf. */
const char *sim_azure_zone_norm(const char *region, const char *zone,
                                char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Scenario                                                            */
/* ------------------------------------------------------------------ */
typedef struct sim_opval {
	char *op;
	double a, b;
} sim_opval;

typedef struct sim_optab {
	sim_opval *v;
	size_t n;
} sim_optab;

/* Exact op, else "*", else NULL.  Borrowed. */
const sim_opval *sim_optab_find(const sim_optab *t, const char *op);
void sim_optab_set(sim_optab *t, const char *op, double a, double b);
void sim_optab_free(sim_optab *t);

enum { SIM_MARKET_ANY = 0, SIM_MARKET_ONDEMAND = 1, SIM_MARKET_SPOT = 2 };

typedef struct sim_caprule {
	int cloud;      /* -1 = any */
	char *region;   /* glob, "*" default */
	char *zone;     /* glob, "*" default */
	char *type;     /* glob */
	int market;     /* SIM_MARKET_* */
	int64_t count;  /* concurrent instances per matching (zone,type,market) */
} sim_caprule;

typedef struct sim_region {
	char *name;
	gb_strv zones;
} sim_region;

typedef struct sim_regions {
	sim_region *v;
	size_t n;
} sim_regions;

typedef struct sim_sched {
	int64_t at_ms;  /* after `base` */
	int64_t base;   /* start, last reset, or the POST that set it */
	int cloud;      /* -1 = every cloud */
	char *pool;     /* gpubroker-pool tag value, NULL = any */
	double fraction;/* of matching live spot instances; <0 = unset */
	gb_strv ids;
	int done;
} sim_sched;

typedef struct sim_scenario {
	char *file;
	char *dir;
	uint64_t seed;
	char *catalog_path[SIM_NCLOUD];
	/* credentials */
	char *aws_key_id, *aws_secret, *aws_account;
	char *az_tenant, *az_client, *az_secret, *az_sub, *az_rg;
	int64_t az_token_life_s;
	char *gcp_project, *gcp_email, *gcp_key_file;
	int64_t gcp_token_life_s;
	char *lambda_key;          /* the one API key */
	gb_strv lambda_ssh_keys;   /* SSH key names registered at start */
	int lambda_inactive;       /* the account is inactive: 403s */
	/* places; n == 0 means "derive from the catalog" */
	sim_regions regions[SIM_NCLOUD];
	/* capacity */
	sim_caprule *caps;
	size_t ncaps;
	/* quotas: op = key, a = limit */
	sim_optab q_aws_vcpus, q_aws_spot_vcpus, q_aws_instances;
	sim_optab q_az_cores;      /* per family, and "total" */
	double q_az_lowpri;        /* < 0 unlimited */
	sim_optab q_gcp_gpus;      /* per metric */
	int64_t q_lambda_instances; /* live instances per account; <0 none */
	/* faults, per cloud: latency a=base_ms b=jitter_ms; errors a=rate;
	 * lost a=rate; throttle a=capacity b=refill_per_s (GCP: a=per_minute
	 * b=window_s) */
	sim_optab latency[SIM_NCLOUD];
	sim_optab errors[SIM_NCLOUD];
	sim_optab lost[SIM_NCLOUD];
	sim_optab throttle[SIM_NCLOUD];
	int64_t eventual_ms;
	int64_t pending_ms[SIM_NCLOUD];
	int64_t stopping_ms[SIM_NCLOUD];
	int64_t aws_terminated_visible_ms;
	int64_t lambda_terminated_visible_ms;
	/* billing: the provider's minimum billed seconds per instance
	 * (README, "/_sim/bill") */
	int64_t bill_min_s[SIM_NCLOUD];
	double spot_rate_per_hour;
	sim_sched *sched;
	size_t nsched;
	/* limits */
	int64_t max_instances;
	int64_t max_body;
	int64_t az_vm_page;
	int64_t az_price_page;
	int64_t gcp_wait_max_ms;
	int64_t lambda_max_quantity;
} sim_scenario;

/* Loads and validates a scenario file; every problem goes into d with
 * file:line:col.  0 ok. */
int sim_scenario_load(sim_scenario *sc, const char *path, gb_diags *d);
/* Applies a runtime change (a JSON/YAML object with a subset of the
 * runtime keys) to sc.  On error nothing is changed and d says why. */
int sim_scenario_update(sim_scenario *sc, const char *text, size_t len,
                        gb_diags *d);
void sim_scenario_free(sim_scenario *sc);
/* The operation names each cloud knows (for latency/errors), NULL-ended. */
extern const char *const sim_ops[SIM_NCLOUD][16];
extern const char *const sim_buckets[SIM_NCLOUD][8];

/* ------------------------------------------------------------------ */
/* Instances                                                           */
/* ------------------------------------------------------------------ */
typedef enum sim_phase {
	SIM_PH_PENDING,
	SIM_PH_RUNNING,
	SIM_PH_STOPPING,
	SIM_PH_STOPPED,  /* exists, not running (deallocated / TERMINATED) */
	SIM_PH_GONE,     /* terminated (EC2, still listed) or deleted */
	SIM_PH_FAILED    /* Azure VM whose allocation failed */
} sim_phase;

enum { SIM_END_NONE = 0, SIM_END_USER, SIM_END_SPOT };

typedef struct sim_bill sim_bill;

typedef struct sim_quse {
	char *key;
	int64_t amount;
} sim_quse;

typedef struct sim_inst {
	int cloud;
	char *key;          /* map key */
	char *id;           /* EC2 i-...; Azure vmId; GCE numeric id */
	char *name;         /* Azure/GCE resource name; EC2 = id */
	char *region, *zone;
	char *type;         /* catalog type string */
	int spot;
	double price;       /* USD/h at launch */
	int vcpus, gpus;
	char *gpu;
	gb_kvs tags;        /* tags / labels */
	int64_t seq;
	int64_t t_create, t_visible, t_running;
	int64_t t_stop, t_gone, t_purge; /* 0 = not scheduled */
	int agent_pid;      /* its booted gpubroker-agent (agents.c), 0 none */
	int agent_booted;   /* one boot per instance */
	int keep;           /* after stopping: STOPPED instead of GONE */
	int end_reason;
	int failed;         /* Azure: allocation failed */
	char *fail_code, *fail_msg;
	/* resource accounting while counted */
	int counted;
	char *cap_key;
	sim_quse quse[3];
	sim_bill *bill;
	char priv_ip[16], pub_ip[16];
	/* EC2 */
	char *image_id, *client_token, *reservation_id, *spot_req_id;
	char *ctoken_key;   /* key in sim_g.ctokens, or NULL */
	char *key_name, *subnet_id;
	int launch_index;
	/* Azure */
	char *rg;
	char *location;     /* body location as given */
	json_t *az_body;    /* the accepted PUT body (owned) */
	int az_evict_delete;
	int az_nic;         /* created <name>-nic */
	int az_pip;         /* created <name>-pip */
	/* Lambda */
	char *lambda_host;  /* hostname asked for, or NULL */
	/* GCE */
	json_t *gce_body;   /* the accepted insert body (owned) */
	int gce_term_delete;
	char *gce_accel;
	int gce_accel_count;
	char *gce_machine;
} sim_inst;

struct sim_bill {
	char *id;
	int cloud;
	char *region, *zone, *type;
	int spot;
	double price;
	int64_t started, ended; /* ended 0 = live */
	int64_t min_s;          /* minimum billed seconds (at launch) */
	sim_inst *inst;         /* NULL once the instance record is purged */
};

sim_phase sim_inst_phase(const sim_inst *in, int64_t now);
/* Normalised state for /_sim: pending, running, stopping, stopped,
 * terminated, failed. */
const char *sim_phase_name(sim_phase ph);

/* Operations (Azure async operations, GCE zone operations). */
typedef struct sim_op {
	int cloud;
	char *id;           /* Azure: uuid; GCE: operation name */
	char *numeric_id;   /* GCE */
	char *kind;         /* insert, delete, compute.instances.preempted; put */
	char *project;      /* GCE project / Azure subscription */
	char *zone;         /* GCE zone; Azure location */
	char *target;       /* instance name */
	char *target_id;
	char *request_id;   /* GCE requestId, map key "project|rid" */
	char *user;
	int64_t t_start, t_done, t_purge;
	char *err_code, *err_msg;
	int http_err;
	int64_t seq;
} sim_op;

typedef struct sim_token {
	int cloud;
	int64_t expires;
	int64_t purge;
} sim_token;

/* EC2 ClientToken record. */
typedef struct sim_ctoken {
	char *hash;         /* of the parameters that must match */
	char *reservation_id;
	gb_strv ids;
	int refs;           /* instances still in the table */
} sim_ctoken;

/* Token bucket / minute window. */
typedef struct sim_bucket {
	double tokens;
	int64_t last_ms;
	int64_t window;     /* GCP: window index */
	int64_t used;       /* GCP: requests in window */
} sim_bucket;

enum {
	SIM_F_THROTTLED = 0,
	SIM_F_ERROR,
	SIM_F_LOST,
	SIM_F_CAPACITY,
	SIM_F_QUOTA,
	SIM_F_RECLAIMED,
	SIM_F_AUTH,
	SIM_F_N
};
extern const char *const sim_fault_names[SIM_F_N];

typedef struct sim_state {
	/* Immutable after start. */
	sim_catalog cat[SIM_NCLOUD];
	char *url[6];       /* aws, azure, gcp, control, gcp token, lambda */
	int port[5];        /* aws, azure, gcp, control, lambda */
	char *workdir;
	int own_workdir;
	char *gcp_key_path;
	char *gcp_key_json; /* the key file content */
	char *gcp_key_id;
	EVP_PKEY *gcp_pub;
	int verbose;
	_Atomic int stopping; /* read without the lock by waiting handlers */

	pthread_mutex_t mu;
	sim_scenario sc;
	sim_regions regions[SIM_NCLOUD]; /* effective */
	sim_map insts;      /* key -> sim_inst */
	size_t ninsts;
	int64_t next_seq;
	sim_map ops;        /* id -> sim_op */
	sim_map gce_rids;   /* "project|requestId" -> sim_op */
	sim_map tokens;     /* token -> sim_token */
	sim_map ctokens;    /* EC2 client tokens */
	sim_map usage;      /* capacity / quota usage */
	sim_map buckets;    /* "cloud|region|name" -> sim_bucket */
	sim_map calls;      /* "cloud|op" -> count */
	int64_t faults[SIM_NCLOUD][SIM_F_N];
	sim_bill **bills;
	size_t nbills, capbills;
	double archived_cost[SIM_NCLOUD];
	double archived_seconds[SIM_NCLOUD];
	int64_t archived_n[SIM_NCLOUD];
	int64_t t0;         /* start / last reset (for spot schedules) */
	int64_t spot_price_time;
	uint64_t rng;
	int64_t last_tick;
} sim_state;

extern sim_state sim_g;

void sim_lock(void);
void sim_unlock(void);

/* state.c -- all under the lock */
/* A new instance (zeroed, seq and key set) inserted in the table. */
sim_inst *sim_inst_new(int cloud, const char *key);
/* Borrowed; NULL when absent or already purgeable (then purged). */
sim_inst *sim_inst_find(const char *key);
/* Instances sorted by seq into a new array (caller frees the array). */
sim_inst **sim_inst_list(int cloud, size_t *n);
/* Starts accounting + billing (capacity/quota keys already set). */
void sim_inst_allocate(sim_inst *in, int64_t now);
/* Stops billing and releases capacity (idempotent). */
void sim_inst_release(sim_inst *in, int64_t now);
/* Schedules the transition to stopping now and GONE (or STOPPED when
 * keep) after the cloud's stopping time; releases resources. */
void sim_inst_stop(sim_inst *in, int64_t now, int reason, int keep);
/* Removes the instance from the table and frees it now. */
void sim_inst_purge(sim_inst *in);
/* Frees every instance whose purge time has passed. */
void sim_state_gc(int64_t now);
/* Drops every instance, operation, usage, bucket and counter. */
void sim_state_reset(void);
void sim_state_free(void);
int sim_state_full(void);

/* Effective regions of a cloud; borrowed. */
const sim_region *sim_region_find(int cloud, const char *region);
/* Region a zone belongs to (GCP/EC2 zone names), borrowed or NULL. */
const sim_region *sim_zone_region(int cloud, const char *zone);
void sim_regions_derive(void);

/* Capacity: how many more (zone, type, market) instances fit (INT64_MAX
 * when unlimited); fills the usage key (caller frees). */
int64_t sim_capacity_left(int cloud, const char *region, const char *zone,
                          const char *type, int spot, char **key);

/* ops */
sim_op *sim_op_new(int cloud, const char *id);
sim_op *sim_op_find(const char *id);

/* tokens */
/* Issues a token for cloud; writes it into out (>= 80). */
void sim_token_issue(int cloud, int64_t lifetime_s, char *out, size_t cap);
/* 0 valid, 1 expired, -1 unknown. *expires set when known. */
int sim_token_check(int cloud, const char *token, int64_t *expires);

/* ------------------------------------------------------------------ */
/* Faults                                                              */
/* ------------------------------------------------------------------ */
/* Uniform [0,1) from the scenario-seeded generator (takes its own lock
 * when called without sim_g.mu; all callers here hold sim_g.mu or use
 * sim_rand_unlocked). */
double sim_rand(void);
uint64_t sim_rand_u64(void);
/* Sleeps the configured latency for (cloud, op); call without the lock. */
void sim_latency(int cloud, const char *op);
/* Under the lock: counts a call. */
void sim_count_call(int cloud, const char *op);
void sim_count_fault(int cloud, int kind);
/* Under the lock: 1 when the injected error fires for (cloud, op). */
int sim_fault_error(int cloud, const char *op);
int sim_fault_lost(int cloud, const char *op);
/* Under the lock: takes n tokens from bucket (cloud, region, name).  0 =
 * allowed; 1 = throttled with *retry_ms the time until enough tokens.
 * *remaining gets the tokens left (floor). */
int sim_throttle(int cloud, const char *region, const char *name, double n,
                 int64_t *retry_ms, int64_t *remaining);
/* Takes n tokens without checking (resource buckets after a launch). */
void sim_throttle_charge(int cloud, const char *region, const char *name,
                         double n);
/* Tokens available in a bucket now (floor). */
int64_t sim_throttle_peek(int cloud, const char *region, const char *name);

/* ------------------------------------------------------------------ */
/* Spot reclaim, ticker                                                 */
/* ------------------------------------------------------------------ */
/* Under the lock: reclaims a live spot instance now.  0 done, -1 not a
 * live spot instance. */
int sim_reclaim(sim_inst *in, int64_t now);
/* Under the lock: reclaims fraction of the live spot instances of cloud
 * (-1 any) carrying pool (NULL any); ids appended to out. */
void sim_reclaim_fraction(int cloud, const char *pool, double fraction,
                          int64_t now, gb_strv *out);
/* "Booting" agent instances (agents.c): POST /_sim/agents {"binary",
 * "nvml_library", "gpus_dir", "dir", "delay_ms"} has the ticker start a
 * gpubroker-agent process for each running GCE instance whose user data
 * carries an agent config, delay_ms after it ran, and stop it when the
 * instance stops.  The lock is held for all three. */
void sim_agents_configure(sim_req *req, sim_resp *resp);
/* The user data of a GCE insert body (or a bulkInsert's
 * instanceProperties): borrowed from it, NULL none.  control.c */
const char *sim_gce_user_data(const json_t *body);
void sim_agents_tick(int64_t now);
void sim_agents_stop(void);
int sim_ticker_start(void);
void sim_ticker_stop(void);

/* ------------------------------------------------------------------ */
/* Providers (handlers run without the lock held)                      */
/* ------------------------------------------------------------------ */
void sim_ec2_handle(sim_req *req, sim_resp *resp);
void sim_azure_handle(sim_req *req, sim_resp *resp);
/* Drops every Azure network interface (reset, exit); under the lock. */
void sim_azure_nics_free(void);
/* {"count","detached","nics":[{name, resource_group, region, vm (null when
 * detached), delete_option}]} for GET /_sim/azure/nics; under the lock. */
json_t *sim_azure_nics_json(void);
void sim_gcp_handle(sim_req *req, sim_resp *resp);
void sim_control_handle(sim_req *req, sim_resp *resp);
/* A live or gone instance by provider id or resource name; NULL none.
 * Caller holds the lock.  control.c */
sim_inst *sim_inst_find_any(const char *id);
/* /_sim/meta/<id>/...: the instance's metadata service, with the real
 * services' paths and headers below the prefix (metadata.c); rest is
 * the path after /_sim/meta/.  Caller holds the lock. */
void sim_metadata(sim_req *req, sim_resp *resp, const char *rest);
void sim_lambda_handle(sim_req *req, sim_resp *resp);

/* Lambda SSH keys (lambda_keys.c), under the lock: registers the
 * scenario's keys (after a load and on every reset, dropping any other),
 * frees them at exit. */
void sim_lambda_keys_reset(void);
void sim_lambda_keys_free(void);

/* Quota key helpers shared with the control API. */
const char *sim_aws_family(const char *type, char *buf, size_t cap);
const char *sim_azure_family(const char *vmsize, char *buf, size_t cap);
const char *sim_gcp_gpu_metric(const char *gpu, int spot, char *buf,
                               size_t cap);

/* Bill as JSON (caller owns); under the lock. */
json_t *sim_bill_json(int64_t now);
/* {"aws":{"minimum_s":N},...}: the billing settings now.  New reference. */
json_t *sim_billing_json(void);
void sim_bill_add(sim_inst *in);
void sim_bill_end(sim_inst *in, int64_t now);
void sim_bill_detach(sim_inst *in);
void sim_bill_free_all(void);

/* GCP service-account key (gcp_keys.c). */
int sim_gcp_key_setup(const char *workdir, gb_diags *d);
void sim_gcp_key_free(void);
int sim_gcp_keygen_main(int argc, char **argv);

/* SigV4 vector runner (sigv4_selftest.c). */
int sim_sigv4_selftest_main(int argc, char **argv);

/* Public IP / private IP from a sequence number. */
void sim_ips(int64_t seq, char priv[16], char pub[16]);
/* Random lowercase hex of n chars into out (n+1). */
void sim_hex_id(char *out, size_t n);

/* server.c: the five listeners (ports base .. base+4; 0 = ephemeral). */
int sim_server_start(int base_port);
void sim_server_stop(void);

/* Logging to stderr when -v. */
void sim_log(const char *fmt, ...) GB_PRINTF(1, 2);

#endif
