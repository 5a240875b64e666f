/* aws_call.c -- endpoints, signing and classification of EC2 calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws.h"
#include "aws_errors.h"
#include "aws_sigv4.h"
#include "aws_util.h"
#include "aws_xml.h"
#include "drvc_opts.h"
#include "drvc_util.h"

#define CONTENT_TYPE "application/x-www-form-urlencoded; charset=utf-8"

const char *aws_opt(const aws_ctx *c, const char *key)
{
	return drvc_opt(c->host, key);
}

const char *aws_opt_region(const aws_ctx *c, const char *key,
                           const char *region)
{
	const char *v = NULL;
	if (region && *region)
		v = drvc_opt_region(c->host, key, region);
	return v ? v : aws_opt(c, key);
}

/* ------------------------------------------------------------ endpoint */

typedef struct url_parts {
	int https;
	char authority[256]; /* host[:port] as written */
	char path[256];      /* "" or "/x/y" without a trailing '/' */
} url_parts;

static int parse_url(const char *u, url_parts *p)
{
	const char *a, *slash;
	size_t alen, plen;
	memset(p, 0, sizeof(*p));
	if (strncasecmp(u, "https://", 8) == 0) {
		p->https = 1;
		a = u + 8;
	} else if (strncasecmp(u, "http://", 7) == 0) {
		a = u + 7;
	} else {
		return -1;
	}
	for (const char *s = u; *s; s++)
		if ((unsigned char)*s <= 0x20 || *s == 0x7f || *s == '?' ||
		    *s == '#')
			return -1;
	slash = strchr(a, '/');
	alen = slash ? (size_t)(slash - a) : strlen(a);
	if (alen == 0 || alen >= sizeof(p->authority) ||
	    memchr(a, '@', alen))
		return -1;
	memcpy(p->authority, a, alen);
	p->authority[alen] = '\0';
	if (slash) {
		plen = strlen(slash);
		while (plen && slash[plen - 1] == '/')
			plen--;
		if (plen >= sizeof(p->path))
			return -1;
		memcpy(p->path, slash, plen);
		p->path[plen] = '\0';
	}
	return 0;
}

int aws_endpoint_init(aws_ctx *c, gb_error *err)
{
	const char *ign = getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
	const char *v = NULL, *src = NULL;
	url_parts up;
	if (!(ign && aws_strieq(ign, "true"))) {
		v = getenv("AWS_ENDPOINT_URL_EC2");
		src = "AWS_ENDPOINT_URL_EC2";
		if (!v || !*v) {
			v = getenv("AWS_ENDPOINT_URL");
			src = "AWS_ENDPOINT_URL";
		}
	}
	if (!v || !*v) {
		v = aws_opt(c, "endpoint");
		src = "option endpoint";
	}
	if (!v || !*v)
		return 0;
	if (parse_url(v, &up) != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidEndpoint",
		         "aws: %s = \"%.200s\" is not an http(s) URL of the form "
		         "scheme://host[:port][/path]", src, v);
		return -1;
	}
	c->endpoint = aws_xstrdup(v);
	{
		size_t n = strlen(c->endpoint);
		while (n && c->endpoint[n - 1] == '/')
			c->endpoint[--n] = '\0';
	}
	snprintf(c->endpoint_src, sizeof(c->endpoint_src), "%s", src);
	return 0;
}

static int valid_region(const char *r)
{
	size_t n = r ? strlen(r) : 0;
	if (n == 0 || n > 40)
		return 0;
	for (; *r; r++)
		if (!((*r >= 'a' && *r <= 'z') || (*r >= '0' && *r <= '9') ||
		      *r == '-'))
			return 0;
	return 1;
}

