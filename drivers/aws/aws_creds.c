/* aws_creds.c -- see aws_creds.h. */
#include "aws_creds.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_util.h"
#include "drvc_opts.h"

#define CREDS_FILE_MAX (1024 * 1024)

static int secret(const gb_host *h, const char *source, char *buf,
                  size_t cap)
{
	int n;
	if (!h->secret)
		return -1;
	n = h->secret(h->ctx, source, buf, cap);
	if (n <= 0) {
		buf[0] = '\0';
		return -1;
	}
	if ((size_t)n >= cap - 1 && strlen(buf) >= cap - 1) {
		/* truncated: a value this long is not a credential */
		OPENSSL_cleanse(buf, cap);
		return -1;
	}
	return n;
}

static void append(char *dst, size_t cap, const char *fmt, const char *a)
{
	size_t n = strlen(dst);
	if (n < cap)
		snprintf(dst + n, cap - n, fmt, a);
}

/* ---------------------------------------------------------------- INI */

static char *trim(char *s)
{
	char *e;
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int aws_creds_parse_ini(const char *text, size_t len, const char *profile,
                        aws_creds *c)
{
	char *copy = aws_xmalloc(len + 1), *line, *save = NULL;
	int in = 0, found = 0;
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *s = trim(line), *eq, *k, *v;
		if (*s == '\0' || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');
			char *name;
			if (!end) {
				in = 0;
				continue;
			}
			*end = '\0';
			name = trim(s + 1);
			if (strncmp(name, "profile ", 8) == 0)
				name = trim(name + 8);
			in = strcmp(name, profile) == 0;
			found |= in;
			continue;
		}
		if (!in || !(eq = strchr(s, '=')))
			continue;
		*eq = '\0';
		k = trim(s);
		v = trim(eq + 1);
		/* an inline comment needs whitespace before '#' or ';' */
		for (char *p = v; *p; p++)
			if ((*p == '#' || *p == ';') && p > v &&
			    (p[-1] == ' ' || p[-1] == '\t')) {
				*p = '\0';
				v = trim(v);
				break;
			}
		if (strcasecmp(k, "aws_access_key_id") == 0)
			snprintf(c->access_key, sizeof(c->access_key), "%s", v);
		else if (strcasecmp(k, "aws_secret_access_key") == 0)
			snprintf(c->secret_key, sizeof(c->secret_key), "%s", v);
		else if (strcasecmp(k, "aws_session_token") == 0)
			snprintf(c->session_token, sizeof(c->session_token),
			         "%s", v);
	}
	OPENSSL_cleanse(copy, len);
	free(copy);
	return found;
}

/* Reads the shared credentials file.  1 = credentials found. */
static int from_file(const gb_host *h, aws_creds *c)
{
	const char *env_path = getenv("AWS_SHARED_CREDENTIALS_FILE");
	const char *home = getenv("HOME");
	const char *profile = getenv("AWS_PROFILE");
	const char *why = NULL;
	char path[1024];
	FILE *f;
	char *text;
	size_t n;
	int found;

	if (!profile || !*profile)
		profile = drvc_opt(h, "profile");
	if (!profile)
		profile = "default";
	if (env_path && *env_path) {
		if (env_path[0] == '~' && env_path[1] == '/' && home)
			snprintf(path, sizeof(path), "%s%s", home, env_path + 1);
		else
			snprintf(path, sizeof(path), "%s", env_path);
	} else if (home && *home) {
		snprintf(path, sizeof(path), "%s/.aws/credentials", home);
	} else {
		append(c->tried, sizeof(c->tried), "%s",
		       "; no shared credentials file (HOME and "
		       "AWS_SHARED_CREDENTIALS_FILE unset)");
		return 0;
	}
	f = fopen(path, "rb");
	if (!f) {
		append(c->tried, sizeof(c->tried), "; shared credentials file "
		       "%.300s (cannot be opened)", path);
		return 0;
	}
	text = aws_xmalloc(CREDS_FILE_MAX + 1);
	n = fread(text, 1, CREDS_FILE_MAX + 1, f);
	fclose(f);
	if (n > CREDS_FILE_MAX) {
		free(text);
		append(c->tried, sizeof(c->tried), "; shared credentials file "
		       "%.300s (larger than 1 MiB, ignored)", path);
		return 0;
	}
	found = aws_creds_parse_ini(text, n, profile, c);
	OPENSSL_cleanse(text, n);
	free(text);
	if (!found)
		why = "profile not in the file";
	else if (!c->access_key[0])
		why = "profile lacks aws_access_key_id";
	else if (!c->secret_key[0])
		why = "profile lacks aws_secret_access_key";
	if (why) {
		char msg[600];
		snprintf(msg, sizeof(msg), "; shared credentials file %.300s, "
		         "profile [%.100s] (%s)", path, profile, why);
		append(c->tried, sizeof(c->tried), "%s", msg);
		aws_creds_clear(c);
		return 0;
	}
	if (h->redact) {
		h->redact(h->ctx, c->secret_key);
		if (c->session_token[0])
			h->redact(h->ctx, c->session_token);
	}
	snprintf(c->source, sizeof(c->source), "shared credentials file "
	         "%.300s, profile [%.100s]", path, profile);
	return 1;
}

void aws_creds_clear(aws_creds *c)
{
	OPENSSL_cleanse(c->secret_key, sizeof(c->secret_key));
	OPENSSL_cleanse(c->session_token, sizeof(c->session_token));
	c->access_key[0] = c->secret_key[0] = c->session_token[0] = '\0';
	c->have = 0;
}

void aws_creds_load(const gb_host *h, aws_creds *c)
{
	const char *ak = drvc_opt(h, "credentials.access_key_id");
	const char *sk = drvc_opt(h, "credentials.secret_access_key");
	const char *st = drvc_opt(h, "credentials.session_token");

	memset(c, 0, sizeof(*c));
	/* 1. sources named in the broker config */
	if (ak || sk) {
		if (ak && sk &&
		    secret(h, ak, c->access_key, sizeof(c->access_key)) > 0 &&
		    secret(h, sk, c->secret_key, sizeof(c->secret_key)) > 0) {
			if (st)
				secret(h, st, c->session_token,
				       sizeof(c->session_token));
			snprintf(c->source, sizeof(c->source),
			         "broker config (credentials.access_key_id = "
			         "%.200s)", ak);
			c->have = 1;
			return;
		}
		aws_creds_clear(c);
		snprintf(c->tried, sizeof(c->tried), "options "
		         "credentials.access_key_id and "
		         "credentials.secret_access_key (%s)",
		         ak && sk ? "a named source is empty or missing"
		                  : "only one of them is set");
	} else {
		snprintf(c->tried, sizeof(c->tried), "options "
		         "credentials.access_key_id/secret_access_key (unset)");
	}
	/* 2. environment */
	if (secret(h, "env:AWS_ACCESS_KEY_ID", c->access_key,
	           sizeof(c->access_key)) > 0 &&
	    secret(h, "env:AWS_SECRET_ACCESS_KEY", c->secret_key,
	           sizeof(c->secret_key)) > 0) {
		secret(h, "env:AWS_SESSION_TOKEN", c->session_token,
		       sizeof(c->session_token));
		snprintf(c->source, sizeof(c->source), "environment "
		         "(AWS_ACCESS_KEY_ID)");
		c->have = 1;
		return;
	}
	aws_creds_clear(c);
	append(c->tried, sizeof(c->tried), "%s", "; environment "
	       "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (not both set)");
	/* 3. shared credentials file */
	if (from_file(h, c)) {
		c->have = 1;
		c->tried[0] = '\0';
		return;
	}
}
