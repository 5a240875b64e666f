/* engine_pace.c -- how often a colocated pool may try a create that can
 * come back partial.
 *
 * A colocated pool's create is all-or-nothing.  Where the driver has
 * GB_DRV_CAP_ATOMIC_CREATE (EC2 MinCount, GCE bulkInsert, on-prem leases)
 * the cloud refuses before it makes anything: a refusal costs nothing, so
 * the placement walk tries such candidates freely (each refused one cools
 * down as before).  Elsewhere (one request per VM, as on ARM) a refusal
 * can come after some VMs were made; the engine then deletes them, and the
 * provider bills each its minimum.  Such "partial" attempts are paced,
 * per pool, from the journal itself (failed create intents with recorded
 * instances, gb_store_partials), so the pacing survives restarts and is
 * the same on every replica:
 *
 *   - backoff: after k partials within the failover cooldown window, the
 *     next may start base x 2^(k-1) after the newest one, capped at the
 *     window (base = window / 6, at least 1 s);
 *   - one per region: a (cloud, region) where the pool had a partial in
 *     the window is not tried that way again before the window ends;
 *   - budget: the instances made and rolled back within the window stay
 *     under the pool's size; once they reach it, no partial-capable
 *     attempt until enough of them leave the window.
 *
 * Threading: a gb_pace belongs to one placement walk (one thread). */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

int gb_engine__atomic_create(gb_engine *e, const char *cloud, int count)
{
	gb_drv *drv;
	if (count <= 1)
		return 1; /* one instance: refused before anything is made */
	drv = gb_engine__drv(e, cloud);
	return drv && (drv->d->caps & GB_DRV_CAP_ATOMIC_CREATE);
}

void gb_engine__pace_free(gb_pace *p)
{
	gb_partial_list_free(p->v, p->n);
	memset(p, 0, sizeof(*p));
}

int gb_engine__pace_load(gb_engine *e, const char *pool, int budget,
                         gb_pace *p)
{
	int64_t now = gb_now_ms(), base, delay;
	int spent = 0;
	gb_engine__pace_free(p);
	p->window_ms = e->cooldown_s * 1000;
	p->budget = budget > 0 ? budget : 1;
	p->loaded = 1;
	if (gb_store_partials(e->o.store, pool, now - p->window_ms, &p->v,
	                      &p->n) != 0) {
		p->v = NULL;
		p->n = 0;
		return -1;
	}
	for (size_t i = 0; i < p->n; i++) {
		spent += p->v[i].made;
		if (!p->best || p->v[i].made > p->best->made)
			p->best = &p->v[i];
	}
	p->spent = spent;
	if (!p->n)
		return 0;
	/* backoff from the newest partial */
	base = p->window_ms / 6 > 1000 ? p->window_ms / 6 : 1000;
	delay = base;
	for (size_t k = 1; k < p->n && delay < p->window_ms; k++)
		delay *= 2;
	if (delay > p->window_ms)
		delay = p->window_ms;
	p->next_ms = p->v[0].at_ms + delay;
	/* budget: oldest partials leave the window first */
	for (size_t i = p->n; i-- > 0 && spent >= p->budget;) {
		int64_t out = p->v[i].at_ms + p->window_ms;
		spent -= p->v[i].made;
		if (out > p->next_ms)
			p->next_ms = out;
	}
	return 0;
}

int gb_engine__pace_check(const gb_pace *p, const char *cloud,
                          const char *region, int64_t now_ms,
                          int64_t *until_ms)
{
	int64_t until = p->next_ms > now_ms ? p->next_ms : 0;
	for (size_t i = 0; i < p->n; i++) {
		int64_t end = p->v[i].at_ms + p->window_ms;
		if (end > now_ms && end > until &&
		    strcmp(p->v[i].cloud, cloud) == 0 &&
		    strcmp(p->v[i].region, region) == 0)
			until = end;
	}
	*until_ms = until;
	return until > 0;
}
