/*
 * onprem.h -- the on-prem driver's internal interfaces: the inventory
 * (onprem_inventory.c), GPU model facts (onprem_gpu.c), running commands
 * on nodes (onprem_transport.c), probe results and health
 * (onprem_probe.c), leases (onprem_lease.c), MIG slices (onprem_mig.c) and
 * the descriptor (onprem_driver.c).  Everything here has hidden
 * visibility: only gb_driver_entry leaves onprem.so.
 *
 * The driver keeps no state in memory besides the parsed inventory and
 * its options: leases and probe results are files under the state_dir
 * option, so the CLI and the daemon sharing a state directory see the
 * same nodes, and every method is thread-safe.
 */
#ifndef ONPREM_H
#define ONPREM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gpubroker/driver.h"


/* ------------------------------------------------------------ strings */

typedef struct onprem_strv {
	char **v;
	size_t n;
} onprem_strv;

void onprem_strv_push(onprem_strv *s, const char *str);
void onprem_strv_free(onprem_strv *s);
int onprem_strv_has(const onprem_strv *s, const char *str);

/* ------------------------------------------------------------ GPU facts */

typedef struct onprem_mig_profile {
	const char *name;   /* "1g.10gb" */
	int slices;         /* compute slices of the 7 a GPU has */
	int memory_gb;
	int max_per_gpu;    /* instances of this profile one GPU holds */
} onprem_mig_profile;

typedef struct onprem_gpu_model {
	const char *name;   /* canonical: H100, A100-80GB, ... */
	int memory_gb;      /* nominal per GPU */
	const char *aliases[6];
	const onprem_mig_profile *mig; /* NULL when the GPU has no MIG */
} onprem_gpu_model;

/* The canonical model for a user-written name ("h100", "nvidia a100
 * 80gb", "A100-SXM4-80GB"), or NULL.  Borrowed (static table). */
const onprem_gpu_model *onprem_gpu_lookup(const char *name);
/* The canonical model for a device name as CUDA/NVML report it ("NVIDIA
 * H100 80GB HBM3", "NVIDIA A100-SXM4-40GB") and its memory in MiB, or
 * NULL. */
const onprem_gpu_model *onprem_gpu_from_device(const char *device,
                                               int64_t memory_mib);
/* NULL-terminated list of canonical names (for did-you-mean). */
const char *const *onprem_gpu_names(void);
/* The MIG profile `name` of model m, or NULL. */
const onprem_mig_profile *onprem_mig_find(const onprem_gpu_model *m,
                                          const char *name);
/* 1 when s looks like a MIG profile name: <1-7>g.<N>gb. */
int onprem_mig_syntax(const char *s);

/* Levenshtein-ish nearest candidate within a small distance, or NULL. */
const char *onprem_nearest(const char *s, const char *const *cands);

/* ------------------------------------------------------------ inventory */

typedef struct onprem_site {
	char *name;
	char *display;       /* "Frankfurt DC" or the name */
	char *jurisdiction;  /* EU, US, UK, ... */
	char *country;       /* ISO 3166-1 alpha-2 */
	double lat, lon;
	double carbon;       /* gCO2eq/kWh, < 0 when not given */
	onprem_strv tags;
} onprem_site;

typedef enum onprem_transport_kind {
	ONPREM_SSH = 0,
	ONPREM_LOCAL = 1
} onprem_transport_kind;

typedef struct onprem_node {
	char *name;
	char *address;
	size_t site;                 /* index into inventory sites */
	onprem_transport_kind transport;
	char *ssh_user;              /* NULL = ssh's default */
	int ssh_port;                /* 22 */
	char *ssh_key;               /* NULL = ssh's default identities */
	onprem_strv ssh_options;     /* "Key=Value", passed as -o */
	int has_gpus;                /* gpus declared (else: probe) */
	const onprem_gpu_model *gpu; /* declared model */
	int gpu_count;
	int gpu_memory_gb;
	int vcpus;                   /* 0 = not given */
	double ram_gb;
	double price_per_gpu_hour;
	gb_capacity capacity;        /* on-demand or reserved */
	char *shape;                 /* NULL = "<count>x<model>" */
	onprem_strv tags;
	char *setup, *teardown;      /* NULL = none */
	int mig_enabled;
	onprem_strv mig_profiles;
	int line;                    /* where the node starts */
} onprem_node;

typedef struct onprem_inventory {
	char *path;
	int64_t mtime;               /* unix seconds */
	onprem_site *sites;
	size_t nsites;
	onprem_node *nodes;
	size_t nnodes;
} onprem_inventory;

