/* test_drvc_shared.c -- the drivers/common pieces the Azure and GCP
 * drivers share: the error of a failed answer (message, class, code,
 * Retry-After), the token endpoint's classifier (classes, scrubbed
 * secret), the create request check, create's failure rule (no cleanup
 * when throttled or transient, the cleanup note otherwise), terminate's
 * failure summary, price emission order, the JSON request's headers,
 * settings from option/env/default and tags as gb_kv. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drvc_bearer.h"
#include "drvc_create.h"
#include "drvc_http.h"
#include "drvc_json.h"
#include "drvc_opts.h"
#include "drvc_shapes.h"
#include "drvc_token.h"

/* ------------------------------------------------------ a fake host */

static const char *opt_key, *opt_val;
static const char *seen_hdrs[8];
static size_t seen_nhdrs;
static char seen_method[16], seen_body[64];
static int nlogs;

static const char *fake_option(void *ctx, const char *key)
{
	(void)ctx;
	return opt_key && strcmp(key, opt_key) == 0 ? opt_val : NULL;
}

static int64_t fake_now(void *ctx)
{
	(void)ctx;
	return 1000000;
}

static void fake_log(void *ctx, gb_log_level lvl, const char *fmt, ...)
{
	(void)ctx;
	(void)lvl;
	(void)fmt;
	nlogs++;
}

static int fake_http(void *ctx, const gb_http_req *req, gb_http_resp *resp,
                     gb_error *err)
{
	(void)ctx;
	(void)err;
	seen_nhdrs = req->nheaders < 8 ? req->nheaders : 8;
	for (size_t i = 0; i < seen_nhdrs; i++)
		seen_hdrs[i] = req->headers[i];
	snprintf(seen_method, sizeof(seen_method), "%s", req->method);
	snprintf(seen_body, sizeof(seen_body), "%.*s", (int)req->body_len,
	         req->body ? req->body : "");
	resp->status = 200;
	return 0;
}

static void fake_http_free(void *ctx, gb_http_resp *resp)
{
	(void)ctx;
	(void)resp;
}

static gb_host make_host(void)
{
	gb_host h;
	memset(&h, 0, sizeof(h));
	h.abi_major = GB_DRIVER_ABI_MAJOR;
	h.option = fake_option;
	h.now_ms = fake_now;
	h.log = fake_log;
	h.http = fake_http;
	h.http_free = fake_http_free;
	return h;
}

static gb_http_resp answer(long status, char *body, char **hdrs,
                           size_t nhdrs)
{
	gb_http_resp r;
	memset(&r, 0, sizeof(r));
	r.status = status;
	r.body = body;
	r.body_len = body ? strlen(body) : 0;
	r.headers = hdrs;
	r.nheaders = nhdrs;
	return r;
}

/* ------------------------------------------------------------ tests */

static void test_http_fail(void **state)
{
	gb_host h = make_host();
	char ra0[] = "Retry-After: 7", *ra[] = {ra0};
	gb_http_resp r = answer(429, NULL, ra, 1);
	gb_error e;
	(void)state;
	drvc_http_fail(&e, &h, &r, GB_ERR_THROTTLED, "TooManyRequests", "",
	               "", "Azure %s", "GET VM x");
	assert_int_equal(e.cls, GB_ERR_THROTTLED);
	assert_int_equal(e.http_status, 429);
	assert_string_equal(e.code, "TooManyRequests");
	assert_string_equal(e.message, "Azure GET VM x: HTTP 429");
	assert_int_equal(e.retry_after_ms, 7000);

	r = answer(404, NULL, ra, 1);
	drvc_http_fail(&e, &h, &r, GB_ERR_NOT_FOUND, "notFound", "notFound",
	               "gone", "GCP %s", "GET instance");
	assert_string_equal(e.message, "GCP GET instance: HTTP 404 notFound: gone");
	assert_int_equal(e.retry_after_ms, 0); /* only when worth a retry */
}

static void test_oauth_classify(void **state)
{
	gb_host h = make_host();
	char body[] = "{\"error\":\"invalid_grant\",\"error_description\":"
	              "\"bad assertion s3cr3t here\"}";
	char html[] = "<html>";
	gb_http_resp r = answer(400, body, NULL, 0);
	gb_error e;
	(void)state;
	assert_int_equal(drvc_oauth_classify(&h, &r, 300, "s3cr3t", &e,
	                                     "T at %s", "u"), GB_ERR_AUTH);
	assert_string_equal(e.code, "invalid_grant");
	assert_string_equal(e.message, "T at u: HTTP 400 invalid_grant: bad "
	                                "assertion [redacted] here");
	/* the description is cut at desc_max */
	drvc_oauth_classify(&h, &r, 3, NULL, &e, "T");
	assert_string_equal(e.message, "T: HTTP 400 invalid_grant: bad");
	r = answer(503, html, NULL, 0);
	assert_int_equal(drvc_oauth_classify(&h, &r, 300, NULL, &e, "T"),
	                 GB_ERR_TRANSIENT);
	assert_string_equal(e.code, "TokenRequestFailed");
	r = answer(429, NULL, NULL, 0);
	assert_int_equal(drvc_oauth_classify(&h, &r, 300, NULL, &e, "T"),
	                 GB_ERR_THROTTLED);
	r = answer(404, NULL, NULL, 0);
	assert_int_equal(drvc_oauth_classify(&h, &r, 300, NULL, &e, "T"),
	                 GB_ERR_INVALID);
	r = answer(200, NULL, NULL, 0);
	assert_int_equal(drvc_oauth_classify(&h, &r, 300, NULL, &e, "T"),
	                 GB_ERR_NONE);
}

