/* test_http.c -- the host's HTTP transport (core/host/http.c) against real
 * servers on 127.0.0.1 (libmicrohttpd, in this process): retries of
 * THROTTLED/TRANSIENT answers that honour Retry-After, no retry of a
 * definite refusal, the attempt limit, token-bucket rate limits (from
 * options and changed at run time), proxy variables, TLS verification
 * (a certificate made here with OpenSSL: refused without its CA, accepted
 * with ca_file), metrics, and URLs logged without their query. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <microhttpd.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>

#include "http.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------- the server */

#define MAX_SCRIPT 16

typedef struct server {
	struct MHD_Daemon *d;
	unsigned port;
	pthread_mutex_t mu;
	/* answers, in order; the last one repeats */
	long status[MAX_SCRIPT];
	const char *retry_after[MAX_SCRIPT];
	int nscript;
	int hits;
	char last_url[512];
	char last_host[256];
} server;

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
                               const char *url, const char *method,
                               const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	server *s = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	const char *host;
	long st;
	const char *ra;
	int i;
	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	pthread_mutex_lock(&s->mu);
	i = s->hits < s->nscript ? s->hits : s->nscript - 1;
	st = s->status[i];
	ra = s->retry_after[i];
	s->hits++;
	snprintf(s->last_url, sizeof(s->last_url), "%s", url);
	host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	snprintf(s->last_host, sizeof(s->last_host), "%s", host ? host : "");
	pthread_mutex_unlock(&s->mu);
	r = MHD_create_response_from_buffer(2, (void *)"{}",
	                                    MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (ra)
		MHD_add_response_header(r, "Retry-After", ra);
	ret = MHD_queue_response(conn, (unsigned)st, r);
	MHD_destroy_response(r);
	return ret;
}

static void server_start(server *s, const char *key_pem, const char *cert_pem)
{
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->status[0] = 200;
	s->nscript = 1;
	if (key_pem) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
			fail_msg("this libmicrohttpd has no TLS support: the TLS "
			         "case cannot run");
		s->d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, handler,
		                        s, MHD_OPTION_SOCK_ADDR, NULL,
		                        MHD_OPTION_HTTPS_MEM_KEY, key_pem,
		                        MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
		                        MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, handler, s,
		                        MHD_OPTION_END);
	}
	assert_non_null(s->d);
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	assert_non_null(info);
	s->port = info->port;
	assert_true(s->port > 0);
}

static void server_script(server *s, int n, const long *status,
                          const char *const *retry_after)
{
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < n; i++) {
		s->status[i] = status[i];
		s->retry_after[i] = retry_after ? retry_after[i] : NULL;
	}
	s->nscript = n;
	s->hits = 0;
	pthread_mutex_unlock(&s->mu);
}

static int server_hits(server *s)
{
	int n;
	pthread_mutex_lock(&s->mu);
	n = s->hits;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static void server_stop(server *s)
{
	MHD_stop_daemon(s->d);
	pthread_mutex_destroy(&s->mu);
}

/* ------------------------------------------------------- the client */

static gb_http_client *client(const gb_kvs *rates, const char *ca_file)
{
	gb_http_opts o;
	memset(&o, 0, sizeof(o));
	o.name = "test";
	o.max_attempts = 5;
	o.backoff_base_ms = 20;
	o.backoff_cap_ms = 500;
	o.timeout_ms = 5000;
	o.connect_timeout_ms = 2000;
	o.rates = rates;
	o.ca_file = ca_file;
	return gb_http_client_new(&o);
}

static int get(gb_http_client *c, const char *url, int max_attempts,
               gb_http_resp *resp, gb_error *err)
{
	gb_http_req r;
	memset(&r, 0, sizeof(r));
	memset(resp, 0, sizeof(*resp));
	memset(err, 0, sizeof(*err));
	r.method = "GET";
	r.url = url;
	r.max_attempts = max_attempts;
	return gb_http_do(c, &r, resp, err);
}

static char *url_of(const server *s, const char *scheme, const char *path)
{
	return gb_xasprintf("%s://127.0.0.1:%u%s", scheme, s->port, path);
}

/* --------------------------------------------------------------- tests */

/* 429 with Retry-After: 1, then 200: one retry, not before a second. */
static void test_retry_after(void **state)
{
	server s;
	gb_http_client *c = client(NULL, NULL);
	gb_http_resp resp;
	gb_error err;
	gb_http_metrics m;
	static const long st[] = {429, 200};
	static const char *const ra[] = {"1", NULL};
	char *url;
	int64_t t0, ms;
	(void)state;
	server_start(&s, NULL, NULL);
	server_script(&s, 2, st, ra);
	url = url_of(&s, "http", "/throttled");
	t0 = gb_mono_ms();
	assert_int_equal(get(c, url, 0, &resp, &err), 0);
	ms = gb_mono_ms() - t0;
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.attempts, 2);
	assert_int_equal(server_hits(&s), 2);
	/* the backoff alone is at most 20 ms here: only Retry-After explains
	 * a second */
	assert_true(ms >= 990);
	assert_string_equal(gb_http_header(&resp, "content-type"),
	                    "application/json");
	gb_http_resp_free(&resp);
	gb_http_metrics_get(c, &m);
	assert_int_equal(m.calls, 1);
	assert_int_equal(m.requests, 2);
	assert_int_equal(m.retries, 1);
	free(url);
	gb_http_client_free(c);
	server_stop(&s);
}

