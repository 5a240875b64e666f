/*
 * azure.h -- internals of the Azure driver (ARM Compute).  Nothing here is
 * exported from azure.so: the only exported symbol is gb_driver_entry
 * (azure_entry.c).  Unit tests and the fuzz target link the static archive
 * and use azure_driver_desc and the pure parsers/builders below.
 *
 * Files: azure_driver.c (descriptor, init/fini, offers), azure_config.c
 * (options/environment), azure_auth.c (client-credentials token),
 * azure_http.c (one ARM exchange), azure_errors.c (error classes),
 * azure_vm.c (PUT body, VM/NIC parsing, states), azure_lro.c (operation
 * polling), azure_create.c, azure_describe.c, azure_delete.c,
 * azure_prices.c (Retail Prices API).
 */
#ifndef AZURE_H
#define AZURE_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "drvc_cache.h"
#include "drvc_scan.h"
#include "drvc_token.h"
#include "gpubroker/driver.h"

#define AZURE_API_COMPUTE "2024-07-01"
#define AZURE_API_NETWORK "2023-09-01"
#define AZURE_API_PRICES "2023-01-01-preview"
#define AZURE_SCOPE "https://management.azure.com/.default"
#define AZURE_DEFAULT_ARM "https://management.azure.com"
#define AZURE_DEFAULT_AUTHORITY "https://login.microsoftonline.com"
#define AZURE_DEFAULT_PRICES "https://prices.azure.com/api/retail/prices"
#define AZURE_DEFAULT_SECRET_SOURCE "env:AZURE_CLIENT_SECRET"
/* Ubuntu-HPC 22.04 (Gen2) from the Microsoft DSVM publisher: NVIDIA driver,
 * CUDA, NCCL and InfiniBand drivers preinstalled. */
#define AZURE_DEFAULT_IMAGE "microsoft-dsvm:ubuntu-hpc:2204:latest"
#define AZURE_ADMIN_USER "azureuser"

/* Body caps per kind of answer. */
#define AZURE_MAX_SMALL ((size_t)1 << 20)  /* token, operation, NIC */
#define AZURE_MAX_VM ((size_t)4 << 20)     /* one VM */
#define AZURE_MAX_PAGES 200                /* list / price pages followed */
#define AZURE_ADDR_CACHE 4096

typedef struct azure_ctx {
	const gb_host *host;
	char *arm;          /* ARM endpoint, no trailing '/' */
	char *authority;    /* login endpoint, no trailing '/' */
	char *prices;       /* Retail Prices endpoint */
	char *tenant;       /* NULL when unset */
	char *client_id;
	char *secret_source;
	char *subscription;
	char *rg;
	char *subnet;
	char *image;        /* option "image" or NULL */
	char *security_type;/* option "security_type" or NULL */
	char *os_disk_type; /* option "os_disk_type" (StandardSSD_LRS) */
	int os_disk_gb;     /* option "os_disk_gb", 0 = image default */
	char *auth_problem; /* why we cannot get a token; NULL when all set */
	char *auth_looked;  /* with auth_problem: where each missing part
	                       was looked for (the "credentials" verb) */
	int public_ip;
	int64_t create_timeout_ms;
	int64_t poll_interval_ms;
	drvc_token tok;
	drvc_cache addrs;   /* vmId (or name) -> [private IP, public IP] */
} azure_ctx;

extern const gb_driver azure_driver_desc;

/* azure_config.c */
int azure_config_load(azure_ctx *c, gb_error *err);
void azure_config_free(azure_ctx *c);
/* Fails with AUTH (credentials) or INVALID (subscription/resource group)
 * naming the options and variables that were tried.  need_rg: the call
 * needs the resource group too. */
int azure_require(azure_ctx *c, int need_rg, gb_error *err);
/* The subnet for a region: option "subnet_id.<region>", else subnet_id /
 * AZURE_SUBNET_ID; NULL when none.  Borrowed. */
const char *azure_subnet_for(azure_ctx *c, const char *region);
/* The image for a region: option "image.<region>", option "image", the
 * default.  Borrowed. */
const char *azure_image_for(azure_ctx *c, const char *region);

/* azure_auth.c */
int azure_fetch_token(void *ud, char **token, int64_t *expires_in_s,
                      gb_error *err);
