/*
 * gpubroker/driver.h -- the whole contract between gpubroker and a provider
 * driver.  A driver is a shared object exporting exactly one symbol,
 * GB_DRIVER_ENTRY_NAME ("gb_driver_entry"), of type gb_driver_entry_fn.
 *
 * Versioning (the SQLite VFS / libgit2 backend model):
 *   - GB_DRIVER_ABI_MAJOR changes only when an existing field changes
 *     meaning or position.  The host refuses a driver whose major differs.
 *   - GB_DRIVER_ABI_MINOR grows when fields are appended to gb_driver,
 *     gb_host, or a struct a driver hands the host (gb_instance minor 3,
 *     gb_offer minor 6).  A host calls an optional method only when the
 *     driver's abi_minor is high enough AND the pointer is non-NULL, and
 *     reads an appended field of what a driver emits only when its
 *     abi_minor has it.  A driver uses a host method only when
 *     host->abi_minor is high enough.
 *   - struct_size lets either side detect a struct shorter than the one it
 *     was compiled against; the host refuses a driver descriptor shorter
 *     than the minor-0 layout.
 *   - Fields are only ever appended.
 *
 * Threading: the host calls every method except init/fini from a worker
 * pool, concurrently, with the same driver context.  Drivers must be
 * thread-safe.  Host table functions are thread-safe.
 *
 * Memory: every pointer the host passes into a method is borrowed for the
 * duration of that call only.  Every pointer a driver passes to a host
 * callback (gb_offer_cb, gb_instance_cb, ...) is borrowed for the duration
 * of that callback only: the host copies what it keeps.  Nothing is ever
 * freed across the boundary except gb_http_resp, which the driver releases
 * with host->http_free.
 *
 * Errors: methods return 0 on success and -1 on failure, after filling the
 * caller-provided gb_error.  The error's class decides what the engine does:
 *   CAPACITY, QUOTA     -> mark the (driver, region, zone, type, capacity)
 *                          unavailable for a cooldown and try the next
 *                          candidate;
 *   THROTTLED, TRANSIENT-> retried with backoff (the host transport already
 *                          retries single HTTP calls; a driver returns these
 *                          classes only when its own retries are exhausted);
 *   AUTH, INVALID       -> stop and show the provider's message;
 *   NOT_FOUND, CONFLICT -> as named;  INTERNAL -> a driver bug.
 * Error messages must never contain secrets (keys, tokens, signatures).
 */
#ifndef GPUBROKER_DRIVER_H
#define GPUBROKER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GB_DRIVER_ABI_MAJOR 1
#define GB_DRIVER_ABI_MINOR 6
#define GB_DRIVER_ENTRY_NAME "gb_driver_entry"

#if defined(__GNUC__)
#define GB_DRIVER_EXPORT __attribute__((visibility("default")))
#define GB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define GB_DRIVER_EXPORT
#define GB_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

typedef enum gb_err_class {
	GB_ERR_NONE = 0,
	GB_ERR_CAPACITY,  /* no capacity for this type/zone right now */
	GB_ERR_QUOTA,     /* account/project quota would be exceeded */
	GB_ERR_THROTTLED, /* rate limited by the provider */
	GB_ERR_TRANSIENT, /* 5xx, network failure, timeout */
	GB_ERR_AUTH,      /* credentials missing, invalid or not permitted */
	GB_ERR_INVALID,   /* the request is wrong (bad type, image, ...) */
	GB_ERR_NOT_FOUND, /* the resource does not exist */
	GB_ERR_CONFLICT,  /* idempotency mismatch, name taken, state clash */
	GB_ERR_INTERNAL   /* a bug in the driver or the host */
} gb_err_class;

/* Filled by whoever fails.  Fixed buffers: the error path never allocates.
 * Strings are always NUL-terminated (truncated if needed). */
typedef struct gb_error {
	gb_err_class cls;
	int http_status;      /* 0 when no HTTP exchange was involved */
	char code[96];        /* provider's own code: InsufficientInstanceCapacity,
	                         ZONE_RESOURCE_POOL_EXHAUSTED, SkuNotAvailable... */
	char message[768];    /* human readable, secret-free */
	int64_t retry_after_ms; /* server-suggested delay, 0 if none */
} gb_error;

