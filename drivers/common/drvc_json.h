/*
 * drvc_json.h -- small jansson accessors shared by the drivers' response
 * parsers.  They never trust the shape of what they read: a missing key or
 * a value of the wrong type gives NULL / -1, never a crash.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Ownership: json_t pointers and strings returned are borrowed from the
 * tree passed in (valid while it lives), except where a function says it
 * allocates.  Thread-safety: reentrant; jansson's own rules apply to a
 * tree shared between threads (read-only sharing is safe).
 */
#ifndef DRVC_JSON_H
#define DRVC_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "gpubroker/driver.h"

/* A command method's answer (gb_driver.command): writes doc as JSON
 * through out and releases doc (it takes the reference).  0, or -1 with
 * err INTERNAL when doc is NULL or cannot be encoded. */
int drvc_command_answer(json_t *doc, void (*out)(void *ud, const char *json),
                        void *ud, gb_error *err);
/* The answer to the host's "credentials" verb (driver.h): with source
 * non-NULL {"found": true, "source": source}, else {"found": false,
 * "looked_in": looked_in}.  Both texts say where, never a secret.  0, or
 * -1 with err as drvc_command_answer. */
int drvc_credentials_answer(const char *source, const char *looked_in,
                            void (*out)(void *ud, const char *json),
                            void *ud, gb_error *err);
/* The whole command method of a driver whose only verb is
 * "credentials": that answer, or err INVALID UnknownCommand naming
 * driver for any other verb (or arguments). */
int drvc_credentials_command(const char *driver, const char *verb, int argc,
                             const char *source, const char *looked_in,
                             void (*out)(void *ud, const char *json),
                             void *ud, gb_error *err);

/* o[key] when o is an object and the value a string, else NULL. */
const char *drvc_jstr(const json_t *o, const char *key);
/* Follow a dotted path ("error.details") through objects; NULL if any step
 * is missing or not an object. */
json_t *drvc_jpath(const json_t *o, const char *path);
/* String at a dotted path, or NULL. */
const char *drvc_jpath_str(const json_t *o, const char *path);
/* A JSON integer, a real with no fraction, or a string of decimal digits
 * (GCE sends int64 as strings) -> *out.  Returns 0, or -1. */
int drvc_jint(const json_t *v, int64_t *out);
/* A JSON number or a numeric string -> *out.  Returns 0, or -1. */
int drvc_jnum(const json_t *v, double *out);

/* The string members of object o (others are skipped) as a fresh gb_kv
 * array in o's order, with *n entries and room for n + 1; NULL and *n = 0
 * when o is not an object.  Keys and values are malloc'd copies: free the
 * whole with drvc_kv_free. */
gb_kv *drvc_json_kv(const json_t *o, size_t *n);
/* Frees kv[0..n) (keys, values) and kv; NULL is fine. */
void drvc_kv_free(gb_kv *kv, size_t n);
/* The same with keys and values borrowed from o (valid while o lives):
 * free only the array, with free(). */
gb_kv *drvc_json_kv_borrow(const json_t *o, size_t *n);

/* RFC 3339 time ("2024-05-01T10:20:30.123-07:00", "...Z") -> unix
 * seconds, or -1 when malformed. */
int64_t drvc_rfc3339(const char *s);
/* The same in unix milliseconds (fraction truncated to ms), -1 when
 * malformed. */
int64_t drvc_rfc3339_ms(const char *s);
/* IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") -> unix seconds, or -1. */
int64_t drvc_http_date(const char *s);

#endif
