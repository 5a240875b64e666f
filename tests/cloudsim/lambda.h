/*
 * lambda.h -- internals of cloudsim's Lambda Cloud listener: routing,
 * API-key auth, rate limits and the error envelope (lambda_api.c),
 * instance types, launch, list/get and terminate (lambda_instances.c),
 * SSH keys (lambda_keys.c).  Facts and sources: drivers/lambda/API.md.
 */
#ifndef SIM_LAMBDA_H
#define SIM_LAMBDA_H

#include "sim.h"

typedef struct lam_ctx {
	sim_req *req;
	sim_resp *resp;
	int64_t now;
	const char *op;   /* Lambda's operationId, static */
	char *id;         /* decoded {id} path segment, or NULL (owned) */
} lam_ctx;

/* Lambda's error envelope {"error":{"code","message","suggestion"}};
 * suggestion NULL = JSON null. */
void lam_error(lam_ctx *c, int status, const char *code,
               const char *suggestion, const char *fmt, ...) GB_PRINTF(5, 6);
/* 400 global/invalid-parameters with the message. */
void lam_bad(lam_ctx *c, const char *fmt, ...) GB_PRINTF(2, 3);
/* The request body as a JSON object (caller decrefs), or NULL with the
 * 400 answered. */
json_t *lam_body_object(lam_ctx *c);
/* 1 when obj has only keys of allowed (NULL-ended); else 0 with the 400
 * answered naming the first other key. */
int lam_only_keys(lam_ctx *c, const json_t *obj, const char *what,
                  const char *const *allowed);

/* 1 when an SSH key called name is registered. */
int lam_key_exists(const char *name);

/* Handlers, called with sim_g.mu held. */
void lam_instance_types(lam_ctx *c);
void lam_launch(lam_ctx *c);
void lam_list(lam_ctx *c);
void lam_get(lam_ctx *c);
void lam_terminate(lam_ctx *c);
void lam_keys_list(lam_ctx *c);
void lam_keys_add(lam_ctx *c);
void lam_keys_delete(lam_ctx *c);

#endif
