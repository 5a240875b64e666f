/* aws_sigv4.c -- see aws_sigv4.h. */
#include "aws_sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_util.h"
#include "drvc_enc.h"

void aws_sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	if (!EVP_Digest(data ? data : "", n, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen != 32) {
		/* OpenSSL without SHA-256 is not a configuration we run on */
		abort();
	}
	drvc_hex(md, 32, out);
}

static void hmac(const void *key, size_t klen, const char *msg,
                 unsigned char out[32])
{
	unsigned int olen = 0;
	if (!HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg,
	          strlen(msg), out, &olen) ||
	    olen != 32)
		abort();
}

/* ---------------------------------------------------------------- path */

static void canon_path(drvc_buf *out, const char *path, int normalize)
{
	size_t n = path ? strlen(path) : 0;
	const char **seg;
	size_t *seglen, nseg = 0;
	int trailing;

	if (n == 0) {
		drvc_buf_adds(out, "/");
		return;
	}
	if (!normalize) {
		if (path[0] != '/')
			drvc_buf_adds(out, "/");
		drvc_pct_encode(out, path, n, 1);
		return;
	}
	seg = aws_xcalloc(n, sizeof(*seg));
	seglen = aws_xcalloc(n, sizeof(*seglen));
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && path[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && path[i] == '.')) {
			/* drop */
		} else if (len == 2 && path[i] == '.' && path[i + 1] == '.') {
			if (nseg)
				nseg--;
		} else {
			seg[nseg] = path + i;
			seglen[nseg++] = len;
		}
		i = j + 1;
	}
	trailing = path[n - 1] == '/';
	drvc_buf_adds(out, "/");
	for (size_t k = 0; k < nseg; k++) {
		if (k)
			drvc_buf_adds(out, "/");
		drvc_pct_encode(out, seg[k], seglen[k], 0);
	}
	if (trailing && nseg)
		drvc_buf_adds(out, "/");
	free(seg);
	free(seglen);
}

/* --------------------------------------------------------------- query */

typedef struct qpair {
	char *name;
	char *value;
} qpair;

static int qpair_cmp(const void *a, const void *b)
{
	const qpair *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->value, y->value);
}

/* Decodes %XX (a malformed escape stays literal) and re-encodes. */
static char *reencode(const char *s, size_t n)
{
	drvc_buf dec = DRVC_BUF_INIT, enc = DRVC_BUF_INIT;
	char *r;
	if (drvc_pct_decode(&dec, s, n, 0) != 0) {
		drvc_buf_free(&dec);
		drvc_buf_add(&dec, s, n);
	}
	drvc_pct_encode(&enc, dec.data ? dec.data : "", dec.len, 0);
	drvc_buf_free(&dec);
	r = drvc_buf_take(&enc);
	if (!r)
		abort();
	return r;
}

static void canon_query(drvc_buf *out, const char *q)
{
	size_t n = q ? strlen(q) : 0, np = 0, cap = 1;
	qpair *pairs;
	if (n == 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (q[i] == '&')
			cap++;
	pairs = aws_xcalloc(cap, sizeof(*pairs));
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && q[j] != '&')
			j++;
		if (j > i) {
			const char *eq = memchr(q + i, '=', j - i);
			size_t nl = eq ? (size_t)(eq - (q + i)) : j - i;
			pairs[np].name = reencode(q + i, nl);
			pairs[np].value = eq ? reencode(eq + 1,
			                                j - (size_t)(eq + 1 - q))
			                     : aws_xstrdup("");
			np++;
		}
		i = j + 1;
	}
	qsort(pairs, np, sizeof(*pairs), qpair_cmp);
	for (size_t k = 0; k < np; k++) {
		drvc_buf_addf(out, "%s%s=%s", k ? "&" : "", pairs[k].name,
		              pairs[k].value);
		free(pairs[k].name);
		free(pairs[k].value);
	}
	free(pairs);
}

/* ------------------------------------------------------------- headers */

typedef struct hdr {
	char *name;  /* lower-case */
	char *value; /* trimmed, whitespace collapsed */
	size_t order;
} hdr;

static int hdr_cmp(const void *a, const void *b)
{
	const hdr *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int token_char(unsigned char c)
{
	return c > 0x20 && c < 0x7f && !strchr("()<>@,;:\\\"/[]?={}", c);
}

static char *norm_value(const char *v)
{
	size_t n = strlen(v), o = 0;
	char *r = aws_xmalloc(n + 1);
	int space = 0;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			space = 1;
			continue;
		}
		if (space && o)
			r[o++] = ' ';
		space = 0;
		r[o++] = c;
	}
	r[o] = '\0';
	return r;
}

