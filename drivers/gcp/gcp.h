/*
 * gcp.h -- internals of the GCP driver (Compute Engine v1).  Nothing here
 * is exported from gcp.so: the only exported symbol is gb_driver_entry
 * (gcp_entry.c).  Unit tests and the fuzz target link the static archive
 * and use gcp_driver_desc and the pure parsers/builders below.
 *
 * Files: gcp_driver.c (descriptor, init/fini, offers), gcp_config.c
 * (options/environment), gcp_auth.c (service-account key, RS256 JWT,
 * token exchange), gcp_http.c (one Compute exchange), gcp_errors.c (error
 * classes), gcp_labels.c (names, labels, requestIds), gcp_compute.c
 * (bulkInsert body, instance parsing, states), gcp_ops.c (operations),
 * gcp_create.c, gcp_describe.c, gcp_delete.c, gcp_zones.c (name -> zone
 * memory), gcp_prices.c (Cloud Billing Catalog).
 */
#ifndef GCP_H
#define GCP_H

#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>

#include "drvc_cache.h"
#include "drvc_scan.h"
#include "drvc_token.h"
#include "gpubroker/driver.h"

#define GCP_DEFAULT_COMPUTE "https://compute.googleapis.com/compute/v1/"
#define GCP_DEFAULT_BILLING "https://cloudbilling.googleapis.com/v1"
#define GCP_DEFAULT_TOKEN_URI "https://oauth2.googleapis.com/token"
#define GCP_SCOPE "https://www.googleapis.com/auth/cloud-platform"
#define GCP_COMPUTE_SERVICE "6F81-5844-456A"
/* Deep Learning VM "common" image: Ubuntu 22.04, CUDA 12.8, NVIDIA 570
 * driver preinstalled. */
#define GCP_DEFAULT_IMAGE \
	"projects/deeplearning-platform-release/global/images/family/" \
	"common-cu128-ubuntu-2204-nvidia-570"
#define GCP_SSH_USER "gpubroker"

#define GCP_MAX_SMALL ((size_t)1 << 20)   /* token, operation, instance */
#define GCP_MAX_PAGES 200
#define GCP_ZONE_CACHE 8192

typedef struct gcp_ctx {
	const gb_host *host;
	char *compute;      /* base URL ending in '/' (".../compute/v1/") */
	char *billing;      /* billing base URL, no trailing '/' */
	char *project;      /* NULL when unknown */
	char *network;      /* "global/networks/default" */
	char *subnetwork;   /* NULL unless set */
	char *image;        /* option "image" or NULL */
	char *disk_type;    /* "pd-balanced" */
	int disk_gb;
	int public_ip;
	int64_t create_timeout_ms;
	int64_t poll_interval_ms;
	/* credentials */
	char *key_where;    /* where the key came from, for messages */
	char *client_email;
	char *key_id;
	char *token_uri;
	EVP_PKEY *pkey;
	char *auth_problem; /* why we cannot get a token; NULL when fine */
	char *auth_looked;  /* with auth_problem: where the key was looked
	                       for (the "credentials" verb) */
	drvc_token tok;
	drvc_cache zones;   /* instance name -> [zone] */
} gcp_ctx;

extern const gb_driver gcp_driver_desc;

/* gcp_config.c */
int gcp_config_load(gcp_ctx *c, gb_error *err);
void gcp_config_free(gcp_ctx *c);
/* Fails with AUTH (credentials) or INVALID (project) naming what was
 * tried. */
int gcp_require(gcp_ctx *c, gb_error *err);
const char *gcp_image_for(gcp_ctx *c, const char *region);

/* gcp_auth.c */
/* Loads a service-account key (JSON text).  On failure returns -1 and a
 * malloc'd reason in *why (names the field; never the key). */
int gcp_load_key(gcp_ctx *c, const char *json, size_t len, char **why,
                 char **project_id);
/* The signed JWT assertion for a token request at now_s (caller frees
 * with drvc_free_secret); NULL on failure. */
char *gcp_jwt(gcp_ctx *c, int64_t now_s, const char *scope);
int gcp_fetch_token(void *ud, char **token, int64_t *expires_in_s,
                    gb_error *err);
int gcp_parse_token(const char *body, size_t len, char **token,
                    int64_t *expires_in_s, gb_error *err);