int aws_endpoint_for(const aws_ctx *c, const char *region, char *url,
                     size_t urlcap, char *hostport, size_t hostcap,
                     gb_error *err)
{
	url_parts up;
	char def[200];
	size_t al;
	if (!valid_region(region)) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRegion",
		         "aws: \"%.60s\" is not an EC2 region name (like "
		         "us-east-1)", region ? region : "");
		return -1;
	}
	if (!c->endpoint) {
		snprintf(def, sizeof(def), "https://ec2.%s.amazonaws.com%s",
		         region, strncmp(region, "cn-", 3) == 0 ? ".cn" : "");
	}
	if (parse_url(c->endpoint ? c->endpoint : def, &up) != 0) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "InvalidEndpoint",
		         "aws: endpoint URL cannot be parsed");
		return -1;
	}
	snprintf(url, urlcap, "%s://%s%s/", up.https ? "https" : "http",
	         up.authority, up.path);
	/* curl leaves a default port out of the Host header */
	al = strlen(up.authority);
	if (up.https && al > 4 && strcmp(up.authority + al - 4, ":443") == 0 &&
	    up.authority[al - 5] != ':')
		up.authority[al - 4] = '\0';
	else if (!up.https && al > 3 &&
	         strcmp(up.authority + al - 3, ":80") == 0)
		up.authority[al - 3] = '\0';
	snprintf(hostport, hostcap, "%s", up.authority);
	return 0;
}

/* --------------------------------------------------------------- calls */

typedef struct call_ctx {
	aws_ctx *c;
	const char *region;
	const char *action;
	const char *body;
	char url[600];
	char host[300];
	char path[300];
	/* header lines handed to the host by sign() */
	char hdr_host[320];
	char hdr_date[40];
	char *hdr_auth;
	char *hdr_token;
	char signature[65];
} call_ctx;

static int sign_cb(void *ud, const gb_http_req *req, const char **out,
                   size_t cap, gb_error *err)
{
	call_ctx *k = ud;
	const aws_creds *cr = &k->c->creds;
	const gb_host *h = k->c->host;
	char date[17], serr[160];
	gb_kv hv[4];
	size_t nh = 0;
	aws_sigv4_req sr;
	aws_sigv4_key key;
	aws_sigv4_out so;
	int n = 0;

	if (cap < 4) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "SignFailed",
		         "aws: the host offers room for %zu signed headers, 4 "
		         "are needed", cap);
		return -1;
	}
	aws_fmt_amz_date(h->now_ms(h->ctx), date);
	hv[nh].key = "Content-Type";
	hv[nh++].value = CONTENT_TYPE;
	hv[nh].key = "Host";
	hv[nh++].value = k->host;
	hv[nh].key = "X-Amz-Date";
	hv[nh++].value = date;
	if (cr->session_token[0]) {
		hv[nh].key = "X-Amz-Security-Token";
		hv[nh++].value = cr->session_token;
	}
	memset(&sr, 0, sizeof(sr));
	sr.method = req->method;
	sr.path = k->path;
	sr.query = "";
	sr.headers = hv;
	sr.nheaders = nh;
	sr.body = req->body;
	sr.body_len = req->body_len;
	sr.normalize_path = 1;
	key.access_key = cr->access_key;
	key.secret_key = cr->secret_key;
	key.region = k->region; /* the real region, whatever the endpoint */
	key.service = "ec2";
	key.amz_date = date;
	if (aws_sigv4_sign(&sr, &key, &so, serr, sizeof(serr)) != 0) {
		drvc_err(err, GB_ERR_AUTH, 0, "SignFailed",
		         "aws: cannot sign the %s request: %s", k->action, serr);
		return -1;
	}
	free(k->hdr_auth);
	free(k->hdr_token);
	k->hdr_auth = NULL;
	k->hdr_token = NULL;
	snprintf(k->hdr_host, sizeof(k->hdr_host), "Host: %s", k->host);
	snprintf(k->hdr_date, sizeof(k->hdr_date), "X-Amz-Date: %s", date);
	{
		size_t l = strlen(so.authorization) + 32;
		k->hdr_auth = aws_xmalloc(l);
		snprintf(k->hdr_auth, l, "Authorization: %s", so.authorization);
	}
	memcpy(k->signature, so.signature, sizeof(k->signature));
	out[n++] = k->hdr_host;
	out[n++] = k->hdr_date;
	out[n++] = k->hdr_auth;
	if (cr->session_token[0]) {
		size_t l = strlen(cr->session_token) + 32;
		k->hdr_token = aws_xmalloc(l);
		snprintf(k->hdr_token, l, "X-Amz-Security-Token: %s",
		         cr->session_token);
		out[n++] = k->hdr_token;
	}
	aws_sigv4_out_free(&so);
	return n;
}

