/* remote.c -- the CLI's client for the daemon's HTTP API (libcurl). */
#include "remote.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events_output.h"
#include "output.h"
#include "pool_output.h"
#include "spec.h"


static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	gb_buf *b = ud;
	if (b->len + size * n > (64u << 20))
		return 0;
	gb_buf_append(b, p, size * n);
	return size * n;
}

int gb_remote_call(const gb_cli *cli, const char *method, const char *path,
                   json_t *body, long *status, json_t **out)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hl = NULL;
	gb_buf resp = GB_BUF_INIT;
	char *url, *text = NULL, *auth = NULL;
	CURLcode cc;
	long code = 0;
	int rc = 0;
	size_t blen;

	*out = NULL;
	if (status)
		*status = 0;
	if (!h) {
		gb_cli_err(cli, "cannot create an HTTP handle");
		return GB_EXIT_FAIL;
	}
	blen = strlen(cli->server);
	url = gb_xasprintf("%.*s%s", (int)(blen && cli->server[blen - 1] == '/'
	                                           ? blen - 1
	                                           : blen),
	                   cli->server, path);
	if (cli->token) {
		auth = gb_xasprintf("Authorization: Bearer %s", cli->token);
		hl = curl_slist_append(hl, auth);
	}
	hl = curl_slist_append(hl, "Accept: application/json");
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		hl = curl_slist_append(hl, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "gpubroker-cli/" GB_VERSION);
	if (getenv("GPUBROKER_CA_FILE"))
		curl_easy_setopt(h, CURLOPT_CAINFO, getenv("GPUBROKER_CA_FILE"));
	cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		gb_cli_err(cli, "cannot reach the gpubroker daemon at %s: %s",
		           cli->server, curl_easy_strerror(cc));
		rc = GB_EXIT_FAIL;
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (status)
		*status = code;
	if (resp.len) {
		json_error_t je;
		*out = json_loadb(resp.data, resp.len, 0, &je);
		if (!*out) {
			gb_cli_err(cli, "%s %s: the daemon answered HTTP %ld with "
			                "something that is not JSON", method, path,
			           code);
			rc = GB_EXIT_FAIL;
			goto out;
		}
	}
	if (code < 200 || code >= 300) {
		json_t *e = json_object_get(*out, "error");
		const char *msg = json_string_value(json_object_get(e, "message"));
		gb_cli_err(cli, "%s (HTTP %ld)", msg ? msg : "request failed", code);
		json_t *diags = json_object_get(e, "details");
		size_t i;
		json_t *d;
		json_array_foreach(diags, i, d)
			if (json_is_string(d))
				fprintf(stderr, "  %s\n", json_string_value(d));
		json_decref(*out);
		*out = NULL;
		rc = GB_EXIT_FAIL;
	}
out:
	curl_slist_free_all(hl);
	curl_easy_cleanup(h);
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	free(text);
	free(url);
	gb_buf_free(&resp);
	return rc;
}

static char *pool_path(const char *pool, const char *suffix)
{
	char *enc = curl_easy_escape(NULL, pool, 0);
	char *p = gb_xasprintf("/v1/pools/%s%s", enc ? enc : "", suffix);
	curl_free(enc);
	return p;
}

/* Polls the pool until every desired instance runs; 1 / 0 timeout / -1. */
static int remote_wait(gb_cli *cli, const char *pool, int64_t timeout_s,
                       json_t **last)
{
	int64_t deadline = gb_mono_ms() + timeout_s * 1000;
	char *path = pool_path(pool, "");
	int rc = -1;
	*last = NULL;
	for (;;) {
		json_t *p = NULL;
		json_int_t running, desired;
		size_t i;
		json_t *in;
		if (gb_remote_call(cli, "GET", path, NULL, NULL, &p) != 0)
			break;
		json_decref(*last);
		*last = p;
		running = json_integer_value(json_object_get(p, "running"));
		desired = json_integer_value(json_object_get(p, "desired"));
		json_array_foreach(json_object_get(p, "instances"), i, in)
			if (strcmp(json_string_value(json_object_get(in, "state")),
			           "failed") == 0) {
				gb_cli_err(cli, "pool %s: instance %s failed", pool,
				           json_string_value(json_object_get(in, "name")));
				goto out;
			}
		if (running >= desired) {
			rc = 1;
			break;
		}
		if (timeout_s > 0 && gb_mono_ms() > deadline) {
			rc = 0;
			break;
		}
		gb_sleep_ms(1000);
	}
out:
	free(path);
	return rc;
}