/* Parses a token endpoint answer (pure; fuzzed). */
int azure_parse_token(const char *body, size_t len, char **token,
                      int64_t *expires_in_s, gb_error *err);

/* azure_errors.c */
gb_err_class azure_code_class(const char *code, const char *message,
                              long status);
/* Best provider code and message from an ARM error body (wrapped in
 * "error" or not; details searched for a capacity/quota code). */
void azure_error_fields(const json_t *root, char *code, size_t codecap,
                        char *msg, size_t msgcap);
typedef struct azure_what {
	azure_ctx *c;
	const char *what;   /* "PUT virtualMachines/x" */
} azure_what;
gb_err_class azure_classify(void *ud, const gb_http_resp *r, gb_error *err,
                            int *auth_expired);

/* azure_http.c: one ARM exchange with the bearer token.  url absolute.
 * Returns 0, or -1 with err (err->cls NOT_FOUND for 404). */
int azure_arm(azure_ctx *c, const char *method, const char *url,
              const char *body, const char *rate_class, const char *what,
              gb_http_resp *resp, gb_error *err);
/* The same with one extra request header line ("If-None-Match: *"),
 * borrowed; NULL for none. */
int azure_arm_hdr(azure_ctx *c, const char *method, const char *url,
                  const char *body, const char *extra, const char *rate_class,
                  const char *what, gb_http_resp *resp, gb_error *err);
/* "<arm>/subscriptions/<sub>/resourceGroups/<rg>/providers/
 * Microsoft.Compute/virtualMachines[/<name>]" (caller frees). */
char *azure_vm_url(azure_ctx *c, const char *name, const char *query);

/* azure_vm.c */
typedef struct azure_vm {
	/* The strings point into obj (a reference this struct owns), so an
	 * azure_vm may be moved by copying the struct; nothing is copied
	 * out of the answer.  From azure_vm_scan they point into the
	 * scanner's element instead, valid until its callback returns. */
	json_t *obj;              /* NULL from azure_vm_scan */
	const char *name;
	const char *vm_id;
	const char *location;
	const char *zone;         /* "" when none */
	const char *size;
	const char *priority;     /* "Spot", "Regular", "" */
	const char *prov_state;   /* provisioningState, "" when absent */
	const char *power;        /* "running", "deallocated", ... as ARM
	                             writes it (compare case-insensitively),
	                             or "" */
	const char *nic_id;       /* first NIC resource id or "" */
	int64_t created_ms;       /* timeCreated, unix ms; 0 unknown */
	int has_view;       /* instanceView statuses were present */
	gb_kv *tags;        /* array owned (unless tags_borrowed), strings
	                       borrowed from obj or the element */
	size_t ntags;
	int tags_borrowed;
	char *own_name;     /* a listed VM kept by name only (name points
	                       here) to be fetched after the page */
} azure_vm;

typedef struct azure_vm_params {
	const char *subnet;
	const char *image;
	const char *security_type; /* NULL = leave to Azure */
	const char *os_disk_type;  /* managedDisk.storageAccountType */
	int os_disk_gb;            /* 0 = the image's size */
	int public_ip;
} azure_vm_params;

int azure_vm_name_ok(const char *name, gb_error *err);
/* The PUT body for one VM, deterministic (sorted keys, compact).
 * Returns a malloc'd string, or NULL with err (INVALID). */
char *azure_vm_body(const gb_create_req *req, const char *name,
                    const azure_vm_params *p, gb_error *err);
/* The VM members both readers take, by index (azure_vm_members: the list
 * scanner's member paths). */
enum {
	AV_NAME, AV_VM_ID, AV_LOCATION, AV_ZONE, AV_SIZE, AV_PRIORITY,
	AV_PROV_STATE, AV_CREATED, AV_NIC, AV_STATUSES, AV_CODES, AV_TAGS,
	AZURE_VM_NMEMBERS
};
extern const char *const azure_vm_members[AZURE_VM_NMEMBERS];
/* Fills vm from one VM object (taking a reference to it); -1 when it
 * lacks a name.  azure_vm_free after either result. */
int azure_vm_parse(const json_t *o, azure_vm *vm);
/* The same from a list page's element (drvc_scan with azure_vm_members),
 * valid until the scanner's callback returns.  azure_vm_free after. */
