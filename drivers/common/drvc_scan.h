/*
 * drvc_scan.h -- a streaming JSON scanner for the clouds' list pages: a
 * driver names the member paths it wants and gets one callback per
 * element of a list when that element's object closes.  No tree is
 * built; only the named members of the current element are kept.
 * It sits on yajl 2.1 (Debian's libyajl-dev; HACKING.md says why), which
 * this header does not expose.
 *
 * Paths: members separated by '.', "[]" for any element of an array,
 * "[N]" for element N, "*" for any member of an object:
 *   element  "value[]"             (Azure), "items.*.instances[]" (GCE),
 *            "data[]" (Lambda), or "" for the whole document's object;
 *   members  relative to the element: "name", "tags.*",
 *            "networkInterfaces[0].accessConfigs[0].natIP",
 *            "properties.instanceView.statuses[].code";
 *   tops     absolute, read after the end: "nextLink", "nextPageToken".
 * A value is its text and its kind (DRVC_SCAN_*): a string decoded, a
 * number as written, "true" / "false"; an object or array named as a
 * whole is "{" or "[" (present, its members not kept); null is absent.  Members
 * ending in ".*" or containing "[]" may match many values (drvc_scan_kv,
 * drvc_scan_all); other members keep their first value.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Ownership: the scanner is the caller's (drvc_scan_free); every string
 * and array an element accessor returns is borrowed until the callback
 * returns; drvc_scan_top's until drvc_scan_free.
 * Thread-safety: one scanner per thread; separate scanners are independent.
 */
#ifndef DRVC_SCAN_H
#define DRVC_SCAN_H

#include <stddef.h>

#include "gpubroker/driver.h"

#define DRVC_SCAN_MAX_MEMBERS 32
#define DRVC_SCAN_MAX_DEPTH 64

typedef struct drvc_scan drvc_scan;
typedef struct drvc_scan_elem drvc_scan_elem;

/* Called once per element when its object closes; nonzero stops the
 * scan (drvc_scan_feed / drvc_scan_end then return 1). */
typedef int (*drvc_scan_cb)(void *ud, const drvc_scan_elem *e);

typedef struct drvc_scan_spec {
	const char *element;         /* the list's path, see above */
	const char *const *members;  /* relative to an element */
	size_t nmembers;             /* <= DRVC_SCAN_MAX_MEMBERS */
	const char *const *tops;     /* absolute paths outside the elements */
	size_t ntops;                /* tops + members <= the maximum */
	size_t max_bytes;            /* the whole body's limit (0: none) */
	const char *what;            /* for messages: "Azure VM list" */
} drvc_scan_spec;

/* A scanner for one document.  spec (and its strings) must outlive it.
 * NULL only when a path is malformed or there are too many. */
drvc_scan *drvc_scan_new(const drvc_scan_spec *spec, drvc_scan_cb cb,
                         void *ud);
/* The next len bytes, split anywhere.  0, 1 when the callback stopped
 * the scan, or -1 with err INVALID MalformedResponse / ResponseTooLarge
 * (the scanner then refuses everything). */
int drvc_scan_feed(drvc_scan *s, const char *data, size_t len,
                   gb_error *err);
/* The end of the document: 0, 1 (stopped earlier), or -1 with err (also
 * for an empty body and a document that is not an object). */
int drvc_scan_end(drvc_scan *s, gb_error *err);
void drvc_scan_free(drvc_scan *s);
/* A whole body: drvc_scan_feed (when len > 0) then drvc_scan_end; as
 * drvc_scan_end.  The tops stay readable until drvc_scan_free. */
int drvc_scan_run(drvc_scan *s, const char *body, size_t len, gb_error *err);
/* The whole body in one call: new, feed, end (and free).  As
 * drvc_scan_end; -1 with err INTERNAL for a malformed spec. */
int drvc_scan_buf(const drvc_scan_spec *spec, const char *body, size_t len,
                  drvc_scan_cb cb, void *ud, gb_error *err);

/* What a value is (drvc_scan_kind); 0: absent (or null). */
#define DRVC_SCAN_STRING 's'
#define DRVC_SCAN_NUMBER 'n'
#define DRVC_SCAN_TRUE 't'
#define DRVC_SCAN_FALSE 'f'
#define DRVC_SCAN_OBJECT '{'
#define DRVC_SCAN_ARRAY '['

/* The kind of spec->members[i]'s first value, 0 when absent. */
char drvc_scan_kind(const drvc_scan_elem *e, size_t i);
/* members[i]'s first value when it is a JSON string (decoded), else NULL
 * (a member of another type counts as absent, as drvc_jstr). */
const char *drvc_scan_str(const drvc_scan_elem *e, size_t i);
/* members[i]'s first value when a number (as written) or a string (GCE
 * sends int64 as strings), else NULL; the caller parses it. */
const char *drvc_scan_num(const drvc_scan_elem *e, size_t i);
/* Nonzero when members[i]'s first value is JSON true. */
int drvc_scan_true(const drvc_scan_elem *e, size_t i);
/* Every string value of members[i] as key/value pairs in document order, *n of
 * them, room for *n + 1; NULL and *n = 0 when none.  The key: the member
 * name matched by the path's last "*", or when its last wildcard is "[]"
 * that element's index in decimal ("tags[].key" and "tags[].value" pair
 * up by it), or "" when the path has none. */
const gb_kv *drvc_scan_kv(const drvc_scan_elem *e, size_t i, size_t *n);
/* The member names matched by "*" in the element's own path ("zones/x"
 * for GCE's "items.*.instances[]"), the last one; "" when none. */
const char *drvc_scan_elem_key(const drvc_scan_elem *e);
/* spec->tops[i]'s value after drvc_scan_end when a string, or NULL. */
const char *drvc_scan_top(const drvc_scan *s, size_t i);
/* The kind of spec->tops[i]'s value, 0 when absent. */
char drvc_scan_top_kind(const drvc_scan *s, size_t i);

#endif