int gb_remote_apply(gb_cli *cli, const gb_strv *files, int wait,
                    int64_t timeout_s, int yes)
{
	int rc = GB_EXIT_OK;
	json_t *results = json_array();
	for (size_t fi = 0; fi < files->n; fi++) {
		gb_spec_set set;
		gb_diags d = GB_DIAGS_INIT;
		gb_spec_opts so;
		memset(&so, 0, sizeof(so));
		if (gb_spec_load_file(files->v[fi], &so, &set, &d) != 0) {
			gb_diags_print(&d, stderr);
			gb_diags_free(&d);
			rc = GB_EXIT_FAIL;
			continue;
		}
		gb_diags_free(&d);
		for (size_t i = 0; i < set.n; i++) {
			const gb_pool_spec *spec = &set.pools[i];
			char *js = gb_pool_spec_to_json(spec);
			json_t *body = json_loads(js, 0, NULL), *res = NULL, *diff = NULL;
			char *path = pool_path(spec->name, "");
			char *dpath = pool_path(spec->name, "/diff");
			free(js);
			if (!yes || !cli->quiet) {
				if (gb_remote_call(cli, "POST", dpath, body, NULL, &diff) != 0) {
					rc = GB_EXIT_FAIL;
					goto next;
				}
				if (!cli->quiet)
					gb_print_diff(stderr, diff);
				json_decref(diff);
			}
			if (!yes) {
				char q[256];
				snprintf(q, sizeof(q), "Apply pool %s?", spec->name);
				if (!gb_cli_confirm(cli, q)) {
					gb_cli_err(cli, "pool %s: not applied", spec->name);
					rc = GB_EXIT_FAIL;
					goto next;
				}
			}
			if (gb_remote_call(cli, "PUT", path, body, NULL, &res) != 0) {
				rc = GB_EXIT_FAIL;
				goto next;
			}
			if (wait) {
				json_t *last = NULL;
				int w = remote_wait(cli, spec->name, timeout_s, &last);
				if (last) {
					json_decref(res);
					res = last;
				}
				if (w == 0) {
					gb_cli_err(cli, "pool %s: timed out waiting",
					           spec->name);
					rc = rc ? rc : GB_EXIT_TIMEOUT;
				} else if (w < 0) {
					rc = GB_EXIT_FAIL;
				}
			}
			if (res)
				json_array_append_new(results, res);
		next:
			json_decref(body);
			free(path);
			free(dpath);
		}
		gb_spec_set_free(&set);
	}
	gb_print_pools(cli, results, 1);
	json_decref(results);
	return rc;
}

int gb_remote_destroy(gb_cli *cli, const char *pool, int64_t timeout_s)
{
	char *path = pool_path(pool, "");
	json_t *res = NULL;
	int64_t deadline = gb_mono_ms() + (timeout_s > 0 ? timeout_s : 600) * 1000;
	int rc = gb_remote_call(cli, "DELETE", path, NULL, NULL, &res);
	while (rc == 0) {
		const char *st = json_string_value(json_object_get(res, "state"));
		if (st && strcmp(st, "destroyed") == 0)
			break;
		if (gb_mono_ms() > deadline) {
			gb_cli_err(cli, "pool %s: termination requested, but not yet "
			                "confirmed by the cloud; the daemon keeps "
			                "going ('gpubroker status %s')", pool, pool);
			rc = GB_EXIT_FAIL;
			break;
		}
		gb_sleep_ms(1000);
		json_decref(res);
		res = NULL;
		rc = gb_remote_call(cli, "GET", path, NULL, NULL, &res);
	}
	if (rc == 0) {
		json_t *a = json_array();
		json_array_append(a, res);
		if (cli->out != GB_OUT_TABLE)
			gb_print_pools(cli, a, 0);
		else if (!cli->quiet)
			printf("pool %s destroyed\n", pool);
		json_decref(a);
	}
	json_decref(res);
	free(path);
	return rc;
}