/* Parse and validate an inventory.  Returns 0, or -1 with *errors set to
 * every problem found, one per line ("file:line:col: error: key.path:
 * message"), caller frees.  inv must be zeroed; free it with
 * onprem_inventory_free whatever the result. */
int onprem_inventory_load(const char *path, onprem_inventory *inv,
                          char **errors);
int onprem_inventory_parse(const char *name, const char *buf, size_t len,
                           onprem_inventory *inv, char **errors);
void onprem_inventory_free(onprem_inventory *inv);
const onprem_node *onprem_node_find(const onprem_inventory *inv,
                                    const char *name);
const onprem_site *onprem_site_find(const onprem_inventory *inv,
                                    const char *name);

/* ------------------------------------------------------------ context */

typedef struct onprem_ctx {
	const gb_host *host;
	onprem_inventory inv;
	int have_inventory;
	char *state_dir;     /* private state of this driver */
	char *lease_dir;     /* <state_dir>/leases */
	char *probe_dir;     /* <state_dir>/probe */
	char *known_hosts;   /* <state_dir>/known_hosts */
	char *broker_id;
	char *probe_path;    /* local probe binary */
	char *probe_remote;  /* where the probe is copied on ssh nodes */
	char *ssh_bin;       /* "ssh" */
	char *nvidia_smi;    /* "nvidia-smi" */
	int64_t probe_max_age_s;
	int require_probe;
	int probe_full;
	int probe_timeout_s;
	int setup_timeout_s;
	int ssh_connect_timeout_s;
} onprem_ctx;

void onprem_log(const onprem_ctx *c, gb_log_level lvl, const char *fmt, ...)
	GB_PRINTF(3, 4);
int64_t onprem_now(const onprem_ctx *c); /* unix seconds (host clock) */

/* ------------------------------------------------------------ transport */

typedef struct onprem_runres {
	int exit_code;    /* the command's status; -1 when it did not exit */
	int timed_out;    /* killed after the timeout */
	int unreachable;  /* ssh could not connect (exit 255) or spawn failed */
	int host_key;     /* ssh refused: the node's host key is not the one
	                     pinned in known_hosts (what says how to re-pin) */
	char *out;        /* stdout, NUL-terminated (capped at 16 MiB) */
	size_t out_len;
	char *err;        /* the last 8 KiB of stderr, NUL-terminated */
	char what[600];   /* why it did not run, when unreachable/timed out */
} onprem_runres;

/* The error of a failed onprem_run (-1) on node n: HostKeyChanged
 * (AUTH: not retried; the node is also stored unhealthy, as a probe
 * would, until it is re-pinned and probed again), Unreachable or Timeout
 * (TRANSIENT): "WHAT on node NAME: why" (onprem_probe.c). */
void onprem_run_err(const onprem_ctx *c, const onprem_node *n,
                    gb_error *err, const onprem_runres *r, const char *what);

/* Run a POSIX-shell command line on node n (ssh: the remote login shell;
 * local: /bin/sh -c), feeding `in` (may be NULL) to its stdin, killing it
 * (and its process group) after timeout_s.  Returns 0 when the command
 * ran and exited (whatever its status), -1 when it could not be started,
 * could not connect or timed out (res->what says which).  Free res with
 * onprem_runres_free either way. */
int onprem_run(const onprem_ctx *c, const onprem_node *n, const char *cmd,
               const void *in, size_t in_len, int timeout_s,
               onprem_runres *res);
void onprem_runres_free(onprem_runres *r);
/* The argv used for node n (ssh: the whole ssh command line; local:
 * /bin/sh -c CMD).  NULL-terminated, caller frees with
 * onprem_argv_free. */
char **onprem_argv(const onprem_ctx *c, const onprem_node *n,
                   const char *cmd);
void onprem_argv_free(char **argv);
/* Single-quote s for a POSIX shell into a fresh string. */
char *onprem_shquote(const char *s);
/* "cmd" prefixed with exported GPUBROKER_* variables (kv pairs, NULL
 * terminated: name, value, name, value, ..., NULL).  Caller frees. */
char *onprem_with_env(const char *cmd, const char *const *kv);
/* One printable line of at most max bytes from the end of s. */
void onprem_tail(char *dst, size_t cap, const char *s, size_t max);

/* ------------------------------------------------------------ health */

typedef enum onprem_hstate {
	ONPREM_H_UNPROBED = 0,   /* no probe result stored */
	ONPREM_H_HEALTHY,
	ONPREM_H_UNHEALTHY,
	ONPREM_H_UNREACHABLE
} onprem_hstate;

