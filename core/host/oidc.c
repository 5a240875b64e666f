/* oidc.c -- ID tokens checked against auth.oidc (oidc.h): the issuers'
 * keys (discovery, JWKS, their cache) and the checks in order. */
#include "oidc.h"

#include <ctype.h>
#include <jansson.h>
#include <openssl/err.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "jwt.h"

#define DEFAULT_MAX_AGE_S 300
#define LONGEST_MAX_AGE_S 86400
#define UNKNOWN_KID_GAP_MS 10000
#define MAX_DOC_BYTES (1u << 20)

/* One fetched document: a JWKS (by its URL) or a discovery document's
 * jwks_uri (by the issuer). */
typedef struct cached {
	char *key;            /* the JWKS URL, or "d:" + issuer */
	json_t *doc;          /* the keys array, or the jwks_uri string */
	int64_t expires_ms;   /* monotonic */
	int64_t unknown_ms;   /* last fetch for an unknown kid (monotonic) */
} cached;

struct gb_oidc {
	pthread_mutex_t lock;
	gb_oidc_fetch_fn fetch;
	void *ud;
	gb_http_client *http; /* the default fetch's */
	cached *c;
	size_t n;
	uint64_t fetches;
};

/* --------------------------------------------------------- fetching */

static int64_t cache_control_max_age(const char *cc)
{
	const char *p;
	if (!cc)
		return -1;
	if (strstr(cc, "no-store") || strstr(cc, "no-cache"))
		return 0;
	if (!(p = strstr(cc, "max-age=")))
		return -1;
	p += 8;
	if (!isdigit((unsigned char)*p))
		return -1;
	return strtoll(p, NULL, 10);
}

static int http_fetch(void *ud, const char *url, char **body,
                      int64_t *max_age_s, char *err, size_t cap)
{
	gb_oidc *o = ud;
	static const char *const hdr[] = {"Accept: application/json"};
	gb_http_req req;
	gb_http_resp resp;
	gb_error e;
	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	memset(&e, 0, sizeof(e));
	req.method = "GET";
	req.url = url;
	req.headers = hdr;
	req.nheaders = 1;
	if (gb_http_do(o->http, &req, &resp, &e) != 0) {
		snprintf(err, cap, "%s", e.message);
		gb_http_resp_free(&resp);
		return -1;
	}
	*body = gb_xstrndup(resp.body ? resp.body : "", resp.body_len);
	*max_age_s = cache_control_max_age(gb_http_header(&resp,
	                                                  "Cache-Control"));
	gb_http_resp_free(&resp);
	return 0;
}

gb_oidc *gb_oidc_new(gb_oidc_fetch_fn fetch, void *ud)
{
	gb_oidc *o = gb_xcalloc(1, sizeof(*o));
	pthread_mutex_init(&o->lock, NULL);
	if (fetch) {
		o->fetch = fetch;
		o->ud = ud;
	} else {
		gb_http_opts ho;
		memset(&ho, 0, sizeof(ho));
		ho.name = "oidc";
		ho.max_attempts = 2;
		ho.timeout_ms = 5000;
		ho.connect_timeout_ms = 3000;
		ho.max_body = MAX_DOC_BYTES;
		o->http = gb_http_client_new(&ho);
		o->fetch = http_fetch;
		o->ud = o;
	}
	return o;
}

void gb_oidc_free(gb_oidc *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n; i++) {
		free(o->c[i].key);
		json_decref(o->c[i].doc);
	}
	free(o->c);
	if (o->http)
		gb_http_client_free(o->http);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

uint64_t gb_oidc_fetches(gb_oidc *o)
{
	uint64_t n;
	pthread_mutex_lock(&o->lock);
	n = o->fetches;
	pthread_mutex_unlock(&o->lock);
	return n;
}

static cached *cache_slot(gb_oidc *o, const char *key)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->c[i].key, key) == 0)
			return &o->c[i];
	o->c = gb_xrealloc(o->c, (o->n + 1) * sizeof(*o->c));
	memset(&o->c[o->n], 0, sizeof(*o->c));
	o->c[o->n].key = gb_xstrdup(key);
	return &o->c[o->n++];
}

