/* events_json.c -- event and audit rows as the API and the CLI hand them
 * out. */
#include "events_json.h"

#include "timejson.h"

json_t *gb_events_json(const gb_event_row *rows, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "id", json_integer(rows[i].id));
		json_object_set_new(e, "time", gb_json_time(rows[i].time_ms));
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

json_t *gb_audit_json(const gb_audit_row *rows, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const gb_audit_row *r = &rows[i];
		json_array_append_new(a, json_pack(
			"{s:I, s:o, s:s, s:s?, s:s?, s:s, s:s?, s:s, s:s?, s:s?, s:s?,"
			" s:o}", "id", (json_int_t)r->id, "time",
			gb_json_time(r->time_ms), "actor", r->actor, "role", r->role,
			"team", r->team, "action", r->action, "target", r->target,
			"result", r->result, "detail", r->detail, "pool", r->pool,
			"pool_team", r->pool_team, "pool_incarnation",
			r->pool_inc ? json_integer(r->pool_inc) : json_null()));
	}
	return a;
}
