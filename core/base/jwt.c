/* jwt.c -- base64url, compact JWS parsing, JWK public keys and RS256 /
 * ES256 signature checks (jwt.h). */
#include "jwt.h"

#include <limits.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/param_build.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* base64url is base64 with '-' and '_' for '+' and '/', unpadded:
 * OpenSSL's EVP_EncodeBlock / EVP_DecodeBlock do the coding, this file
 * only the alphabet, the padding and the checks. */
char *gb_b64url_encode(const void *data, size_t n)
{
	char *out;
	int len;
	if (n > (size_t)INT_MAX / 2)
		abort(); /* no JWT part comes near */
	out = gb_xmalloc(4 * ((n + 2) / 3) + 1);
	len = EVP_EncodeBlock((unsigned char *)out, data, (int)n);
	while (len > 0 && out[len - 1] == '=')
		len--;
	out[len] = '\0';
	for (char *p = out; *p; p++)
		*p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
	return out;
}

static int b64url_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

unsigned char *gb_b64url_decode(const char *s, size_t n, size_t *outlen)
{
	unsigned char *in, *out;
	char *again;
	size_t padded;
	int len, same;
	while (n > 0 && s[n - 1] == '=')
		n--;
	if (n % 4 == 1 || n > (size_t)INT_MAX / 2)
		return NULL;
	padded = n + (4 - n % 4) % 4;
	in = gb_xmalloc(padded + 1);
	for (size_t i = 0; i < n; i++) {
		if (!b64url_char(s[i])) {
			free(in);
			return NULL;
		}
		in[i] = (unsigned char)(s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i]);
	}
	memset(in + n, '=', padded - n);
	out = gb_xmalloc(padded / 4 * 3 + 1);
	len = EVP_DecodeBlock(out, in, (int)padded);
	free(in);
	if (len < 0) {
		free(out);
		return NULL;
	}
	len -= (int)(padded - n); /* each '=' stands for a byte it did not have */
	out[len] = '\0';
	/* one encoding per value: the bits left over must be zero, so the
	 * bytes encode back to exactly the text */
	again = gb_b64url_encode(out, (size_t)len);
	same = strlen(again) == n && memcmp(again, s, n) == 0;
	free(again);
	if (!same) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)len;
	return out;
}

/* --------------------------------------------------------------- JWS */

static json_t *decode_json_part(const char *s, size_t n, const char *what,
                                char *err, size_t cap)
{
	size_t len;
	unsigned char *raw = gb_b64url_decode(s, n, &len);
	json_t *j;
	if (!raw) {
		snprintf(err, cap, "the token's %s is not base64url", what);
		return NULL;
	}
	j = json_loadb((const char *)raw, len, JSON_REJECT_DUPLICATES, NULL);
	free(raw);
	if (!json_is_object(j)) {
		json_decref(j);
		snprintf(err, cap, "the token's %s is not a JSON object", what);
		return NULL;
	}
	return j;
}

int gb_jwt_parse(const char *token, gb_jwt *out, char *err, size_t cap)
{
	const char *d1, *d2;
	memset(out, 0, sizeof(*out));
	d1 = strchr(token, '.');
	d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	if (!d1 || !d2 || strchr(d2 + 1, '.')) {
		snprintf(err, cap, "not a signed JWT (three base64url parts "
		         "separated by '.')");
		return -1;
	}
	if (!(out->header = decode_json_part(token, (size_t)(d1 - token),
	                                     "header", err, cap)) ||
	    !(out->claims = decode_json_part(d1 + 1, (size_t)(d2 - d1 - 1),
	                                     "payload", err, cap)))
		return -1;
	out->sig = gb_b64url_decode(d2 + 1, strlen(d2 + 1), &out->sig_len);
	if (!out->sig) {
		snprintf(err, cap, "the token's signature is not base64url");
		return -1;
	}
	out->signing_input = gb_xstrndup(token, (size_t)(d2 - token));
	out->alg = json_string_value(json_object_get(out->header, "alg"));
	out->kid = json_string_value(json_object_get(out->header, "kid"));
	if (!out->alg) {
		snprintf(err, cap, "the token's header has no \"alg\"");
		return -1;
	}
	return 0;
}

void gb_jwt_free(gb_jwt *t)
{
	json_decref(t->header);
	json_decref(t->claims);
	free(t->signing_input);
	free(t->sig);
	memset(t, 0, sizeof(*t));
}

/* --------------------------------------------------------------- JWK */

/* A base64url member of the JWK as bytes (caller frees); NULL + err. */
static unsigned char *jwk_bytes(const json_t *jwk, const char *name,
                                size_t *len, char *err, size_t cap)
{
	const char *s = json_string_value(json_object_get(jwk, name));
	unsigned char *b = s ? gb_b64url_decode(s, strlen(s), len) : NULL;
	if (!b || !*len) {
		free(b);
		snprintf(err, cap, "the JWK has no valid \"%s\"", name);
		return NULL;
	}
	return b;
}

static EVP_PKEY *key_from_params(const char *type, OSSL_PARAM_BLD *bld,
                                 char *err, size_t cap)
{
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	EVP_PKEY *key = NULL;
	if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) {
		snprintf(err, cap, "OpenSSL refused the %s key of the JWK", type);
		key = NULL;
	}
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return key;
}