/* A CAPACITY error with this code: the driver found the machine it was
 * setting up failing (an on-prem node whose setup exited non-zero, or
 * that could not be reached), undid the call and took that machine out
 * of its offers; the same place may still have others, so the engine
 * asks it again at once instead of cooling it down, and says which
 * machine failed in an "unhealthy" event (the message names it). */
#define GB_ERR_CODE_NODE_UNHEALTHY "NodeUnhealthy"

/* ------------------------------------------------------------------ */
/* Common types                                                        */
/* ------------------------------------------------------------------ */

typedef struct gb_kv {
	const char *key;
	const char *value;
} gb_kv;

typedef enum gb_capacity {
	GB_CAPACITY_ON_DEMAND = 0,
	GB_CAPACITY_SPOT = 1,
	GB_CAPACITY_RESERVED = 2
} gb_capacity;

/* One thing that can be bought: a type, in a place, with a capacity kind,
 * at a price.  A driver emits one offer per (region, zone, type, capacity). */
typedef struct gb_offer {
	const char *region;        /* provider region, or on-prem site name */
	const char *zone;          /* zone, or "" where the cloud has none */
	const char *instance_type; /* p5.48xlarge, Standard_ND96isr_H100_v5, ... */
	const char *gpu_model;     /* canonical name, one of: B200, H200,
	                              GH200, H100, A100-80GB, A100, L40S, L40,
	                              L4, A10G, A10, T4, V100, V100-32GB,
	                              RTX-A6000, RTX6000, MI300X, MI250X
	                              (specs may spell them differently; an
	                              offer uses exactly these names) */
	int gpu_count;             /* GPUs per instance */
	int gpu_memory_gb;         /* memory of ONE GPU, GB */
	int vcpus;
	double ram_gb;
	gb_capacity capacity;
	double price_per_hour;     /* USD per instance-hour */
	const char *source;        /* where the price came from (URL, file) */
	int64_t fetched_at;        /* unix seconds when the price was obtained */
	const char *bench_json;    /* on-prem: the probe's measured figures as a
	                              JSON object; NULL for clouds */
	const char *tags;          /* comma-separated extra tags (e.g. "hipaa"),
	                              or NULL */
	/* ---- minor 6 (the host reads it only from drivers whose abi_minor
	 * is >= 6) ---- */
	int available;             /* how many instances of this offer can be
	                              created now, when the driver knows it
	                              exactly (on-prem: the free usable nodes
	                              of that shape at that site); 0 = unknown
	                              or unbounded (clouds).  The planner fills
	                              a pool across offers by it, and the
	                              engine asks for that many at once */
} gb_offer;

/* Called once per offer.  Return 0 to continue, non-zero to stop. */
typedef int (*gb_offer_cb)(void *ud, const gb_offer *offer);

typedef enum gb_instance_state {
	GB_INST_PENDING = 0,  /* requested, not yet running */
	GB_INST_RUNNING,
	GB_INST_STOPPING,     /* shutting down / deleting */
	GB_INST_TERMINATED,   /* gone at our request */
	GB_INST_PREEMPTED,    /* reclaimed by the provider (spot) */
	GB_INST_FAILED,       /* failed to start or broke; must be deleted */
	GB_INST_UNKNOWN
} gb_instance_state;

typedef struct gb_instance {
	const char *id;            /* provider's id: i-0abc.., VM name, GCE name */
	const char *name;          /* the deterministic name we asked for */
	const char *region;
	const char *zone;          /* "" if none */
	const char *instance_type;
	gb_capacity capacity;
	gb_instance_state state;
	const char *state_reason;  /* provider code, e.g.
	                              Server.SpotInstanceTermination; may be NULL */
	const char *private_ip;    /* may be NULL */
	const char *public_ip;     /* may be NULL */
	const gb_kv *tags;         /* tags/labels on the instance */
	size_t ntags;
	int64_t created_at;        /* unix seconds, 0 if unknown */
	/* ---- minor 3 (the host reads these only from drivers whose
	 * abi_minor is >= 3) ---- */
	int64_t created_ms;        /* unix ms of the provider's creation time
	                              when it reports sub-second precision
	                              (GCE creationTimestamp, ARM timeCreated),
	                              0 if unknown: billing starts then */
} gb_instance;

