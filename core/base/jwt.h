/*
 * jwt.h -- the pieces of JSON Web Tokens (RFC 7515, 7517, 7518, 7519) the
 * broker needs to check a signed ID token, with OpenSSL and jansson only:
 * base64url, splitting a compact JWS into its header, claims and
 * signature, a public key from a JWK (RSA, or EC on P-256), and checking
 * the signature for RS256 and ES256.  Nothing else is accepted: "none",
 * HS* (a public key used as an HMAC secret) and every other alg are
 * refused by gb_jwt_verify_sig, whatever the key.
 *
 * Time, issuer, audience and claim checks are the caller's (host/oidc.c):
 * this file knows no policy.  Reentrant.
 */
#ifndef GB_JWT_H
#define GB_JWT_H

#include <jansson.h>
#include <openssl/evp.h>
#include <stddef.h>

/* base64url (RFC 4648 section 5) without padding.  Caller frees. */
char *gb_b64url_encode(const void *data, size_t n);
/* Decodes base64url, padding optional, any other character refused.
 * Returns the bytes (caller frees; NUL-terminated for convenience, not
 * counted in *outlen), or NULL when malformed. */
unsigned char *gb_b64url_decode(const char *s, size_t n, size_t *outlen);

/* A compact JWS split and decoded (not yet verified). */
typedef struct gb_jwt {
	json_t *header;         /* owned */
	json_t *claims;         /* owned */
	char *signing_input;    /* "HEADER.PAYLOAD" as sent (owned) */
	unsigned char *sig;     /* owned */
	size_t sig_len;
	const char *alg;        /* borrowed from header; never NULL after a
	                           successful parse */
	const char *kid;        /* borrowed from header, or NULL */
} gb_jwt;

/* Splits token into three parts and decodes them: 0, or -1 with why in
 * err (never echoing the token).  *out is zeroed first; gb_jwt_free it in
 * both cases. */
int gb_jwt_parse(const char *token, gb_jwt *out, char *err, size_t cap);
void gb_jwt_free(gb_jwt *t);

/* The public key of a JWK (kty RSA with n, e; or kty EC, crv P-256, x,
 * y).  Caller frees with EVP_PKEY_free; NULL with why in err. */
EVP_PKEY *gb_jwk_key(const json_t *jwk, char *err, size_t cap);

/* Checks t's signature with key: alg must be RS256 (an RSA key of at
 * least 2048 bits) or ES256 (a P-256 key, the signature as r||s).  0 =
 * valid; -1 with why in err. */
int gb_jwt_verify_sig(const gb_jwt *t, EVP_PKEY *key, char *err, size_t cap);

#endif
