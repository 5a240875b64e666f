/*
 * drvc_enc.h -- encodings every driver needs: RFC 3986 percent-encoding
 * (the AWS SigV4 rules: keep A-Z a-z 0-9 - _ . ~, everything else %XX in
 * upper-case hex, space as %20), form bodies, base64 and base64url
 * (OpenSSL), and a growable string buffer.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Ownership: functions returning char * return malloc'd memory the caller
 * frees with free(); NULL only when malloc fails.  Thread-safety:
 * reentrant; a drvc_buf belongs to one thread at a time.
 */
#ifndef DRVC_ENC_H
#define DRVC_ENC_H

#include <stddef.h>

typedef struct drvc_buf {
	char *data; /* NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	int oom;    /* set when an allocation failed; data is then freed */
} drvc_buf;

#define DRVC_BUF_INIT {NULL, 0, 0, 0}

void drvc_buf_add(drvc_buf *b, const void *p, size_t n);
void drvc_buf_adds(drvc_buf *b, const char *s);
void drvc_buf_addf(drvc_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Returns the string ("" when empty) and empties b; NULL if oom. */
char *drvc_buf_take(drvc_buf *b);
void drvc_buf_free(drvc_buf *b);

/* Percent-encode n bytes of s (RFC 3986 unreserved kept).  If keep_slash,
 * '/' is also kept (for URI paths). */
void drvc_pct_encode(drvc_buf *out, const char *s, size_t n, int keep_slash);
char *drvc_pct_encode_str(const char *s);
/* Decode %XX (and '+' as space when form is set).  -1 on malformed %. */
int drvc_pct_decode(drvc_buf *out, const char *s, size_t n, int form);

/* base64 (standard, padded) and base64url (no padding). */
char *drvc_b64(const void *data, size_t n);
char *drvc_b64url(const void *data, size_t n);
/* Decode either alphabet, padding optional; returns bytes (caller frees)
 * and *outlen, or NULL when malformed. */
unsigned char *drvc_b64_decode(const char *s, size_t n, size_t *outlen);

/* Lower-case hex of n bytes into out (2n+1 bytes). */
void drvc_hex(const unsigned char *in, size_t n, char *out);

#endif