/* Called once per instance.  Return 0 to continue, non-zero to stop. */
typedef int (*gb_instance_cb)(void *ud, const gb_instance *inst);

/* Identifies one instance for terminate. */
typedef struct gb_instance_ref {
	const char *id;
	const char *region;
	const char *zone;          /* "" if none */
} gb_instance_ref;

/* Tags: how the broker finds its instances again.
 *
 * Every instance a driver creates must carry these four tags, from
 * gb_create_req's pool, broker_id, token and team (plus req->tags), and
 * describe must report them back in gb_instance.tags under exactly these
 * keys and values.  They are REQUIRED, not decoration: crash recovery
 * (an intent whose answer was lost is settled by describing the token),
 * adoption (an instance of the pool the state does not know) and garbage
 * collection (an instance of this broker that no pool owns) all select
 * instances by what describe reports for them.  An instance reported
 * without them is invisible to recovery and leaks.
 *
 * Clouds with label restrictions (GCE: lowercase, [a-z0-9_-], <= 63
 * chars) map keys and values deterministically and map them back in
 * describe, so the host sees the original keys and values.
 *
 * A provider WITHOUT tags (or without idempotency tokens) encodes what
 * recovery needs in the instance name instead, and decodes it in
 * describe: e.g. "<name_prefix>-<i>--<short hash of broker and token>",
 * within the provider's name limit (hash, never truncate, what does not
 * fit), reporting the four tags decoded from the name.  Such a driver
 * makes create idempotent itself: before creating, it looks up the names
 * it is about to create (a list by name or prefix) and creates only the
 * missing ones, emitting the existing ones as its own.
 *
 * The token (gb_create_req.token) is at most GB_TOKEN_MAX (64) characters
 * of [a-z0-9-]: today "gb" and 40 hex digits of a hash of the request,
 * with "-<n>" appended when the host splits one create into several
 * requests.  The host matches a reported token tag to its intent as
 * "equal, or equal followed by '-'", so a driver reports the token it
 * was given, unchanged (a driver that cannot store 64 characters stores
 * a hash and maps it back).  One token names one create request: its
 * replay carries the same token, the same names and the same count. */
#define GB_TOKEN_MAX 64
#define GB_TAG_POOL   "gpubroker-pool"
#define GB_TAG_BROKER "gpubroker-broker"
#define GB_TAG_TOKEN  "gpubroker-token"
#define GB_TAG_TEAM   "gpubroker-team"

typedef struct gb_create_req {
	const char *pool;          /* pool name */
	const char *broker_id;     /* this broker's id */
	const char *team;
	const char *region;
	const char *zone;          /* "" lets the provider choose */
	const char *instance_type;
	gb_capacity capacity;
	unsigned count;            /* how many, all or nothing */
	const char *token;         /* idempotency token, <= GB_TOKEN_MAX ASCII
	                              chars (see "Tags" above): the same token
	                              with the same request returns the same
	                              instances and creates nothing new */
	const char *name_prefix;   /* deterministic names: "<prefix>-<i>" for
	                              i in [first_index, first_index + count) */
	unsigned first_index;
	const char *image;         /* NULL or "" = driver's default for region */
	const gb_kv *tags;         /* extra tags: team, spec labels */
	size_t ntags;
	const char *const *ssh_keys; /* public keys, may be NULL */
	size_t nssh_keys;
	const char *user_data;     /* cloud-init text, may be NULL */
	double max_price;          /* spot max USD/h, <= 0 = provider default */
} gb_create_req;

/* What describe selects, in this order of precedence:
 *   1. nids > 0: these ids (in `region`, or every region).  The host
 *      engine never combines ids with pool or token (a driver may
 *      apply them too).
 *      An id that does not exist is simply not emitted (no error).
 *   2. else pool != NULL: the instances tagged with this pool (and,
 *      when broker_id is also set, not tagged with another broker);
 *   3. else broker_id != NULL: every instance tagged with this broker;
 *   and in 2 and 3, token != NULL narrows to that token's instances.
 * A driver may emit more than asked (a provider that cannot filter
 * server-side): the engine drops what does not match by the same rules
 * and the tags reported, so extra instances cost only time, while a
 * missing one leaks.
 * Instances that are gone are emitted (TERMINATED) only when
 * include_terminated is set and the provider still reports them. */
