/* api_guard.c -- what a browser could be made to send: cross-origin
 * writes and DNS rebinding (README, 'The daemon', "Browsers").
 *
 * A page of another origin can make a browser send "simple" requests to
 * the daemon without asking first (a POST with a text/plain, form or
 * multipart body, no preflight), and a name that the attacker's DNS
 * points at 127.0.0.1 makes the daemon that origin's own server.  Bearer
 * tokens are not sent by a browser on its own, so this matters most for
 * a daemon without tokens (loopback only); the rules hold for every
 * daemon:
 *   - Host: with daemon.allowed_hosts set, or without tokens, only an IP
 *     literal, localhost (or a name under .localhost), the listen
 *     address's host or a name of daemon.allowed_hosts (403 otherwise);
 *   - a change (any method but GET and HEAD) with an Origin header must
 *     come from the daemon's own origin (the console is served by the
 *     daemon: same host and port as Host) or a name of
 *     daemon.allowed_hosts (403);
 *   - a request body must be typed as the API's: application/json, or a
 *     YAML type for a spec (415). */
#include "api.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

/* Splits "name:port" / "[v6]:port" into its host (into out) and
 * returns the port part ("" when none). */
static const char *host_part(const char *h, char *out, size_t cap)
{
	size_t n;
	const char *port;
	if (h[0] == '[') {
		const char *e = strchr(h, ']');
		n = e ? (size_t)(e - h) + 1 : strlen(h);
	} else {
		const char *c = strchr(h, ':');
		n = c ? (size_t)(c - h) : strlen(h);
	}
	port = h[n] == ':' ? h + n + 1 : "";
	if (n >= cap)
		n = cap - 1;
	memcpy(out, h, n);
	out[n] = '\0';
	return port;
}

static int is_ip_literal(const char *host)
{
	unsigned char buf[16];
	char v6[64];
	size_t n = strlen(host);
	if (inet_pton(AF_INET, host, buf) == 1)
		return 1;
	if (n > 2 && n < sizeof(v6) && host[0] == '[' && host[n - 1] == ']') {
		memcpy(v6, host + 1, n - 2);
		v6[n - 2] = '\0';
		return inet_pton(AF_INET6, v6, buf) == 1;
	}
	return 0;
}

static int in_allowed(const gb_config *cfg, const char *host)
{
	for (size_t i = 0; i < cfg->allowed_hosts.n; i++)
		if (strcasecmp(cfg->allowed_hosts.v[i], host) == 0)
			return 1;
	return 0;
}

/* Whether a Host header's name is one this daemon answers to. */
static int host_ok(const gb_config *cfg, const char *host)
{
	size_t n = strlen(host);
	char listen[256];
	if (is_ip_literal(host) || strcasecmp(host, "localhost") == 0 ||
	    (n > 10 && strcasecmp(host + n - 10, ".localhost") == 0) ||
	    in_allowed(cfg, host))
		return 1;
	if (cfg->listen) {
		host_part(cfg->listen, listen, sizeof(listen));
		if (listen[0] && strcasecmp(listen, host) == 0)
			return 1;
	}
	return 0;
}

int gb_api_guard_host(gb_api_req *r)
{
	const gb_config *cfg = r->d->cfg;
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                            MHD_HTTP_HEADER_HOST);
	char host[256];
	if (!h || (cfg->ntokens && !cfg->allowed_hosts.n))
		return 0;
	host_part(h, host, sizeof(host));
	if (host_ok(cfg, host))
		return 0;
	gb_api_error(r, 403, "ForbiddenHost",
	             "this daemon does not answer to the name %.100s (Host "
	             "header): use its address (%s), localhost, or a name "
	             "listed in daemon.allowed_hosts; other names are "
	             "refused so that a web page cannot reach it through "
	             "its own DNS name (DNS rebinding)",
	             host, cfg->listen ? cfg->listen : "127.0.0.1");
	return -1;
}

/* 1 when the Origin (scheme://host[:port]) is this daemon's own: the
 * same host and port as the Host header, or a name of
 * daemon.allowed_hosts. */
static int same_origin(const gb_config *cfg, const char *origin,
                       const char *host_hdr)
{
	const char *p = strstr(origin, "://"), *oport, *hport;
	char ohost[256], hhost[256];
	if (!p)
		return 0;
	oport = host_part(p + 3, ohost, sizeof(ohost));
	if (in_allowed(cfg, ohost))
		return 1;
	if (!host_hdr)
		return 0;
	hport = host_part(host_hdr, hhost, sizeof(hhost));
	return strcasecmp(ohost, hhost) == 0 && strcmp(oport, hport) == 0;
}

int gb_api_type_in(const char *ct, const char *const *types, size_t n)
{
	for (size_t i = 0; ct && i < n; i++) {
		size_t len = strlen(types[i]);
		if (strncasecmp(ct, types[i], len) == 0 &&
		    (ct[len] == '\0' || ct[len] == ';' || ct[len] == ' '))
			return 1;
	}
	return 0;
}

/* The body's type is the API's: JSON, or YAML (a spec file). */
static int type_ok(const char *ct)
{
	static const char *const types[] = {
		"application/json", "application/yaml", "application/x-yaml",
		"text/yaml"};
	return gb_api_type_in(ct, types, GB_ARRAY_LEN(types));
}

int gb_api_guard_write(gb_api_req *r)
{
	const gb_config *cfg = r->d->cfg;
	const char *origin, *ct;
	if (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0)
		return 0;
	origin = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                     MHD_HTTP_HEADER_ORIGIN);
	if (origin &&
	    !same_origin(cfg, origin,
	                 MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                             MHD_HTTP_HEADER_HOST))) {
		gb_api_error(r, 403, "CrossOrigin",
		             "a change from the web page of another origin "
		             "(%.100s) is refused: use the console this daemon "
		             "serves, the CLI or a client that sends no Origin; "
		             "behind a proxy that changes the Host header, list "
		             "the public name in daemon.allowed_hosts", origin);
		return -1;
	}
	ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	                                 MHD_HTTP_HEADER_CONTENT_TYPE);
	if (r->body.len && !type_ok(ct)) {
		gb_api_error(r, 415, "UnsupportedMediaType",
		             "the body's Content-Type is %.80s; send it as "
		             "application/json (a pool spec may also be "
		             "application/yaml)", ct ? ct : "not given");
		return -1;
	}
	return 0;
}
