/* test_oidc.c -- the OIDC ID token verifier (core/host/oidc.c) and its
 * pieces (core/base/jwt.c), with keys made here by OpenSSL and a fake
 * issuer (the fetch hook) serving the discovery document and the JWKS:
 * RS256 and ES256 accepted; none, HS256 (the public key as the secret)
 * and an alg that does not fit the key refused; iss, aud, exp, nbf, iat
 * with their skew; claims exact and by glob; tampering; the JWKS cache
 * (max-age, one refetch for an unknown kid, rotation); and auth.oidc's
 * checks in the broker config. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include "config.h"
#include "jwt.h"
#include "oidc.h"

#define ISS "https://issuer.test"
#define NOW 1800000000

static EVP_PKEY *rsa1, *rsa2, *ec1;

/* ------------------------------------------------------ fake issuer */

typedef struct issuer {
	char *jwks;          /* the JWKS document served */
	char *discovery;
	int64_t max_age;     /* Cache-Control max-age, -1 none */
	int fetches;
} issuer;

static issuer iss;

static int fake_fetch(void *ud, const char *url, char **body,
                      int64_t *max_age_s, char *err, size_t cap)
{
	issuer *i = ud;
	i->fetches++;
	*max_age_s = i->max_age;
	if (strcmp(url, ISS "/.well-known/openid-configuration") == 0) {
		*body = strdup(i->discovery);
		return 0;
	}
	if (strcmp(url, ISS "/keys") == 0) {
		*body = strdup(i->jwks);
		return 0;
	}
	snprintf(err, cap, "HTTP 404 for %s", url);
	return -1;
}

static char *b64_bn(EVP_PKEY *k, const char *name)
{
	BIGNUM *bn = NULL;
	unsigned char buf[512];
	int n;
	char *s;
	assert_int_equal(EVP_PKEY_get_bn_param(k, name, &bn), 1);
	n = BN_bn2bin(bn, buf);
	BN_free(bn);
	s = gb_b64url_encode(buf, (size_t)n);
	return s;
}

static json_t *jwk_of(EVP_PKEY *k, const char *kid)
{
	if (EVP_PKEY_get_base_id(k) == EVP_PKEY_RSA) {
		char *n = b64_bn(k, OSSL_PKEY_PARAM_RSA_N);
		char *e = b64_bn(k, OSSL_PKEY_PARAM_RSA_E);
		json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kty", "RSA",
		                      "kid", kid, "use", "sig", "n", n, "e", e);
		free(n);
		free(e);
		return j;
	} else {
		unsigned char pub[65];
		size_t len = 0;
		char *x, *y;
		json_t *j;
		assert_int_equal(EVP_PKEY_get_octet_string_param(
		                         k, OSSL_PKEY_PARAM_PUB_KEY, pub,
		                         sizeof(pub), &len), 1);
		assert_int_equal(len, 65);
		x = gb_b64url_encode(pub + 1, 32);
		y = gb_b64url_encode(pub + 33, 32);
		j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kty", "EC", "crv",
		              "P-256", "kid", kid, "x", x, "y", y);
		free(x);
		free(y);
		return j;
	}
}

/* Publishes keys (NULL-terminated pairs key, kid). */
static void publish(EVP_PKEY *k1, const char *kid1, EVP_PKEY *k2,
                    const char *kid2)
{
	json_t *keys = json_array(), *doc;
	json_array_append_new(keys, jwk_of(k1, kid1));
	if (k2)
		json_array_append_new(keys, jwk_of(k2, kid2));
	doc = json_pack("{s:o}", "keys", keys);
	free(iss.jwks);
	iss.jwks = json_dumps(doc, 0);
	json_decref(doc);
}

/* ------------------------------------------------------------ minting */

static char *part(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT), *b;
	b = gb_b64url_encode(s, strlen(s));
	free(s);
	json_decref(j);
	return b;
}

