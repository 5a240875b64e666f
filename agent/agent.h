/* agent.h -- gpubroker-agent's parts: its config, NVML, the broker
 * client.  A separate program: it knows nothing of core/. */
#ifndef GBA_AGENT_H
#define GBA_AGENT_H

#include <stddef.h>

#define GBA_MAX_GPUS 16

typedef struct gba_conf {
	char broker_url[512];      /* https://broker (http on loopback) */
	char instance[160];        /* the instance's name, <pool>-<N> */
	char bootstrap_token[160]; /* one-time, exchanged at first contact */
	char credential_file[512]; /* where the instance credential is kept */
	char nvml_library[512];    /* dlopen() name or path */
	char ca_file[512];         /* extra CA bundle for the broker, "" = none */
	char ready_command[512];   /* run once before the first report, "" = none */
	char metadata[16];         /* ec2 | gce | azure | none: whose metadata
	                              service names the instance */
	char metadata_url[512];    /* its address; "" = the provider's own */
	int interval_s;            /* seconds between reports */
} gba_conf;

/* Reads FILE ("key = value" lines, # comments) into *c over its
 * defaults.  0, or -1 with a message in err. */
int gba_conf_load(const char *file, gba_conf *c, char *err, size_t cap);

typedef struct gba_gpu {
	char name[96];
	unsigned long long mem_total, mem_used; /* bytes */
	unsigned util_gpu;                      /* percent */
	unsigned long long ecc_errors;          /* volatile, uncorrected */
	int ecc_known;
} gba_gpu;

/* Loads NVML from lib and reads every GPU into out (at most max).
 * Returns the count (0 or more), or -1 with a message in err. */
int gba_nvml_read(const char *lib, gba_gpu *out, int max, char *err,
                  size_t cap);

/* One request: method, url, headers ("Name: value", NULL-terminated,
 * may be NULL), body (may be NULL).  The HTTP status (0 = no answer),
 * the response body in *resp (caller frees, may be NULL). */
long gba_http(const gba_conf *c, const char *method, const char *url,
              const char *const *headers, const char *body, char **resp);

/* The instance's id as its provider's metadata service says (EC2
 * instance-id, GCE and Azure name) into out[cap]: 0, 1 when the config
 * names no metadata service, -1 with a message in out. */
int gba_metadata_id(const gba_conf *c, char *out, size_t cap);

/* POSTs body (JSON text) to url with an optional bearer token.  Returns
 * the HTTP status (0 = no answer) and the response body in *resp
 * (caller frees, may be NULL). */
long gba_post(const gba_conf *c, const char *url, const char *bearer,
              const char *body, char **resp);

#endif