typedef struct onprem_health {
	onprem_hstate state;
	int64_t probed_at;      /* unix seconds, 0 when unprobed */
	int64_t age_s;          /* now - probed_at */
	int stale;              /* older than probe_max_age */
	int64_t marked_at;      /* unix s: marked failing by the driver
	                           (onprem_mark.c), 0 when not marked */
	onprem_strv failures;
	/* what the probe found (ngpus 0 when unknown) */
	int ngpus;
	const onprem_gpu_model *model;
	int memory_gb;          /* smallest per GPU */
	int mig_mode;           /* some GPU reports MIG enabled */
	/* per-GPU figures: the minimum over the node's GPUs; < 0 = not
	 * measured */
	double fp32_tflops, fp16_tflops, bf16_tflops;
	double d2d_gbps, h2d_gbps, d2h_gbps;
} onprem_health;

/* The node's last stored probe, evaluated (see README "Health"). */
void onprem_health_get(const onprem_ctx *c, const onprem_node *n,
                       onprem_health *h);
void onprem_health_free(onprem_health *h);
const char *onprem_hstate_name(onprem_hstate s);
/* The node's GPUs: declared, else what the probe found.  Returns 0 when
 * known (model, count, memory filled), -1 otherwise. */
int onprem_node_gpus(const onprem_node *n, const onprem_health *h,
                     const onprem_gpu_model **model, int *count,
                     int *memory_gb);
/* The shape name ("dgx-h100-8" or "8xH100") into buf; "" when the GPUs
 * are unknown. */
const char *onprem_node_shape(const onprem_node *n, const onprem_health *h,
                              char *buf, size_t cap);
/* 1 when the node may be offered and leased on health grounds; else 0
 * with a reason in why. */
int onprem_node_usable(const onprem_ctx *c, const onprem_node *n,
                       const onprem_health *h, char *why, size_t cap);

/* Probe node n now: copy the probe if needed, run it, store the result
 * in <probe_dir>/<node>.json.  Returns the stored document (caller
 * decrefs); never NULL (a failure to reach the node is a result too). */
json_t *onprem_probe_node(const onprem_ctx *c, const onprem_node *n);
/* Marks (onprem_mark.c): node marked failing (setup exited non-zero,
 * or unreachable while being set up) with reason; a marked node is
 * unhealthy/unreachable whatever its probe says, until a healthy probe
 * or onprem_mark_remove.  0 or -1 (logged). */
int onprem_mark_node(const onprem_ctx *c, const char *node, int unreachable,
                     const char *reason);
/* 1 when a mark was removed, 0 when there was none, -1 on error. */
int onprem_mark_remove(const onprem_ctx *c, const char *node);
/* Applies n's mark, if any, to h (state, failures first, marked_at). */
void onprem_mark_apply(const onprem_ctx *c, const onprem_node *n,
                       onprem_health *h);

/* Store a probe document (adds nothing); 0 or -1. */
int onprem_probe_store(const onprem_ctx *c, const char *node, json_t *doc);

/* ------------------------------------------------------------ leases */

typedef struct onprem_lease {
	char *file;        /* file name within lease_dir */
	char *node;
	int mig;           /* 0 = whole node; 1 = a MIG slice */
	int slot;          /* MIG: the slot in the file name */
	int gpu;           /* MIG: GPU index */
	char *profile;     /* MIG: profile name */
	int slices;        /* MIG: compute slices the profile takes */
	int gi, ci;        /* MIG: GPU / compute instance ids, -1 unknown */
	char *site;        /* the node's site when leased */
	char *instance_type; /* the offer's type (shape or MIG type) */
	gb_capacity capacity;
	char *pool, *token, *broker_id, *team, *name;
	char *state;       /* "setup" while setting up, then "ready" */
	int64_t leased_at;
	json_t *tags;      /* object */
	int unreadable;    /* the file exists but is empty or half written */
} onprem_lease;

typedef struct onprem_leases {
	onprem_lease *v;
	size_t n;
} onprem_leases;

/* Every lease file (optionally only node's).  0 or -1 with err. */
int onprem_leases_list(const onprem_ctx *c, const char *node,
                       onprem_leases *out, gb_error *err);
void onprem_leases_free(onprem_leases *l);
void onprem_lease_clear(onprem_lease *l);
/* The instance id of a lease: "<node>" or "<node>/mig<slot>" into buf. */
const char *onprem_lease_id(const onprem_lease *l, char *buf, size_t cap);
/* Parse an instance id; node into nodebuf, *slot = -1 for whole nodes.
 * 0 or -1 when malformed. */
int onprem_parse_id(const char *id, char *nodebuf, size_t cap, int *slot);
/* Read one lease file by instance id; 0, 1 when absent, -1 on error. */
int onprem_lease_read_id(const onprem_ctx *c, const char *id,
                         onprem_lease *out);