/* A JWT of claims (taken), signed with key as alg; HS256 uses secret. */
static char *mint(const char *alg, const char *kid, EVP_PKEY *key,
                  const unsigned char *secret, size_t slen, json_t *claims)
{
	json_t *hdr = json_pack("{s:s, s:s}", "alg", alg, "typ", "JWT");
	char *h, *c, *input, *sig64, *tok;
	unsigned char sig[512];
	size_t siglen = sizeof(sig);
	if (kid)
		json_object_set_new(hdr, "kid", json_string(kid));
	h = part(hdr);
	c = part(claims);
	input = gb_xasprintf("%s.%s", h, c);
	if (strcmp(alg, "none") == 0) {
		siglen = 0;
	} else if (strcmp(alg, "HS256") == 0) {
		unsigned int l = 0;
		HMAC(EVP_sha256(), secret, (int)slen, (unsigned char *)input,
		     strlen(input), sig, &l);
		siglen = l;
	} else {
		EVP_MD_CTX *md = EVP_MD_CTX_new();
		assert_int_equal(EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL,
		                                    key), 1);
		assert_int_equal(EVP_DigestSign(md, sig, &siglen,
		                                (unsigned char *)input,
		                                strlen(input)), 1);
		EVP_MD_CTX_free(md);
		if (strcmp(alg, "ES256") == 0) {
			const unsigned char *p = sig;
			ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)siglen);
			const BIGNUM *r, *s;
			assert_non_null(es);
			ECDSA_SIG_get0(es, &r, &s);
			BN_bn2binpad(r, sig, 32);
			BN_bn2binpad(s, sig + 32, 32);
			ECDSA_SIG_free(es);
			siglen = 64;
		}
	}
	sig64 = gb_b64url_encode(sig, siglen);
	tok = gb_xasprintf("%s.%s", input, sig64);
	free(h);
	free(c);
	free(input);
	free(sig64);
	return tok;
}

static json_t *good_claims(void)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:s, s:I, s:I, "
	                 "s:I}", "iss", ISS, "aud", "gpubroker", "sub",
	                 "repo:org/repo:ref:refs/heads/main", "repository",
	                 "org/repo", "ref", "refs/heads/main", "run_id",
	                 (json_int_t)4242, "ref_protected", 1, "jti", "j-1",
	                 "iat", (json_int_t)NOW, "nbf", (json_int_t)NOW, "exp",
	                 (json_int_t)NOW + 300);
}

/* ------------------------------------------------------------ config */

static const char cfg_yaml[] =
	"auth:\n"
	"  oidc:\n"
	"    - issuer: " ISS "\n"
	"      audience: gpubroker\n"
	"      claims: {repository: org/repo, ref: refs/heads/main,"
	" ref_protected: \"true\"}\n"
	"      role: operator\n"
	"      team: research\n"
	"    - issuer: " ISS "\n"
	"      audience: gpubroker\n"
	"      jwks_url: " ISS "/keys\n"
	"      claims: {repository: \"org/docs-*\"}\n"
	"      role: viewer\n"
	"      team: docs\n"
	"      max_ttl: 5m\n";

static gb_config cfg;
static gb_oidc *verifier;

static int setup(void **state)
{
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	memset(&iss, 0, sizeof(iss));
	iss.max_age = -1;
	iss.discovery = gb_xasprintf("{\"issuer\": \"%s\", \"jwks_uri\": "
	                             "\"%s/keys\"}", ISS, ISS);
	publish(rsa1, "k1", ec1, "e1");
	assert_int_equal(gb_config_load_buf("t.yaml", cfg_yaml,
	                                    strlen(cfg_yaml), &cfg, &d), 0);
	gb_diags_free(&d);
	verifier = gb_oidc_new(fake_fetch, &iss);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gb_oidc_free(verifier);
	gb_config_free(&cfg);
	free(iss.jwks);
	free(iss.discovery);
	return 0;
}

/* Verifies tok (taken) at NOW: 0 ok, -1 with err. */
static int check(char *tok, gb_oidc_match *m, char *err, size_t cap)
{
	int rc = gb_oidc_verify(verifier, &cfg, tok, NOW, m, err, cap);
	free(tok);
	return rc;
}

static void refused(char *tok, const char *why)
{
	gb_oidc_match m;
	char err[512] = "";
	assert_int_equal(check(tok, &m, err, sizeof(err)), -1);
	if (!strstr(err, why))
		fail_msg("expected \"%s\" in \"%s\"", why, err);
}

/* ------------------------------------------------------------ tests */

static void test_b64url(void **state)
{
	size_t n;
	unsigned char *b;
	char *s;
	(void)state;
	s = gb_b64url_encode("\xfb\xff\x01", 3);
	assert_string_equal(s, "-_8B");
	free(s);
	s = gb_b64url_encode("ab", 2);
	assert_string_equal(s, "YWI");
	b = gb_b64url_decode("YWI", 3, &n);
	assert_int_equal(n, 2);
	assert_memory_equal(b, "ab", 2);
	free(b);
	free(s);
	assert_null(gb_b64url_decode("YW+", 3, &n)); /* the other alphabet */
	assert_null(gb_b64url_decode("YWJ", 3, &n)); /* non-zero tail bits */
	assert_null(gb_b64url_decode("Y", 1, &n));
	b = gb_b64url_decode("YWI=", 4, &n); /* padding tolerated */
	assert_int_equal(n, 2);
	free(b);
}

