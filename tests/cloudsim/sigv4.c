/*
 * sigv4.c -- AWS SigV4 canonicalisation and signature, server side.
 * Follows cloud-apis.md 1.2: normalised, re-encoded path (which makes an
 * already-encoded wire path double-encoded, as AWS does outside S3);
 * decoded-then-re-encoded query sorted by name then value; the signed
 * headers with trimmed, space-collapsed values (repeats joined by ',');
 * SHA-256 of the body.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/hmac.h>

#include "sigv4.h"

/* ------------------------------------------------------------------ */
/* canonical URI                                                       */

static void canonical_uri(gb_buf *out, const char *path)
{
	gb_strv segs = {NULL, 0};
	size_t n = strlen(path);
	int trailing = 0;
	const char *p = path;
	if (n == 0) {
		gb_buf_putc(out, '/');
		return;
	}
	while (*p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == 0) {
			/* empty segment: collapsed */
		} else if (len == 1 && p[0] == '.') {
			trailing = 1;
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (segs.n) {
				free(segs.v[segs.n - 1]);
				segs.n--;
			}
			trailing = 1;
		} else {
			char *s = gb_xstrndup(p, len);
			gb_strv_push_take(&segs, s);
			trailing = 0;
		}
		if (!e)
			break;
		if (e[1] == '\0')
			trailing = 1;
		p = e + 1;
	}
	gb_buf_putc(out, '/');
	for (size_t i = 0; i < segs.n; i++) {
		if (i)
			gb_buf_putc(out, '/');
		sim_pct_encode(out, segs.v[i], strlen(segs.v[i]), 0);
	}
	if (segs.n && trailing)
		gb_buf_putc(out, '/');
	gb_strv_free(&segs);
}

/* ------------------------------------------------------------------ */
/* canonical query                                                     */

typedef struct qpair {
	char *k, *v; /* encoded */
} qpair;

static int qpair_cmp(const void *a, const void *b)
{
	const qpair *x = a, *y = b;
	int c = strcmp(x->k, y->k);
	return c ? c : strcmp(x->v, y->v);
}

static char *reencode(const char *s, size_t n)
{
	gb_buf b = GB_BUF_INIT;
	char *d = sim_pct_decode(s, n, 0);
	if (d) {
		sim_pct_encode(&b, d, strlen(d), 0);
		free(d);
	} else {
		/* not decodable: encode what was sent */
		sim_pct_encode(&b, s, n, 0);
	}
	return gb_buf_take(&b);
}

static void canonical_query(gb_buf *out, const char *q)
{
	qpair *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = q ? q : "";
	while (*p) {
		const char *e = strchr(p, '&');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len) {
			const char *eq = memchr(p, '=', len);
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				v = gb_xrealloc(v, cap * sizeof(*v));
			}
			if (eq) {
				v[n].k = reencode(p, (size_t)(eq - p));
				v[n].v = reencode(eq + 1, len - (size_t)(eq - p) - 1);
			} else {
				v[n].k = reencode(p, len);
				v[n].v = gb_xstrdup("");
			}
			n++;
		}
		if (!e)
			break;
		p = e + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), qpair_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i)
			gb_buf_putc(out, '&');
		gb_buf_puts(out, v[i].k);
		gb_buf_putc(out, '=');
		gb_buf_puts(out, v[i].v);
		free(v[i].k);
		free(v[i].v);
	}
	free(v);
}

/* ------------------------------------------------------------------ */
/* headers                                                             */

static void trim_collapse(gb_buf *out, const char *s)
{
	int space = 0, started = 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			space = started;
			continue;
		}
		if (space)
			gb_buf_putc(out, ' ');
		space = 0;
		started = 1;
		gb_buf_putc(out, (char)c);
	}
}

char *sim_sigv4_header(const sim_sigv4_in *in, const char *lname)
{
	gb_buf b = GB_BUF_INIT;
	int found = 0;
	for (size_t i = 0; i < in->nhdrs; i++) {
		if (strcasecmp(in->hdrs[i].name, lname) != 0)
			continue;
		if (found)
			gb_buf_putc(&b, ',');
		trim_collapse(&b, in->hdrs[i].value);
		found = 1;
	}
	if (!found) {
		gb_buf_free(&b);
		return NULL;
	}
	return gb_buf_take(&b);
}

char *sim_sigv4_canonical(const sim_sigv4_in *in, const char *signed_headers)
{
	gb_buf b = GB_BUF_INIT;
	char hash[65];
	const char *p = signed_headers;
	gb_buf_puts(&b, in->method);
	gb_buf_putc(&b, '\n');
	canonical_uri(&b, in->path);
	gb_buf_putc(&b, '\n');
	canonical_query(&b, in->query);
	gb_buf_putc(&b, '\n');
	while (*p) {
		const char *e = strchr(p, ';');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *name = gb_xstrndup(p, len);
		char *val = sim_sigv4_header(in, name);
		for (char *c = name; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		gb_buf_printf(&b, "%s:%s\n", name, val ? val : "");
		free(name);
		free(val);
		if (!e)
			break;
		p = e + 1;
	}
	gb_buf_putc(&b, '\n');
	gb_buf_puts(&b, signed_headers);
	gb_buf_putc(&b, '\n');
	gb_sha256_hex(in->body ? in->body : "", in->body ? in->body_len : 0,
	              hash);
	gb_buf_puts(&b, hash);
	return gb_buf_take(&b);
}

char *sim_sigv4_sts(const char *amz_date, const char *scope,
                    const char *canonical)
{
	char hash[65];
	gb_sha256_hex(canonical, strlen(canonical), hash);
	return gb_xasprintf("AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date, scope,
	                    hash);
}

static void hmac(const unsigned char *key, size_t klen, const char *msg,
                 unsigned char out[32])
{
	unsigned int olen = 32;
	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg,
	     strlen(msg), out, &olen);
}