typedef struct gb_describe_req {
	const char *region;        /* required, unless the driver has
	                              GB_DRV_CAP_DESCRIBE_ALL_REGIONS: then
	                              NULL = every region */
	const char *const *ids;    /* describe these ids, or */
	size_t nids;
	const char *pool;          /* all instances tagged with this pool, or */
	const char *broker_id;     /* all instances tagged with this broker */
	const char *token;         /* optional: only those with this token tag */
	int include_terminated;    /* also report instances already gone */
} gb_describe_req;

typedef struct gb_quota {
	const char *region;
	const char *name;          /* e.g. "NVIDIA_A100_GPUS", "Standard NCADS
	                              A100 v4 Family vCPUs" */
	double limit;
	double usage;
} gb_quota;

typedef int (*gb_quota_cb)(void *ud, const gb_quota *q);

/* ------------------------------------------------------------------ */
/* The host table                                                      */
/* ------------------------------------------------------------------ */

typedef enum gb_log_level {
	GB_LOG_ERROR = 0,
	GB_LOG_WARN,
	GB_LOG_INFO,
	GB_LOG_DEBUG
} gb_log_level;

struct gb_http_resp;

/* A request handed to the host transport.  All pointers borrowed. */
typedef struct gb_http_req {
	const char *method;        /* "GET", "POST", "PUT", "DELETE" */
	const char *url;           /* absolute http(s) URL */
	const char *const *headers; /* "Name: value" lines, may be NULL */
	size_t nheaders;
	const char *body;          /* may be NULL */
	size_t body_len;
	const char *rate_class;    /* rate-limit bucket, e.g. "RunInstances";
	                              NULL = the driver's default bucket */
	unsigned timeout_ms;       /* 0 = host default */
	int max_attempts;          /* 0 = host default; 1 = never retry */
	/* Decides whether a completed exchange succeeded.  Returns GB_ERR_NONE
	 * for success, otherwise the class (and fills err).  THROTTLED and
	 * TRANSIENT are retried by the host with exponential backoff and full
	 * jitter, honouring Retry-After / err->retry_after_ms.  NULL = the host
	 * treats 2xx as success, 429 as THROTTLED, 5xx as TRANSIENT, other 4xx
	 * as INVALID. */
	gb_err_class (*classify)(void *ud, const struct gb_http_resp *resp,
	                         gb_error *err);
	void *classify_ud;
	/* Optional: called before every attempt (including the first) to
	 * (re)compute headers that depend on time, e.g. a SigV4 signature.
	 * It writes at most cap header lines into out (each owned by the
	 * driver until the next call of sign or the end of http()) and returns
	 * how many, or -1 on failure after filling err. */
	int (*sign)(void *ud, const struct gb_http_req *req,
	            const char **out, size_t cap, gb_error *err);
	void *sign_ud;
} gb_http_req;

typedef struct gb_http_resp {
	long status;               /* HTTP status, 0 if none was received */
	char *body;                /* NUL-terminated, owned by the host */
	size_t body_len;
	char **headers;            /* "Name: value" lines as received */
	size_t nheaders;
	int attempts;              /* how many tries the host made */
} gb_http_resp;

/* Everything a driver may ask of the host.  The host keeps it alive until
 * after fini returns.  Appended-only: check abi_minor before using fields
 * marked "minor N". */