static EVP_PKEY *rsa_key(const json_t *jwk, char *err, size_t cap)
{
	size_t nl = 0, el = 0;
	unsigned char *n = jwk_bytes(jwk, "n", &nl, err, cap);
	unsigned char *e = n ? jwk_bytes(jwk, "e", &el, err, cap) : NULL;
	BIGNUM *bn = NULL, *be = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	EVP_PKEY *key = NULL;
	if (!e)
		goto out;
	bn = BN_bin2bn(n, (int)nl, NULL);
	be = BN_bin2bn(e, (int)el, NULL);
	bld = OSSL_PARAM_BLD_new();
	if (!bn || !be || !bld ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be)) {
		snprintf(err, cap, "cannot build the RSA key of the JWK");
		goto out;
	}
	key = key_from_params("RSA", bld, err, cap);
out:
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	free(n);
	free(e);
	return key;
}

static EVP_PKEY *ec_key(const json_t *jwk, char *err, size_t cap)
{
	const char *crv = json_string_value(json_object_get(jwk, "crv"));
	size_t xl = 0, yl = 0;
	unsigned char *x, *y = NULL, pub[65];
	OSSL_PARAM_BLD *bld = NULL;
	EVP_PKEY *key = NULL;
	if (!crv || strcmp(crv, "P-256") != 0) {
		snprintf(err, cap, "the JWK's curve is %s%s%s: only P-256 "
		         "(ES256) is accepted", crv ? "\"" : "",
		         crv ? crv : "missing", crv ? "\"" : "");
		return NULL;
	}
	x = jwk_bytes(jwk, "x", &xl, err, cap);
	if (x)
		y = jwk_bytes(jwk, "y", &yl, err, cap);
	if (!y)
		goto out;
	if (xl != 32 || yl != 32) {
		snprintf(err, cap, "the JWK's x and y must be 32 bytes each");
		goto out;
	}
	pub[0] = 0x04; /* uncompressed point */
	memcpy(pub + 1, x, 32);
	memcpy(pub + 33, y, 32);
	bld = OSSL_PARAM_BLD_new();
	if (!bld ||
	    !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
	                                     "prime256v1", 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub,
	                                      sizeof(pub))) {
		snprintf(err, cap, "cannot build the EC key of the JWK");
		goto out;
	}
	key = key_from_params("EC", bld, err, cap);
out:
	OSSL_PARAM_BLD_free(bld);
	free(x);
	free(y);
	return key;
}

EVP_PKEY *gb_jwk_key(const json_t *jwk, char *err, size_t cap)
{
	const char *kty = json_string_value(json_object_get(jwk, "kty"));
	if (kty && strcmp(kty, "RSA") == 0)
		return rsa_key(jwk, err, cap);
	if (kty && strcmp(kty, "EC") == 0)
		return ec_key(jwk, err, cap);
	snprintf(err, cap, "the JWK's kty is %s: only RSA and EC keys are "
	         "accepted", kty ? kty : "missing");
	return NULL;
}

/* ------------------------------------------------------------ verify */

/* r||s (32 bytes each) -> DER ECDSA-Sig-Value (caller frees); NULL. */
static unsigned char *es256_der(const unsigned char *raw, int *len)
{
	ECDSA_SIG *s = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(raw, 32, NULL), *sv = BN_bin2bn(raw + 32, 32, NULL);
	unsigned char *der = NULL;
	if (!s || !r || !sv || ECDSA_SIG_set0(s, r, sv) != 1) {
		BN_free(r);
		BN_free(sv);
		ECDSA_SIG_free(s);
		return NULL;
	}
	*len = i2d_ECDSA_SIG(s, &der);
	ECDSA_SIG_free(s);
	if (*len <= 0) {
		OPENSSL_free(der);
		return NULL;
	}
	return der;
}

int gb_jwt_verify_sig(const gb_jwt *t, EVP_PKEY *key, char *err, size_t cap)
{
	int rs = strcmp(t->alg, "RS256") == 0, es = strcmp(t->alg, "ES256") == 0;
	const unsigned char *sig = t->sig;
	unsigned char *der = NULL;
	size_t sig_len = t->sig_len;
	EVP_MD_CTX *md;
	int ok;
	if (!rs && !es) {
		snprintf(err, cap, "the token's alg \"%.20s\" is refused: only "
		         "RS256 and ES256 are accepted", t->alg);
		return -1;
	}
	if ((rs && EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) ||
	    (es && EVP_PKEY_get_base_id(key) != EVP_PKEY_EC)) {
		snprintf(err, cap, "the token's alg %s does not fit its key's "
		         "type", t->alg);
		return -1;
	}
	if (rs && EVP_PKEY_get_bits(key) < 2048) {
		snprintf(err, cap, "the issuer's RSA key has %d bits: at least "
		         "2048 are required", EVP_PKEY_get_bits(key));
		return -1;
	}
	if (es) {
		int dl = 0;
		if (t->sig_len != 64 || !(der = es256_der(t->sig, &dl))) {
			snprintf(err, cap, "the token's ES256 signature is not 64 "
			         "bytes (r||s)");
			return -1;
		}
		sig = der;
		sig_len = (size_t)dl;
	}
	md = EVP_MD_CTX_new();
	ok = md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	     EVP_DigestVerify(md, sig, sig_len,
	                      (const unsigned char *)t->signing_input,
	                      strlen(t->signing_input)) == 1;
	EVP_MD_CTX_free(md);
	OPENSSL_free(der);
	if (!ok) {
		snprintf(err, cap, "the token's signature does not verify with "
		         "the issuer's key");
		return -1;
	}
	return 0;
}
