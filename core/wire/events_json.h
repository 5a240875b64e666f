/* events_json.h -- the JSON shape of events, shared by the CLI (local
 * mode) and the daemon (GET /v1/events), so both hand out the same. */
#ifndef GB_EVENTS_JSON_H
#define GB_EVENTS_JSON_H

#include <jansson.h>

#include "store.h"

/* rows (borrowed) -> array of {id, time_ms, time, pool, instance, kind,
 * message}.  New reference. */
json_t *gb_events_json(const gb_event_row *rows, size_t n);

#endif