typedef struct gb_host {
	uint32_t abi_major;
	uint32_t abi_minor;
	uint32_t struct_size;
	void *ctx;                 /* pass back as the first argument */

	/* Log a line (the host redacts registered secrets). */
	void (*log)(void *ctx, gb_log_level level, const char *fmt, ...)
		GB_PRINTF(3, 4);

	/* Perform an HTTP exchange with retries, rate limits and metrics.
	 * Returns 0 when classify said success (resp filled), -1 otherwise
	 * (err filled; resp may still be filled with the last answer). Always
	 * call http_free on resp afterwards, whatever the result. */
	int (*http)(void *ctx, const gb_http_req *req, gb_http_resp *resp,
	            gb_error *err);
	void (*http_free)(void *ctx, gb_http_resp *resp);

	/* Wall clock (unix ms) and a monotonic clock (ms). */
	int64_t (*now_ms)(void *ctx);
	int64_t (*mono_ms)(void *ctx);
	void (*sleep_ms)(void *ctx, int64_t ms);

	/* Allocator for anything the driver keeps; may be NULL = use libc. */
	void *(*alloc)(void *ctx, size_t n);
	void (*free)(void *ctx, void *p);

	/* Driver options from the broker config (after ${VAR} expansion), or
	 * NULL when unset.  Borrowed until fini.  Besides the driver's own
	 * keys, the host fills in, unless the config sets them:
	 *   data_dir   the shared data folder (share/gpubroker): a driver's
	 *              files are under <data_dir>/drivers/<name>/data/
	 *              (its catalog offers.json, its regions.json);
	 *   bin_dir    the folder of the gpubroker executable (helpers);
	 *   state_dir  a private folder for this driver's own state, next
	 *              to the broker's state (may not exist yet: create it);
	 *              unset when the state is a PostgreSQL database;
	 *   broker_id  the broker's id (also in every create request);
	 *   inventory  for a driver with GB_DRV_CAP_PROBE: the node
	 *              inventory file of the broker config (onprem:).
	 * The host reads these itself, for every driver, so a driver must not
	 * give them another meaning: ca_file, ca_path, http_attempts,
	 * http_timeout_ms, max_in_flight, backoff_base_ms, backoff_cap_ms,
	 * init_timeout_ms and rate.<class> (see default_rates). */
	const char *(*option)(void *ctx, const char *key);

	/* Read a secret from a *source*: "env:NAME" or "file:/path" (one
	 * trailing newline dropped) or a bare environment variable name.
	 * Returns the length, with the value and a NUL in buf; -1 when it is
	 * absent, empty or unreadable; -2 when it does not fit in cap bytes
	 * (a secret is never truncated: buf is then "").  The value is
	 * registered for redaction: it will never appear in a host log
	 * line. */
	int (*secret)(void *ctx, const char *source, char *buf, size_t cap);

	/* Register a value the driver learnt by other means (a token it
	 * obtained, a key read from a credentials file) for redaction. */
	void (*redact)(void *ctx, const char *value);

	/* ---- minor 5 ---- */
	/* 1 when the driver should give up the call it is making: gpubroker
	 * is stopping (SIGTERM/SIGINT) or the call's deadline passed (init:
	 * its init_timeout_ms).  A driver that polls (a long-running
	 * operation, an instance booting) checks it between polls and
	 * returns TRANSIENT with code "Cancelled": the host then keeps the
	 * intent open and settles it later by token, so nothing leaks.  The
	 * host's own http() stops retrying and sleep_ms() returns early once
	 * it is set. */
	int (*cancelled)(void *ctx);
} gb_host;

/* ------------------------------------------------------------------ */
/* The driver descriptor                                               */
/* ------------------------------------------------------------------ */

/* Capability bits */
#define GB_DRV_CAP_SPOT          (1u << 0) /* offers spot capacity */
#define GB_DRV_CAP_BATCH_CREATE  (1u << 1) /* one create call makes N */
#define GB_DRV_CAP_QUOTA         (1u << 2) /* implements quota() */
#define GB_DRV_CAP_PRICE_REFRESH (1u << 3) /* implements refresh_prices() */
#define GB_DRV_CAP_PROBE         (1u << 4) /* measures nodes (on-prem) */
#define GB_DRV_CAP_ZONES         (1u << 5) /* offers carry zones */
/* describe accepts region NULL: one listing reports the matching
 * instances of every region (Azure lists a resource group, GCE's
 * aggregatedList covers every zone), so the engine asks once per driver
 * instead of once per region. */
