/*
 * util.h -- small helpers shared by the core: memory, growable buffers,
 * string vectors, durations, clocks, hashing.
 *
 * Memory policy: gb_xmalloc and friends abort the process with a message
 * when the allocator fails (as redis does); callers never check for NULL.
 * Anything returned by a gb_x* / *_dup function is owned by the caller and
 * released with free().
 */
#ifndef GB_UTIL_H
#define GB_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpubroker/driver.h"

#define GB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define GB_UNUSED(x) ((void)(x))

/* On every fallible function's declaration (HACKING.md, "Errors"): a
 * caller that drops the result gets a warning, an error under -Werror.
 * A result dropped on purpose goes through GB_IGNORE (GCC does not take
 * a cast to void for an answer), with a comment saying why. */
#if defined(__GNUC__) || defined(__clang__)
#define GB_MUST_CHECK __attribute__((warn_unused_result))
#else
#define GB_MUST_CHECK
#endif
#define GB_IGNORE(x) \
	do { \
		if (x) { \
		} \
	} while (0)

/* Version of gpubroker itself. */
#define GB_VERSION "0.1.0"

/* For long-running multi-threaded processes (serve): at most one malloc
 * arena per CPU (at least 2) instead of glibc's 8 per CPU, unless the
 * environment sets MALLOC_ARENA_MAX.  With 16 describe workers and a
 * thread per HTTP connection each arena kept its own high-water mark:
 * the reconciler's RSS grew pass after pass (bench/reconcile, 10,000
 * instances, 8 passes: 85 -> 119 MB with 16 arenas, 47 -> 53 MB with 2,
 * at the same CPU).  No-op outside glibc. */
void gb_mem_limit_arenas(void);
void *gb_xmalloc(size_t n);
void *gb_xcalloc(size_t n, size_t size);
void *gb_xrealloc(void *p, size_t n);
/* NULL in, NULL out. */
char *gb_xstrdup(const char *s);
char *gb_xstrndup(const char *s, size_t n);
/* printf into a new string; caller frees. */
char *gb_xasprintf(const char *fmt, ...) GB_PRINTF(1, 2);

/* Interned strings: each distinct string stored once, owned by the set.
 * Zero-initialise; not thread-safe (the owner serialises).  Returned
 * pointers are borrowed until gb_strset_free, and equal strings give the
 * same pointer. */
typedef struct gb_strset {
	char **slots;
	size_t cap; /* power of two */
	size_t n;
} gb_strset;
/* s's copy in the set, added when new; NULL for NULL. */
const char *gb_strset_intern(gb_strset *set, const char *s);
/* s's copy when the set has it, else NULL. */
const char *gb_strset_find(const gb_strset *set, const char *s);
void gb_strset_free(gb_strset *set);
char *gb_xvasprintf(const char *fmt, va_list ap) GB_PRINTF(1, 0);

/* Growable byte buffer, always NUL-terminated when len > 0 or after any
 * append.  Initialise with GB_BUF_INIT.  Owns `data`. */
typedef struct gb_buf {
	char *data;
	size_t len;
	size_t cap;
} gb_buf;
#define GB_BUF_INIT {NULL, 0, 0}

/* Room for extra more bytes (and the NUL) without another allocation. */
void gb_buf_reserve(gb_buf *b, size_t extra);
void gb_buf_append(gb_buf *b, const void *p, size_t n);
void gb_buf_puts(gb_buf *b, const char *s);
void gb_buf_putc(gb_buf *b, char c);
void gb_buf_printf(gb_buf *b, const char *fmt, ...) GB_PRINTF(2, 3);
void gb_buf_vprintf(gb_buf *b, const char *fmt, va_list ap) GB_PRINTF(2, 0);
void gb_buf_reset(gb_buf *b);
/* Returns the string (never NULL: "" for an empty buffer) and leaves b
 * empty; the caller frees the result. */
char *gb_buf_take(gb_buf *b);
/* Never NULL. Borrowed from b. */
const char *gb_buf_str(const gb_buf *b);
void gb_buf_free(gb_buf *b);

/* A vector of owned strings. */
typedef struct gb_strv {
	char **v;
	size_t n;
} gb_strv;

void gb_strv_push(gb_strv *sv, const char *s); /* copies s */
void gb_strv_push_take(gb_strv *sv, char *s);  /* takes s */
int gb_strv_contains(const gb_strv *sv, const char *s);
/* Case-insensitive variant. */
int gb_strv_contains_ci(const gb_strv *sv, const char *s);
void gb_strv_free(gb_strv *sv);
/* Joined with sep; caller frees. */
char *gb_strv_join(const gb_strv *sv, const char *sep);

/* Ordered key/value pairs, both owned. */
typedef struct gb_kvs {
	char **keys;
	char **vals;
	size_t n;
} gb_kvs;

