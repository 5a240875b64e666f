/*
 * sigv4.h -- cloudsim's own AWS Signature Version 4 verifier: rebuilds the
 * canonical request from a request as received (method, raw path, raw
 * query, the headers named in SignedHeaders, the body) and recomputes the
 * signature.  Independent of the driver's signer on purpose: the two
 * implementations check each other.
 */
#ifndef SIM_SIGV4_H
#define SIM_SIGV4_H

#include <stddef.h>

#include "http.h"

typedef struct sim_sigv4_in {
	const char *method;
	const char *path;   /* raw, as on the wire */
	const char *query;  /* raw, without '?'; "" when none */
	const sim_hdr *hdrs;
	size_t nhdrs;
	const char *body;
	size_t body_len;
} sim_sigv4_in;

/* The parsed Authorization header. */
typedef struct sim_sigv4_auth {
	char akid[129];
	char date[9];        /* scope date YYYYMMDD */
	char region[65];
	char service[65];
	char signed_headers[2048];
	char signature[65];
} sim_sigv4_auth;

enum {
	SIM_SIGV4_OK = 0,
	SIM_SIGV4_MISSING,    /* no Authorization header */
	SIM_SIGV4_INCOMPLETE  /* garbled / missing parts (msg says which) */
};

/* Parses the Authorization header.  Returns SIM_SIGV4_*; msg gets an
 * AWS-style explanation on failure. */
int sim_sigv4_parse(const sim_sigv4_in *in, sim_sigv4_auth *a, char *msg,
                    size_t cap);

/* Canonical request for the given SignedHeaders list (';'-separated,
 * lowercase).  Caller frees. */
char *sim_sigv4_canonical(const sim_sigv4_in *in, const char *signed_headers);
/* String to sign.  Caller frees. */
char *sim_sigv4_sts(const char *amz_date, const char *scope,
                    const char *canonical);
/* hex(HMAC(kSigning, sts)) into out. */
void sim_sigv4_sign(const char *secret, const char *date, const char *region,
                    const char *service, const char *sts, char out[65]);
/* Header value (trimmed, folded) of `lname` joined with ',' when
 * repeated; caller frees; NULL when absent. */
char *sim_sigv4_header(const sim_sigv4_in *in, const char *lname);

#endif
