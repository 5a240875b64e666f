/* url.c -- where gpubroker may send a request: the check its HTTP
 * transport (host/http.c), the CLI's client and the pool spec's
 * serve.webhook share (url.h). */
#include "url.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* Host part of a URL for logs (no query string: it may carry secrets). */
char *gb_url_for_log(const char *url)
{
	const char *q = strchr(url, '?');
	return q ? gb_xasprintf("%.*s?...", (int)(q - url), url)
	         : gb_xstrdup(url);
}

static int host_is_loopback(const char *host)
{
	unsigned char a[16];
	char h[64];
	size_t n = strlen(host);
	if (strcasecmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, a) == 1)
		return a[0] == 127;
	if (n >= 2 && n < sizeof(h) + 2 && host[0] == '[' &&
	    host[n - 1] == ']') {
		memcpy(h, host + 1, n - 2);
		h[n - 2] = '\0';
		host = h;
	}
	return inet_pton(AF_INET6, host, a) == 1 &&
	       memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0;
}

int gb_http_insecure_env(void)
{
	const char *v = getenv("GPUBROKER_ALLOW_INSECURE_HTTP");
	return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
	             strcasecmp(v, "yes") == 0);
}

int gb_http_url_check(const char *url, int allow_insecure, char *why,
                      size_t cap)
{
	return gb_url_check(url, allow_insecure, "credentials",
	                    "allow_insecure_http: \"true\" (a driver option) "
	                    "or GPUBROKER_ALLOW_INSECURE_HTTP=1", why, cap);
}

int gb_url_check(const char *url, int allow_insecure, const char *what,
                 const char *optin, char *why, size_t cap)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *shown = gb_url_for_log(url ? url : "");
	int rc = -1;

	if (!u || !url ||
	    curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) !=
	            CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
		snprintf(why, cap, "\"%s\" is not an https:// URL", shown);
	} else if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0) {
		snprintf(why, cap, "\"%s\": the %s:// scheme is not allowed; "
		         "use https:// (http:// only to 127.0.0.1, ::1 or "
		         "localhost)", shown, scheme);
	} else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	           !*host) {
		snprintf(why, cap, "\"%s\" names no host", shown);
	} else if (strcmp(scheme, "https") == 0) {
		rc = 0;
	} else if (host_is_loopback(host)) {
		rc = 1;
	} else if (allow_insecure) {
		rc = 2;
	} else {
		snprintf(why, cap, "\"%s\": plain http:// to %s would send "
		         "%s in clear; use https://, or -- only on a network you "
		         "trust -- opt in with %s (http:// is always allowed to "
		         "127.0.0.1, ::1 and localhost)", shown, host, what, optin);
	}
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	free(shown);
	return rc;
}