/* gcp_errors.c */
gb_err_class gcp_code_class(const char *code, long status);
/* The telling code and message of a Google API error body. */
void gcp_error_fields(const json_t *root, char *code, size_t codecap,
                      char *msg, size_t msgcap);
typedef struct gcp_what {
	gcp_ctx *c;
	const char *what;
} gcp_what;
gb_err_class gcp_classify(void *ud, const gb_http_resp *r, gb_error *err,
                          int *auth_expired);

/* gcp_http.c: one Compute/Billing exchange with the bearer token.
 * Returns 0, or -1 with err (err->cls NOT_FOUND for 404). */
int gcp_api(gcp_ctx *c, const char *method, const char *url,
            const char *body, const char *rate_class, const char *what,
            gb_http_resp *resp, gb_error *err);
/* "<compute>projects/<p>/zones/<z>/<rest>" (caller frees). */
char *gcp_zone_url(gcp_ctx *c, const char *zone, const char *rest);

/* gcp_labels.c */
/* Label keys/values: lowercase, [a-z0-9_-] (others -> '_'), at most 63;
 * keys start with a letter (else prefixed "x").  out has 64 bytes. */
void gcp_label_key(const char *in, char out[64]);
void gcp_label_value(const char *in, char out[64]);
/* "<prefix>-<index>" mapped to RFC 1035 (lowercase, others -> '-');
 * -1 with err (INVALID) when it cannot start with a letter or is longer
 * than 63. */
int gcp_instance_name(const char *prefix, unsigned index, char out[64],
                      gb_error *err);
/* A version-4-shaped UUID derived from the token and the names of a
 * bulkInsert: the same create retried carries the same requestId.  out
 * has 37 bytes. */
void gcp_request_id(const char *token, const char *const *names, size_t n,
                    char out[37]);
void gcp_random_uuid(char out[37]);
/* "us-central1-a" -> 1 when the zone is in region. */
int gcp_zone_in_region(const char *zone, const char *region);

/* gcp_compute.c */
typedef struct gcp_type {
	char machine[64];   /* "n1-standard-8" */
	char accel[64];     /* "nvidia-tesla-t4" or "" */
	int accel_count;
} gcp_type;
/* "n1-standard-8/nvidia-tesla-t4:1" or "a2-highgpu-1g". */
int gcp_parse_type(const char *s, gcp_type *t, gb_error *err);
typedef struct gcp_params {
	const char *image;
	const char *network;
	const char *subnetwork;  /* NULL = none */
	const char *disk_type;
	int disk_gb;
	int public_ip;
} gcp_params;
/* The instances.bulkInsert body (a BulkInsertInstanceResource: count =
 * minCount = n, names[] as perInstanceProperties keys, the request's
 * instanceProperties; sorted keys, compact; caller frees) or NULL with
 * err. */
char *gcp_bulk_body(const gb_create_req *req, const char *const *names,
                    size_t n, const gcp_params *p, gb_error *err);

typedef struct gcp_inst {
	/* The strings point into obj (a reference this struct owns), into
	 * own_*, or (gcp_inst_scan) into the scanner's element, valid until
	 * its callback returns; nothing is copied out of the answer but what
	 * must be built. */
	json_t *obj;        /* NULL from gcp_inst_scan */
	const char *name;
	const char *zone;
	const char *type;   /* catalog form: machine[/accel:n] */
	const char *status;
	int spot;
	const char *network_ip; /* NULL when none */
	const char *nat_ip;
	int64_t created_ms;         /* creationTimestamp, unix ms; 0 unknown */
	gb_kv *labels;      /* array owned (unless labels_borrowed), strings
	                       borrowed from obj or the element */
	size_t nlabels;
	int labels_borrowed;
	char *own_type;     /* N1 type built as machine/accel:n */
	char *own_zone;     /* zone taken from the aggregated list's key */
} gcp_inst;
/* The Instance members both readers take, by index (gcp_inst_members:
 * the list scanner's member paths). */
