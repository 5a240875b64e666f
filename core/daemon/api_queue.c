/* api_queue.c -- GET /v1/queue: the shared-GPU admission's queue, as the
 * last reconcile pass decided it (reconcile.c, issue 35).  An admin
 * sees every pool; a team's token sees its own team's pools by name and
 * the others' only by their team, priority and place. */
#include <string.h>

#include "api.h"

/* name, or "a pool of team T" when the token may not see it. */
static json_t *shown_pool(const gb_api_req *r, const char *name,
                          const char *team)
{
	if (r->role == GB_ROLE_ADMIN || !r->team || !team ||
	    strcmp(team, r->team) == 0)
		return json_string(name);
	return json_sprintf("a pool of team %s", team);
}

static const char *team_of(json_t *q, const char *pool)
{
	size_t i;
	json_t *w;
	json_array_foreach(q, i, w)
		if (strcmp(json_string_value(json_object_get(w, "pool")),
		           pool) == 0)
			return json_string_value(json_object_get(w, "team"));
	return NULL;
}

void gb_api_queue(gb_api_req *r)
{
	json_t *a, *q, *w, *out;
	size_t i, k;
	pthread_mutex_lock(&r->d->mmu);
	a = r->d->queue ? json_deep_copy(r->d->queue) : NULL;
	pthread_mutex_unlock(&r->d->mmu);
	if (!a)
		a = json_pack("{s:[],s:[],s:[]}", "queue", "resources",
		              "preemptions");
	q = json_object_get(a, "queue");
	out = json_array();
	json_array_foreach(q, i, w) {
		json_t *e = json_deep_copy(w), *ahead = json_array(), *p;
		const char *team = json_string_value(json_object_get(w, "team"));
		const char *reason = json_string_value(json_object_get(w,
		                                                       "reason"));
		int own = r->role == GB_ROLE_ADMIN || !r->team ||
		          (team && strcmp(team, r->team) == 0);
		json_array_foreach(json_object_get(w, "ahead"), k, p)
			json_array_append_new(ahead, shown_pool(r,
			        json_string_value(p),
			        team_of(q, json_string_value(p))));
		json_object_set_new(e, "ahead", ahead);
		json_object_set_new(e, "pool", shown_pool(r, json_string_value(
		        json_object_get(w, "pool")), team));
		if (!own) {
			json_object_set_new(e, "reason", json_null());
		} else if (reason && r->role != GB_ROLE_ADMIN && r->team) {
			/* the reason names the pools ahead: cut it there */
			const char *cut = strstr(reason, "; ahead:");
			json_object_set_new(e, "reason", json_stringn(reason,
			        cut ? (size_t)(cut - reason) : strlen(reason)));
		}
		json_array_append_new(out, e);
	}
	json_object_set_new(a, "queue", out);
	if (r->role != GB_ROLE_ADMIN && r->team)
		json_object_set_new(a, "preemptions", json_array());
	r->resp = a;
	r->status = 200;
}
