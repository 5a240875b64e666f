/*
 * aws_ec2.h -- EC2 Query API requests and answers as pure functions: form
 * bodies in, XML answers out, no I/O.  Used by the driver and directly by
 * the unit tests and the fuzz target.
 *
 * Bodies are "Action=<Op>&Version=2016-11-15&..." with names and values
 * percent-encoded (RFC 3986 unreserved kept, space as %20).  Lists are
 * 1-based: InstanceId.1, Filter.1.Name, Filter.1.Value.1, ...
 */
#ifndef AWS_EC2_H
#define AWS_EC2_H

#include <stddef.h>
#include <stdint.h>

#include "drvc_enc.h"
#include "gpubroker/driver.h"

#define AWS_EC2_VERSION "2016-11-15"
/* Tag holding the batch's first index: an instance's deterministic name
 * is "<Name tag>-<index base + amiLaunchIndex>". */
#define AWS_TAG_INDEX_BASE "gpubroker-index-base"
/* The default image: AWS's Deep Learning Base OSS Nvidia Driver GPU AMI
 * (Ubuntu 22.04, x86_64), resolved by EC2 at launch from the public SSM
 * parameter, so it is right in every region. */
#define AWS_DEFAULT_IMAGE                                                 \
	"resolve:ssm:/aws/service/deeplearning/ami/x86_64/"                \
	"base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id"

/* ------------------------------------------------------------ bodies */

typedef struct aws_form {
	drvc_buf b;
} aws_form;

void aws_form_start(aws_form *f, const char *action);
void aws_form_add(aws_form *f, const char *name, const char *value);
/* Name from a printf format, value as given. */
void aws_form_addf(aws_form *f, const char *value, const char *name_fmt, ...)
	GB_PRINTF(3, 4);
/* The body (caller frees); aborts when memory is exhausted. */
char *aws_form_take(aws_form *f);

typedef struct aws_run_params {
	const gb_create_req *req;
	const char *image;              /* resolved: never NULL */
	const char *subnet_id;          /* NULL = default VPC */
	const char *security_group_ids; /* comma list, NULL = VPC default */
	const char *key_name;           /* NULL = none */
	const char *iam_instance_profile; /* name or ARN, NULL = none */
} aws_run_params;

/* RunInstances.  Returns the body (caller frees), or NULL with err filled
 * (INVALID: an ssh key with a line break, ...). */
char *aws_ec2_run_body(const aws_run_params *p, gb_error *err);
/* DescribeInstances by ids (no paging: EC2 refuses MaxResults with ids)
 * or by tag filters with MaxResults=500 and NextToken. */
char *aws_ec2_describe_body(const char *const *ids, size_t nids,
                            const char *pool, const char *broker_id,
                            const char *token, const char *next_token);
char *aws_ec2_terminate_body(const char *const *ids, size_t nids);
/* DescribeInstanceTypes filtered to types (Filter instance-type),
 * MaxResults=100, NextToken. */
char *aws_ec2_types_body(const char *const *types, size_t ntypes,
                         const char *next_token);
/* DescribeSpotPriceHistory for types, Linux/UNIX, StartTime=EndTime=now
 * (the price in effect now, per AZ), MaxResults=1000, NextToken. */
char *aws_ec2_spot_body(const char *const *types, size_t ntypes,
                        int64_t now_ms, const char *next_token);

/* ----------------------------------------------------------- answers */

/* EC2 state code (low byte) + name + stateReason code -> broker state:
 *   pending -> PENDING, running -> RUNNING, shutting-down / stopping ->
 *   STOPPING, stopped -> FAILED (a stopped GPU box does no work but still
 *   costs its volumes: the engine replaces and deletes it), terminated ->
 *   TERMINATED; any of the last four with Server.SpotInstanceTermination
 *   or Server.SpotInstanceShutdown -> PREEMPTED; terminated with another
 *   Server.* reason or Client.VolumeLimitExceeded / Client.InternalError
 *   -> FAILED (it never ran or broke).  code < 0 = use the name. */
gb_instance_state aws_ec2_map_state(int code, const char *name,
                                    const char *reason);

/* Parses a RunInstancesResponse (expect "RunInstancesResponse") or a
 * DescribeInstancesResponse and calls emit for each instance (pointers
 * borrowed for the call).  *next_token gets the nextToken (caller frees)
 * or NULL.  Returns the number of instances (emit returning non-zero stops
 * early), or -1 with err (INVALID, naming what is wrong). */
int aws_ec2_parse_instances(const char *body, size_t len, const char *expect,
                            const char *region, gb_instance_cb emit,
                            void *ud, char **next_token, gb_error *err);

/* TerminateInstancesResponse: returns the number of instancesSet items, or
 * -1 with err. */
int aws_ec2_parse_terminate(const char *body, size_t len, gb_error *err);

typedef struct aws_type_info {
	const char *type;
	const char *gpu_name;      /* gpuInfo/gpus/item/name, NULL when none */
	const char *manufacturer;
	int gpu_count;
	long gpu_mem_mib;          /* of one GPU */
	int vcpus;
	long mem_mib;
} aws_type_info;

typedef int (*aws_type_cb)(void *ud, const aws_type_info *t);

/* DescribeInstanceTypesResponse: calls cb per instanceTypeSet item. */
int aws_ec2_parse_types(const char *body, size_t len, aws_type_cb cb,
                        void *ud, char **next_token, gb_error *err);

typedef struct aws_spot_price {
	const char *type;
	const char *zone;
	const char *product;
	double price;
	int64_t timestamp;
} aws_spot_price;

typedef int (*aws_spot_cb)(void *ud, const aws_spot_price *p);

/* DescribeSpotPriceHistoryResponse: calls cb per spotPriceHistorySet
 * item. */
int aws_ec2_parse_spot(const char *body, size_t len, aws_spot_cb cb,
                       void *ud, char **next_token, gb_error *err);

/* Canonical GPU model from gpuInfo: "A100" with >= 70 GB -> "A100-80GB",
 * "H100", "A10G", "L4", "L40S", "T4", "V100", ... (upper-cased name). */
void aws_gpu_canonical(const char *name, long mem_mib, char *out,
                       size_t cap);

/* Extracts the instance ids (i-[0-9a-f]+) that appear in an
 * InvalidInstanceID.NotFound message and are also in ids; marks them in
 * gone[] (1 = named as missing).  Returns how many were marked. */
size_t aws_ec2_missing_ids(const char *message, const char *const *ids,
                           size_t nids, unsigned char *gone);

#endif
