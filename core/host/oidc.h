/*
 * oidc.h -- checking a CI platform's OIDC ID token against the broker
 * config's trust rules (auth.oidc, config.h), for the token exchange
 * (POST /v1/auth/oidc, core/daemon/api_auth.c).
 *
 * What is checked, in order, each failure its own message (fit for a 401
 * answer and the audit row: it names claims and rules, never the token):
 *   - a compact JWS whose alg is RS256 or ES256 (none, HS* and the rest
 *     are refused before any key is looked at);
 *   - iss is the issuer of a rule, exactly;
 *   - its kid is in the issuer's JWKS (the rule's jwks_url, or jwks_uri
 *     of ISSUER/.well-known/openid-configuration, whose issuer must be
 *     the same), fetched over https (http only for loopback test
 *     issuers), kept for its Cache-Control max-age (5 minutes without
 *     one, a day at most), fetched again once when a kid is unknown (at
 *     most once per 10 s for unknown kids, so garbage kids cannot make
 *     the broker hammer the issuer);
 *   - the signature, with that key;
 *   - exp (required), nbf and iat, with GB_OIDC_SKEW_S of clock skew;
 *   - aud (a string or a list) holds the audience of a rule of that
 *     issuer, exactly;
 *   - every claim that rule lists matches (exact, or a glob when the
 *     value has * ? or [); the first rule in order that matches wins.
 * Replay (the same jti, or the same token) is the caller's: it needs the
 * state store (gb_store_oidc_seen); gb_oidc_verify gives the keys.
 *
 * Thread-safe: the key cache has its own lock (held across a fetch, so
 * one issuer is fetched once however many requests wait for it).
 */
#ifndef GB_OIDC_H
#define GB_OIDC_H

#include <stdint.h>

#include "config.h"

#define GB_OIDC_SKEW_S 60

typedef struct gb_oidc gb_oidc;

/* Fetches url: 0 with *body (caller frees) and *max_age_s (the answer's
 * Cache-Control max-age, -1 when it has none, 0 for no-store/no-cache),
 * or -1 with why in err. */
typedef int (*gb_oidc_fetch_fn)(void *ud, const char *url, char **body,
                                int64_t *max_age_s, char *err, size_t cap);

/* fetch NULL: the host's HTTP transport (http.h; TLS verified, 2 tries,
 * 5 s each).  Caller frees with gb_oidc_free. */
gb_oidc *gb_oidc_new(gb_oidc_fetch_fn fetch, void *ud);
void gb_oidc_free(gb_oidc *o);
/* JWKS and discovery documents fetched so far (tests, metrics). */
uint64_t gb_oidc_fetches(gb_oidc *o);

typedef struct gb_oidc_match {
	size_t rule;        /* index into cfg->oidc */
	char *subject;      /* "sub", or "" (owned) */
	gb_kvs claims;      /* the rule's claims with the token's values */
	gb_kvs labels;      /* ci-repository, ci-ref, ci-run when present */
	char replay_token[65]; /* "t" + SHA-256 of the token (its hex, cut) */
	char replay_jti[65];   /* "j" + SHA-256 of iss and jti; "" without */
	int64_t exp_s;      /* the ID token's exp */
} gb_oidc_match;

/* 0 with *out (gb_oidc_match_free it), or -1 with why in err.  now_s is
 * the wall clock. */
int gb_oidc_verify(gb_oidc *o, const gb_config *cfg, const char *token,
                   int64_t now_s, gb_oidc_match *out, char *err, size_t cap);
void gb_oidc_match_free(gb_oidc_match *m);

#endif
