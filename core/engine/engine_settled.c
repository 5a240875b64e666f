/* engine_settled.c -- which pools the last converge left with nothing to
 * do, and at which generation; the reconciler skips converging a pool
 * that is settled here and steady in the store (see
 * gb_store_pool_list_steady). */
#include "engine_int.h"

void gb_engine__note_converge(gb_engine *e, const char *pool,
                              int64_t generation, int rc,
                              const gb_engine_result *res)
{
	int clean = rc == 0 && res->ok && !res->partial && !res->created &&
	            !res->replaced && !res->destroyed;
	pthread_mutex_lock(&e->settled_mu);
	if (clean) {
		if (!e->settled)
			e->settled = json_object();
		json_object_set_new(e->settled, pool, json_integer(generation));
	} else if (e->settled) {
		json_object_del(e->settled, pool);
	}
	pthread_mutex_unlock(&e->settled_mu);
}

int gb_engine_settled(gb_engine *e, const char *pool, int64_t generation)
{
	const json_t *g;
	int yes;
	pthread_mutex_lock(&e->settled_mu);
	g = e->settled ? json_object_get(e->settled, pool) : NULL;
	yes = g && json_integer_value(g) == generation;
	/* a consolidation check due: converge it (engine_consolidate.c) */
	g = yes && e->consol ? json_object_get(e->consol, pool) : NULL;
	if (g && json_integer_value(g) <= gb_now_ms())
		yes = 0;
	pthread_mutex_unlock(&e->settled_mu);
	return yes;
}

void gb_engine__drop_settled(gb_engine *e)
{
	json_decref(e->settled);
	e->settled = NULL;
	json_decref(e->consol);
	e->consol = NULL;
}
