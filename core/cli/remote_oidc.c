/* remote_oidc.c -- the CLI signing in to a daemon as a CI job: the job's
 * OIDC ID token (a file, GPUBROKER_OIDC_TOKEN, or asked of the GitHub
 * Actions runner) exchanged at POST /v1/auth/oidc for a short-lived
 * broker token, so a workflow stores no secret (README, 'CI
 * pipelines'). */
#include "remote.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define MAX_ID_TOKEN (64u << 10)

static char *exchanged;  /* the broker token, until 30 s before ... */
static int64_t exchanged_exp; /* ... this (unix s): then a new exchange
                                 (on GitHub Actions a new ID token) */
static int exchanging;   /* the exchange's own call needs no bearer */

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	gb_buf *b = ud;
	if (b->len + size * n > MAX_ID_TOKEN)
		return 0;
	gb_buf_append(b, p, size * n);
	return size * n;
}

/* GitHub Actions: GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=AUD with
 * the runner's request token -> {"value": ID token}.  Caller frees. */
static char *github_id_token(const gb_cli *cli, const char *url,
                             const char *rtok)
{
	const char *aud = cli->oidc_audience ? cli->oidc_audience : "gpubroker";
	CURL *h = curl_easy_init();
	struct curl_slist *hl = NULL;
	gb_buf body = GB_BUF_INIT;
	char *full = NULL, *auth = NULL, *esc, *tok = NULL;
	long code = 0;
	CURLcode cc;
	json_t *j;
	if (!h)
		return NULL;
	esc = curl_easy_escape(h, aud, 0);
	full = gb_xasprintf("%s%saudience=%s", url, strchr(url, '?') ? "&" : "?",
	                    esc ? esc : "");
	curl_free(esc);
	auth = gb_xasprintf("Authorization: bearer %s", rtok);
	hl = curl_slist_append(hl, auth);
	hl = curl_slist_append(hl, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_URL, full);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (cc != CURLE_OK || code != 200) {
		gb_cli_err(cli, "cannot get the job's OIDC ID token from GitHub "
		           "Actions (%s): give the workflow 'permissions: "
		           "id-token: write'",
		           cc != CURLE_OK ? curl_easy_strerror(cc) : "HTTP error");
	} else if (!(j = json_loadb(body.data, body.len, 0, NULL)) ||
	           !json_string_value(json_object_get(j, "value"))) {
		json_decref(j);
		gb_cli_err(cli, "GitHub Actions answered the ID token request "
		           "without a \"value\"");
	} else {
		tok = gb_xstrdup(json_string_value(json_object_get(j, "value")));
		json_decref(j);
	}
	curl_slist_free_all(hl);
	curl_easy_cleanup(h);
	memset(auth, 0, strlen(auth));
	free(auth);
	free(full);
	if (body.data)
		memset(body.data, 0, body.len);
	gb_buf_free(&body);
	return tok;
}

/* The job's ID token (caller frees), NULL with *failed set when a
 * source is there but unusable, NULL alone when there is none. */
static char *id_token(const gb_cli *cli, int *failed)
{
	const char *env = getenv("GPUBROKER_OIDC_TOKEN");
	const char *url = getenv("ACTIONS_ID_TOKEN_REQUEST_URL");
	const char *rtok = getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN");
	char *s = NULL;
	size_t len = 0;
	*failed = 0;
	if (cli->oidc_token_file) {
		if (gb_read_file(cli->oidc_token_file, MAX_ID_TOKEN, &s, &len) != 0) {
			gb_cli_err(cli, "--oidc-token-file %s: cannot read it (the "
			           "CI job's ID token, e.g. GitLab's id_tokens: "
			           "variable written to a file)",
			           cli->oidc_token_file);
			*failed = 1;
			return NULL;
		}
		while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' ||
		               s[len - 1] == ' '))
			s[--len] = '\0';
		return s;
	}
	if (env && *env)
		return gb_xstrdup(env);
	if (url && *url && rtok && *rtok) {
		if (!(s = github_id_token(cli, url, rtok)))
			*failed = 1;
		return s;
	}
	return NULL;
}

/* The broker token of an ID token is kept until it expires, in
 * $XDG_CACHE_HOME/gpubroker (or ~/.cache/gpubroker), 0600, named by a
 * hash of the server and the ID token: a job that holds one ID token for
 * its whole life (GitLab's id_tokens:) runs gpubroker several times, and
 * the daemon exchanges each ID token once only (replays are refused).
 * Caller frees the path; NULL without a home. */
