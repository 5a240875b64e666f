/*
 * ec2.h -- internals of cloudsim's EC2 Query API (version 2016-11-15):
 * shared by ec2_api.c (dispatch, auth, throttling), ec2_xml.c (response
 * shapes, errors, list parameters), ec2_run.c (RunInstances,
 * TerminateInstances), ec2_describe.c (DescribeInstances) and ec2_info.c
 * (instance types, spot prices, zones).
 */
#ifndef SIM_EC2_H
#define SIM_EC2_H

#include "sim.h"

#define EC2_NS "http://ec2.amazonaws.com/doc/2016-11-15/"

typedef struct ec2_ctx {
	sim_req *req;
	sim_resp *resp;
	gb_kvs params;      /* query + form body, decoded */
	const char *action;
	char region[65];
	int64_t now;
} ec2_ctx;

typedef struct ec2_filter {
	char *name;
	gb_strv values;
} ec2_filter;

/* Error response in EC2's shape (status, Code, printf message). */
void ec2_error(ec2_ctx *c, int status, const char *code, const char *fmt,
               ...) GB_PRINTF(4, 5);
/* "<XResponse xmlns=...><requestId>..</requestId>" */
void ec2_begin(ec2_ctx *c, gb_buf *b);
/* Closes the element and sends 200. */
void ec2_finish(ec2_ctx *c, gb_buf *b);
void ec2_tag(gb_buf *b, const char *name, const char *text);
void ec2_tagf(gb_buf *b, const char *name, const char *fmt, ...)
	GB_PRINTF(3, 4);

/* Values of PREFIX.1, PREFIX.2, ... in index order. */
void ec2_list(const gb_kvs *p, const char *prefix, gb_strv *out);
/* Filter.N.Name / Filter.N.Value.M; -1 (after an error response) when a
 * filter has no name or no values. */
int ec2_filters(ec2_ctx *c, ec2_filter **out, size_t *n);
void ec2_filters_free(ec2_filter *f, size_t n);
/* 1 when any of f's values glob-matches s. */
int ec2_filter_any(const ec2_filter *f, const char *s);
/* Checks every filter name is in `known` (NULL-terminated); error
 * response and -1 otherwise.  "tag:" prefixes are allowed when "tag:*"
 * is listed. */
int ec2_filters_known(ec2_ctx *c, const ec2_filter *f, size_t n,
                      const char *const *known);

/* MaxResults in [lo, hi] (when present) -> *out (0 when absent). */
int ec2_max_results(ec2_ctx *c, int64_t lo, int64_t hi, int64_t *out);
/* Opaque page tokens. */
char *ec2_token_make(const char *kind, int64_t pos);
int ec2_token_parse(const char *kind, const char *tok, int64_t *pos);
/* "true"/"1" */
int ec2_bool(const gb_kvs *p, const char *key);

/* 1 when s is i- + 8 or 17 lowercase hex digits. */
int ec2_valid_instance_id(const char *s);

/* <item> of an instance (for instancesSet). */
void ec2_instance_xml(gb_buf *b, const sim_inst *in, int64_t now);
void ec2_state_xml(gb_buf *b, const char *tag, sim_phase ph);

/* The AMI an ImageId launches: an ami-... id as given, or the one a
 * resolve:ssm:<parameter> resolves to in the request's region (ec2_ssm.c).
 * -1 after an error response when the parameter does not exist. */
int ec2_resolve_image(ec2_ctx *c, const char *image, char out[22]);

void ec2_run_instances(ec2_ctx *c);
void ec2_terminate_instances(ec2_ctx *c);
void ec2_describe_instances(ec2_ctx *c);
void ec2_describe_instance_types(ec2_ctx *c);
void ec2_describe_spot_price_history(ec2_ctx *c);
void ec2_describe_availability_zones(ec2_ctx *c);

/* Zones of the request's region (effective regions), borrowed. */
const gb_strv *ec2_region_zones(ec2_ctx *c);

#endif