/* Atomically lease node n as a whole: under the node's lock, refuse when
 * it holds MIG slices, then create <node>.json with O_EXCL, holding l
 * (l->file and l->node are filled).  Returns 0,
 * 1 when the node is taken, -1 on error (err filled). */
int onprem_lease_node(const onprem_ctx *c, const onprem_node *n,
                      onprem_lease *l, gb_error *err);
/* Atomically lease one slice of `profile` on n (gpus GPUs): under the
 * node's lock, find a GPU with room and a free slot, create
 * <node>.mig.<slot>.json.  Fills out->slot/gpu/file.  0, 1 when no room,
 * -1 on error. */
int onprem_lease_slice(const onprem_ctx *c, const onprem_node *n,
                       const onprem_mig_profile *p, int gpus,
                       onprem_lease *l, gb_error *err);
/* Rewrite a lease (same file, atomically by rename).  0 or -1. */
int onprem_lease_write(const onprem_ctx *c, const onprem_lease *l,
                       gb_error *err);
/* Hold the node's lock (flock on <lease_dir>/.<node>.lock, exclusive
 * between processes and between threads): returns an fd to close to
 * unlock, or -1 with err.  Not reentrant: the lease functions take it. */
int onprem_node_lock(const onprem_ctx *c, const char *node, gb_error *err);
/* Remove a lease file; absent is fine.  0 or -1. */
int onprem_lease_release(const onprem_ctx *c, const onprem_lease *l,
                         gb_error *err);
/* Free room for `p` on node n given its current MIG leases: how many
 * more instances fit (0 when none). */
int onprem_mig_room(const onprem_leases *node_leases,
                    const onprem_mig_profile *p, int gpus);
/* The lease as JSON (what the file holds). New reference. */
json_t *onprem_lease_json(const onprem_lease *l);

/* ------------------------------------------------------------ MIG */

/* Create a GPU instance + compute instance of the lease's profile on its
 * GPU through the node's transport; records gi/ci in l.  0 or -1 with
 * err (TRANSIENT when unreachable, CAPACITY when nvidia-smi refuses for
 * lack of room, INVALID otherwise). */
int onprem_mig_create(const onprem_ctx *c, const onprem_node *n,
                      onprem_lease *l, gb_error *err);
/* Destroy the lease's compute and GPU instance (best effort: 0 or -1
 * with err). */
int onprem_mig_destroy(const onprem_ctx *c, const onprem_node *n,
                       const onprem_lease *l, gb_error *err);

/* ------------------------------------------------------------ views */

/* A node with everything the offers, the pools and the commands need to
 * know about it right now. */
typedef struct onprem_view {
	const onprem_node *n;
	const onprem_site *site;
	onprem_health h;
	int usable;                  /* may be offered/leased (health) */
	char why[400];               /* why not, when !usable */
	int gpus_known;
	const onprem_gpu_model *model;
	int count, mem;              /* GPUs and memory per GPU */
	char shape[96];              /* "" when the GPUs are unknown */
	onprem_leases leases;        /* this node's leases: shallow copies
	                                of entries of `all` (free .v only) */
	int whole;                   /* leased as a whole node */
} onprem_view;

/* Views of every node, with every lease listed once into *all.  0 or -1
 * with err.  Free with onprem_views_free. */
int onprem_views(const onprem_ctx *c, onprem_view **out, size_t *n,
                 onprem_leases *all, gb_error *err);
void onprem_views_free(onprem_view *v, size_t n, onprem_leases *all);
/* The MIG profile of an offer's instance type "<shape>-mig-<profile>":
 * writes the shape into shape and returns the profile name (borrowed
 * from instance_type), or NULL when it is not a MIG type. */
const char *onprem_mig_type(const char *instance_type, char *shape,
                            size_t cap);

/* ------------------------------------------------------------ methods */

int onprem_list_offers(void *ctx, gb_offer_cb emit, void *ud, gb_error *err);
int onprem_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                  void *ud, gb_error *err);
int onprem_describe(void *ctx, const gb_describe_req *req,
                    gb_instance_cb emit, void *ud, gb_error *err);
int onprem_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                     gb_error *err);

/* ------------------------------------------------------------ commands */

/* JSON of every node (the "nodes" verb).  New reference, or NULL with
 * err. */
json_t *onprem_nodes_json(const onprem_ctx *c, gb_error *err);
/* JSON of one node view.  New reference. */
json_t *onprem_view_json(const onprem_ctx *c, const onprem_view *v);
/* JSON of the sites (the "sites" verb).  New reference. */
json_t *onprem_sites_json(const onprem_ctx *c);

/* For unit tests: the descriptor without going through gb_driver_entry
 * (several drivers' archives define that symbol). */
const gb_driver *onprem_descriptor(void);

#endif
