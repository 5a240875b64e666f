/*
 * ec2_xml.c -- EC2 response shapes: the success envelope with
 * <requestId>, the error envelope with <RequestID>, dotted list
 * parameters, filters, MaxResults and page tokens.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ec2.h"

void ec2_error(ec2_ctx *c, int status, const char *code, const char *fmt,
               ...)
{
	va_list ap;
	char *msg;
	gb_buf b = GB_BUF_INIT;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	gb_buf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	                "<Response><Errors><Error><Code>");
	sim_xml_escape(&b, code);
	gb_buf_puts(&b, "</Code><Message>");
	sim_xml_escape(&b, msg);
	gb_buf_puts(&b, "</Message></Error></Errors><RequestID>");
	sim_xml_escape(&b, c->req->request_id);
	gb_buf_puts(&b, "</RequestID></Response>");
	sim_resp_text(c->resp, status, "text/xml;charset=UTF-8", gb_buf_str(&b));
	gb_buf_free(&b);
	free(msg);
}

void ec2_begin(ec2_ctx *c, gb_buf *b)
{
	gb_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	              "<%sResponse xmlns=\"" EC2_NS "\">\n"
	              "    <requestId>%s</requestId>\n",
	              c->action, c->req->request_id);
}

void ec2_finish(ec2_ctx *c, gb_buf *b)
{
	gb_buf_printf(b, "</%sResponse>", c->action);
	sim_resp_text(c->resp, 200, "text/xml;charset=UTF-8", gb_buf_str(b));
	gb_buf_free(b);
}

void ec2_tag(gb_buf *b, const char *name, const char *text)
{
	if (!text || !*text) {
		gb_buf_printf(b, "<%s/>", name);
		return;
	}
	gb_buf_printf(b, "<%s>", name);
	sim_xml_escape(b, text);
	gb_buf_printf(b, "</%s>", name);
}

void ec2_tagf(gb_buf *b, const char *name, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	s = gb_xvasprintf(fmt, ap);
	va_end(ap);
	ec2_tag(b, name, s);
	free(s);
}

typedef struct idxval {
	int64_t idx;
	const char *val;
} idxval;

static int idx_cmp(const void *a, const void *b)
{
	const idxval *x = a, *y = b;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void ec2_list(const gb_kvs *p, const char *prefix, gb_strv *out)
{
	size_t pl = strlen(prefix), k = 0;
	idxval *v = gb_xcalloc(p->n + 1, sizeof(*v));
	for (size_t i = 0; i < p->n; i++) {
		int64_t idx;
		if (strncmp(p->keys[i], prefix, pl) != 0 ||
		    p->keys[i][pl] != '.')
			continue;
		if (gb_parse_int64(p->keys[i] + pl + 1, &idx) != 0)
			continue;
		v[k].idx = idx;
		v[k].val = p->vals[i];
		k++;
	}
	qsort(v, k, sizeof(*v), idx_cmp);
	for (size_t i = 0; i < k; i++)
		gb_strv_push(out, v[i].val);
	free(v);
}

void ec2_filters_free(ec2_filter *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].name);
		gb_strv_free(&f[i].values);
	}
	free(f);
}

int ec2_filters(ec2_ctx *c, ec2_filter **out, size_t *n)
{
	gb_strv idxs = {NULL, 0};
	ec2_filter *f = NULL;
	size_t k = 0;
	/* collect the distinct N of Filter.N.* */
	for (size_t i = 0; i < c->params.n; i++) {
		const char *key = c->params.keys[i];
		const char *dot;
		char num[24];
		if (strncmp(key, "Filter.", 7) != 0)
			continue;
		dot = strchr(key + 7, '.');
		if (!dot || dot - (key + 7) >= (long)sizeof(num))
			continue;
		snprintf(num, sizeof(num), "%.*s", (int)(dot - (key + 7)),
		         key + 7);
		if (!gb_strv_contains(&idxs, num))
			gb_strv_push(&idxs, num);
	}
	f = gb_xcalloc(idxs.n + 1, sizeof(*f));
	for (size_t i = 0; i < idxs.n; i++) {
		char *nk = gb_xasprintf("Filter.%s.Name", idxs.v[i]);
		char *vp = gb_xasprintf("Filter.%s.Value", idxs.v[i]);
		const char *name = gb_kvs_get(&c->params, nk);
		f[k].name = gb_xstrdup(name ? name : "");
		ec2_list(&c->params, vp, &f[k].values);
		k++;
		free(nk);
		free(vp);
		if (!name || !*name) {
			ec2_error(c, 400, "InvalidParameterValue",
			          "The filter 'null' is invalid");
			gb_strv_free(&idxs);
			ec2_filters_free(f, k);
			return -1;
		}
		if (f[k - 1].values.n == 0) {
			ec2_error(c, 400, "InvalidParameterCombination",
			          "The filter '%s' requires at least one "
			          "value", name);
			gb_strv_free(&idxs);
			ec2_filters_free(f, k);
			return -1;
		}
	}
	gb_strv_free(&idxs);
	*out = f;
	*n = k;
	return 0;
}