/* Writes the canonical headers block and the signed-headers list. */
static int canon_headers(drvc_buf *out, drvc_buf *signed_h, const gb_kv *h,
                         size_t n, char *err, size_t errcap)
{
	hdr *v;
	int rc = 0;
	if (n == 0) {
		snprintf(err, errcap, "no headers to sign (host is required)");
		return -1;
	}
	v = aws_xcalloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const char *k = h[i].key ? h[i].key : "";
		size_t kl = strlen(k);
		if (kl == 0) {
			snprintf(err, errcap, "empty header name");
			rc = -1;
		}
		v[i].name = aws_xmalloc(kl + 1);
		for (size_t j = 0; j <= kl; j++) {
			unsigned char c = (unsigned char)k[j];
			if (j < kl && !token_char(c) && rc == 0) {
				snprintf(err, errcap, "invalid character in "
				         "header name %.40s", k);
				rc = -1;
			}
			v[i].name[j] = (char)((c >= 'A' && c <= 'Z') ? c + 32
			                                              : c);
		}
		v[i].value = norm_value(h[i].value ? h[i].value : "");
		v[i].order = i;
	}
	if (rc == 0) {
		qsort(v, n, sizeof(*v), hdr_cmp);
		for (size_t i = 0; i < n; i++) {
			if (i && strcmp(v[i].name, v[i - 1].name) == 0) {
				drvc_buf_addf(out, ",%s", v[i].value);
				continue;
			}
			if (i)
				drvc_buf_adds(out, "\n");
			drvc_buf_addf(out, "%s:%s", v[i].name, v[i].value);
			drvc_buf_addf(signed_h, "%s%s", signed_h->len ? ";" : "",
			              v[i].name);
		}
		drvc_buf_adds(out, "\n");
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
	return rc;
}

/* ---------------------------------------------------------------- sign */

static int valid_amz_date(const char *d)
{
	if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return 0;
	for (int i = 0; i < 15; i++)
		if (i != 8 && (d[i] < '0' || d[i] > '9'))
			return 0;
	return 1;
}

static int valid_scope_part(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s <= 0x20 || *s == ',')
			return 0;
	return 1;
}

void aws_sigv4_out_free(aws_sigv4_out *out)
{
	if (!out)
		return;
	free(out->canonical_request);
	free(out->string_to_sign);
	free(out->signed_headers);
	free(out->authorization);
	memset(out, 0, sizeof(*out));
}

int aws_sigv4_sign(const aws_sigv4_req *req, const aws_sigv4_key *key,
                   aws_sigv4_out *out, char *err, size_t errcap)
{
	drvc_buf creq = DRVC_BUF_INIT, sh = DRVC_BUF_INIT, sts = DRVC_BUF_INIT,
	         auth = DRVC_BUF_INIT, kbuf = DRVC_BUF_INIT;
	char date8[9], hash[65];
	unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];

	memset(out, 0, sizeof(*out));
	if (!valid_amz_date(key->amz_date)) {
		snprintf(err, errcap, "X-Amz-Date must be YYYYMMDDTHHMMSSZ");
		return -1;
	}
	if (!valid_scope_part(key->access_key) || !key->secret_key ||
	    !*key->secret_key || !valid_scope_part(key->region) ||
	    !valid_scope_part(key->service)) {
		snprintf(err, errcap, "access key, secret, region and service "
		         "must be non-empty (and contain no '/', ',' or "
		         "spaces)");
		return -1;
	}
	if (!req->method || !*req->method) {
		snprintf(err, errcap, "no method");
		return -1;
	}
	memcpy(date8, key->amz_date, 8);
	date8[8] = '\0';

	/* 1. canonical request */
	drvc_buf_addf(&creq, "%s\n", req->method);
	canon_path(&creq, req->path, req->normalize_path);
	drvc_buf_adds(&creq, "\n");
	canon_query(&creq, req->query);
	drvc_buf_adds(&creq, "\n");
	if (canon_headers(&creq, &sh, req->headers, req->nheaders, err,
	                  errcap) != 0) {
		drvc_buf_free(&creq);
		drvc_buf_free(&sh);
		return -1;
	}
	aws_sha256_hex(req->body, req->body ? req->body_len : 0, hash);
	drvc_buf_addf(&creq, "\n%s\n%s", sh.data ? sh.data : "", hash);

	/* 2. string to sign */
	aws_sha256_hex(creq.data, creq.len, hash);
	drvc_buf_addf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s",
	              key->amz_date, date8, key->region, key->service, hash);

	/* 3. signing key and signature */
	drvc_buf_addf(&kbuf, "AWS4%s", key->secret_key);
	if (kbuf.oom || sts.oom || creq.oom || sh.oom)
		abort();
	hmac(kbuf.data, kbuf.len, date8, k1);
	OPENSSL_cleanse(kbuf.data, kbuf.len);
	drvc_buf_free(&kbuf);
	hmac(k1, 32, key->region, k2);
	hmac(k2, 32, key->service, k3);
	hmac(k3, 32, "aws4_request", k4);
	hmac(k4, 32, sts.data, sig);
	drvc_hex(sig, 32, out->signature);
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k2, sizeof(k2));
	OPENSSL_cleanse(k3, sizeof(k3));
	OPENSSL_cleanse(k4, sizeof(k4));

	/* 4. Authorization */
	drvc_buf_addf(&auth, "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/"
	              "aws4_request, SignedHeaders=%s, Signature=%s",
	              key->access_key, date8, key->region, key->service,
	              sh.data, out->signature);
	out->canonical_request = drvc_buf_take(&creq);
	out->string_to_sign = drvc_buf_take(&sts);
	out->signed_headers = drvc_buf_take(&sh);
	out->authorization = drvc_buf_take(&auth);
	if (!out->canonical_request || !out->string_to_sign ||
	    !out->signed_headers || !out->authorization)
		abort();
	return 0;
}
