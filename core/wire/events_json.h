/* events_json.h -- the JSON shape of events and audit rows, shared by the
 * CLI (local mode) and the daemon (GET /v1/events, /v1/audit), so both
 * hand out the same.  Times are RFC 3339 UTC with milliseconds
 * (timejson.h). */
#ifndef GB_EVENTS_JSON_H
#define GB_EVENTS_JSON_H

#include <jansson.h>

#include "store.h"

/* rows (borrowed) -> array of {id, time, pool, instance, kind,
 * message}.  New reference. */
json_t *gb_events_json(const gb_event_row *rows, size_t n);
/* rows (borrowed) -> array of {id, time, actor, role, team, action,
 * target, result, detail} (role, team, target, detail: null when
 * unknown).  New reference. */
json_t *gb_audit_json(const gb_audit_row *rows, size_t n);

#endif