int ec2_filter_any(const ec2_filter *f, const char *s)
{
	for (size_t i = 0; i < f->values.n; i++)
		if (gb_glob(f->values.v[i], s ? s : ""))
			return 1;
	return 0;
}

int ec2_filters_known(ec2_ctx *c, const ec2_filter *f, size_t n,
                      const char *const *known)
{
	for (size_t i = 0; i < n; i++) {
		int ok = 0;
		for (size_t j = 0; known[j] && !ok; j++) {
			if (strcmp(known[j], "tag:*") == 0)
				ok = strncmp(f[i].name, "tag:", 4) == 0 &&
				     f[i].name[4];
			else
				ok = strcmp(known[j], f[i].name) == 0;
		}
		if (!ok) {
			ec2_error(c, 400, "InvalidParameterValue",
			          "The filter '%s' is invalid", f[i].name);
			return -1;
		}
	}
	return 0;
}

int ec2_max_results(ec2_ctx *c, int64_t lo, int64_t hi, int64_t *out)
{
	const char *s = gb_kvs_get(&c->params, "MaxResults");
	int64_t v;
	*out = 0;
	if (!s)
		return 0;
	if (gb_parse_int64(s, &v) != 0) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Invalid value '%s' for MaxResults", s);
		return -1;
	}
	if (v < lo || v > hi) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Value ( %lld ) for parameter maxResults is invalid. "
		          "Expecting a value between %lld and %lld.",
		          (long long)v, (long long)lo, (long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

char *ec2_token_make(const char *kind, int64_t pos)
{
	char raw[96];
	int n = snprintf(raw, sizeof(raw), "cloudsim:%s:%lld", kind,
	                 (long long)pos);
	return sim_b64url_encode(raw, (size_t)n);
}

int ec2_token_parse(const char *kind, const char *tok, int64_t *pos)
{
	size_t n = 0, kl = strlen(kind);
	unsigned char *raw = sim_b64url_decode(tok, strlen(tok), &n);
	int rc = -1;
	if (raw && n > 9 + kl + 1 && memcmp(raw, "cloudsim:", 9) == 0 &&
	    memcmp(raw + 9, kind, kl) == 0 && raw[9 + kl] == ':' &&
	    gb_parse_int64((char *)raw + 10 + kl, pos) == 0 && *pos >= 0)
		rc = 0;
	free(raw);
	return rc;
}

int ec2_bool(const gb_kvs *p, const char *key)
{
	const char *v = gb_kvs_get(p, key);
	return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

int ec2_valid_instance_id(const char *s)
{
	size_t n;
	if (strncmp(s, "i-", 2) != 0)
		return 0;
	n = strlen(s + 2);
	if (n != 8 && n != 17)
		return 0;
	for (const char *p = s + 2; *p; p++)
		if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
			return 0;
	return 1;
}