/* Fetches url as a JSON object into *out (new reference); lock held. */
static int fetch_json(gb_oidc *o, const char *url, json_t **out,
                      int64_t *expires_ms, char *err, size_t cap)
{
	char *body = NULL, why[512] = "";
	int64_t age = -1;
	if (!gb_oidc_url_ok(url)) {
		snprintf(err, cap, "the issuer's key URL %.200s is not https "
		         "(http is allowed only on loopback)", url);
		return -1;
	}
	o->fetches++;
	if (o->fetch(o->ud, url, &body, &age, why, sizeof(why)) != 0) {
		snprintf(err, cap, "cannot fetch %.200s: %.300s", url, why);
		return -1;
	}
	*out = json_loads(body, 0, NULL);
	free(body);
	if (!json_is_object(*out)) {
		json_decref(*out);
		snprintf(err, cap, "%.200s did not answer a JSON object", url);
		return -1;
	}
	if (age < 0)
		age = DEFAULT_MAX_AGE_S;
	if (age > LONGEST_MAX_AGE_S)
		age = LONGEST_MAX_AGE_S;
	*expires_ms = gb_mono_ms() + age * 1000;
	return 0;
}

/* The issuer's JWKS URL (borrowed from the rule or the cache); lock
 * held. */
static const char *jwks_url(gb_oidc *o, const gb_oidc_rule *r, char *err,
                            size_t cap)
{
	char *key, *url;
	cached *c;
	json_t *doc;
	int64_t exp;
	const char *iss, *uri;
	if (r->jwks_url)
		return r->jwks_url;
	key = gb_xasprintf("d:%s", r->issuer);
	c = cache_slot(o, key);
	free(key);
	if (c->doc && c->expires_ms > gb_mono_ms())
		return json_string_value(c->doc);
	{
		size_t il = strlen(r->issuer); /* no "//" */
		if (il && r->issuer[il - 1] == '/')
			il--;
		url = gb_xasprintf("%.*s/.well-known/openid-configuration",
		                   (int)il, r->issuer);
	}
	if (fetch_json(o, url, &doc, &exp, err, cap) != 0) {
		free(url);
		return NULL;
	}
	iss = json_string_value(json_object_get(doc, "issuer"));
	uri = json_string_value(json_object_get(doc, "jwks_uri"));
	if (!iss || strcmp(iss, r->issuer) != 0 || !uri) {
		snprintf(err, cap, "the discovery document %.200s %s", url,
		         !uri ? "has no jwks_uri"
		              : "names another issuer than the configured one");
		free(url);
		json_decref(doc);
		return NULL;
	}
	free(url);
	json_decref(c->doc);
	c->doc = json_string(uri);
	c->expires_ms = exp;
	json_decref(doc);
	return json_string_value(c->doc);
}

/* The JWKS's key of kid (new reference) or NULL. */
static json_t *find_kid(json_t *keys, const char *kid)
{
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *id = json_string_value(json_object_get(k, "kid"));
		if (id && strcmp(id, kid) == 0)
			return json_incref(k);
	}
	return NULL;
}

/* The JWK of kid from the issuer of rule r (new reference); NULL with
 * why.  Takes the lock. */
static json_t *issuer_key(gb_oidc *o, const gb_oidc_rule *r, const char *kid,
                          char *err, size_t cap)
{
	const char *url;
	cached *c;
	json_t *k = NULL;
	int64_t now;
	int fetched = 0;
	pthread_mutex_lock(&o->lock);
	if (!(url = jwks_url(o, r, err, cap)))
		goto out;
	c = cache_slot(o, url);
	now = gb_mono_ms();
	for (;;) {
		if (!c->doc || c->expires_ms <= now) {
			json_t *doc, *keys;
			int64_t exp;
			char *u = gb_xstrdup(url); /* c may move */
			int rc = fetch_json(o, u, &doc, &exp, err, cap);
			c = cache_slot(o, u);
			if (rc != 0) {
				free(u);
				goto out;
			}
			keys = json_object_get(doc, "keys");
			if (!json_is_array(keys)) {
				snprintf(err, cap, "the JWKS at %.200s has no "
				         "\"keys\" list", u);
				free(u);
				json_decref(doc);
				goto out;
			}
			free(u);
			json_decref(c->doc);
			c->doc = json_incref(keys);
			c->expires_ms = exp;
			json_decref(doc);
			fetched = 1;
		}
		if ((k = find_kid(c->doc, kid)) || fetched ||
		    (c->unknown_ms && now - c->unknown_ms < UNKNOWN_KID_GAP_MS))
			break;
		/* an unknown kid: the issuer may have rotated its keys */
		c->unknown_ms = now;
		c->expires_ms = 0;
	}
	if (!k)
		snprintf(err, cap, "the token's kid \"%.64s\" is not among the "
		         "keys of issuer %.200s", kid, r->issuer);
out:
	pthread_mutex_unlock(&o->lock);
	return k;
}

/* ----------------------------------------------------------- claims */