static void test_rs256_and_es256_accepted(void **state)
{
	gb_oidc_match m;
	char err[512] = "";
	(void)state;
	assert_int_equal(check(mint("RS256", "k1", rsa1, NULL, 0, good_claims()),
	                       &m, err, sizeof(err)), 0);
	assert_int_equal(m.rule, 0);
	assert_int_equal(m.exp_s, NOW + 300);
	assert_string_equal(m.subject, "repo:org/repo:ref:refs/heads/main");
	assert_string_equal(gb_kvs_get(&m.claims, "repository"), "org/repo");
	assert_string_equal(gb_kvs_get(&m.claims, "ref_protected"), "true");
	assert_string_equal(gb_kvs_get(&m.labels, "ci-repository"), "org/repo");
	assert_string_equal(gb_kvs_get(&m.labels, "ci-ref"), "refs/heads/main");
	assert_string_equal(gb_kvs_get(&m.labels, "ci-run"), "4242");
	assert_int_equal(m.replay_token[0], 't');
	assert_int_equal(m.replay_jti[0], 'j');
	gb_oidc_match_free(&m);
	assert_int_equal(check(mint("ES256", "e1", ec1, NULL, 0, good_claims()),
	                       &m, err, sizeof(err)), 0);
	gb_oidc_match_free(&m);
	/* discovery once, the JWKS once: the second token used the cache */
	assert_int_equal(iss.fetches, 2);
}

static void test_alg_none_hs256_and_mismatch_refused(void **state)
{
	json_t *jwk = jwk_of(rsa1, "k1");
	const char *n = json_string_value(json_object_get(jwk, "n"));
	char *pem = NULL;
	long plen;
	BIO *bio = BIO_new(BIO_s_mem());
	(void)state;
	refused(mint("none", "k1", NULL, NULL, 0, good_claims()),
	        "alg \"none\" is refused");
	/* the classic confusion: HMAC keyed with what the JWKS publishes */
	refused(mint("HS256", "k1", NULL, (const unsigned char *)n, strlen(n),
	             good_claims()), "alg \"HS256\" is refused");
	PEM_write_bio_PUBKEY(bio, rsa1);
	plen = BIO_get_mem_data(bio, &pem);
	refused(mint("HS256", "k1", NULL, (unsigned char *)pem, (size_t)plen,
	             good_claims()), "alg \"HS256\" is refused");
	BIO_free(bio);
	json_decref(jwk);
	/* an RSA key cannot check an ES256 token, nor EC an RS256 one */
	refused(mint("ES256", "k1", ec1, NULL, 0, good_claims()),
	        "does not fit its key");
	refused(mint("RS256", "e1", rsa1, NULL, 0, good_claims()),
	        "does not fit its key");
	refused(mint("PS256", "k1", rsa1, NULL, 0, good_claims()),
	        "alg \"PS256\" is refused");
	refused(mint("RS256", NULL, rsa1, NULL, 0, good_claims()), "no kid");
	assert_int_equal(iss.fetches, 2);
}

static void test_issuer_audience_and_times(void **state)
{
	gb_oidc_match m;
	char err[512];
	json_t *c;
	(void)state;
	c = good_claims();
	json_object_set_new(c, "iss", json_string("https://other.test"));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "is not trusted");
	c = good_claims();
	json_object_set_new(c, "aud", json_string("someone-else"));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "audience");
	c = good_claims();
	json_object_set_new(c, "aud", json_pack("[s, s]", "x", "gpubroker"));
	assert_int_equal(check(mint("RS256", "k1", rsa1, NULL, 0, c), &m, err,
	                       sizeof(err)), 0);
	gb_oidc_match_free(&m);
	/* exp: 60 s of skew, then refused */
	c = good_claims();
	json_object_set_new(c, "exp", json_integer(NOW - 59));
	assert_int_equal(check(mint("RS256", "k1", rsa1, NULL, 0, c), &m, err,
	                       sizeof(err)), 0);
	gb_oidc_match_free(&m);
	c = good_claims();
	json_object_set_new(c, "exp", json_integer(NOW - 61));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "expired");
	c = good_claims();
	json_object_del(c, "exp");
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "no exp");
	c = good_claims();
	json_object_set_new(c, "nbf", json_integer(NOW + 61));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "not valid yet");
	c = good_claims();
	json_object_set_new(c, "iat", json_integer(NOW + 3600));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "issued in the future");
}