/* 503 twice then 200: retried with backoff; 400 is final at once; a 503
 * that never ends stops at the attempt limit with TRANSIENT. */
static void test_retry_classes(void **state)
{
	server s;
	gb_http_client *c = client(NULL, NULL);
	gb_http_resp resp;
	gb_error err;
	gb_http_metrics m;
	static const long flaky[] = {503, 503, 200};
	static const long bad[] = {400};
	static const long down[] = {503};
	char *url;
	(void)state;
	server_start(&s, NULL, NULL);
	url = url_of(&s, "http", "/x");

	server_script(&s, 3, flaky, NULL);
	assert_int_equal(get(c, url, 0, &resp, &err), 0);
	assert_int_equal(resp.attempts, 3);
	assert_int_equal(server_hits(&s), 3);
	gb_http_resp_free(&resp);

	server_script(&s, 1, bad, NULL);
	assert_int_equal(get(c, url, 0, &resp, &err), -1);
	assert_int_equal(err.cls, GB_ERR_INVALID);
	assert_int_equal(err.http_status, 400);
	assert_int_equal(server_hits(&s), 1);
	gb_http_resp_free(&resp);

	server_script(&s, 1, down, NULL);
	assert_int_equal(get(c, url, 3, &resp, &err), -1);
	assert_int_equal(err.cls, GB_ERR_TRANSIENT);
	assert_int_equal(server_hits(&s), 3);
	assert_int_equal(resp.attempts, 3);
	gb_http_resp_free(&resp);

	gb_http_metrics_get(c, &m);
	assert_int_equal(m.calls, 3);
	assert_int_equal(m.requests, 7);
	assert_int_equal(m.errors[GB_ERR_INVALID], 1);
	assert_int_equal(m.errors[GB_ERR_TRANSIENT], 1);
	free(url);
	gb_http_client_free(c);
	server_stop(&s);
}

/* A bucket of 1 refilled 4 times a second: 5 calls take at least a
 * second; the bucket can be changed at run time. */
static void test_rate_limit(void **state)
{
	server s;
	char *keys[] = {(char *)"default"}, *vals[] = {(char *)"1/4"};
	gb_kvs rates = {keys, vals, 1};
	gb_http_client *c = client(&rates, NULL);
	gb_http_resp resp;
	gb_error err;
	gb_http_metrics m;
	char *url;
	int64_t t0;
	(void)state;
	server_start(&s, NULL, NULL);
	url = url_of(&s, "http", "/limited");
	t0 = gb_mono_ms();
	for (int i = 0; i < 5; i++) {
		assert_int_equal(get(c, url, 0, &resp, &err), 0);
		gb_http_resp_free(&resp);
	}
	assert_true(gb_mono_ms() - t0 >= 950);
	gb_http_metrics_get(c, &m);
	assert_true(m.rate_waits >= 3);
	assert_true(m.rate_wait_s >= 0.9);

	/* raised at run time to 50 at once: 20 more calls, and the waits
	 * counted so far stay as they were (give or take the one call that
	 * found the old bucket empty) */
	{
		uint64_t waits = m.rate_waits;
		assert_int_equal(gb_http_set_rate(c, "default", "50/50"), 0);
		sleep(1); /* the bucket refills to its new capacity */
		for (int i = 0; i < 20; i++) {
			assert_int_equal(get(c, url, 0, &resp, &err), 0);
			gb_http_resp_free(&resp);
		}
		gb_http_metrics_get(c, &m);
		assert_true(m.rate_waits <= waits + 1);
	}
	assert_int_equal(gb_http_set_rate(c, "default", "fast"), -1);
	assert_int_equal(gb_http_set_rate(c, "default", "0/1"), -1);
	free(url);
	gb_http_client_free(c);
	server_stop(&s);
}

/* http_proxy is honoured: a request for a host that does not exist goes
 * to the proxy (here: the test server), in absolute form; no_proxy
 * exempts a host. */
