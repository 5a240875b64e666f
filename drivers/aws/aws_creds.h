/*
 * aws_creds.h -- where the AWS driver's credentials come from, in order:
 *   1. the broker config: options credentials.access_key_id /
 *      credentials.secret_access_key / credentials.session_token, each a
 *      secret *source* ("env:NAME" or "file:/path") read with host->secret;
 *   2. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 *      AWS_SESSION_TOKEN (through host->secret, so they are redacted);
 *   3. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 *      $HOME/.aws/credentials), profile AWS_PROFILE, else option "profile",
 *      else "default"; values read there are registered with host->redact.
 * Read once at init; the struct is then read-only (thread-safe).
 */
#ifndef AWS_CREDS_H
#define AWS_CREDS_H

#include <stddef.h>

#include "gpubroker/driver.h"

typedef struct aws_creds {
	int have;                 /* 1 when key id and secret were found */
	char access_key[256];
	char secret_key[256];
	char session_token[8192]; /* "" when none */
	char source[512];         /* where they came from (no secrets) */
	char tried[768];          /* when !have: what was tried, and how to
	                             fix it */
} aws_creds;

/* Never fails: without credentials c->have is 0 and c->tried explains. */
void aws_creds_load(const gb_host *host, aws_creds *c);
/* Wipes the secrets. */
void aws_creds_clear(aws_creds *c);

/* Parse an INI credentials file held in memory (exposed for tests):
 * finds [profile] and copies its keys; returns 1 when the profile exists,
 * 0 when it does not. */
int aws_creds_parse_ini(const char *text, size_t len, const char *profile,
                        aws_creds *c);

#endif