static void test_create_req_ok(void **state)
{
	gb_create_req q;
	gb_error e;
	(void)state;
	memset(&q, 0, sizeof(q));
	q.region = "r";
	q.instance_type = "t";
	q.token = "tok";
	q.name_prefix = "p";
	q.pool = "pool";
	q.count = 1;
	assert_int_equal(drvc_create_req_ok(&q, "GCP", 10, &e), -1);
	assert_string_equal(e.message, "GCP create: broker_id is required");
	q.broker_id = "b";
	assert_int_equal(drvc_create_req_ok(&q, "GCP", 10, &e), 0);
	q.count = 11;
	assert_int_equal(drvc_create_req_ok(&q, "Azure", 10, &e), -1);
	assert_int_equal(e.cls, GB_ERR_INVALID);
	assert_string_equal(e.code, "InvalidRequest");
	assert_string_equal(e.message, "Azure create: count 11 is outside 1..10");
}

static int ndeleted;

static int del_odd_fails(void *ud, size_t i, gb_error *err)
{
	(void)ud;
	ndeleted++;
	if (i % 2) {
		snprintf(err->message, sizeof(err->message), "boom %zu", i);
		return -1;
	}
	return 0;
}

static const char *name_of(void *ud, size_t i)
{
	static const char *const names[] = {"vm-0", "vm-1", "vm-2", "vm-3"};
	(void)ud;
	return names[i];
}

static void test_create_failed(void **state)
{
	gb_host h = make_host();
	drvc_cleanup cl = {&h, "azure", "VM", del_odd_fails, name_of, NULL};
	int touched[4] = {1, 1, 1, 0};
	gb_error e;
	(void)state;
	/* throttled: the outcome is unknown, nothing is deleted */
	memset(&e, 0, sizeof(e));
	e.cls = GB_ERR_THROTTLED;
	ndeleted = 0;
	drvc_create_failed(&cl, touched, 4, &e);
	assert_int_equal(ndeleted, 0);
	assert_string_equal(e.message, "");
	/* no class: INTERNAL, and the touched ones are deleted */
	memset(&e, 0, sizeof(e));
	snprintf(e.message, sizeof(e.message), "failed");
	nlogs = 0;
	drvc_create_failed(&cl, touched, 4, &e);
	assert_int_equal(e.cls, GB_ERR_INTERNAL);
	assert_int_equal(ndeleted, 3);
	assert_int_equal(nlogs, 1);
	assert_string_equal(e.message, "failed [cleanup: 2 VM(s) deleted, 1 "
	                               "failed: vm-1: boom 1]");
	touched[1] = 0;
	memset(&e, 0, sizeof(e));
	e.cls = GB_ERR_CAPACITY;
	drvc_create_failed(&cl, touched, 4, &e);
	assert_int_equal(e.cls, GB_ERR_CAPACITY);
	assert_string_equal(e.message,
	                    " [cleanup: deleted the 2 VM(s) of this request]");
}

static void test_failures(void **state)
{
	gb_host h = make_host();
	drvc_failures f = DRVC_FAILURES_INIT;
	gb_error e, one;
	(void)state;
	assert_int_equal(drvc_failures_result(&f, "instance", &e), 0);
	memset(&one, 0, sizeof(one));
	one.cls = GB_ERR_AUTH;
	snprintf(one.message, sizeof(one.message), "denied");
	drvc_failures_note(&f, &h, "gcp", "a", &one);
	one.cls = GB_ERR_TRANSIENT;
	drvc_failures_note(&f, &h, "gcp", "b", &one);
	drvc_failures_note(&f, &h, "gcp", "c", &one);
	assert_int_equal(drvc_failures_result(&f, "instance", &e), -1);
	assert_int_equal(e.cls, GB_ERR_AUTH); /* the first */
	assert_string_equal(e.message,
	                    "denied (and 2 more instance(s) failed)");
}

typedef struct seen {
	char v[8][48];
	int n, stop_at;
} seen;

static int keep(void *ud, const gb_offer *o)
{
	seen *s = ud;
	snprintf(s->v[s->n++], 48, "%s %s %g", o->zone,
	         o->capacity == GB_CAPACITY_SPOT ? "spot" : "od",
	         o->price_per_hour);
	return s->n == s->stop_at;
}