void sim_sigv4_sign(const char *secret, const char *date, const char *region,
                    const char *service, const char *sts, char out[65])
{
	unsigned char k[32], k2[32];
	char *ks = gb_xasprintf("AWS4%s", secret);
	static const char hex[] = "0123456789abcdef";
	hmac((const unsigned char *)ks, strlen(ks), date, k);
	OPENSSL_cleanse(ks, strlen(ks));
	free(ks);
	hmac(k, 32, region, k2);
	hmac(k2, 32, service, k);
	hmac(k, 32, "aws4_request", k2);
	hmac(k2, 32, sts, k);
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[k[i] >> 4];
		out[2 * i + 1] = hex[k[i] & 15];
	}
	out[64] = '\0';
	OPENSSL_cleanse(k2, sizeof(k2));
}

/* ------------------------------------------------------------------ */
/* Authorization header                                                */

static int copy_field(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

static int parse_credential(sim_sigv4_auth *a, const char *s, size_t n,
                            char *msg, size_t cap)
{
	const char *parts[5];
	size_t lens[5];
	size_t k = 0;
	const char *p = s, *end = s + n;
	while (k < 5) {
		const char *sl = memchr(p, '/', (size_t)(end - p));
		parts[k] = p;
		lens[k] = sl ? (size_t)(sl - p) : (size_t)(end - p);
		k++;
		if (!sl)
			break;
		p = sl + 1;
	}
	if (k != 5 || memchr(parts[4], '/', lens[4])) {
		snprintf(msg, cap,
		         "Credential should be scoped to a valid region, not "
		         "a malformed scope; expected "
		         "KEY/YYYYMMDD/REGION/SERVICE/aws4_request.");
		return -1;
	}
	if (lens[4] != 12 || memcmp(parts[4], "aws4_request", 12) != 0) {
		snprintf(msg, cap,
		         "Credential should be scoped with a valid terminator: "
		         "'aws4_request'.");
		return -1;
	}
	if (copy_field(a->akid, sizeof(a->akid), parts[0], lens[0]) ||
	    lens[0] == 0 ||
	    copy_field(a->date, sizeof(a->date), parts[1], lens[1]) ||
	    lens[1] != 8 ||
	    copy_field(a->region, sizeof(a->region), parts[2], lens[2]) ||
	    copy_field(a->service, sizeof(a->service), parts[3], lens[3])) {
		snprintf(msg, cap,
		         "Credential should be scoped to a valid region and "
		         "date (KEY/YYYYMMDD/REGION/SERVICE/aws4_request).");
		return -1;
	}
	return 0;
}

int sim_sigv4_parse(const sim_sigv4_in *in, sim_sigv4_auth *a, char *msg,
                    size_t cap)
{
	char *h = sim_sigv4_header(in, "authorization");
	const char *p;
	int have_c = 0, have_s = 0, have_sig = 0;
	memset(a, 0, sizeof(*a));
	msg[0] = '\0';
	if (!h) {
		snprintf(msg, cap, "Request is missing Authentication Token");
		return SIM_SIGV4_MISSING;
	}
	if (strncmp(h, "AWS4-HMAC-SHA256", 16) != 0 ||
	    (h[16] != ' ' && h[16] != '\0')) {
		snprintf(msg, cap,
		         "Unsupported AWS 'algorithm': the Authorization header "
		         "must start with AWS4-HMAC-SHA256.");
		free(h);
		return SIM_SIGV4_INCOMPLETE;
	}
	p = h + 16;
	while (*p) {
		const char *e;
		size_t len;
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		e = strchr(p, ',');
		len = e ? (size_t)(e - p) : strlen(p);
		while (len && p[len - 1] == ' ')
			len--;
		if (len > 11 && strncmp(p, "Credential=", 11) == 0) {
			if (parse_credential(a, p + 11, len - 11, msg, cap)) {
				free(h);
				return SIM_SIGV4_INCOMPLETE;
			}
			have_c = 1;
		} else if (len > 14 && strncmp(p, "SignedHeaders=", 14) == 0) {
			if (copy_field(a->signed_headers,
			               sizeof(a->signed_headers), p + 14,
			               len - 14) == 0)
				have_s = 1;
		} else if (len > 10 && strncmp(p, "Signature=", 10) == 0) {
			if (len - 10 == 64)
				copy_field(a->signature, sizeof(a->signature),
				           p + 10, 64);
			else
				a->signature[0] = '\0';
			have_sig = 1;
		}
		if (!e)
			break;
		p = e + 1;
	}
	free(h);
	if (!have_c || !have_s || !have_sig) {
		snprintf(msg, cap, "%s%s%s",
		         have_c ? "" : "Authorization header requires "
		                       "'Credential' parameter. ",
		         have_sig ? "" : "Authorization header requires "
		                         "'Signature' parameter. ",
		         have_s ? "" : "Authorization header requires "
		                       "'SignedHeaders' parameter. ");
		/* drop the trailing space */
		if (*msg && msg[strlen(msg) - 1] == ' ')
			msg[strlen(msg) - 1] = '\0';
		return SIM_SIGV4_INCOMPLETE;
	}
	return SIM_SIGV4_OK;
}