/* A claim as text (strings as they are, numbers and booleans written
 * out); NULL for anything else. */
static char *claim_text(const json_t *v)
{
	if (json_is_string(v))
		return gb_xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return gb_xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_boolean(v))
		return gb_xstrdup(json_is_true(v) ? "true" : "false");
	return NULL;
}

/* A value the client sent, fit for a message: cut, control characters
 * and quotes as '?'. */
static const char *shown(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	for (; *s && o + 4 < cap; s++)
		buf[o++] = ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"')
		           ? '?' : *s;
	if (*s) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static int value_matches(const char *want, const char *got)
{
	if (strpbrk(want, "*?["))
		return gb_glob(want, got);
	return strcmp(want, got) == 0;
}

static int aud_has(const json_t *aud, const char *want)
{
	size_t i;
	json_t *a;
	if (json_is_string(aud))
		return strcmp(json_string_value(aud), want) == 0;
	json_array_foreach(aud, i, a)
		if (json_is_string(a) && strcmp(json_string_value(a), want) == 0)
			return 1;
	return 0;
}

/* 1 when every claim of rule r matches; else 0 with the first that does
 * not in err. */
static int claims_match(const gb_oidc_rule *r, size_t idx,
                        const json_t *claims, char *err, size_t cap)
{
	char b[96];
	for (size_t i = 0; i < r->claims.n; i++) {
		char *got = claim_text(json_object_get(claims, r->claims.keys[i]));
		int ok = got && value_matches(r->claims.vals[i], got);
		if (!ok) {
			if (got)
				snprintf(err, cap, "claim %s (\"%s\") does not match "
				         "auth.oidc[%zu]", r->claims.keys[i],
				         shown(got, b, sizeof(b)), idx);
			else
				snprintf(err, cap, "the token has no claim %s that "
				         "auth.oidc[%zu] requires", r->claims.keys[i],
				         idx);
			free(got);
			return 0;
		}
		free(got);
	}
	return 1;
}

static void set_label(gb_oidc_match *m, const json_t *claims,
                      const char *label, const char *a, const char *b)
{
	char *v = claim_text(json_object_get(claims, a));
	if (!v && b)
		v = claim_text(json_object_get(claims, b));
	if (!v)
		return;
	/* a label value: at most 63 characters, none a control one */
	for (char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (strlen(v) > 63) {
		size_t n = 63;
		while (n > 0 && ((unsigned char)v[n] & 0xC0) == 0x80)
			n--;
		v[n] = '\0';
	}
	if (*v)
		gb_kvs_set(&m->labels, label, v);
	free(v);
}

/* ------------------------------------------------------------ verify */

static int check_times(const json_t *claims, int64_t now, char *err,
                       size_t cap)
{
	const json_t *exp = json_object_get(claims, "exp");
	const json_t *nbf = json_object_get(claims, "nbf");
	const json_t *iat = json_object_get(claims, "iat");
	if (!json_is_number(exp)) {
		snprintf(err, cap, "the token has no exp");
		return -1;
	}
	if ((nbf && !json_is_number(nbf)) || (iat && !json_is_number(iat))) {
		snprintf(err, cap, "the token's nbf or iat is not a number");
		return -1;
	}
	if (json_number_value(exp) + GB_OIDC_SKEW_S < (double)now) {
		snprintf(err, cap, "the token expired %lld s ago",
		         (long long)((double)now - json_number_value(exp)));
		return -1;
	}
	if (nbf && json_number_value(nbf) - GB_OIDC_SKEW_S > (double)now) {
		snprintf(err, cap, "the token is not valid yet (nbf is %lld s "
		         "ahead)", (long long)(json_number_value(nbf) - (double)now));
		return -1;
	}
	if (iat && json_number_value(iat) - GB_OIDC_SKEW_S > (double)now) {
		snprintf(err, cap, "the token was issued in the future (iat is "
		         "%lld s ahead)",
		         (long long)(json_number_value(iat) - (double)now));
		return -1;
	}
	return 0;
}

/* The JWT's signature against the key the issuer of rule r publishes
 * for its kid: 0 or -1 with why. */
static int check_signature(gb_oidc *o, const gb_oidc_rule *r,
                           const gb_jwt *t, char *err, size_t cap)
{
	json_t *jwk;
	EVP_PKEY *key;
	const char *use, *kalg;
	int rc;
	if (!t->kid) {
		snprintf(err, cap, "the token's header has no kid");
		return -1;
	}
	if (!(jwk = issuer_key(o, r, t->kid, err, cap)))
		return -1;
	use = json_string_value(json_object_get(jwk, "use"));
	kalg = json_string_value(json_object_get(jwk, "alg"));
	if ((use && strcmp(use, "sig") != 0) ||
	    (kalg && strcmp(kalg, t->alg) != 0)) {
		snprintf(err, cap, "the issuer's key %.64s is not for %s "
		         "signatures", t->kid, t->alg);
		json_decref(jwk);
		return -1;
	}
	key = gb_jwk_key(jwk, err, cap);
	json_decref(jwk);
	rc = key ? gb_jwt_verify_sig(t, key, err, cap) : -1;
	EVP_PKEY_free(key);
	ERR_clear_error();
	return rc;
}

int gb_oidc_verify(gb_oidc *o, const gb_config *cfg, const char *token,
                   int64_t now_s, gb_oidc_match *out, char *err, size_t cap)
{
	gb_jwt t;
	const char *iss, *jti;
	const gb_oidc_rule *first = NULL;
	const json_t *aud;
	char b[96], why[256] = "";
	int rc = -1, aud_seen = 0;
	memset(out, 0, sizeof(*out));
	if (gb_jwt_parse(token, &t, err, cap) != 0)
		goto out;
	if (strcmp(t.alg, "RS256") != 0 && strcmp(t.alg, "ES256") != 0) {
		snprintf(err, cap, "the token's alg \"%s\" is refused: only "
		         "RS256 and ES256 are accepted", shown(t.alg, b, 24));
		goto out;
	}
	iss = json_string_value(json_object_get(t.claims, "iss"));
	for (size_t i = 0; iss && i < cfg->noidc && !first; i++)
		if (strcmp(cfg->oidc[i].issuer, iss) == 0)
			first = &cfg->oidc[i];
	if (!first) {
		snprintf(err, cap, "issuer \"%s\" is not trusted by this broker "
		         "(auth.oidc)", iss ? shown(iss, b, sizeof(b)) : "");
		if (!iss)
			snprintf(err, cap, "the token has no iss");
		goto out;
	}
	if (check_signature(o, first, &t, err, cap) != 0 ||
	    check_times(t.claims, now_s, err, cap) != 0)
		goto out;
	aud = json_object_get(t.claims, "aud");
	for (size_t i = 0; i < cfg->noidc; i++) {
		const gb_oidc_rule *r = &cfg->oidc[i];
		if (strcmp(r->issuer, iss) != 0 || !aud_has(aud, r->audience))
			continue;
		if (!aud_seen++)
			why[0] = '\0';
		if (!claims_match(r, i, t.claims, why[0] ? b : why,
		                  why[0] ? sizeof(b) : sizeof(why)))
			continue;
		out->rule = i;
		for (size_t k = 0; k < r->claims.n; k++) {
			char *v = claim_text(json_object_get(t.claims,
			                                     r->claims.keys[k]));
			gb_kvs_set(&out->claims, r->claims.keys[k], v);
			free(v);
		}
		rc = 0;
		break;
	}
	if (rc != 0) {
		if (!aud_seen)
			snprintf(err, cap, "the token's audience is not the one "
			         "auth.oidc expects for issuer %s", iss);
		else
			snprintf(err, cap, "%s", why);
		goto out;
	}
	out->subject = claim_text(json_object_get(t.claims, "sub"));
	if (!out->subject)
		out->subject = gb_xstrdup("");
	out->exp_s = (int64_t)json_number_value(json_object_get(t.claims, "exp"));
	set_label(out, t.claims, "ci-repository", "repository", "project_path");
	set_label(out, t.claims, "ci-ref", "ref", NULL);
	set_label(out, t.claims, "ci-run", "run_id", "pipeline_id");
	{
		char hex[65], *s;
		gb_sha256_hex(token, strlen(token), hex);
		snprintf(out->replay_token, sizeof(out->replay_token), "t%.63s",
		         hex);
		jti = json_string_value(json_object_get(t.claims, "jti"));
		if (jti) {
			s = gb_xasprintf("%s\n%s", iss, jti);
			gb_sha256_hex(s, strlen(s), hex);
			free(s);
			snprintf(out->replay_jti, sizeof(out->replay_jti),
			         "j%.63s", hex);
		}
	}
out:
	gb_jwt_free(&t);
	if (rc != 0)
		gb_oidc_match_free(out);
	return rc;
}

void gb_oidc_match_free(gb_oidc_match *m)
{
	free(m->subject);
	gb_kvs_free(&m->claims);
	gb_kvs_free(&m->labels);
	memset(m, 0, sizeof(*m));
}
