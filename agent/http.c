/* http.c -- the agent's one kind of request: a JSON POST to the broker. */
#include "agent.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char *p;
	size_t n;
} buf;

static size_t on_data(char *d, size_t sz, size_t nm, void *u)
{
	buf *b = u;
	size_t n = sz * nm;
	char *p;
	if (b->n + n > (1u << 20))
		return 0; /* an answer this big is not the broker's */
	if (!(p = realloc(b->p, b->n + n + 1)))
		return 0;
	memcpy(p + b->n, d, n);
	b->p = p;
	b->n += n;
	p[b->n] = '\0';
	return n;
}

long gba_http(const gba_conf *c, const char *method, const char *url,
              const char *const *headers, const char *body, char **resp)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hd = NULL;
	buf b = {NULL, 0};
	long status = 0;
	*resp = NULL;
	if (!h)
		return 0;
	for (size_t i = 0; headers && headers[i]; i++)
		hd = curl_slist_append(hd, headers[i]);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	else if (strcmp(method, "PUT") == 0)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "gpubroker-agent");
	if (*c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	*resp = b.p;
	return status;
}

long gba_post(const gba_conf *c, const char *url, const char *bearer,
              const char *body, char **resp)
{
	char auth[600];
	const char *hd[] = {"Content-Type: application/json", NULL, NULL};
	long st;
	if (bearer) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", bearer);
		hd[1] = auth;
	}
	st = gba_http(c, "POST", url, hd, body, resp);
	memset(auth, 0, sizeof(auth));
	return st;
}