void gb_kvs_set(gb_kvs *kv, const char *key, const char *val);
/* Borrowed, NULL when absent. */
const char *gb_kvs_get(const gb_kvs *kv, const char *key);
void gb_kvs_free(gb_kvs *kv);

/* Durations: "90s", "30m", "6h", "2d", "1h30m", "1w", or a bare number of
 * seconds.  Returns 0 and sets *out (seconds) or -1 on a malformed or
 * overflowing value. */
int gb_parse_duration(const char *s, int64_t *out);
/* "1h30m" style; writes into buf (>= 32 bytes). */
const char *gb_format_duration(int64_t secs, char *buf, size_t cap);

/* Strict integer / number parsing of a whole string.  0 ok, -1 bad. */
int gb_parse_int64(const char *s, int64_t *out);
int gb_parse_double(const char *s, double *out);
/* A number as people write it: the shortest of %.15g, %.16g, %.17g that
 * reads back as d (0.7, not 0.69999999999999996).  Writes into buf
 * (>= 32 bytes) and returns it. */
/* "s" unless n is 1 or -1: "%d instance%s", n, gb_plural(n). */
const char *gb_plural(long long n);
const char *gb_format_real(double d, char *buf, size_t cap);
/* Significant digits of reals in JSON that people or other programs read
 * (API responses, event lines): JSON_REAL_PRECISION(GB_JSON_DIGITS), so
 * that 0.1 * 7 prints 0.7 and not jansson's default 0.70000000000000007. */
#define GB_JSON_DIGITS 15

/* Clocks. */
int64_t gb_now_ms(void);  /* wall clock, unix ms */
int64_t gb_mono_ms(void); /* monotonic ms */
int64_t gb_mono_ns(void);
void gb_sleep_ms(int64_t ms);
/* ISO-8601 UTC ("2026-11-22T13:42:00Z") into buf (>= 21 bytes). */
const char *gb_format_time(int64_t unix_s, char *buf, size_t cap);
/* Parses "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ"; -1 on error. */
int gb_parse_time(const char *s, int64_t *unix_s);
/* RFC 3339 UTC with milliseconds ("2026-11-27T08:05:10.123Z"), the form
 * of every time in the JSON gpubroker hands out (timejson.h), into buf
 * (>= 32 bytes). */
const char *gb_format_time_ms(int64_t unix_ms, char *buf, size_t cap);
/* Parses what gb_parse_time does, keeping up to 3 fraction digits;
 * -1 on error. */
int gb_parse_time_ms(const char *s, int64_t *unix_ms);

/* Shell-style glob (fnmatch, no path semantics).  1 = match. */
int gb_glob(const char *pattern, const char *s);

/* Edit distance, for "did you mean". */
size_t gb_levenshtein(const char *a, const char *b);
/* The candidate closest to `s` (NULL-terminated list), or NULL when none is
 * within a useful distance.  Borrowed from the list. */
const char *gb_nearest(const char *s, const char *const *candidates);

/* SHA-256 of data as 64 lowercase hex chars + NUL into out[65]. */
void gb_sha256_hex(const void *data, size_t n, char out[65]);
/* Constant-time string comparison, 1 when equal. */
int gb_ct_streq(const char *a, const char *b);
/* Random bytes as hex (2*nbytes chars + NUL into out). 0 ok. */
int gb_random_hex(char *out, size_t nbytes);

/* Reads a whole file (at most max bytes; -1 and errno=EFBIG beyond).
 * Caller frees *out. */
int gb_read_file(const char *path, size_t max, char **out, size_t *len);

/* 1 if s is valid UTF-8 (no overlongs, no surrogates). */
int gb_utf8_valid(const char *s, size_t n);
/* Offset of the first invalid byte, or n when all is valid. */
size_t gb_utf8_check(const char *s, size_t n);
/* Makes untrusted text (a policy's log line or reason) safe to print and
 * to put in JSON, in place: every byte of an invalid UTF-8 sequence and
 * every control character (tab included, DEL) becomes '?'. */
void gb_text_clean(char *s);

/* Fill a gb_error (printf-style message, truncated to fit). */
void gb_error_set(gb_error *err, gb_err_class cls, int http_status,
                  const char *code, const char *fmt, ...) GB_PRINTF(5, 6);
const char *gb_err_class_name(gb_err_class cls);

const char *gb_capacity_name(gb_capacity c);
/* "spot", "on-demand", "reserved"; -1 when unknown. */
int gb_capacity_parse(const char *s, gb_capacity *out);
const char *gb_instance_state_name(gb_instance_state st);
int gb_instance_state_parse(const char *s, gb_instance_state *out);

#endif /* GB_UTIL_H */
