/*
 * lambda.h -- internals of the Lambda Cloud driver (Lambda Cloud API v1,
 * https://docs-api.lambda.ai/api/cloud; the facts the driver relies on
 * are in drivers/lambda/API.md).  Nothing here is exported from lambda.so
 * but gb_driver_entry (lambda_entry.c); unit tests link the static
 * archive and use the pure helpers below.
 *
 * Files: lambda_driver.c (descriptor, init/fini, offers), lambda_http.c
 * (one exchange with the API key), lambda_errors.c (error classes),
 * lambda_names.c (instance names that carry pool/broker/token, SSH key
 * names), lambda_inst.c (instance objects, statuses, listing),
 * lambda_create.c, lambda_terminate.c, lambda_prices.c.
 *
 * This driver includes only gpubroker/driver.h and the driver SDK
 * (drivers/common), as a third-party driver would.
 */
#ifndef LAMBDA_H
#define LAMBDA_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "drvc_cache.h"
#include "drvc_scan.h"
#include "gpubroker/driver.h"

#define LAMBDA_DEFAULT_ENDPOINT "https://cloud.lambda.ai/api/v1"
#define LAMBDA_DEFAULT_KEY_SOURCE "env:LAMBDA_API_KEY"
/* Lambda's instance name limit (characters). */
#define LAMBDA_NAME_MAX 64
#define LAMBDA_MAX_SMALL ((size_t)1 << 20)
#define LAMBDA_KEY_MAX 512

/* rate classes (default_rates in lambda_driver.c) */
#define LAMBDA_RATE_API "lambda-api"
#define LAMBDA_RATE_LAUNCH "lambda-launch"

typedef struct lambda_ctx {
	const gb_host *host;
	char *endpoint;      /* base URL without a trailing '/' (".../api/v1") */
	char *key;           /* the API key; NULL when missing */
	char *auth_line;     /* "Authorization: Bearer <key>" (secret) */
	char *auth_problem;  /* why there is no key; NULL when fine */
	char *key_where;     /* where the key was looked for: "SOURCE (option
	                        NAME)" (the "credentials" verb) */
	char *ssh_key_name;  /* option ssh_key_name, or NULL */
	char *image_family;  /* option image_family, or NULL */
	char *file_system;   /* option file_system, or NULL */
	unsigned max_quantity; /* option max_quantity: instances per launch */
	int tags;            /* option tags: launches carry tags (default 1) */
	int64_t http_timeout_ms; /* the host's option http_timeout_ms (60000) */
	drvc_cache keys;     /* gpubroker-<hash> -> the registered key's name */
} lambda_ctx;

extern const gb_driver lambda_driver_desc;

/* lambda_sites.c: the command method ("sites": data/regions.json). */
int lambda_command(void *ctx, const char *verb, int argc,
                   const char *const *argv,
                   void (*out)(void *ud, const char *json), void *ud,
                   gb_error *err);

/* lambda_driver.c: AUTH with the reason when there is no API key. */
int lambda_require(lambda_ctx *c, gb_error *err);

/* lambda_http.c: one JSON exchange with the API key; path is appended
 * to the endpoint ("/instances"); body NULL for a GET.  once: a single
 * attempt (a launch: the host must not repeat it, as nothing makes a
 * repeated launch idempotent; the caller looks up what was made first).
 * Returns 0, or -1 with err (classes as lambda_classify); resp is filled
 * either way and the caller host->http_free()s it. */
int lambda_api(lambda_ctx *c, const char *method, const char *path,
               const char *body, const char *rate_class, int once,
               const char *what, gb_http_resp *resp, gb_error *err);
/* GET path and parse {"data": ...}: 0 with *root (caller json_decref()s;
 * *data borrowed from it), or -1 with err. */
int lambda_get_data(lambda_ctx *c, const char *path, const char *what,
                    json_t **root, json_t **data, gb_error *err);

/* lambda_errors.c */
/* The class of Lambda's error code (e.g. "global/quota-exceeded") with
 * the HTTP status (pure). */
gb_err_class lambda_code_class(const char *code, long status);
/* The host classifier for every Lambda exchange; ud is a lambda_what. */
typedef struct lambda_what {
	lambda_ctx *c;
	const char *what;
} lambda_what;
gb_err_class lambda_classify(void *ud, const gb_http_resp *r, gb_error *err);