static char *cache_path(const gb_cli *cli, const char *idt, int make)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *dir, *key, *path, hex[65];
	if (xdg && xdg[0] == '/')
		dir = gb_xasprintf("%s/gpubroker", xdg);
	else if (home && home[0] == '/')
		dir = gb_xasprintf("%s/.cache/gpubroker", home);
	else
		return NULL;
	if (make) {
		char *parent = gb_xstrndup(dir, (size_t)(strrchr(dir, '/') - dir));
		(void)mkdir(parent, 0700);
		free(parent);
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			free(dir);
			return NULL;
		}
	}
	key = gb_xasprintf("%s\n%s", cli->server, idt);
	gb_sha256_hex(key, strlen(key), hex);
	free(key);
	path = gb_xasprintf("%s/oidc-%.32s", dir, hex);
	free(dir);
	return path;
}

/* "TOKEN EXPIRES_S" from the cache, unexpired for a minute more.
 * Caller frees; NULL when none. */
static char *cache_get(const gb_cli *cli, const char *idt, int64_t *expires)
{
	char *path = cache_path(cli, idt, 0), *s = NULL, *sp, *tok = NULL;
	size_t len;
	int64_t exp;
	if (path && gb_read_file(path, 4096, &s, &len) == 0 &&
	    (sp = strchr(s, ' '))) {
		*sp++ = '\0';
		sp[strcspn(sp, "\n")] = '\0';
		if (gb_parse_int64(sp, &exp) == 0 &&
		    exp > gb_now_ms() / 1000 + 60) {
			tok = gb_xstrdup(s);
			*expires = exp;
		}
	}
	if (s) {
		memset(s, 0, strlen(s));
		free(s);
	}
	free(path);
	return tok;
}

static void cache_put(const gb_cli *cli, const char *idt, const char *tok,
                      int64_t expires_in)
{
	char *path = cache_path(cli, idt, 1), *line;
	int fd;
	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	          0600);
	line = gb_xasprintf("%s %lld\n", tok,
	                    (long long)(gb_now_ms() / 1000 + expires_in));
	if (fd >= 0) {
		if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
			(void)unlink(path);
		close(fd);
	}
	memset(line, 0, strlen(line));
	free(line);
	free(path);
}

int gb_remote_bearer(const gb_cli *cli, const char **out)
{
	char *idt;
	int failed, rc;
	long status = 0;
	json_t *body, *resp = NULL;
	const char *tok;
	*out = cli->token;
	if (cli->token || exchanging)
		return 0;
	if (exchanged && exchanged_exp > gb_now_ms() / 1000 + 30) {
		*out = exchanged;
		return 0;
	}
	if (exchanged) { /* a long wait outlived it */
		memset(exchanged, 0, strlen(exchanged));
		free(exchanged);
		exchanged = NULL;
	}
	if (!(idt = id_token(cli, &failed)))
		return failed ? GB_EXIT_FAIL : 0;
	gb_redact_register(idt);
	if ((exchanged = cache_get(cli, idt, &exchanged_exp))) {
		memset(idt, 0, strlen(idt));
		free(idt);
		gb_redact_register(exchanged);
		*out = exchanged;
		return 0;
	}
	body = json_pack("{s:s}", "token", idt);
	exchanging = 1;
	rc = gb_remote_call(cli, "POST", "/v1/auth/oidc", body, &status, &resp);
	exchanging = 0;
	json_decref(body);
	tok = rc == 0 ? json_string_value(json_object_get(resp, "token")) : NULL;
	if (rc == 0 && !tok) {
		gb_cli_err(cli, "the daemon's OIDC exchange answered no token");
		rc = GB_EXIT_FAIL;
	}
	if (tok)
		cache_put(cli, idt, tok, json_integer_value(json_object_get(
		                             resp, "expires_in")));
	memset(idt, 0, strlen(idt));
	free(idt);
	if (rc != 0) {
		json_decref(resp);
		return rc; /* printed: the daemon's reason (401 and why) */
	}
	exchanged = gb_xstrdup(tok);
	exchanged_exp = gb_now_ms() / 1000 +
	                json_integer_value(json_object_get(resp, "expires_in"));
	gb_redact_register(exchanged);
	if (cli->verbose)
		gb_cli_info(cli, "signed in as %s (role %s, team %s) until %s",
		            json_string_value(json_object_get(resp, "name")),
		            json_string_value(json_object_get(resp, "role")),
		            json_string_value(json_object_get(resp, "team")),
		            json_string_value(json_object_get(resp, "expires_at")));
	json_decref(resp);
	*out = exchanged;
	return 0;
}
