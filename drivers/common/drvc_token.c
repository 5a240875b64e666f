/* drvc_token.c -- see drvc_token.h. */
#include "drvc_token.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_mem.h"
#include "drvc_util.h"

#define DEFAULT_LIFETIME_S 300

void drvc_token_init(drvc_token *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->mu, NULL);
}

void drvc_token_fini(drvc_token *t)
{
	drvc_free_secret(t->value);
	t->value = NULL;
	pthread_mutex_destroy(&t->mu);
}

int drvc_token_get(drvc_token *t, const gb_host *host, int64_t margin_s,
                   drvc_token_fetch_fn fetch, void *ud, char **out,
                   gb_error *err)
{
	int64_t now, life_s, margin;
	char *tok = NULL;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&t->mu);
	now = host->now_ms(host->ctx);
	if (t->value && now < t->refresh_ms) {
		*out = drvc_xstrdup(t->value);
		pthread_mutex_unlock(&t->mu);
		return 0;
	}
	/* Held across the fetch on purpose: concurrent callers wait for this
	 * one token instead of each asking for their own. */
	if (fetch(ud, &tok, &life_s, err) != 0) {
		rc = -1;
		goto out;
	}
	if (host->redact)
		host->redact(host->ctx, tok);
	if (life_s <= 0)
		life_s = DEFAULT_LIFETIME_S;
	margin = margin_s < life_s / 2 ? margin_s : life_s / 2;
	now = host->now_ms(host->ctx);
	drvc_free_secret(t->value);
	t->value = tok;
	t->expires_ms = now + life_s * 1000;
	t->refresh_ms = t->expires_ms - margin * 1000;
	t->fetches++;
	*out = drvc_xstrdup(tok);
out:
	pthread_mutex_unlock(&t->mu);
	return rc;
}

void drvc_token_invalidate(drvc_token *t, const char *used)
{
	pthread_mutex_lock(&t->mu);
	if (t->value && used && strcmp(t->value, used) == 0) {
		drvc_free_secret(t->value);
		t->value = NULL;
	}
	pthread_mutex_unlock(&t->mu);
}

unsigned drvc_token_fetches(drvc_token *t)
{
	unsigned n;
	pthread_mutex_lock(&t->mu);
	n = t->fetches;
	pthread_mutex_unlock(&t->mu);
	return n;
}

int drvc_parse_token_response(const char *body, size_t len, size_t max,
                              const char *who, char **token,
                              int64_t *expires_in_s, gb_error *err)
{
	json_t *root = drvc_json_buf(body, len, max, who, err);
	const char *tok, *type;
	int64_t exp = 0;
	*token = NULL;
	*expires_in_s = 0;
	if (!root) {
		/* jansson's message quotes the text near the error: it could be
		 * part of a token, so say less. */
		if (strcmp(err->code, "MalformedResponse") == 0)
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedTokenResponse",
			         "%s is not valid JSON (%zu bytes)", who, len);
		return -1;
	}
	tok = drvc_jstr(root, "access_token");
	type = drvc_jstr(root, "token_type");
	if (!tok || !*tok || strchr(tok, '\r') || strchr(tok, '\n') ||
	    (type && strcasecmp(type, "Bearer") != 0)) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedTokenResponse",
		         "%s has no usable bearer access_token", who);
		json_decref(root);
		return -1;
	}
	if (drvc_jint(json_object_get(root, "expires_in"), &exp) != 0)
		exp = 0;
	*token = drvc_xstrdup(tok);
	*expires_in_s = exp;
	json_decref(root);
	return 0;
}

gb_err_class drvc_oauth_classify(const gb_host *h, const gb_http_resp *r,
                                 size_t desc_max, const char *secret,
                                 gb_error *err, const char *fmt, ...)
{
	char code[96] = "", desc[400] = "", prefix[sizeof(err->message)];
	gb_err_class cls;
	va_list ap;
	json_t *root;
	if (r->status >= 200 && r->status < 300)
		return GB_ERR_NONE;
	root = json_loadb(r->body ? r->body : "", r->body ? r->body_len : 0, 0,
	                  NULL);
	if (json_is_object(root)) {
		drvc_clean_text(code, sizeof(code), drvc_jstr(root, "error"), 90);
		drvc_clean_text(desc, sizeof(desc),
		                drvc_jstr(root, "error_description"), desc_max);
	}
	json_decref(root);
	if (r->status == 429)
		cls = GB_ERR_THROTTLED;
	else if (r->status >= 500)
		cls = GB_ERR_TRANSIENT;
	else if (r->status == 400 || r->status == 401 || r->status == 403)
		cls = GB_ERR_AUTH;
	else
		cls = GB_ERR_INVALID;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	drvc_http_fail(err, h, r, cls, code[0] ? code : "TokenRequestFailed",
	               code, desc, "%s", prefix);
	drvc_scrub(err->message, sizeof(err->message), secret);
	return cls;
}