int azure_vm_scan(const drvc_scan_elem *e, azure_vm *vm);
void azure_vm_free(azure_vm *vm);
const char *azure_vm_tag(const azure_vm *vm, const char *key);
gb_instance_state azure_vm_state(const azure_vm *vm, const char **reason);
/* NIC -> private IP and public IP resource id (pure; fuzzed). */
int azure_parse_nic(const json_t *o, char **priv, char **pub_id);

/* azure_lro.c */
typedef struct azure_op {
	const char *name;   /* VM name (borrowed) */
	char *url;          /* poll URL (owned) */
	int location;       /* 1: Location semantics (202 = running) */
	int64_t next_ms;    /* mono ms of the next poll; 0: at once */
	int64_t retry_ms;   /* the PUT's Retry-After; 0: none */
	int misses;         /* reads refused in a row (throttled, 5xx) */
	int done;           /* terminal */
	int failed;
	gb_error err;       /* when failed */
} azure_op;
/* Poll URL from a PUT/DELETE answer (Azure-AsyncOperation, else
 * Location), or NULL.  Refuses URLs off the ARM origin. */
char *azure_op_url(azure_ctx *c, const gb_http_resp *r, int *location);
/* Reads each VM (ops[i].name) from ops[i].next_ms on, again every
 * ops[i].retry_ms (poll_interval_ms when 0), until its provisioningState
 * is terminal or the deadline (mono ms) passes.  A VM that Succeeded is
 * left in vms[i] (the caller frees it); one that Failed gets ops[i].failed
 * and ops[i].err (its operation's error when there is one).  A read
 * refused as throttled or transient (after the client's own retries) is
 * not the end of the wait: that VM is read again after Retry-After, else
 * after a backoff doubling per refusal (poll_interval_ms up to 32x), until
 * the deadline.  Returns 0 when all are terminal, -1 with err on timeout
 * (TRANSIENT OperationTimeout, naming the last refusal) or when a read
 * failed otherwise (auth, a malformed answer...). */
int azure_vm_wait(azure_ctx *c, azure_op *ops, azure_vm *vms, size_t n,
                  int64_t deadline, gb_error *err);
/* Parses an Azure-AsyncOperation body (pure; fuzzed): status into st,
 * error code/message when present. */
int azure_parse_op(const char *body, size_t len, char *st, size_t stcap,
                   char *code, size_t codecap, char *msg, size_t msgcap);

/* azure_create.c / azure_describe.c / azure_delete.c */
int azure_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                 void *ud, gb_error *err);
int azure_describe(void *ctx, const gb_describe_req *req,
                   gb_instance_cb emit, void *ud, gb_error *err);
int azure_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                    gb_error *err);
/* DELETE one VM; 404 counts as success. */
int azure_delete_vm(azure_ctx *c, const char *name, gb_error *err);
/* GET one VM with its instance view: 1 found, 0 not found (404), -1 with
 * err.  azure_vm_free the result when 1. */
int azure_get_vm(azure_ctx *c, const char *name, azure_vm *vm,
                 gb_error *err);
/* Emits one VM (fetching addresses for running ones). */
int azure_emit_vm(azure_ctx *c, azure_vm *vm, gb_instance_cb emit, void *ud);
/* Parses one page of a VM list: calls fn for each VM, *next = nextLink
 * (malloc'd) or NULL (pure; fuzzed). */
int azure_parse_vm_page(const char *body, size_t len,
                        int (*fn)(void *ud, azure_vm *vm), void *ud,
                        char **next, gb_error *err);

/* azure_prices.c */
int azure_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                         void *ud, gb_error *err);
typedef struct azure_price_row {
	const char *sku;      /* armSkuName */
	const char *region;   /* armRegionName */
	double price;         /* retailPrice, USD/h */
	int spot;
	const char *start;    /* effectiveStartDate */
} azure_price_row;
/* Parses one Retail Prices page: fn for each usable Linux consumption row
 * (Windows and Low Priority rows skipped), *next = NextPageLink or NULL
 * (pure; fuzzed). */
int azure_parse_price_page(const char *body, size_t len,
                           void (*fn)(void *ud, const azure_price_row *row),
                           void *ud, char **next, gb_error *err);

#endif
