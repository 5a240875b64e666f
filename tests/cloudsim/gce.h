/*
 * gce.h -- internals of cloudsim's GCP listener: the OAuth token endpoint
 * (gcp_oauth.c), Compute Engine v1 routing/auth/rate limits (gce_api.c),
 * instances (gce_instances.c), bulkInsert (gce_bulk.c), zone operations
 * (gce_ops.c), list filters
 * (gce_filter.c) and the Cloud Billing catalog (gcp_billing.c, its
 * component rates in gcp_rates.c).
 */
#ifndef SIM_GCE_H
#define SIM_GCE_H

#include "sim.h"

typedef struct gce_ctx {
	sim_req *req;
	sim_resp *resp;
	int64_t now;
	char **segs;        /* decoded path segments */
	size_t nseg;
	const char *project, *zone, *region, *name, *opname;
	const char *op;
} gce_ctx;

/* Google API error: {"error":{"code","message","errors":[{message,
 * domain,reason}]}}. */
void gce_error(gce_ctx *c, int status, const char *reason,
               const char *domain, const char *fmt, ...) GB_PRINTF(5, 6);

/* base URL + "/compute/v1/projects/<p>" ...; caller frees. */
char *gce_url(const char *fmt, ...) GB_PRINTF(1, 2);

/* Instance map key "gcp|project|zone|name". Caller frees. */
char *gce_key(const char *project, const char *zone, const char *name);

json_t *gce_instance_json(const sim_inst *in, int64_t now);
json_t *gce_op_json(const sim_op *op, int64_t now);
/* New operation (name generated). */
sim_op *gce_op_new(gce_ctx *c, const char *kind, const char *zone,
                   const char *target, const char *target_id,
                   int64_t done);

/* Shared by insert and bulkInsert (gce_instances.c). */
/* Maps the request's requestId (when given) to op. */
void gce_rid_remember(gce_ctx *c, sim_op *op, const char *rid);
/* The start of a mutation: 1 when answered (a requestId seen before
 * answered with its operation, a bad requestId, an unknown zone), else 0
 * with *rid (NULL when absent) and c->region set. */
int gce_mutation_start(gce_ctx *c, const char **rid);
/* The request body as a JSON object (caller decrefs), or NULL with the
 * 400 answered. */
json_t *gce_body_object(gce_ctx *c);
int gce_valid_name(const char *n);
/* An instance's validated properties; every pointer borrowed from the
 * request body or the catalog. */
typedef struct gce_props {
	const char *mt;          /* machine type name */
	const sim_ctype *t;      /* catalog entry; NULL = CPU-only N1 */
	const sim_creg *r;       /* t's entry for the region, or NULL */
	int spot, term_delete;
	const json_t *labels;    /* object or NULL */
} gce_props;
/* Validates an Instance (insert; bulk 0: machineType a URL naming
 * machineTypes/) or an InstanceProperties (bulkInsert; bulk 1:
 * machineType a bare name).  0, or -1 with the 400 answered. */
int gce_props_parse(gce_ctx *c, const json_t *body, int bulk, gce_props *p);
/* How many more instances of t fit under the region's GPU quota
 * (INT64_MAX without a limit); q gets the usage key (caller frees
 * q->key) and amount, metric and *limit the quota's name and limit. */
int64_t gce_quota_room(gce_ctx *c, const sim_ctype *t, int spot,
                       sim_quse *q, char *metric, size_t cap, double *limit);
/* Zone capacity left for p (0 where p's spot market is absent); caller
 * frees *cap_key. */
int64_t gce_capacity_left(gce_ctx *c, const gce_props *p, char **cap_key);
/* The live instance called name in c's zone (borrowed) or NULL. */
sim_inst *gce_inst_live(gce_ctx *c, const char *name);
/* Creates and allocates one instance; cap_key and q are copied. */
sim_inst *gce_inst_make(gce_ctx *c, const gce_props *p, const char *name,
                        const json_t *body, const char *cap_key,
                        const sim_quse *q);
/* An operation that ends DONE with error code (httpErrorStatusCode
 * http) and nothing made; owned by the op table. */
sim_op *gce_op_failed(gce_ctx *c, const char *kind, const char *target,
                      const char *code, int http, const char *msg);
/* ZONE_RESOURCE_POOL_EXHAUSTED's message for c's zone; caller frees. */
char *gce_no_room_msg(gce_ctx *c);

/* Filters (AIP-160 subset): clauses ANDed. */
typedef struct gce_clause {
	char *field;  /* "labels.KEY", "name", "status", "zone", ... */
	int op;       /* '=', '!', ':' */
	char *value;
} gce_clause;
int gce_filter_parse(const char *s, gce_clause **out, size_t *n);
void gce_filter_free(gce_clause *c, size_t n);
/* get(field) returns the value (or NULL when absent). */
typedef const char *(*gce_field_fn)(const void *obj, const char *field,
                                    char *buf, size_t cap);
int gce_filter_match(const gce_clause *c, size_t n, gce_field_fn get,
                     const void *obj);

/* Handlers (called with sim_g.mu held; zone_op_wait drops it while
 * waiting). */
void gcp_token(gce_ctx *c);
void gce_insert(gce_ctx *c);
void gce_bulk_insert(gce_ctx *c);
void gce_get(gce_ctx *c);
void gce_delete(gce_ctx *c);
void gce_list(gce_ctx *c, int aggregated);
void gce_op_get(gce_ctx *c);
void gce_op_wait(gce_ctx *c);
void gce_op_list(gce_ctx *c);
void gce_region_get(gce_ctx *c);
void gcp_billing_services(gce_ctx *c);
void gcp_billing_skus(gce_ctx *c, const char *service);

/* The catalog priced as the billing catalog's component SKUs (see
 * gcp_rates.c): per (family, region, usage) a core and a RAM rate, per
 * (GPU SKU, region, usage) a GPU rate; in a fixed order (regions in order
 * of first appearance, OnDemand then Preemptible, families then GPUs). */
enum { GCP_RATE_CORE, GCP_RATE_RAM, GCP_RATE_GPU };
typedef struct gcp_rate {
	int kind;
	const char *name;     /* family ("A2", "N1 Predefined") or GPU SKU
	                         ("Nvidia L4 GPU"); static */
	const char *region;   /* borrowed from the catalog */
	int spot;             /* usageType Preemptible */
	double price;         /* USD per vCPU-h, GiB-h or GPU-h; nanos */
} gcp_rate;
/* Caller frees *out (free()). */
size_t gcp_rates_build(const sim_catalog *cat, gcp_rate **out);

/* Accelerator type for a canonical GPU model ("H100" ->
 * "nvidia-h100-80gb"). */
const char *gce_accel_for(const char *gpu);
/* Answers 200 with obj (taken), reduced to the request's `fields`
 * selection when it has one; 400 invalidParameter when that is malformed
 * (gce_fields.c). */
void gce_reply(gce_ctx *c, json_t *obj);
/* Page tokens. */
char *gce_token_make(const char *kind, const char *pos);
char *gce_token_parse(const char *kind, const char *tok);

#endif