int gb_remote_scale(gb_cli *cli, const char *pool, int n)
{
	char *path = pool_path(pool, "/scale");
	json_t *body = json_pack("{s:i}", "count", n), *res = NULL;
	int rc = gb_remote_call(cli, "POST", path, body, NULL, &res);
	if (rc == 0) {
		json_t *a = json_array();
		json_array_append(a, res);
		gb_print_pools(cli, a, 1);
		json_decref(a);
	}
	json_decref(res);
	json_decref(body);
	free(path);
	return rc;
}

int gb_remote_status(gb_cli *cli, const char *pool)
{
	json_t *res = NULL, *a;
	char *path = pool ? pool_path(pool, "") : gb_xstrdup("/v1/pools");
	int rc = gb_remote_call(cli, "GET", path, NULL, NULL, &res);
	free(path);
	if (rc)
		return rc;
	if (pool) {
		a = json_array();
		json_array_append(a, res);
	} else {
		a = json_incref(json_object_get(res, "pools"));
		if (!a)
			a = json_array();
	}
	if (cli->out != GB_OUT_TABLE && pool)
		gb_out_render(cli, stdout, res, NULL, NULL);
	else
		gb_print_pools(cli, a, pool != NULL);
	json_decref(a);
	json_decref(res);
	return GB_EXIT_OK;
}

int gb_remote_events(gb_cli *cli, const char *pool, int follow,
                     int64_t since_ms)
{
	int64_t after = 0;
	char *enc = pool ? curl_easy_escape(NULL, pool, 0) : NULL;
	int rc = GB_EXIT_OK;
	for (;;) {
		json_t *res = NULL, *ev;
		char *path = gb_xasprintf("/v1/events?after=%lld&since_ms=%lld%s%s%s",
		                          (long long)after, (long long)since_ms,
		                          enc ? "&pool=" : "", enc ? enc : "",
		                          follow ? "&wait=25" : "");
		size_t i;
		json_t *e;
		rc = gb_remote_call(cli, "GET", path, NULL, NULL, &res);
		free(path);
		if (rc)
			break;
		ev = json_object_get(res, "events");
		json_array_foreach(ev, i, e) {
			json_int_t id = json_integer_value(json_object_get(e, "id"));
			if (id > after)
				after = id;
		}
		gb_print_events(cli, ev, follow);
		json_decref(res);
		if (!follow)
			break;
	}
	curl_free(enc);
	return rc;
}

int gb_remote_cost(gb_cli *cli, const char *by, int64_t since_s)
{
	char *enc = curl_easy_escape(NULL, by ? by : "pool", 0);
	char *path = gb_xasprintf("/v1/cost?by=%s&since=%lld", enc ? enc : "pool",
	                          (long long)since_s);
	json_t *res = NULL;
	int rc = gb_remote_call(cli, "GET", path, NULL, NULL, &res);
	if (rc == 0)
		gb_print_cost(cli, res);
	json_decref(res);
	curl_free(enc);
	free(path);
	return rc;
}

int gb_remote_gc(gb_cli *cli, int adopt)
{
	json_t *res = NULL;
	int rc = gb_remote_call(cli, "POST", adopt ? "/v1/gc?adopt=1" : "/v1/gc",
	                        NULL, NULL, &res);
	if (rc == 0) {
		gb_print_gc(cli, json_object_get(res, "orphans"));
		if (json_is_true(json_object_get(res, "incomplete")))
			rc = gb_gc_incomplete(cli);
	}
	json_decref(res);
	return rc;
}