#define GB_DRV_CAP_DESCRIBE_ALL_REGIONS (1u << 6)
/* terminate() ends every ref with one request (EC2 TerminateInstances).
 * Without it the host calls terminate() with one ref at a time, in
 * parallel, and records each instance's own request time as the end of
 * its billing (a driver that loops over refs would otherwise end them
 * all at the time of the first request). */
#define GB_DRV_CAP_BATCH_TERMINATE (1u << 7)
/* create() is one all-or-nothing request in the cloud: the provider checks
 * that it can make all req->count instances before it makes any (EC2
 * RunInstances with MinCount = MaxCount = count, GCE bulkInsert with
 * minCount = count), so a refused create made nothing and bills nothing.
 * Without it a refusal may come after some instances were made and
 * deleted again (one request per VM, as on ARM): the engine then paces
 * its attempts, since each one costs the provider's minimum billing per
 * instance made. */
#define GB_DRV_CAP_ATOMIC_CREATE (1u << 8)

typedef struct gb_driver {
	/* ---- minor 0 ---- */
	uint32_t abi_major;        /* GB_DRIVER_ABI_MAJOR at build time */
	uint32_t abi_minor;        /* GB_DRIVER_ABI_MINOR at build time */
	uint32_t struct_size;      /* sizeof(gb_driver) at build time */
	const char *name;          /* "aws", "azure", "gcp", "onprem", ... */
	const char *version;       /* driver's own version string */
	const char *description;
	uint64_t caps;             /* GB_DRV_CAP_* */

	/* Mandatory.  Create the driver context.  `host` stays valid until
	 * fini.  On failure return -1 and fill err; *out_ctx is then ignored
	 * and fini is not called. */
	int (*init)(const gb_host *host, void **out_ctx, gb_error *err);
	/* Mandatory.  Release everything init made. */
	void (*fini)(void *ctx);
	/* Mandatory.  Emit the offers this driver can sell (its catalog).
	 * Called on every CLI run (plan, offers, apply) and at every daemon
	 * start: it must be fast and OFFLINE -- read a shipped or cached
	 * catalog file, never the network.  Each offer's gpu_model must be a
	 * canonical name (see gb_offer); the host warns at load, naming the
	 * offer, about a model it does not know, since no spec can ask for
	 * it. */
	int (*list_offers)(void *ctx, gb_offer_cb emit, void *ud, gb_error *err);
	/* Mandatory.  Create req->count instances as one batch where the
	 * provider allows, emitting each created (or, on an idempotent retry,
	 * found) instance.  All-or-nothing: on a definite failure (CAPACITY,
	 * QUOTA, INVALID, ...), nothing created by this call may be left
	 * running (the driver cleans up what it made).  On THROTTLED or
	 * TRANSIENT the outcome is unknown to the host, which keeps the
	 * intent open and replays the same request (same token) until it
	 * gets an answer, or adopts what carries the token: what this call
	 * made must then be left for the replay to find. */
	int (*create)(void *ctx, const gb_create_req *req, gb_instance_cb emit,
	              void *ud, gb_error *err);
	/* Mandatory.  Emit the instances matching req (see gb_describe_req
	 * for what matches), each with the four GB_TAG_* tags. */
	int (*describe)(void *ctx, const gb_describe_req *req,
	                gb_instance_cb emit, void *ud, gb_error *err);
	/* Mandatory.  Ask for termination; idempotent (already gone = ok). */
	int (*terminate)(void *ctx, const gb_instance_ref *refs, size_t n,
	                 gb_error *err);
	/* Optional.  Fetch current prices from the provider's price source
	 * (region NULL = all) and emit them as offers.  This is the network
	 * call: run by `gpubroker offers refresh` and the daemon's periodic
	 * refresh, never on the planning path.  The host stores what it
	 * emits; a driver may also cache it for its next list_offers. */
	int (*refresh_prices)(void *ctx, const char *region, gb_offer_cb emit,
	                      void *ud, gb_error *err);
	/* Optional.  Emit quotas for a region. */
	int (*quota)(void *ctx, const char *region, gb_quota_cb emit, void *ud,
	             gb_error *err);

	/* ---- minor 1 ---- */
	/* Optional.  A driver-specific command (e.g. on-prem "nodes",
	 * "probe NODE").  Writes a JSON document (NUL-terminated) through
	 * `out`; returns 0, or -1 with err (an unknown verb: INVALID).
	 * Verbs the host itself sends:
	 *   "sites"  (every driver, at load): the facts of the driver's
	 *            regions, for data locality, compliance and carbon
	 *            rules: an array of {name, display, country (ISO
	 *            3166-1 alpha-2), jurisdiction ("EU", "US", ...), lat,
	 *            lon, tags: ["gdpr", "hipaa", ...], carbon_g_per_kwh}.
	 *            A region without facts is still placeable, but no
	 *            spec with placement.data or compliance accepts it.
	 *   "credentials" (every driver, at load, right after a successful
	 *            init): whether it found credentials, as {"found":
	 *            true, "source": "where they came from"} or {"found":
	 *            false, "looked_in": "each place it looked and why that
	 *            failed"} (places and reasons, never a secret).
	 *            `gpubroker drivers` then shows "no credentials found
	 *            (looked in ...)" instead of "ready".  A driver that needs
	 *            none (or an older one) refuses the verb: "ready".
	 *   "requirements" (every driver, at load, after "credentials"):
	 *            what every create needs from a pool spec, as
	 *            {"ssh_key": "why"} when a create without an SSH public
	 *            key is refused (Azure: password login is disabled);
	 *            {} or a refusal of the verb: nothing.  `validate` and
	 *            `plan` warn about a spec that lacks it.
	 *   "nodes", "probe [NODE...]", "mig NODE enable|disable": for
	 *            drivers with GB_DRV_CAP_PROBE (`gpubroker nodes`). */
	int (*command)(void *ctx, const char *verb, int argc,
	               const char *const *argv,
	               void (*out)(void *ud, const char *json), void *ud,
	               gb_error *err);

	/* ---- minor 2 ---- */
	/* Optional.  The provider's documented request limits, as pairs
	 * {"<rate class>", "CAPACITY/REFILL_PER_S", ..., NULL}: the host's
	 * token bucket per class (the rate_class a driver puts on each
	 * gb_http_req) starts from these, so a fresh config does not thrash
	 * against the cloud's throttling.  A broker config option
	 * rate.<class> overrides one ("0" turns that bucket off).  Static
	 * storage; read once, before init. */
	const char *const *default_rates;

	/* ---- minor 4 ---- */
	/* Optional.  Every option key the driver reads, NULL-terminated; an
	 * entry ending in ".*" also covers KEY.<anything> (per-region
	 * overrides such as "image.*").  The host warns, naming the option
	 * and the driver, about a configured option that is neither here nor
	 * one of the host's own (rate.*, ca_file, http_*, backoff_*, ...), so
	 * a typo is not silently ignored.  Static storage. */
	const char *const *options;

	/* ---- minor 5 ---- */
	/* The provider's minimum billed seconds per instance: an instance
	 * that lives less is billed this long (EC2 and Compute Engine: 60;
	 * 0 = no minimum).  The host reads it only from a driver whose
	 * abi_minor is >= 5 (an older one: 0); `gpubroker cost` bills each
	 * instance max(lifetime, minimum) x price. */
	int64_t billing_minimum_s;
} gb_driver;

/* The version fields of a descriptor, as this header declares them:
 *     static const gb_driver d = { GB_DRIVER_V1, .name = "tinycloud", ... };
 * so a driver rebuilt against a newer header announces the newer minor
 * and size without an edit. */
#define GB_DRIVER_V1                                                      \
	.abi_major = GB_DRIVER_ABI_MAJOR, .abi_minor = GB_DRIVER_ABI_MINOR, \
	.struct_size = (uint32_t)sizeof(gb_driver)

/* Size of the minor-0 descriptor: the host refuses anything shorter. */
#define GB_DRIVER_MIN_SIZE (offsetof(gb_driver, quota) + sizeof(void *))

/* The one exported symbol.  host_abi_major lets a driver refuse early by
 * returning NULL. */
typedef const gb_driver *(*gb_driver_entry_fn)(uint32_t host_abi_major);

#ifdef __cplusplus
}
#endif

#endif /* GPUBROKER_DRIVER_H */