static gb_err_class classify_cb(void *ud, const gb_http_resp *resp,
                                gb_error *err)
{
	call_ctx *k = ud;
	const aws_creds *cr = &k->c->creds;
	const char *scrub[4];
	size_t ns = 0;
	scrub[ns++] = cr->secret_key;
	if (cr->session_token[0])
		scrub[ns++] = cr->session_token;
	if (k->signature[0])
		scrub[ns++] = k->signature;
	return aws_classify_answer(k->action, k->region, k->url, resp, scrub,
	                           ns, err);
}

void aws_no_creds_error(const aws_ctx *c, const char *action, gb_error *err)
{
	drvc_err(err, GB_ERR_AUTH, 0, "NoCredentials",
	         "aws: no credentials for EC2 %s. Tried: %s. Set "
	         "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
	         "AWS_SESSION_TOKEN for temporary keys), or put the profile "
	         "named by AWS_PROFILE (default: [default]) in the shared "
	         "credentials file", action, c->creds.tried);
}

int aws_call(aws_ctx *c, const char *region, const char *action,
             const char *body, int max_attempts, gb_http_resp *resp,
             gb_error *err)
{
	const gb_host *h = c->host;
	static const char *const headers[] = {"Content-Type: " CONTENT_TYPE};
	call_ctx k;
	gb_http_req req;
	int rc;

	memset(resp, 0, sizeof(*resp));
	if (!c->creds.have) {
		aws_no_creds_error(c, action, err);
		return -1;
	}
	memset(&k, 0, sizeof(k));
	k.c = c;
	k.region = region;
	k.action = action;
	k.body = body;
	if (aws_endpoint_for(c, region, k.url, sizeof(k.url), k.host,
	                     sizeof(k.host), err) != 0)
		return -1;
	{
		/* the path part of the URL is what gets signed */
		const char *p = strstr(k.url, "://");
		p = p ? strchr(p + 3, '/') : NULL;
		snprintf(k.path, sizeof(k.path), "%s", p ? p : "/");
	}
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = k.url;
	req.headers = headers;
	req.nheaders = 1;
	req.body = body;
	req.body_len = strlen(body);
	req.rate_class = action;
	req.max_attempts = max_attempts;
	req.classify = classify_cb;
	req.classify_ud = &k;
	req.sign = sign_cb;
	req.sign_ud = &k;
	if (h->log)
		h->log(h->ctx, GB_LOG_DEBUG, "aws: EC2 %s in %s via %s", action,
		       region, k.url);
	rc = h->http(h->ctx, &req, resp, err);
	if (rc != 0 && err->cls == GB_ERR_NONE)
		err->cls = GB_ERR_TRANSIENT;
	free(k.hdr_auth);
	free(k.hdr_token);
	return rc == 0 ? 0 : -1;
}

int aws_check_answer(const aws_ctx *c, const char *action,
                     const gb_http_resp *resp, gb_error *err)
{
	const char *ct = aws_resp_header(resp, "Content-Type", NULL);
	(void)c;
	if (resp->body_len > AWS_XML_MAX_DOC) {
		drvc_err(err, GB_ERR_INVALID, (int)resp->status, "AnswerTooLarge",
		         "EC2 %s answer of %zu bytes exceeds the driver's %u-byte "
		         "limit", action, resp->body_len, AWS_XML_MAX_DOC);
		return -1;
	}
	if (ct && !strstr(ct, "xml") && !strstr(ct, "XML")) {
		char ctb[100];
		snprintf(ctb, sizeof(ctb), "%s", ct);
		aws_scrub(ctb, sizeof(ctb), NULL, 0);
		drvc_err(err, GB_ERR_INVALID, (int)resp->status,
		         "MalformedAnswer",
		         "EC2 %s answered HTTP %ld with content-type %s, not "
		         "XML: is the endpoint an EC2 API?", action,
		         resp->status, ctb);
		return -1;
	}
	return 0;
}
