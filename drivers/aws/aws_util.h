/*
 * aws_util.h -- small helpers of the AWS driver: allocation that aborts
 * on failure (the project's rule), UTC time formatting and parsing.
 */
#ifndef AWS_UTIL_H
#define AWS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gpubroker/driver.h"

/* Never return NULL: abort() when memory is exhausted.  Free with free(). */
void *aws_xmalloc(size_t n);
void *aws_xcalloc(size_t n, size_t size);
void *aws_xrealloc(void *p, size_t n);
char *aws_xstrdup(const char *s);

/* unix ms -> "YYYYMMDDTHHMMSSZ" (out: 17 bytes). */
void aws_fmt_amz_date(int64_t unix_ms, char out[17]);
/* unix ms -> "YYYY-MM-DDTHH:MM:SSZ" (out: 21 bytes). */
void aws_fmt_iso8601(int64_t unix_ms, char out[21]);
/* "YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm]" -> unix seconds; -1 if invalid. */
int64_t aws_parse_iso8601(const char *s);

/* Case-insensitive ASCII comparison of whole strings. */
int aws_strieq(const char *a, const char *b);

#endif