/* lambda_names.c */
/* The instance name for (pool, broker, token): "gb.<pool>.<broker>.<token>"
 * when that fits LAMBDA_NAME_MAX and no part holds '.', a control
 * character or a blank; else "gb~<pool, cut at 24>~<24 hex of SHA-256 of
 * pool, broker and token>".  Deterministic.  out has LAMBDA_NAME_MAX + 1
 * bytes. */
void lambda_name_encode(const char *pool, const char *broker,
                        const char *token, char out[LAMBDA_NAME_MAX + 1]);
/* Splits a "gb.<pool>.<broker>.<token>" name into its parts (each has
 * LAMBDA_NAME_MAX + 1 bytes): 1 when it is one, 0 otherwise (a hashed
 * name, or not ours). */
int lambda_name_decode(const char *name, char *pool, char *broker,
                       char *token);
/* 1 when name is one of ours (either form). */
int lambda_name_ours(const char *name);
/* The "<type> <base64>" part of a public key line (its identity: the
 * comment does not count): *start and the length (pure). */
size_t lambda_key_ident(const char *pubkey, const char **start);
/* "gpubroker-<16 hex of SHA-256 of the key's type and base64 blob>":
 * the same key always gets the same name.  out has 32 bytes. */
void lambda_ssh_key_name(const char *pubkey, char out[32]);

/* lambda_inst.c */
typedef struct lambda_inst {
	const char *id, *name, *status, *region, *type, *ip, *private_ip;
	gb_kv *tags;         /* the instance's tags, then the gpubroker tags
	                        decoded from its name where it has none;
	                        array owned, strings borrowed from the JSON
	                        or from pool/broker/token below */
	size_t ntags;
	char pool[LAMBDA_NAME_MAX + 1], broker[LAMBDA_NAME_MAX + 1],
	     token[LAMBDA_NAME_MAX + 1];
	int64_t created_ms;  /* 0 unknown */
} lambda_inst;
/* Fills inst from a list element (drvc_scan; strings borrowed from the
 * scanner until its callback returns): -1 when it has no id (pure).
 * lambda_inst_free after either. */
int lambda_inst_scan(const drvc_scan_elem *e, lambda_inst *inst);
void lambda_inst_free(lambda_inst *inst);
const char *lambda_inst_tag(const lambda_inst *inst, const char *key);
gb_instance_state lambda_state(const char *status);
int lambda_emit_inst(const lambda_inst *inst, const char *name,
                     gb_instance_cb emit, void *ud);
/* A GET /instances answer's body: fn for each instance (stop when fn
 * returns non-zero).  0, or -1 with err (pure; fuzzed). */
int lambda_parse_list(const char *body, size_t len,
                      int (*fn)(void *ud, const lambda_inst *inst), void *ud,
                      gb_error *err);
/* GET /instances: fn for each instance (stop when fn returns non-zero).
 * 0, or -1 with err. */
int lambda_list(lambda_ctx *c, int (*fn)(void *ud, const lambda_inst *inst),
                void *ud, gb_error *err);

/* lambda_create.c / lambda_describe.c / lambda_terminate.c */
/* The launch body (pure; compact, sorted keys; caller frees); "tags"
 * only when with_tags. */
char *lambda_launch_body(const gb_create_req *req, const char *name,
                         const char *ssh_key, unsigned quantity,
                         const char *image_family, const char *file_system,
                         int with_tags);
int lambda_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                  void *ud, gb_error *err);
int lambda_describe(void *ctx, const gb_describe_req *req,
                    gb_instance_cb emit, void *ud, gb_error *err);
int lambda_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                     gb_error *err);

/* lambda_prices.c */
int lambda_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                          void *ud, gb_error *err);
/* "8x H100 (80 GB SXM5)" / "gpu_8x_h100_sxm5" -> canonical model, count
 * and per-GPU memory (pure); 0, or -1 when it cannot be read. */
int lambda_parse_gpu(const char *type, const char *desc, char *model,
                     size_t cap, int *count, int *mem_gb);

#endif