static void test_shapes(void **state)
{
	drvc_shapes s = {NULL, 0, 16, 1};
	gb_offer o;
	seen out;
	int is_new;
	drvc_shape *sh;
	(void)state;
	memset(&o, 0, sizeof(o));
	o.instance_type = "t1";
	o.region = "EastUS";
	o.zone = "1";
	o.gpu_model = "H100";
	o.gpu_count = 8;
	sh = drvc_shapes_add(&s, &o, &is_new);
	assert_int_equal(is_new, 1);
	assert_non_null(sh->ext);
	o.region = "eastus"; /* the same region, case aside */
	o.zone = "2";
	sh = drvc_shapes_add(&s, &o, &is_new);
	assert_int_equal(is_new, 0);
	o.zone = "1";
	sh = drvc_shapes_add(&s, &o, &is_new);
	assert_int_equal(s.n, 1);
	assert_int_equal(sh->nzones, 2);
	assert_ptr_equal(drvc_shapes_find(&s, "t1", "EASTUS"), sh);
	assert_null(drvc_shapes_find(&s, "t2", "eastus"));
	sh->price[0] = 2;
	sh->price[1] = 1;
	memset(&out, 0, sizeof(out));
	assert_int_equal(drvc_shape_emit(sh, "src", 5, keep, &out), 0);
	assert_int_equal(out.n, 4);
	assert_string_equal(out.v[0], "1 od 2");
	assert_string_equal(out.v[1], "1 spot 1");
	assert_string_equal(out.v[2], "2 od 2");
	assert_string_equal(out.v[3], "2 spot 1");
	sh->price[0] = 0; /* no on-demand price: spot only; stop is kept */
	memset(&out, 0, sizeof(out));
	out.stop_at = 1;
	assert_int_equal(drvc_shape_emit(sh, "src", 5, keep, &out), 1);
	assert_int_equal(out.n, 1);
	assert_string_equal(out.v[0], "1 spot 1");
	drvc_shapes_free(&s);
	assert_int_equal(s.n, 0);
}

static gb_err_class ok_classify(void *ud, const gb_http_resp *r,
                                gb_error *err, int *auth_expired)
{
	(void)ud;
	(void)r;
	(void)err;
	*auth_expired = 0;
	return GB_ERR_NONE;
}

static void test_call_json_and_form(void **state)
{
	gb_host h = make_host();
	drvc_call c = drvc_call_make(&h, NULL, 0, NULL, NULL, ok_classify,
	                             NULL);
	gb_http_resp resp;
	gb_error e;
	(void)state;
	assert_int_equal(drvc_call_json(&c, "GET", "http://x/", NULL, NULL,
	                                "r", &resp, &e), 0);
	assert_int_equal(seen_nhdrs, 1);
	assert_string_equal(seen_hdrs[0], "Accept: application/json");
	assert_int_equal(drvc_call_json(&c, "PUT", "http://x/", "{}",
	                                "If-None-Match: *", "r", &resp, &e), 0);
	assert_int_equal(seen_nhdrs, 3);
	assert_string_equal(seen_hdrs[1], "Content-Type: application/json");
	assert_string_equal(seen_hdrs[2], "If-None-Match: *");
	assert_string_equal(seen_body, "{}");
	assert_int_equal(drvc_call_form(&c, "http://x/t", "a=b", "tok", &resp,
	                                &e), 0);
	assert_string_equal(seen_method, "POST");
	assert_int_equal(seen_nhdrs, 2);
	assert_string_equal(seen_hdrs[0],
	                    "Content-Type: application/x-www-form-urlencoded");
	assert_string_equal(seen_body, "a=b");
}

static void test_settings_and_kv(void **state)
{
	gb_host h = make_host();
	json_t *o = json_pack("{s:s,s:i,s:s}", "a", "1", "n", 2, "b", "x");
	gb_kv *kv;
	size_t n;
	char *v;
	(void)state;
	setenv("DRVC_TEST_ENV", "from-env", 1);
	opt_key = "k";
	opt_val = "from-opt";
	v = drvc_opt_env(&h, "k", "DRVC_TEST_ENV", "def");
	assert_string_equal(v, "from-opt");
	free(v);
	v = drvc_opt_env(&h, "other", "DRVC_TEST_ENV", "def");
	assert_string_equal(v, "from-env");
	free(v);
	setenv("DRVC_TEST_ENV", "", 1); /* empty is unset */
	v = drvc_opt_env(&h, "other", "DRVC_TEST_ENV", "def");
	assert_string_equal(v, "def");
	free(v);
	assert_null(drvc_opt_env(&h, "other", NULL, NULL));
	opt_key = "image.westeu";
	assert_string_equal(drvc_opt_region(&h, "image", "westeu"), "from-opt");
	assert_null(drvc_opt_region(&h, "image", "eastus"));
	opt_key = NULL;

	kv = drvc_json_kv(o, &n); /* strings only, in order */
	assert_int_equal(n, 2);
	assert_string_equal(kv[0].key, "a");
	assert_string_equal(kv[1].value, "x");
	drvc_kv_free(kv, n);
	assert_null(drvc_json_kv(json_array_get(o, 0), &n));
	assert_int_equal(n, 0);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_fail),
		cmocka_unit_test(test_oauth_classify),
		cmocka_unit_test(test_create_req_ok),
		cmocka_unit_test(test_create_failed),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_call_json_and_form),
		cmocka_unit_test(test_settings_and_kv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
