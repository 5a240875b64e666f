/*
 * log.h -- process-wide logging with secret redaction.
 *
 * Every line passes through gb_redact: values registered with
 * gb_redact_register (credentials, tokens) are replaced by "[REDACTED]",
 * and so are the values of Authorization headers, bearer tokens, SigV4
 * signatures and secret-looking URL parameters.  Lines go to stderr as
 * text ("2026-11-22T13:42:00Z info  aws: message") or JSON lines.
 */
#ifndef GB_LOG_H
#define GB_LOG_H

#include "util.h"

void gb_log_set_level(gb_log_level lvl);
gb_log_level gb_log_get_level(void);
void gb_log_set_json(int on);
/* Redirect output (default stderr); NULL = stderr.  Borrowed. */
void gb_log_set_file(FILE *f);

void gb_log(gb_log_level lvl, const char *component, const char *fmt, ...)
	GB_PRINTF(3, 4);
void gb_logv(gb_log_level lvl, const char *component, const char *fmt,
             va_list ap) GB_PRINTF(3, 0);

/* A tap sees every line gb_log formats while it is set, whatever the
 * level (lines below the level are formatted for it but not written):
 * the component and the message after redaction, both borrowed for the
 * call.  It runs under the log's output lock, so it must not log.  One
 * tap at a time; NULL removes it.  `gpubroker drivers test` uses it to
 * check what a driver's lines would show. */
typedef void (*gb_log_tap_fn)(void *ud, gb_log_level lvl,
                              const char *component, const char *msg);
void gb_log_set_tap(gb_log_tap_fn fn, void *ud);

/* Register a secret value (copied) so it never appears in logs.  Values
 * shorter than 4 bytes are ignored (too likely to match innocently). */
void gb_redact_register(const char *value);
/* Returns a redacted copy of s; caller frees. */
char *gb_redact(const char *s);
/* 1 when text contains a registered secret value (the ones pass 2 of
 * gb_redact replaces), else 0. */
int gb_redact_has_secret(const char *text);
/* How many secret values are registered. */
size_t gb_redact_count(void);
/* Forget every registered secret (tests). */
void gb_redact_clear(void);

#endif