static void test_claims(void **state)
{
	gb_oidc_match m;
	char err[512];
	json_t *c;
	(void)state;
	c = good_claims();
	json_object_set_new(c, "ref", json_string("refs/heads/dev"));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c),
	        "claim ref (\"refs/heads/dev\") does not match auth.oidc[0]");
	c = good_claims();
	json_object_set_new(c, "ref_protected", json_false());
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "claim ref_protected");
	c = good_claims();
	json_object_del(c, "ref");
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "has no claim ref");
	/* the second rule, by glob, with its own jwks_url */
	c = good_claims();
	json_object_set_new(c, "repository", json_string("org/docs-site"));
	assert_int_equal(check(mint("RS256", "k1", rsa1, NULL, 0, c), &m, err,
	                       sizeof(err)), 0);
	assert_int_equal(m.rule, 1);
	assert_int_equal(cfg.oidc[1].role, GB_ROLE_VIEWER);
	assert_int_equal(cfg.oidc[1].max_ttl_s, 300);
	gb_oidc_match_free(&m);
	c = good_claims();
	json_object_set_new(c, "repository", json_string("org/docs"));
	refused(mint("RS256", "k1", rsa1, NULL, 0, c), "does not match");
}

static void test_tampered(void **state)
{
	char *tok = mint("RS256", "k1", rsa1, NULL, 0, good_claims());
	char *other = mint("RS256", "k1", rsa1, NULL, 0,
	                   json_pack("{s:s, s:s, s:s, s:s, s:I}", "iss", ISS,
	                             "aud", "gpubroker", "repository", "org/repo",
	                             "ref", "refs/heads/main", "exp",
	                             (json_int_t)NOW + 9999));
	char *d1 = strchr(tok, '.'), *d2 = strrchr(tok, '.');
	char *o1 = strchr(other, '.'), *o2 = strrchr(other, '.');
	(void)state;
	/* other's payload with tok's signature */
	refused(gb_xasprintf("%.*s%.*s%s", (int)(d1 - tok), tok,
	                     (int)(o2 - o1), o1, d2),
	        "signature does not verify");
	/* a signature cut short (by its first three bytes) */
	refused(gb_xasprintf("%.*s%s", (int)(d2 - tok) + 1, tok, d2 + 5),
	        "signature does not verify");
	refused(gb_xstrdup("a.b"), "not a signed JWT");
	refused(gb_xstrdup("a.b.c.d"), "not a signed JWT");
	refused(gb_xstrdup("e30.e30."), "no \"alg\"");
	free(tok);
	free(other);
}

static void test_rotation_and_cache(void **state)
{
	gb_oidc_match m;
	char err[512];
	int f;
	(void)state;
	assert_int_equal(check(mint("RS256", "k1", rsa1, NULL, 0, good_claims()),
	                       &m, err, sizeof(err)), 0);
	gb_oidc_match_free(&m);
	f = iss.fetches;
	/* the issuer rotates: k2 in, k1 out; the cached JWKS does not know
	 * k2: fetched again once */
	publish(rsa2, "k2", ec1, "e1");
	assert_int_equal(check(mint("RS256", "k2", rsa2, NULL, 0, good_claims()),
	                       &m, err, sizeof(err)), 0);
	gb_oidc_match_free(&m);
	assert_int_equal(iss.fetches, f + 1);
	/* k1 is gone: it is not in the JWKS any more (a fetch allowed
	 * later than 10 s only: nothing fetched now) */
	refused(mint("RS256", "k1", rsa1, NULL, 0, good_claims()),
	        "kid \"k1\" is not among the keys");
	refused(mint("RS256", "zz", rsa1, NULL, 0, good_claims()),
	        "kid \"zz\" is not among the keys");
	assert_int_equal(iss.fetches, f + 1);
}

static void test_no_store_refetches(void **state)
{
	gb_oidc_match m;
	char err[512];
	(void)state;
	iss.max_age = 0; /* Cache-Control: no-store */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(check(mint("RS256", "k1", rsa1, NULL, 0,
		                            good_claims()), &m, err, sizeof(err)),
		                 0);
		gb_oidc_match_free(&m);
	}
	/* discovery and JWKS, every time */
	assert_int_equal(iss.fetches, 6);
}