static void test_proxy(void **state)
{
	server proxy, direct;
	gb_http_client *c;
	gb_http_resp resp;
	gb_error err;
	char *purl, *durl;
	(void)state;
	server_start(&proxy, NULL, NULL);
	server_start(&direct, NULL, NULL);
	/* a plain-HTTP host that is not loopback: only with the opt-in */
	setenv("GPUBROKER_ALLOW_INSECURE_HTTP", "1", 1);
	c = client(NULL, NULL);
	unsetenv("GPUBROKER_ALLOW_INSECURE_HTTP");
	purl = gb_xasprintf("http://127.0.0.1:%u", proxy.port);
	setenv("http_proxy", purl, 1);
	setenv("no_proxy", "127.0.0.1", 1);
	assert_int_equal(get(c, "http://gb-proxy-test.invalid/v1/thing?x=1", 1,
	                     &resp, &err), 0);
	gb_http_resp_free(&resp);
	assert_int_equal(server_hits(&proxy), 1);
	assert_string_equal(proxy.last_host, "gb-proxy-test.invalid");
	assert_non_null(strstr(proxy.last_url, "/v1/thing"));
	durl = url_of(&direct, "http", "/direct");
	assert_int_equal(get(c, durl, 1, &resp, &err), 0);
	gb_http_resp_free(&resp);
	assert_int_equal(server_hits(&direct), 1);
	assert_int_equal(server_hits(&proxy), 1);
	unsetenv("http_proxy");
	unsetenv("no_proxy");
	free(purl);
	free(durl);
	gb_http_client_free(c);
	server_stop(&proxy);
	server_stop(&direct);
}

/* Credentials never go out in clear: http:// only to loopback, other
 * schemes never; refused before signing, before any connection, with
 * what and how to fix; the opt-in is logged once. */
static int signs;
static int count_sign(void *ud, const gb_http_req *req, const char **out,
                      size_t max, gb_error *err)
{
	(void)ud;
	(void)req;
	(void)out;
	(void)max;
	(void)err;
	signs++;
	return 0;
}

static void test_insecure_endpoints(void **state)
{
	static const char *const refused[] = {
		"http://192.0.2.10/v1", "http://ec2.example.com/",
		"http://[2001:db8::1]:80/", "file:///etc/passwd",
		"ftp://127.0.0.1/x", "gopher://127.0.0.1/", "127.0.0.1:80/x",
		"http://127.0.0.1.example.com/", "http://0x7f000001.example/",
	};
	static const char *const loopback[] = {
		"http://127.0.0.1:1/", "http://127.1.2.3/", "http://localhost/",
		"http://LOCALHOST:8/", "http://[::1]:9/",
	};
	server s;
	gb_http_client *c = client(NULL, NULL);
	gb_http_resp resp;
	gb_error err;
	gb_http_req r;
	char why[600], *url;
	FILE *f = tmpfile();
	size_t n;
	char buf[4096];
	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
		if (gb_http_url_check(refused[i], 0, why, sizeof(why)) != -1)
			fail_msg("%s: not refused", refused[i]);
		memset(&r, 0, sizeof(r));
		r.method = "GET";
		r.url = refused[i];
		r.sign = count_sign;
		signs = 0;
		assert_int_equal(gb_http_do(c, &r, &resp, &err), -1);
		assert_int_equal(err.cls, GB_ERR_INVALID);
		assert_string_equal(err.code, "InsecureEndpoint");
		assert_int_equal(signs, 0);
		assert_int_equal(resp.attempts, 0);
		gb_http_resp_free(&resp);
	}
	assert_int_equal(gb_http_url_check("http://10.1.2.3/?k=secret", 0, why,
	                                   sizeof(why)), -1);
	assert_non_null(strstr(why, "https://"));
	assert_non_null(strstr(why, "allow_insecure_http"));
	assert_null(strstr(why, "secret"));
	assert_int_equal(gb_http_url_check("file:///etc/passwd", 1, why,
	                                   sizeof(why)), -1);
	assert_non_null(strstr(why, "file:// scheme is not allowed"));
	for (size_t i = 0; i < sizeof(loopback) / sizeof(*loopback); i++)
		if (gb_http_url_check(loopback[i], 0, why, sizeof(why)) != 1)
			fail_msg("%s: not allowed as loopback: %s", loopback[i],
			         why);
	assert_int_equal(gb_http_url_check("https://ec2.example.com/", 0, why,
	                                   sizeof(why)), 0);
	assert_int_equal(gb_http_url_check("http://10.1.2.3/", 1, why,
	                                   sizeof(why)), 2);
	gb_http_client_free(c);

	/* the opt-in: warned once per client, and the request is sent
	 * (here to loopback through a proxy, as test_proxy) */
	assert_non_null(f);
	server_start(&s, NULL, NULL);
	url = gb_xasprintf("http://127.0.0.1:%u", s.port);
	setenv("http_proxy", url, 1);
	setenv("GPUBROKER_ALLOW_INSECURE_HTTP", "true", 1);
	c = client(NULL, NULL);
	unsetenv("GPUBROKER_ALLOW_INSECURE_HTTP");
	gb_log_set_file(f);
	assert_int_equal(get(c, "http://gb-insecure.invalid/a", 1, &resp, &err),
	                 0);
	gb_http_resp_free(&resp);
	assert_int_equal(get(c, "http://gb-insecure.invalid/b", 1, &resp, &err),
	                 0);
	gb_http_resp_free(&resp);
	gb_log_set_file(NULL);
	unsetenv("http_proxy");
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_int_equal(server_hits(&s), 2);
	assert_non_null(strstr(buf, "in clear over plain HTTP to "
	                            "http://gb-insecure.invalid/a"));
	assert_null(strstr(buf, "gb-insecure.invalid/b"));
	free(url);
	gb_http_client_free(c);
	server_stop(&s);
}

