/* timejson.h -- times in JSON.  Every time the CLI and the daemon hand
 * out (pools, instances, events, audit rows, offers, cost reports, log
 * lines) is one form: RFC 3339 UTC with milliseconds,
 * "2026-11-27T08:05:10.123Z" (docs/json.md); null where there is none. */
#ifndef GB_TIMEJSON_H
#define GB_TIMEJSON_H

#include <jansson.h>
#include <stdint.h>

/* unix_ms as such a string; 0 (never) as null.  New reference. */
json_t *gb_json_time(int64_t unix_ms);
/* The unix ms of such a string (borrowed j): 0, or -1 when j is not a
 * time string (null, absent, another type or a malformed one). */
int gb_json_time_get(const json_t *j, int64_t *unix_ms);

#endif