enum {
	GI_NAME, GI_ZONE, GI_MACHINE, GI_STATUS, GI_CREATED, GI_MODEL,
	GI_PREEMPTIBLE, GI_NETWORK_IP, GI_NAT_IP, GI_ACC_TYPE, GI_ACC_COUNT,
	GI_LABELS, GCP_INST_NMEMBERS
};
extern const char *const gcp_inst_members[GCP_INST_NMEMBERS];
/* Fills inst from an Instance object (taking a reference to it); -1
 * when it has no name.  gcp_inst_free after either. */
int gcp_inst_parse(const json_t *o, gcp_inst *inst);
/* The same from a list page's element (drvc_scan with gcp_inst_members):
 * valid until the scanner's callback returns.  gcp_inst_free after. */
int gcp_inst_scan(const drvc_scan_elem *e, gcp_inst *inst);
void gcp_inst_free(gcp_inst *inst);
const char *gcp_inst_label(const gcp_inst *inst, const char *key);
gb_instance_state gcp_inst_state(const gcp_inst *inst, const char **reason);
int gcp_emit_inst(gcp_ctx *c, const gcp_inst *inst, gb_instance_cb emit,
                  void *ud);
/* GET zones/<zone>/instances/<name>: 1 found, 0 404, -1 with err. */
int gcp_get_inst(gcp_ctx *c, const char *zone, const char *name,
                 gcp_inst *inst, gb_error *err);

/* gcp_ops.c */
typedef struct gcp_op {
	char *name;         /* operation name (owned) */
	char *zone;         /* owned */
	const char *target; /* what it does, for messages (borrowed):
	                       "bulkInsert of a-0..a-3" */
	int done;
	int failed;
	gb_error err;
} gcp_op;
/* Parses an Operation (pure; fuzzed): name, status, first error. */
int gcp_parse_op(const char *body, size_t len, char *name, size_t namecap,
                 char *status, size_t stcap, char *code, size_t codecap,
                 char *msg, size_t msgcap, long *http_status);
/* Takes an answer that should be an Operation into op: its name (when
 * op has none yet), done, and failed with op->err when DONE carries an
 * error.  0, or -1 with err (TRANSIENT MalformedOperation when it is not
 * an Operation). */
int gcp_op_answer(const gb_http_resp *resp, const char *what, gcp_op *op,
                  gb_error *err);
/* Class of an operation error code. */
gb_err_class gcp_op_class(const char *code, long http_status);
int gcp_ops_wait(gcp_ctx *c, gcp_op *ops, size_t n, int64_t deadline,
                 gb_error *err);

/* gcp_zones.c */
void gcp_zone_remember(gcp_ctx *c, const char *name, const char *zone);
/* malloc'd zone or NULL */
char *gcp_zone_lookup(gcp_ctx *c, const char *name);
void gcp_zone_forget(gcp_ctx *c, const char *name);

/* gcp_create.c / gcp_describe.c / gcp_delete.c */
int gcp_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
               void *ud, gb_error *err);
int gcp_describe(void *ctx, const gb_describe_req *req, gb_instance_cb emit,
                 void *ud, gb_error *err);
int gcp_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                  gb_error *err);
int gcp_delete_inst(gcp_ctx *c, const char *zone, const char *name,
                    gb_error *err);
/* Parses one aggregatedList page: fn for each instance, *next =
 * nextPageToken or NULL (pure; fuzzed).  Returns 0, 1 when fn stopped,
 * -1 with err. */
int gcp_parse_agg_page(const char *body, size_t len,
                       int (*fn)(void *ud, gcp_inst *inst), void *ud,
                       char **next, gb_error *err);
/* aggregatedList with an AIP-160 filter; fn for each instance. */
int gcp_agg_list(gcp_ctx *c, const char *filter,
                 int (*fn)(void *ud, gcp_inst *inst), void *ud,
                 gb_error *err);

/* gcp_prices.c */
int gcp_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                       void *ud, gb_error *err);
typedef struct gcp_sku {
	const char *description;
	const char *usage;        /* OnDemand / Preemptible / ... */
	const char *group;        /* resourceGroup */
	const json_t *regions;    /* serviceRegions array */
	double price;             /* USD per usage unit (h or GiBy.h) */
} gcp_sku;
/* Parses one SKU page (pure; fuzzed). */
int gcp_parse_sku_page(const char *body, size_t len,
                       void (*fn)(void *ud, const gcp_sku *sku), void *ud,
                       char **next, gb_error *err);

#endif