/* A self-signed certificate for 127.0.0.1: key and cert as PEM strings
 * (caller frees). */
static void make_cert(char **key_pem, char **cert_pem)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *n;
	X509_EXTENSION *ext;
	BIO *b;
	char *p;
	long len;
	assert_non_null(k);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, k);
	n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
	                           (const unsigned char *)"127.0.0.1", -1, -1, 0);
	X509_set_issuer_name(x, n);
	ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name,
	                          "IP:127.0.0.1");
	assert_non_null(ext);
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	assert_true(X509_sign(x, k, EVP_sha256()) > 0);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	len = BIO_get_mem_data(b, &p);
	*key_pem = gb_xasprintf("%.*s", (int)len, p);
	BIO_free(b);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, x);
	len = BIO_get_mem_data(b, &p);
	*cert_pem = gb_xasprintf("%.*s", (int)len, p);
	BIO_free(b);
	X509_free(x);
	EVP_PKEY_free(k);
}

/* TLS verification is always on: a certificate no CA vouches for is
 * refused (not retried); with ca_file naming it, the call succeeds. */
static void test_tls_verification(void **state)
{
	server s;
	char *key, *cert, *url;
	char path[] = "/tmp/gb-test-ca-XXXXXX";
	int fd;
	gb_http_client *c;
	gb_http_resp resp;
	gb_error err;
	(void)state;
	make_cert(&key, &cert);
	server_start(&s, key, cert);
	url = url_of(&s, "https", "/secure");

	c = client(NULL, NULL);
	assert_int_equal(get(c, url, 0, &resp, &err), -1);
	assert_int_equal(resp.status, 0);
	assert_non_null(strstr(err.message, "127.0.0.1"));
	gb_http_resp_free(&resp);
	gb_http_client_free(c);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, cert, strlen(cert)), (ssize_t)strlen(cert));
	close(fd);
	c = client(NULL, path);
	assert_int_equal(get(c, url, 0, &resp, &err), 0);
	assert_int_equal(resp.status, 200);
	gb_http_resp_free(&resp);
	gb_http_client_free(c);
	unlink(path);
	free(url);
	free(key);
	free(cert);
	server_stop(&s);
}

/* Debug log lines name the URL without its query (signatures, tokens). */
static void test_log_without_query(void **state)
{
	server s;
	gb_http_client *c = client(NULL, NULL);
	gb_http_resp resp;
	gb_error err;
	static const long st[] = {503, 200};
	FILE *f = tmpfile();
	char *url, buf[4096];
	size_t n;
	(void)state;
	assert_non_null(f);
	server_start(&s, NULL, NULL);
	server_script(&s, 2, st, NULL);
	url = gb_xasprintf("http://127.0.0.1:%u/q?X-Amz-Signature=f00dfeed1234&"
	                   "access_token=ya29.secretvalue", s.port);
	gb_log_set_file(f);
	gb_log_set_level(GB_LOG_DEBUG);
	assert_int_equal(get(c, url, 0, &resp, &err), 0);
	gb_http_resp_free(&resp);
	gb_log_set_level(GB_LOG_WARN);
	gb_log_set_file(NULL);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "/q?..."));
	assert_null(strstr(buf, "f00dfeed1234"));
	assert_null(strstr(buf, "ya29.secretvalue"));
	free(url);
	gb_http_client_free(c);
	server_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_retry_classes),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_proxy),
		cmocka_unit_test(test_tls_verification),
		cmocka_unit_test(test_log_without_query),
		cmocka_unit_test(test_insecure_endpoints),
	};
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
