/* url.h -- where gpubroker may send a request (url.c). */
#ifndef GB_URL_H
#define GB_URL_H

#include <stddef.h>

/* Where gpubroker may send a request (its transport, and the CLI's
 * client): https:// anywhere; http:// only to loopback (127.0.0.0/8, ::1,
 * localhost) unless allow_insecure; no other scheme.  Returns 0 (https),
 * 1 (plain HTTP to loopback), 2 (plain HTTP elsewhere, allowed by
 * allow_insecure: the caller warns), or -1 with why saying what and how
 * to fix (the URL is named without its query). */
int gb_http_url_check(const char *url, int allow_insecure, char *why,
                      size_t cap);
/* The same, for a URL that carries `what` (said in the refusal, e.g.
 * "credentials"), whose opt-in is `optin` (e.g. an option's name). */
int gb_url_check(const char *url, int allow_insecure, const char *what,
                 const char *optin, char *why, size_t cap);
/* GPUBROKER_ALLOW_INSECURE_HTTP is set to 1, true or yes. */
int gb_http_insecure_env(void);
/* The URL for logs and errors: its query (it may carry secrets) shown as
 * "?...".  Caller frees. */
char *gb_url_for_log(const char *url);

#endif
