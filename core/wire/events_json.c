/* events_json.c -- event rows as the API and the CLI hand them out. */
#include "events_json.h"

json_t *gb_events_json(const gb_event_row *rows, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_object();
		char ts[32];
		json_object_set_new(e, "id", json_integer(rows[i].id));
		json_object_set_new(e, "time_ms", json_integer(rows[i].time_ms));
		json_object_set_new(e, "time",
		                    json_string(gb_format_time(rows[i].time_ms / 1000,
		                                               ts, sizeof(ts))));
		json_object_set_new(e, "pool", rows[i].pool ? json_string(rows[i].pool)
		                                            : json_null());
		json_object_set_new(e, "instance", rows[i].instance
		                                           ? json_string(rows[i].instance)
		                                           : json_null());
		json_object_set_new(e, "kind", json_string(rows[i].kind));
		json_object_set_new(e, "message", json_string(rows[i].message));
		json_array_append_new(a, e);
	}
	return a;
}