static void test_discovery_must_name_the_issuer(void **state)
{
	(void)state;
	free(iss.discovery);
	iss.discovery = gb_xasprintf("{\"issuer\": \"https://evil.test\", "
	                             "\"jwks_uri\": \"%s/keys\"}", ISS);
	refused(mint("RS256", "k1", rsa1, NULL, 0, good_claims()),
	        "names another issuer");
	free(iss.discovery);
	iss.discovery = gb_xstrdup("{\"issuer\": \"" ISS "\", \"jwks_uri\": "
	                           "\"http://10.0.0.1/keys\"}");
	refused(mint("RS256", "k1", rsa1, NULL, 0, good_claims()), "not https");
}

static void test_url_rule(void **state)
{
	(void)state;
	assert_true(gb_oidc_url_ok("https://token.actions.githubusercontent.com"));
	assert_true(gb_oidc_url_ok("http://127.0.0.1:8080/x"));
	assert_true(gb_oidc_url_ok("http://[::1]:80"));
	assert_true(gb_oidc_url_ok("http://localhost/keys"));
	assert_false(gb_oidc_url_ok("http://example.com/keys"));
	assert_false(gb_oidc_url_ok("http://127.0.0.1.evil.com/keys"));
	assert_false(gb_oidc_url_ok("http://localhost.evil.com/"));
	assert_false(gb_oidc_url_ok("ftp://127.0.0.1/"));
	assert_false(gb_oidc_url_ok("https:///x"));
	assert_false(gb_oidc_url_ok("https://a b"));
}

static void config_refused(const char *yaml, const char *why)
{
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	int found = 0;
	assert_int_equal(gb_config_load_buf("t.yaml", yaml, strlen(yaml), &c,
	                                    &d), -1);
	for (size_t i = 0; i < d.n; i++)
		found |= strstr(d.v[i].msg, why) != NULL;
	if (!found)
		fail_msg("expected \"%s\" among %zu errors (first: %s)", why, d.n,
		         d.n ? d.v[0].msg : "");
	gb_diags_free(&d);
}

static void test_config_checks(void **state)
{
	(void)state;
	config_refused("auth: {oidc: [{issuer: http://example.com, audience: a,"
	               " claims: {repository: o/r}, role: operator, team: t}]}",
	               "https://");
	config_refused("auth: {oidc: [{issuer: https://i, audience: a,"
	               " claims: {}, role: operator, team: t}]}",
	               "at least one claim");
	config_refused("auth: {oidc: [{issuer: https://i, audience: a,"
	               " claims: {aud: x}, role: operator, team: t}]}",
	               "checked by the broker");
	config_refused("auth: {oidc: [{issuer: https://i, audience: a,"
	               " claims: {repository: o/r}, role: admin, team: t}]}",
	               "admin");
	config_refused("auth: {oidc: [{issuer: https://i, audience: a,"
	               " claims: {repository: o/r}, role: operator}]}",
	               "\"team\" is missing");
	config_refused("teams: [{name: research}]\n"
	               "auth: {oidc: [{issuer: https://i, audience: a,"
	               " claims: {repository: o/r}, role: operator, team: x}]}",
	               "not listed under teams");
	config_refused("auth: {oidc: [{issuer: https://i, audience: a,"
	               " claims: {repository: o/r}, role: operator, team: t,"
	               " max_ttl: 3d}]}", "1m to 24h");
	config_refused("auth: {oidc: [{issuer: https://i, audince: a}]}",
	               "audience");
	config_refused("auth: {oidc: {issuer: https://i}}", "list of trust rules");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b64url),
		cmocka_unit_test(test_url_rule),
		cmocka_unit_test(test_config_checks),
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
		T(test_rs256_and_es256_accepted),
		T(test_alg_none_hs256_and_mismatch_refused),
		T(test_issuer_audience_and_times),
		T(test_claims),
		T(test_tampered),
		T(test_rotation_and_cache),
		T(test_no_store_refetches),
		T(test_discovery_must_name_the_issuer),
	};
	int rc;
	rsa1 = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	rsa2 = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	ec1 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!rsa1 || !rsa2 || !ec1) {
		fprintf(stderr, "OpenSSL cannot make test keys\n");
		return 1;
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	EVP_PKEY_free(rsa1);
	EVP_PKEY_free(rsa2);
	EVP_PKEY_free(ec1);
	return rc;
}
