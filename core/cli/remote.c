/* remote.c -- the CLI's client for the daemon's HTTP API (libcurl). */
#include "remote.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	gb_buf *b = ud;
	if (b->len + size * n > (64u << 20))
		return 0;
	gb_buf_append(b, p, size * n);
	return size * n;
}

/* Failures a restarting daemon, a replica failing over or a load
 * balancer without a healthy replica cause; trying again may help.  A
 * malformed URL or a certificate that does not verify is not one. */
static int transient(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* The bearer token goes only over https, or plain http to loopback
 * (or elsewhere with GPUBROKER_ALLOW_INSECURE_HTTP=1, warned once);
 * libcurl is held to that scheme.  0, or -1 after saying why. */
static int server_allowed(const gb_cli *cli, CURL *h, const char *url)
{
	static int warned;
	char why[600];
	int u = gb_http_url_check(url, gb_http_insecure_env(), why,
	                          sizeof(why));
	if (u < 0) {
		gb_cli_err(cli, "the daemon's address (--server or "
		                "GPUBROKER_SERVER): %s", why);
		return -1;
	}
	if (u == 2 && !warned) {
		warned = 1;
		fprintf(stderr, "gpubroker: warning: sending the API token in "
		                "clear over plain HTTP to %s "
		                "(GPUBROKER_ALLOW_INSECURE_HTTP is set)\n",
		        cli->server);
	}
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, u == 0 ? "https" : "http");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	return 0;
}

int gb_remote_call(const gb_cli *cli, const char *method, const char *path,
                   json_t *body, long *status, json_t **out)
{
	return gb_remote_try(cli, method, path, body, 0, status, out, NULL, 0);
}

int gb_remote_try(const gb_cli *cli, const char *method, const char *path,
                  json_t *body, long timeout_s, long *status, json_t **out,
                  char *why, size_t cap)
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
	{
		const char *bearer = NULL;
		if (gb_remote_bearer(cli, &bearer) != 0) {
			curl_easy_cleanup(h);
			free(url);
			return GB_EXIT_FAIL;
		}
		if (bearer) {
			auth = gb_xasprintf("Authorization: Bearer %s", bearer);
			hl = curl_slist_append(hl, auth);
		}
	}
	hl = curl_slist_append(hl, "Accept: application/json");
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		hl = curl_slist_append(hl, "Content-Type: application/json");
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
	}
	if (server_allowed(cli, h, url) != 0) {
		rc = GB_EXIT_FAIL;
		goto out;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	if (timeout_s <= 0 || timeout_s > 120)
		timeout_s = 120;
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout_s < 10 ? timeout_s
	                                                          : 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "gpubroker-cli/" GB_VERSION);
	if (getenv("GPUBROKER_CA_FILE"))
		curl_easy_setopt(h, CURLOPT_CAINFO, getenv("GPUBROKER_CA_FILE"));
	cc = curl_easy_perform(h);
	if (cc != CURLE_OK && why && transient(cc)) {
		snprintf(why, cap, "%s", curl_easy_strerror(cc));
		rc = GB_REMOTE_UNREACHABLE;
		goto out;
	}
	if (cc != CURLE_OK) {
		gb_cli_err(cli, "cannot reach the gpubroker daemon at %s: %s",
		           cli->server, curl_easy_strerror(cc));
		rc = GB_EXIT_FAIL;
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (status)
		*status = code;
	if (why && (code == 502 || code == 503 || code == 504)) {
		/* a proxy without a healthy replica, a replica without its
		 * database, a daemon stopping: its body need not be JSON */
		json_t *j = json_loadb(resp.data, resp.len, 0, NULL);
		const char *msg = json_string_value(json_object_get(
		    json_object_get(j, "error"), "message"));
		snprintf(why, cap, "HTTP %ld%s%s", code, msg ? ": " : "",
		         msg ? msg : "");
		json_decref(j);
		rc = GB_REMOTE_UNREACHABLE;
		goto out;
	}
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
	if (code == 404 && cli->quiet_not_found) {
		json_decref(*out);
		*out = NULL;
		rc = GB_EXIT_FAIL;
	} else if (code < 200 || code >= 300) {
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
