/* engine_create.c -- placing new instances: journaled, parallel,
 * all-or-nothing per candidate, with failover down the plan. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "workers.h"

/* Result of trying one candidate. */
typedef struct attempt {
	int created;          /* instances recorded */
	gb_error err;         /* first significant error */
	int failed;
	int unknown;          /* outcome unknown: the intent stays open */
	int rolled_back;      /* made, then deleted again (all or nothing) */
	int first_index;      /* the names it asked for: first_index .. */
	int count;            /* .. first_index + count - 1 */
} attempt;

/* The attempt failed because the store did (its journal, or the record
 * of what it made), not the candidate. */
static int store_failed(const attempt *a)
{
	return a->failed && a->err.cls == GB_ERR_INTERNAL &&
	       strcmp(a->err.code, "Store") == 0;
}

typedef struct cjob {
	gb_engine *e;
	gb_drv *drv;
	gb_create_req req;
	char *user_data;   /* an agent pool's own per instance (owned) */
	char token[96];
	gb_seen_list out;
	gb_error err;
	int rc;
} cjob;

static void run_cjob(void *ud, size_t i)
{
	cjob *j = &((cjob *)ud)[i];
	memset(&j->err, 0, sizeof(j->err));
	j->out.drv_minor = j->drv->d->abi_minor;
	j->rc = j->drv->d->create(j->drv->ctx, &j->req, gb_engine__collect,
	                          &j->out, &j->err);
	if (j->rc != 0 && j->err.cls == GB_ERR_NONE)
		j->err.cls = GB_ERR_INTERNAL;
}

/* Ranks errors: the one worth reporting wins. */
static int err_rank(gb_err_class c)
{
	switch (c) {
	case GB_ERR_AUTH: return 6;
	case GB_ERR_INVALID: return 5;
	case GB_ERR_CONFLICT: return 5;
	case GB_ERR_INTERNAL: return 4;
	case GB_ERR_QUOTA: return 3;
	case GB_ERR_CAPACITY: return 3;
	case GB_ERR_THROTTLED: return 2;
	case GB_ERR_TRANSIENT: return 2;
	default: return 1;
	}
}

/* A fresh create's token (journaled with its intent, which a replay
 * reuses).  The attempt's time is part of it: a refused create on a
 * clean cloud spends no names (gb_store_inst_max_spent), so a later
 * attempt of the same offer may ask for the same names, and must not
 * meet the first one's answer (EC2 ClientToken, GCE requestId). */
static void derive_token(gb_engine *e, const char *pool, int64_t generation,
                         int first_index, int count, const gb_coffer *o,
                         char out[48])
{
	char buf[512], hex[65];
	int n = snprintf(buf, sizeof(buf), "%s|%s|%lld|%d|%d|%s|%s|%s|%s|%d|%lld",
	                 e->broker_id, pool, (long long)generation, first_index,
	                 count, o->cloud, o->region, o->zone, o->instance_type,
	                 (int)o->capacity, (long long)gb_mono_ns());
	gb_sha256_hex(buf, n > 0 ? (size_t)n : 0, hex);
	snprintf(out, 48, "gb%.40s", hex);
}

/* Everything one journaled create needs; from an offer (new creates) or
 * from an open intent (recovery replays it with the same token). */
typedef struct create_desc {
	const char *cloud, *region, *zone, *instance_type, *gpu_model;
	gb_capacity capacity;
	int gpu_count;
	double price;
	int count;
	int first_index;
	const char *token;
	int64_t intent_id;
	int64_t replay_of_ms;  /* replaying a create journaled at this time
	                          (unix ms), 0 for a fresh create */
} create_desc;

/* Records what the drivers reported and closes the intent, atomically. */
static int record(gb_engine *e, const gb_pool_spec *spec,
                  const create_desc *o, int64_t intent_id, int64_t call_ms,
                  cjob *jobs, size_t njobs, int first_index, int ok,
                  int keep_open, const char *error,
                  gb_inst_row ***rows_out, size_t *nrows_out)
{
	gb_store *s = e->o.store;
	int64_t now = gb_now_ms();
	int idx = first_index;
	gb_inst_row **rows = NULL;
	size_t nrows = 0;
	if (gb_store_begin(s) != 0)
		return -1;
	for (size_t j = 0; j < njobs; j++) {
		for (size_t k = 0; k < jobs[j].out.n; k++) {
			gb_seen *sn = &jobs[j].out.v[k];
			gb_inst_row *r = gb_xcalloc(1, sizeof(*r));
			char name[128];
			int my_index = njobs > 1 ? first_index + (int)j : idx++;
			snprintf(name, sizeof(name), "%s-%d", spec->name, my_index);
			r->pool = gb_xstrdup(spec->name);
			r->cloud = gb_xstrdup(o->cloud);
			r->region = gb_xstrdup(sn->region && *sn->region ? sn->region
			                                                 : o->region);
			r->zone = gb_xstrdup(sn->zone && *sn->zone ? sn->zone : o->zone);
			r->instance_type = gb_xstrdup(o->instance_type);
			r->capacity = gb_xstrdup(gb_capacity_name(o->capacity));
			r->provider_id = gb_xstrdup(sn->id);
			r->name = gb_xstrdup(sn->name && *sn->name ? sn->name : name);
			r->token = gb_xstrdup(jobs[j].token);
			r->state = gb_xstrdup(gb_engine__state_str(sn->state));
			r->state_reason = gb_xstrdup(sn->state_reason);
			r->private_ip = gb_xstrdup(sn->private_ip);
			r->public_ip = gb_xstrdup(sn->public_ip);
			r->gpu_model = gb_xstrdup(o->gpu_model);
			r->gpu_count = o->gpu_count;
			r->price_per_hour = o->price;
			/* billing starts when the create was issued; for a
			 * replayed create, when the cloud says the instance
			 * was made, but not before the original was
			 * journaled */
			r->launched_ms = call_ms;
			/* the cloud's own creation time when it is precise and
			 * inside the call (a skewed clock falls back to the
			 * call time): the driver may have made other requests
			 * first (a token, a name check) */
			if (sn->created_ms >= call_ms && sn->created_ms <= now)
				r->launched_ms = sn->created_ms;
			if (o->replay_of_ms) {
				int64_t c = sn->created_ms ? sn->created_ms
				                           : sn->created_at * 1000;
				r->launched_ms = o->replay_of_ms;
				if (c > r->launched_ms && c <= now)
					r->launched_ms = c;
			}
			r->running_ms = sn->state == GB_INST_RUNNING ? now : 0;
			r->last_seen_ms = now;
			r->intent_id = intent_id;
			r->name_index = my_index;
			{
				gb_inst_row old;
				/* a terminated row of the same id is another
				 * instance (an on-prem node's id is its name:
				 * a pool before this one leased it) */
				int existed = gb_store_inst_find(s, r->cloud,
				                                 r->provider_id,
				                                 &old) == 0;
				if (existed) {
					existed = strcmp(old.state, "terminated") != 0;
					gb_inst_row_free(&old);
				}
				if (!existed)
					gb_engine__event(e, spec->name, r->provider_id,
					                 "created",
					                 "created %s %s in %s%s%s (%s, "
					                 "$%.4f/h)", r->name,
					                 o->instance_type, o->region,
					                 *o->zone ? "/" : "", o->zone,
					                 gb_capacity_name(o->capacity),
					                 o->price);
				/* running at once (an on-prem node, set up
				 * inside create): observe sees no transition,
				 * so the running event is said here */
				if (!existed && sn->state == GB_INST_RUNNING) {
					const char *ip = sn->public_ip && *sn->public_ip
					                         ? sn->public_ip
					                         : sn->private_ip;
					gb_engine__event(e, spec->name, r->provider_id,
					                 "running", "%s is running%s%s",
					                 r->name, ip && *ip ? " at " : "",
					                 ip && *ip ? ip : "");
				}
			}
			if (gb_store_inst_put(s, r) != 0) {
				gb_inst_row_free(r);
				free(r);
				goto fail;
			}
			rows = gb_xrealloc(rows, (nrows + 1) * sizeof(*rows));
			rows[nrows++] = r;
		}
	}
	if (!keep_open &&
	    gb_store_intent_close(s, intent_id, ok ? "done" : "failed", error) != 0)
		goto fail;
	if (gb_store_commit(s) != 0)
		goto fail_nolock;
	*rows_out = rows;
	*nrows_out = nrows;
	return 0;
fail:
	gb_store_rollback(s);
fail_nolock:
	for (size_t i = 0; i < nrows; i++) {
		gb_inst_row_free(rows[i]);
		free(rows[i]);
	}
	free(rows);
	return -1;
}

static void free_rows(gb_inst_row **rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		gb_inst_row_free(rows[i]);
		free(rows[i]);
	}
	free(rows);
}

/* Calls the driver for a journaled create (intent already committed),
 * records the result and closes the intent.  all_or_nothing: roll back
 * partial success (terminate what was made). */
static void execute(gb_engine *e, const gb_pool_spec *spec,
                    const create_desc *cd, int all_or_nothing, attempt *a)
{
	gb_drv *drv = gb_engine__drv(e, cd->cloud);
	size_t njobs;
	cjob *jobs;
	gb_kv *tags;
	int ok = 1;
	gb_inst_row **rows = NULL;
	size_t nrows = 0;
	const char *image;
	int64_t call_ms;

	memset(a, 0, sizeof(*a));
	if (!drv) {
		gb_error_set(&a->err, GB_ERR_INTERNAL, 0, "DriverNotReady",
		             "driver %s is not loaded or failed to initialise "
		             "(see 'gpubroker drivers')", cd->cloud);
		a->failed = 1;
		return;
	}
	/* On a shared store, the pool's lease once more right before the
	 * cloud is asked: a replica paused between its intent and this call
	 * and taken over meanwhile asks nothing (the new holder resolves the
	 * intent). */
	if (gb_store_lease_check(e->o.store, spec->name) != 0) {
		gb_error_set(&a->err, GB_ERR_INTERNAL, 0, "Store",
		             "nothing was asked of the cloud: %s",
		             gb_store_errmsg(e->o.store));
		a->failed = 1;
		return;
	}
	/* one batch where the driver can, else one per instance in
	 * parallel; an agent pool's instances each get their own user data
	 * (their own bootstrap token): one per instance */
	njobs = (drv->d->caps & GB_DRV_CAP_BATCH_CREATE) && !spec->agent
	                ? 1
	                : (size_t)cd->count;
	jobs = gb_xcalloc(njobs ? njobs : 1, sizeof(*jobs));
	tags = gb_xcalloc(spec->labels.n + 1, sizeof(*tags));
	for (size_t i = 0; i < spec->labels.n; i++) {
		tags[i].key = spec->labels.keys[i];
		tags[i].value = spec->labels.vals[i];
	}
	image = gb_kvs_get(&spec->images, cd->cloud);
	for (size_t j = 0; j < njobs; j++) {
		cjob *jb = &jobs[j];
		jb->e = e;
		jb->drv = drv;
		if (njobs == 1 && (drv->d->caps & GB_DRV_CAP_BATCH_CREATE))
			snprintf(jb->token, sizeof(jb->token), "%s", cd->token);
		else
			snprintf(jb->token, sizeof(jb->token), "%s-%zu", cd->token, j);
		jb->req.pool = spec->name;
		jb->req.broker_id = e->broker_id;
		jb->req.team = spec->team;
		jb->req.region = cd->region;
		jb->req.zone = cd->zone;
		jb->req.instance_type = cd->instance_type;
		jb->req.capacity = cd->capacity;
		jb->req.count = njobs == 1 && (drv->d->caps & GB_DRV_CAP_BATCH_CREATE)
		                        ? (unsigned)cd->count
		                        : 1;
		jb->req.token = jb->token;
		jb->req.name_prefix = spec->name;
		jb->req.first_index = (unsigned)(cd->first_index + (int)j);
		jb->req.image = image;
		jb->req.tags = tags;
		jb->req.ntags = spec->labels.n;
		jb->req.ssh_keys = (const char *const *)spec->ssh_keys.v;
		jb->req.nssh_keys = spec->ssh_keys.n;
		jb->req.user_data = spec->user_data;
		jb->req.max_price = 0;
		if (spec->agent && !a->failed) {
			jb->user_data = gb_engine__agent_user_data(
			        e, spec, cd->cloud, (int)jb->req.first_index,
			        &a->err);
			jb->req.user_data = jb->user_data;
			a->failed = !jb->user_data;
		}
	}
	if (a->failed) {
		/* nothing was asked of the cloud: the intent stays open and is
		 * replayed (as when the driver is not loaded) */
		for (size_t j = 0; j < njobs; j++)
			free(jobs[j].user_data);
		free(jobs);
		free(tags);
		return;
	}
	gb_engine__stat(e, &e->stats.creates, njobs);
	call_ms = gb_now_ms();
	gb_parallel_for(njobs, e->workers, run_cjob, jobs);

	for (size_t j = 0; j < njobs; j++) {
		if (jobs[j].rc != 0) {
			ok = 0;
			if (!a->failed || err_rank(jobs[j].err.cls) > err_rank(a->err.cls))
				a->err = jobs[j].err;
			a->failed = 1;
		}
	}
	/* A create that failed TRANSIENT or THROTTLED (after the transport's
	 * retries) has an unknown outcome: the cloud may have done the work
	 * and lost the answer.  Its intent stays open, to be replayed with the
	 * same token (which returns what was made) -- never closed as failed,
	 * which could leak what was made. */
	a->unknown = !ok && (a->err.cls == GB_ERR_TRANSIENT ||
	                     a->err.cls == GB_ERR_THROTTLED);
	if (record(e, spec, cd, cd->intent_id, call_ms, jobs, njobs,
	           cd->first_index, ok, a->unknown, ok ? NULL : a->err.message,
	           &rows, &nrows) != 0) {
		/* The cloud made instances we could not record: the intent
		 * stays open, and the pool's next converge (or recovery at
		 * the next start) replays it with its token, which returns
		 * the same instances, billed from the cloud's creation time;
		 * nothing is placed elsewhere for them meanwhile. */
		gb_error_set(&a->err, GB_ERR_INTERNAL, 0, "Store",
		             "instances were created but could not be recorded "
		             "(%s); the open intent is replayed with its token "
		             "by the pool's next converge, or the next start",
		             gb_store_errmsg(e->o.store));
		a->failed = 1;
		goto out;
	}
	a->created = (int)nrows;
	if (a->unknown)
		gb_engine__event(e, spec->name, NULL, "unknown",
		                 "create in %s%s%s ended %s (%s) after retries: "
		                 "its outcome is unknown, so it will be replayed "
		                 "with the same token", cd->region,
		                 *cd->zone ? "/" : "", cd->zone,
		                 gb_err_class_name(a->err.cls), a->err.code);
	if (!ok && all_or_nothing && nrows > 0 && !a->unknown) {
		gb_engine__event(e, spec->name, NULL, "rollback",
		                 "only %zu of %d instance%s could be created in "
		                 "%s%s%s; releasing them to keep the pool in one "
		                 "place", nrows, cd->count, gb_plural(cd->count),
		                 cd->region,
		                 *cd->zone ? "/" : "", cd->zone);
		gb_engine__terminate_rows(e, rows, nrows, "rollback");
		a->created = 0;
		a->rolled_back = (int)nrows;
	}
out:
	free_rows(rows, nrows);
	for (size_t j = 0; j < njobs; j++)
		gb_seen_list_free(&jobs[j].out);
	for (size_t j = 0; j < njobs; j++)
		free(jobs[j].user_data);
	free(jobs);
	free(tags);
}

/* The clouds whose refused creates made nothing (GB_DRV_CAP_ATOMIC_CREATE)
 * as gb_store_inst_max_spent takes them: "aws,gcp" into out. */
static const char *clean_clouds(gb_engine *e, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = '\0';
	for (size_t i = 0; e->o.drivers && i < e->o.drivers->n; i++) {
		const gb_drv *d = e->o.drivers->v[i];
		int n;
		if (!d->d || !(d->d->caps & GB_DRV_CAP_ATOMIC_CREATE))
			continue;
		n = snprintf(out + at, cap - at, "%s%s", at ? "," : "", d->name);
		if (n < 0 || (size_t)n >= cap - at) {
			out[at] = '\0'; /* the ones that fit */
			break;
		}
		at += (size_t)n;
	}
	return out;
}

/* Try to create `count` instances on one candidate: journal, then
 * execute. */
static void try_candidate(gb_engine *e, const gb_pool_spec *spec,
                          int64_t generation, const gb_coffer *o, int count,
                          int all_or_nothing, attempt *a)
{
	gb_intent_row in;
	int maxi = -1;
	char token[48], clean[512];
	create_desc cd;

	memset(a, 0, sizeof(*a));
	if (gb_store_inst_max_spent(e->o.store, spec->name,
	                            clean_clouds(e, clean, sizeof(clean)),
	                            &maxi) != 0) {
		gb_error_set(&a->err, GB_ERR_INTERNAL, 0, "Store", "%s",
		             gb_store_errmsg(e->o.store));
		a->failed = 1;
		return;
	}
	memset(&cd, 0, sizeof(cd));
	cd.cloud = o->cloud;
	cd.region = o->region;
	cd.zone = o->zone;
	cd.instance_type = o->instance_type;
	cd.gpu_model = o->gpu_model;
	cd.capacity = o->capacity;
	cd.gpu_count = o->gpu_count;
	cd.price = o->price;
	cd.count = count;
	cd.first_index = maxi + 1;
	derive_token(e, spec->name, generation, cd.first_index, count, o,
	             token);
	cd.token = token;

	/* the journal, committed before the cloud is asked anything */
	memset(&in, 0, sizeof(in));
	in.kind = (char *)"create";
	in.pool = spec->name;
	in.cloud = (char *)o->cloud;
	in.region = (char *)o->region;
	in.zone = (char *)o->zone;
	in.instance_type = (char *)o->instance_type;
	in.capacity = (char *)gb_capacity_name(o->capacity);
	in.count = count;
	in.token = token;
	in.name_prefix = spec->name;
	in.first_index = cd.first_index;
	in.price_per_hour = o->price;
	in.gpu_model = (char *)o->gpu_model;
	in.gpu_count = o->gpu_count;
	if (gb_store_intent_open(e->o.store, &in) != 0) {
		gb_error_set(&a->err, GB_ERR_INTERNAL, 0, "Store",
		             "cannot journal the create, so nothing was asked of "
		             "the cloud: %s", gb_store_errmsg(e->o.store));
		a->failed = 1;
		return;
	}
	cd.intent_id = in.id;
	execute(e, spec, &cd, all_or_nothing, a);
	if (a->unknown) {
		/* once more, same token: a lost answer comes back now */
		execute(e, spec, &cd, all_or_nothing, a);
	}
	a->first_index = cd.first_index;
	a->count = count;
	if (a->unknown) {
		/* Still unknown: what the two calls made is what the store
		 * recorded for this intent (a replay that failed again reports
		 * only part of what the first one did, or nothing). */
		int all;
		/* unreadable: 0 made (the intent stays open and its replay
		 * tells the rest) */
		GB_IGNORE(gb_engine__live(e, spec->name, cd.intent_id, &all,
		                          &a->created));
	}
}

/* Marks a place unavailable for the cooldown.  A store that refuses it
 * costs only the sharing of the cooldown (this walk moves on anyway):
 * logged, not fatal. */
static void cool_down(gb_engine *e, const char *cloud, const char *region,
                      const char *zone, const char *type,
                      const char *capacity, int64_t until_s, const char *why)
{
	if (gb_store_unavailable_mark(e->o.store, cloud, region, zone, type,
	                              capacity, until_s, why) != 0)
		gb_log(GB_LOG_ERROR, "engine", "cooldown of %s/%s %s not "
		       "recorded: %s", cloud, region, type,
		       gb_store_errmsg(e->o.store));
}

/* Recovery of an open create intent of an active pool: the same call
 * again, with the same token.  Providers deduplicate (EC2 ClientToken,
 * ARM PUT by name, GCE requestId), so this returns the instances the
 * interrupted call made -- even ones describe cannot see yet -- and makes
 * the rest.  0 when replayed (the intent closed, or kept open while the
 * outcome is still unknown), 1 when it was given up and resolved by
 * describe, -1 with err when the store failed. */
int gb_engine__replay_create(gb_engine *e, const gb_pool_spec *spec,
                             const gb_intent_row *in, char *err, size_t cap)
{
	create_desc cd;
	attempt a;
	memset(&cd, 0, sizeof(cd));
	if (gb_capacity_parse(in->capacity, &cd.capacity) != 0) {
		snprintf(err, cap, "intent %lld has an unknown capacity %s",
		         (long long)in->id, in->capacity);
		return -1;
	}
	cd.cloud = in->cloud;
	cd.region = in->region;
	cd.zone = in->zone ? in->zone : "";
	cd.instance_type = in->instance_type;
	cd.gpu_model = in->gpu_model;
	cd.gpu_count = in->gpu_count;
	cd.price = in->price_per_hour;
	cd.count = in->count;
	cd.first_index = in->first_index;
	cd.token = in->token;
	cd.intent_id = in->id;
	cd.replay_of_ms = in->created_at;
	execute(e, spec, &cd, spec->colocate != GB_COLOCATE_NONE, &a);
	if (a.unknown && in->created_at > 0 &&
	    gb_now_ms() - in->created_at > GB_UNKNOWN_GIVE_UP_MS) {
		/* Every replay for ten minutes ended throttled or transient:
		 * take what the cloud lists with the token and close the
		 * intent, so the pool may be placed elsewhere.  Anything of
		 * the token that shows up later is found by gc. */
		gb_engine__event(e, spec->name, NULL, "unknown",
		                 "create %lld in %s/%s%s%s still has no answer after "
		                 "%lld s (%s); resolving it by describe and cooling "
		                 "the place down so the pool fails over",
		                 (long long)in->id, in->cloud, in->region,
		                 cd.zone[0] ? "/" : "", cd.zone,
		                 (long long)((gb_now_ms() - in->created_at) / 1000),
		                 a.err.code[0] ? a.err.code
		                               : gb_err_class_name(a.err.cls));
		cool_down(e, in->cloud, in->region, cd.zone, in->instance_type,
		          in->capacity, gb_now_ms() / 1000 + e->cooldown_s,
		          a.err.code[0] ? a.err.code : gb_err_class_name(a.err.cls));
		gb_engine__resolve_by_describe(e, in);
		return 1;
	}
	if (a.failed) {
		snprintf(err, cap, "%s%s%s", a.err.code, a.err.code[0] ? ": " : "",
		         a.err.message);
		return a.err.cls == GB_ERR_INTERNAL && strcmp(a.err.code, "Store") == 0
		               ? -1
		               : 0; /* closed as failed: converge retries */
	}
	return 0;
}

/* A create that failed because the machine it was setting up failed
 * (GB_ERR_CODE_NODE_UNHEALTHY: the driver undid the call and no longer
 * offers that machine). */
static int node_failed(const attempt *a)
{
	return a->failed && !a->unknown && a->err.cls == GB_ERR_CAPACITY &&
	       strcmp(a->err.code, GB_ERR_CODE_NODE_UNHEALTHY) == 0;
}

/* msg's first line gets "; " + text appended (the rest follows). */
static void splice_first_line(char *msg, size_t cap, const char *text)
{
	size_t line = strcspn(msg, "\n");
	char *rest = gb_xstrdup(msg + line);
	snprintf(msg + line, cap - line, "; %s%s", text, rest);
	free(rest);
}

/* A cloud the pool names whose driver failed to load or initialise:
 * the waiting says so (its offers are simply absent from the plan). */
static void note_failed_drivers(gb_engine *e, const gb_pool_spec *spec,
                                char *msg, size_t cap)
{
	for (size_t i = 0; e->o.drivers && i < spec->clouds.n; i++) {
		gb_drv *d = gb_drivers_find(e->o.drivers, spec->clouds.v[i]);
		char note[800];
		if (!d || d->ready)
			continue;
		snprintf(note, sizeof(note), "cloud %s's driver is not ready "
		         "(%.600s)", d->name, d->status);
		splice_first_line(msg, cap, note);
	}
}

/* Where a candidate is, for messages: "us-east-1a", "westeurope". */
static const char *where(const gb_coffer *o)
{
	return *o->zone ? o->zone : o->region;
}

/* What a walk that placed nothing more knows about the places it saw:
 * their instance types (for the message) and the earliest moment one of
 * them may be tried again. */
typedef struct walk_note {
	gb_strset types;
	size_t ntypes;
	const char *type[3];  /* the first three, interned */
	int64_t retry_ms;     /* 0 = none known */
} walk_note;

static void note_type(walk_note *w, const char *type)
{
	if (gb_strset_find(&w->types, type))
		return;
	type = gb_strset_intern(&w->types, type);
	if (w->ntypes < GB_ARRAY_LEN(w->type))
		w->type[w->ntypes] = type;
	w->ntypes++;
}

static void note_retry(walk_note *w, int64_t at_ms)
{
	if (at_ms > 0 && (!w->retry_ms || at_ms < w->retry_ms))
		w->retry_ms = at_ms;
}

/* "pool P: no zone could hold 12 x g2-standard-4 (best: 4 in
 * us-east4-a); next attempt 2026-11-27T14:05:10Z" */
static void no_room_msg(const gb_pool_spec *spec, int need, int left,
                        const walk_note *w, const gb_pace *pace, char *msg,
                        size_t cap)
{
	gb_buf b = GB_BUF_INIT;
	char when[32];
	const char *unit = spec->colocate == GB_COLOCATE_ZONE     ? "zone"
	                   : spec->colocate == GB_COLOCATE_REGION ? "region"
	                                                          : NULL;
	gb_buf_printf(&b, "pool %s: ", spec->name);
	if (unit)
		gb_buf_printf(&b, "no %s could hold %d x ", unit, left);
	else
		gb_buf_printf(&b, "placed %d of %d; no room left for %d x ",
		              need - left, need, left);
	for (size_t i = 0; i < w->ntypes && i < GB_ARRAY_LEN(w->type); i++)
		gb_buf_printf(&b, "%s%s", i ? " or " : "", w->type[i]);
	if (w->ntypes > GB_ARRAY_LEN(w->type))
		gb_buf_printf(&b, " (or %zu other types)",
		              w->ntypes - GB_ARRAY_LEN(w->type));
	if (!w->ntypes)
		gb_buf_printf(&b, "instances");
	if (pace->best)
		gb_buf_printf(&b, " (best: %d in %s)", pace->best->made,
		              *pace->best->zone ? pace->best->zone
		                                : pace->best->region);
	if (pace->spent)
		gb_buf_printf(&b, "; %d instance%s made and rolled back in the "
		              "last %llds", pace->spent,
		              pace->spent == 1 ? "" : "s",
		              (long long)(pace->window_ms / 1000));
	if (w->retry_ms)
		gb_buf_printf(&b, "; next attempt %s",
		              gb_format_time(w->retry_ms / 1000, when,
		                             sizeof(when)));
	snprintf(msg, cap, "%s", gb_buf_str(&b));
	gb_buf_free(&b);
}

/* An attempt that made nothing still used its names (they are never
 * given again: an intent may have used them): "lab-burst-0..3" onto b,
 * comma-separated, so the gaps in a pool's numbering are explained.
 * Not on a cloud whose refused creates made nothing (o's driver has
 * GB_DRV_CAP_ATOMIC_CREATE): there the names are given again. */
static void note_unused(gb_engine *e, const gb_coffer *o, gb_buf *b,
                        const gb_pool_spec *spec, const attempt *a)
{
	gb_drv *drv = gb_engine__drv(e, o->cloud);
	if (a->created || a->rolled_back || a->unknown || a->count < 1 ||
	    (drv && drv->d && (drv->d->caps & GB_DRV_CAP_ATOMIC_CREATE)))
		return;
	gb_buf_printf(b, "%s%s-%d", b->len ? ", " : "", spec->name,
	              a->first_index);
	if (a->count > 1)
		gb_buf_printf(b, "..%d", a->first_index + a->count - 1);
}

/* What the walk knows of the clouds that refused this spec for good
 * (engine_refused.c): their words, one line each, and the earliest
 * moment one may be asked again. */
typedef struct refusals {
	gb_strset clouds;
	gb_buf words;        /* "; "-separated */
	int n;               /* candidates refused or skipped for it */
	int asked;           /* of them, asked in this walk */
	int64_t until_ms;
} refusals;

static void note_refusal(refusals *rf, const char *cloud, const char *words,
                         int64_t until_ms)
{
	rf->n++;
	if (until_ms > 0 && (!rf->until_ms || until_ms < rf->until_ms))
		rf->until_ms = until_ms;
	if (gb_strset_find(&rf->clouds, cloud))
		return;
	gb_strset_intern(&rf->clouds, cloud);
	gb_buf_printf(&rf->words, "%s%s", rf->words.len ? "; " : "", words);
}

/* "pool P: refused: WORDS; next attempt T, or at once on an apply":
 * its first line is the pool's note (GB_NOTE_REFUSED). */
static void refused_msg(const gb_pool_spec *spec, int need, int left,
                        const char *words, int64_t until_ms, char *msg,
                        size_t cap)
{
	char when[32];
	snprintf(msg, cap, "pool %s: " GB_NOTE_REFUSED "%s; next attempt %s, "
	         "or at once on an apply\nPlaced %d of %d instance%s: every "
	         "candidate left was refused by its cloud for a reason the "
	         "spec (or the cloud account) must fix; a refusing cloud is "
	         "not asked again for this spec until the next attempt.",
	         spec->name, words,
	         gb_format_time(until_ms / 1000, when, sizeof(when)),
	         need - left, need, gb_plural(need));
}

/* A plan that failed (a policy that raised, one that does not load):
 * the spec or the policies must change, so it is a refusal too: one
 * event, and the pool's note, retried after GB_REFUSED_RETRY_MS or at
 * once on an apply or a scale. */
static void plan_refused(gb_engine *e, const gb_pool_spec *spec,
                         const gb_engine_plan *ep, char *msg, size_t cap,
                         int64_t *retry_ms)
{
	char when[32];
	char *words = gb_redact(ep->err);
	size_t line = strcspn(words, "\n");
	*retry_ms = gb_now_ms() + GB_REFUSED_RETRY_MS;
	gb_engine__event(e, spec->name, NULL, "refused",
	                 "planning failed: %s", words);
	snprintf(msg, cap, "pool %s: " GB_NOTE_REFUSED "planning failed: "
	         "%.*s; next attempt %s, or at once on an apply or a scale%s%s",
	         spec->name, (int)line, words,
	         gb_format_time(*retry_ms / 1000, when, sizeof(when)),
	         words[line] ? "\n" : "", words + line + (words[line] != 0));
	free(words);
}

/* placement.spread: zone -- how many of the pool each zone holds (its
 * kept instances, then what the walk places), and how many zones the
 * plan offers that are not cooling down (a zone that reclaimed spot
 * cools down: gb_engine__note_reclaim). */
typedef struct zones {
	char **key;   /* "cloud/region/zone" */
	int *n;
	size_t len, navail;
	size_t navail_kind[2]; /* zones with a spot [1] / other [0] offer */
} zones;

static void zone_key(const char *cloud, const char *region, const char *zone,
                     char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s/%s", cloud ? cloud : "", region ? region : "",
	         zone && *zone ? zone : region ? region : "");
}

static int *zones_slot(zones *z, const char *k, int add)
{
	for (size_t i = 0; i < z->len; i++)
		if (strcmp(z->key[i], k) == 0)
			return &z->n[i];
	if (!add)
		return NULL;
	z->key = gb_xrealloc(z->key, (z->len + 1) * sizeof(*z->key));
	z->n = gb_xrealloc(z->n, (z->len + 1) * sizeof(*z->n));
	z->key[z->len] = gb_xstrdup(k);
	z->n[z->len] = 0;
	return &z->n[z->len++];
}

static int zones_count(zones *z, const gb_coffer *o)
{
	char k[256];
	int *n;
	zone_key(o->cloud, o->region, o->zone, k, sizeof(k));
	n = zones_slot(z, k, 0);
	return n ? *n : 0;
}

static void zones_add(zones *z, const gb_coffer *o, int made)
{
	char k[256];
	zone_key(o->cloud, o->region, o->zone, k, sizeof(k));
	*zones_slot(z, k, 1) += made;
}

static void zones_init(zones *z, gb_engine *e, const gb_plan *pl,
                       const gb_engine_have *have)
{
	char k[256], why[256];
	gb_strset seen, seen_kind;
	int64_t until;
	memset(&seen, 0, sizeof(seen));
	memset(&seen_kind, 0, sizeof(seen_kind));
	for (size_t i = 0; i < have->nkeep; i++) {
		const gb_inst_row *r = have->keep[i];
		zone_key(r->cloud, r->region, r->zone, k, sizeof(k));
		*zones_slot(z, k, 1) += 1;
	}
	for (size_t i = 0; i < pl->ncands; i++) {
		const gb_coffer *o = pl->cands[i].offer;
		int spot = o->capacity == GB_CAPACITY_SPOT;
		char kk[260];
		zone_key(o->cloud, o->region, o->zone, k, sizeof(k));
		if (gb_engine__cooling(e, o, why, sizeof(why), &until))
			continue;
		snprintf(kk, sizeof(kk), "%d %s", spot, k);
		if (!gb_strset_find(&seen_kind, kk)) {
			gb_strset_intern(&seen_kind, kk);
			z->navail_kind[spot]++;
		}
		if (gb_strset_find(&seen, k))
			continue;
		gb_strset_intern(&seen, k);
		z->navail++;
	}
	gb_strset_free(&seen);
	gb_strset_free(&seen_kind);
}

/* ceil(total / zones), at least 1 */
static int zone_cap(int total, size_t nzones)
{
	int z = nzones ? (int)nzones : 1;
	int c = (total + z - 1) / z;
	return c > 0 ? c : 1;
}

static void zones_free(zones *z)
{
	for (size_t i = 0; i < z->len; i++)
		free(z->key[i]);
	free(z->key);
	free(z->n);
}

/* A permanent refusal (AUTH, INVALID: engine_refused.c) skips the
 * refusing cloud's other candidates, and those of a cloud that refused
 * this spec before, and the walk goes on to the other clouds; CONFLICT
 * stops the walk.  colocate none keeps partial placements.  Every
 * candidate's cooldown is checked as the walk
 * comes to it: the plan may have been made before this walk (an apply
 * plans before it replays and refreshes, a move walks the plan a second
 * time), and marks made during the walk count too.  A colocated pool
 * walks on past refusals of atomic creates (they cost nothing); creates
 * that can come back partial are paced (engine_pace.c). */
int gb_engine__place(gb_engine *e, const gb_pool_spec *spec,
                     const gb_engine_plan *ep, int64_t generation,
                     int need, const char *cloud, const char *region,
                     const char *zone, const gb_engine_have *have,
                     int *placed, char *msg, size_t cap, int64_t *retry_ms)
{
	const gb_plan *pl = &ep->plan;
	char err[1024], over[1024] = "";
	int over_n = 0;             /* candidates the team's limits refused */
	double placed_price = 0;    /* USD/h of what this walk placed */
	int left = need, tried = 0, cooling = 0, paced = 0, all_or_nothing;
	int capacity_only = 1, full = 0, ask, before, said_partial = 0;
	int stopped_by_store = 0;
	int node_retries = 0;       /* places asked again after a node failed */
	char node_note[768] = ""; /* the first such failure */
	attempt last;
	const gb_coffer *prev = NULL;
	gb_buf why = GB_BUF_INIT;
	gb_buf unused = GB_BUF_INIT; /* names the candidate's attempts spent */
	walk_note w;
	gb_pace pace;
	refusals rf;
	char key[65];
	zones zs;
	int od_left = 0, spot_left = 0, npass = 1, zcap = 0, kinds = 0;
	unsigned char *failed_at; /* candidates that failed: not asked again */

	*placed = 0;
	*retry_ms = 0;
	memset(&last, 0, sizeof(last));
	memset(&w, 0, sizeof(w));
	memset(&pace, 0, sizeof(pace));
	if (ep->rc != 0) {
		if (ep->store_failed) {
			/* not a refusal: the store must answer first */
			snprintf(msg, cap, "%s", ep->err);
			return -2;
		}
		plan_refused(e, spec, ep, msg, cap, retry_ms);
		return -1;
	}
	memset(&rf, 0, sizeof(rf));
	gb_engine__spec_key(spec, key);
	note_retry(&w, ep->cool_until_s * 1000);
	all_or_nothing = spec->colocate != GB_COLOCATE_NONE;
	memset(&zs, 0, sizeof(zs));
	failed_at = gb_xcalloc(pl->ncands + 1, 1);
	/* a mix and a spread walk the plan up to four times: 0, the kinds
	 * and at most ceil(n / zones) per zone; 1, each kind over the zones
	 * that have it (a zone that reclaimed spot cools down: spot goes to
	 * the others); 2, spot's share on on-demand (no spot to be had); 3,
	 * no cap (better placed than short) */
	if (have && have->shaped && !all_or_nothing) {
		kinds = have->od_want >= 0;
		od_left = have->od_want < need ? have->od_want : need;
		spot_left = kinds ? need - od_left : 0;
		npass = 4;
		if (spec->spread_zone) {
			zones_init(&zs, e, pl, have);
			zcap = zone_cap(have->total, zs.navail);
		}
	}
	for (size_t step = 0; step < npass * pl->ncands && left > 0; step++) {
		size_t i = step % pl->ncands;
		int pass = (int)(step / pl->ncands), lim = left;
		const gb_coffer *o = pl->cands[i].offer;
		const char *stop;
		attempt a;
		int64_t until;
		if (failed_at[i] || (pass == 2 && !(kinds && spot_left)) ||
		    ((pass == 1 || pass == 3) && !spec->spread_zone))
			continue;
		if (e->o.stop && *e->o.stop) {
			/* shutting down: a long walk (every zone of an atomic
			 * cloud) must not hold the daemon's exit */
			snprintf(msg, cap, "pool %s: placed %d of %d instance%s; "
			         "stopped (shutting down) before the other "
			         "candidates were tried", spec->name, need - left,
			         need, gb_plural(need));
			goto out;
		}
		if ((stop = gb_engine__walk_stop(e, spec->name)) != NULL) {
			/* a destroy (user, TTL, idle) waits for this walk */
			snprintf(msg, cap, "pool %s: placed %d of %d instance%s; "
			         "stopped: %s", spec->name, need - left, need,
			         gb_plural(need), stop);
			goto out;
		}
		if ((cloud && strcmp(o->cloud, cloud) != 0) ||
		    (region && strcmp(o->region, region) != 0) ||
		    (zone && strcmp(o->zone, zone) != 0))
			continue;
		note_type(&w, o->instance_type);
		{
			char *words;
			if (gb_engine__refused(e, spec->name, key, o->cloud,
			                       &until, &words)) {
				if (!pass)
					note_refusal(&rf, o->cloud, words, until);
				free(words);
				continue;
			}
		}
		if (gb_engine__cooling(e, o, err, sizeof(err), &until)) {
			cooling += !pass;
			note_retry(&w, until * 1000);
			continue;
		}
		if (all_or_nothing &&
		    !gb_engine__atomic_create(e, o->cloud, left)) {
			if (!pace.loaded)
				gb_engine__pace_load(e, spec->name, need, &pace);
			if (gb_engine__pace_check(&pace, o->cloud, o->region,
			                          gb_now_ms(), &until)) {
				paced++;
				note_retry(&w, until);
				continue;
			}
		}
		if (all_or_nothing && o->available > 0 && o->available < left) {
			/* the driver says how many it has there, and it is
			 * fewer than the pool needs in one place: asking would
			 * only spend names */
			full++;
			gb_buf_printf(&why, "\n  %s/%s %s %s: only %d free, %d "
			              "needed in one place", o->cloud, where(o),
			              o->instance_type,
			              gb_capacity_name(o->capacity), o->available,
			              left);
			continue;
		}
		/* a mix: on-demand's count, then spot's (on-demand too once
		 * spot had no room); a spread: the zone's room under the cap */
		if (npass > 1) {
			if (!kinds)
				lim = left;
			else if (o->capacity == GB_CAPACITY_SPOT)
				lim = spot_left;
			else
				lim = od_left + (pass >= 2 ? spot_left : 0);
			if (zcap && pass < 3) {
				int c = pass == 1
				        ? zone_cap(have->total, zs.navail_kind[
				                  o->capacity == GB_CAPACITY_SPOT])
				        : zcap;
				if (c - zones_count(&zs, o) < lim)
					lim = c - zones_count(&zs, o);
			}
			if (lim <= 0)
				continue;
		}
		/* the team's limits at this candidate's price (a failover
		 * may go to a dearer one): refused, no cloud call */
		ask = !all_or_nothing && o->available > 0 && o->available < left
		              ? o->available
		              : left;
		if (ask > lim)
			ask = lim;
		if (gb_engine__check_place(e, spec, have, *placed, placed_price,
		                           o, ask, err, sizeof(err)) != 0) {
			if (!over_n++)
				snprintf(over, sizeof(over), "%s", err);
			continue;
		}
		if (prev && last.failed && !said_partial)
			gb_engine__event(e, spec->name, NULL, "failover",
			                 "%s in %s (%s %s); failing over to %s/%s "
			                 "%s %s%s%s%s%s%s",
			                 last.err.code[0] ? last.err.code
			                                  : gb_err_class_name(last.err.cls),
			                 where(prev), prev->instance_type,
			                 gb_capacity_name(prev->capacity), o->cloud,
			                 where(o), o->instance_type,
			                 gb_capacity_name(o->capacity),
			                 unused.len ? "; " : "", gb_buf_str(&unused),
			                 unused.len ? " asked in " : "",
			                 unused.len ? where(prev) : "",
			                 unused.len ? " made nothing" : "");
		if (prev && last.failed)
			gb_engine__stat(e, &e->stats.failovers, 1);
		gb_buf_reset(&unused);
		said_partial = 0;
		tried++;
		/* colocate none: an offer that says how many it has (on-prem
		 * free nodes) is asked for that many at once (ask, above), so
		 * the names run on without gaps; the rest go down the plan */
		before = left;
		try_candidate(e, spec, generation, o, ask, all_or_nothing, &a);
		left -= a.created;
		*placed += a.created;
		note_unused(e, o, &unused, spec, &a);
		if (node_failed(&a)) {
			/* the driver took a failing machine (an on-prem node
			 * whose setup failed) out of its offers: say so, and
			 * ask the same place again at once -- it may have
			 * others; no cooldown (the machine's health, not
			 * time, keeps it out) */
			gb_engine__event(e, spec->name, NULL, "unhealthy",
			                 "%s/%s %s %s: %s", o->cloud, where(o),
			                 o->instance_type,
			                 gb_capacity_name(o->capacity),
			                 a.err.message);
			gb_buf_printf(&why, "\n  %s/%s %s %s: %s", o->cloud,
			              where(o), o->instance_type,
			              gb_capacity_name(o->capacity),
			              a.err.message);
			if (!node_note[0])
				snprintf(node_note, sizeof(node_note), "%s",
				         a.err.message);
			if (node_retries++ < GB_NODE_RETRIES && left > 0) {
				prev = NULL;
				last = a;
				/* the same candidate in the same pass (the
				 * loop's step; unsigned: wraps back) */
				step--;
				continue;
			}
			prev = o;
			last = a;
			continue;
		}
		if (a.rolled_back) {
			/* the journal now holds this partial: pace the next */
			gb_engine__pace_load(e, spec->name, need, &pace);
			gb_engine__stat(e, &e->stats.rolled_back,
			                (uint64_t)a.rolled_back);
		}
		/* colocate none: a candidate without room for all may have room
		 * for some (a zone with a few left, an on-prem site whose free
		 * nodes the catalog counted before others took some): ask it
		 * for half, keep what fits, and send the rest on down the plan.
		 * Batch drivers are all-or-nothing per call, so without this
		 * they would place nothing there. */
		if (!all_or_nothing && a.failed && ask > 1 && left > 0 &&
		    (a.err.cls == GB_ERR_CAPACITY || a.err.cls == GB_ERR_QUOTA)) {
			/* at most `most` more fit there: `ask` did not */
			int want = ask / 2, most = ask - 1;
			while (want >= 1 && left > 0) {
				attempt h;
				try_candidate(e, spec, generation, o, want, 0, &h);
				left -= h.created;
				*placed += h.created;
				most -= h.created;
				note_unused(e, o, &unused, spec, &h);
				if (h.unknown || store_failed(&h)) {
					a = h; /* stops the walk, below */
					break;
				}
				if (!h.failed) {
					/* room for that much: try what may be left */
					want = left < most ? left : most;
					if (want > lim - (before - left))
						want = lim - (before - left);
					continue;
				}
				if (h.err.cls == GB_ERR_CAPACITY ||
				    h.err.cls == GB_ERR_QUOTA) {
					most = want - 1;
					want /= 2;
					continue;
				}
				break;
			}
		}
		if (!all_or_nothing && before > left && left > 0 &&
		    (npass == 1 || before - left < ask)) {
			char room[32] = "";
			if (o->available > 0 && o->available != before - left)
				/* the catalog's count was stale */
				snprintf(room, sizeof(room), " (%d listed free)",
				         o->available);
			gb_engine__event(e, spec->name, NULL, "partial",
			                 "%s/%s %s %s had room for %d%s; the other "
			                 "%d go to the next candidates%s%s%s",
			                 o->cloud, where(o), o->instance_type,
			                 gb_capacity_name(o->capacity), before - left,
			                 room, left, unused.len ? " (" : "",
			                 gb_buf_str(&unused),
			                 unused.len ? " asked there made nothing)"
			                            : "");
			/* said: the failover to the next need not repeat it */
			gb_buf_reset(&unused);
			said_partial = 1;
		} else if (!all_or_nothing && before > left && unused.len) {
			gb_engine__event(e, spec->name, NULL, "partial",
			                 "%s/%s %s %s made all %d in smaller "
			                 "batches (%s asked there made nothing)",
			                 o->cloud, where(o), o->instance_type,
			                 gb_capacity_name(o->capacity), before - left,
			                 gb_buf_str(&unused));
			gb_buf_reset(&unused);
		}
		placed_price += o->price * (before - left);
		if (npass > 1 && kinds) {
			int made = before - left;
			int od = made;
			if (o->capacity == GB_CAPACITY_SPOT) {
				spot_left -= made;
			} else {
				if (od > od_left)
					od = od_left;
				od_left -= od;
				spot_left -= made - od;
			}
		}
		if (npass > 1)
			zones_add(&zs, o, before - left);
		prev = o;
		last = a;
		if (!a.failed)
			continue;
		failed_at[i] = 1;
		if (a.unknown) {
			/* The create may yet have made what it was asked for
			 * (a lost answer, a throttled retry): placing the rest
			 * elsewhere could leave the pool over size.  Its intent
			 * stays open; the next converge replays it first. */
			snprintf(msg, cap,
			         "pool %s: placed %d of %d instance%s; the create "
			         "in %s/%s ended %s%s%s after retries and its "
			         "outcome is unknown, so nothing more is placed "
			         "until it is replayed with its token (next apply, "
			         "or the daemon's next reconcile)", spec->name,
			         need - left, need, gb_plural(need), o->cloud, where(o),
			         gb_err_class_name(a.err.cls),
			         a.err.code[0] ? " " : "", a.err.code);
			goto out;
		}
		if (store_failed(&a)) {
			/* not the candidate's fault: failing over would place
			 * again what an open intent may already have made */
			snprintf(msg, cap, "state store failed: pool %s: placed %d "
			         "of %d instance%s; %s; nothing more is placed until "
			         "the store works", spec->name, need - left, need,
			         gb_plural(need), a.err.message);
			stopped_by_store = 1;
			goto out;
		}
		gb_buf_printf(&why, "\n  %s/%s %s %s: %s%s%s%s", o->cloud, where(o),
		              o->instance_type, gb_capacity_name(o->capacity),
		              gb_err_class_name(a.err.cls),
		              a.err.code[0] ? " " : "", a.err.code,
		              a.err.message[0] ? "" : "");
		if (a.err.message[0])
			gb_buf_printf(&why, " -- %s", a.err.message);
		if (unused.len)
			gb_buf_printf(&why, " (%s made nothing)",
			              gb_buf_str(&unused));
		if (left > 0 &&
		    (a.err.cls == GB_ERR_CAPACITY || a.err.cls == GB_ERR_QUOTA)) {
			until = gb_now_ms() / 1000 + e->cooldown_s;
			cool_down(e, o->cloud, o->region, o->zone,
			          o->instance_type, gb_capacity_name(o->capacity),
			          until, a.err.code[0] ? a.err.code
			                               : gb_err_class_name(a.err.cls));
			note_retry(&w, until * 1000);
			continue;
		}
		if (a.err.cls == GB_ERR_CAPACITY || a.err.cls == GB_ERR_QUOTA)
			continue;
		if (a.err.cls == GB_ERR_AUTH || a.err.cls == GB_ERR_INVALID) {
			/* the cloud's answer to this spec: said once, and
			 * its other candidates are skipped */
			char *words, when[32];
			int others = 0;
			for (size_t k = i + 1; k < pl->ncands && !others; k++)
				others = strcmp(pl->cands[k].offer->cloud,
				                o->cloud) != 0;
			if (!gb_engine__refuse(e, spec->name, key, o->cloud,
			                       &a.err, &until, &words))
				gb_engine__event(
					e, spec->name, NULL, "refused",
					"%s; %s is not asked again for this spec "
					"before %s (an apply asks at once)%s",
					words, o->cloud,
					gb_format_time(until / 1000, when,
					               sizeof(when)),
					left > 0 && others
						? "; the other clouds' "
						  "candidates are tried"
						: "");
			note_refusal(&rf, o->cloud, words, until);
			rf.asked++;
			free(words);
			continue;
		}
		capacity_only = 0;
		if (a.err.cls == GB_ERR_CONFLICT) {
			snprintf(msg, cap,
			         "pool %s: %s refused the request (%s%s%s): %s",
			         spec->name, o->cloud, gb_err_class_name(a.err.cls),
			         a.err.code[0] ? ", " : "", a.err.code, a.err.message);
			goto out;
		}
		/* throttled/transient after retries, internal: next candidate */
	}
	if (left > 0 && over_n) {
		/* The team's limits left candidates out: that is what to
		 * change (or wait for the team's other pools to shrink); the
		 * walk is tried again after a minute, or at once on an apply
		 * or a scale. */
		*retry_ms = gb_now_ms() + 60000;
		snprintf(msg, cap, "pool %s: placed %d of %d instance%s; %d "
		         "candidate%s left out by the team's limits: %s",
		         spec->name, need - left, need, gb_plural(need), over_n,
		         gb_plural(over_n), over);
	} else if (left > 0 && capacity_only && rf.n &&
	    !(tried - rf.asked || cooling || paced || full)) {
		/* every candidate left was refused for good: nothing but a
		 * change (or the backoff) can place the rest */
		*retry_ms = rf.until_ms;
		refused_msg(spec, need, left, gb_buf_str(&rf.words),
		            rf.until_ms, msg, cap);
		if (tried) {
			size_t l = strlen(msg);
			snprintf(msg + l, cap - l, "\nTried:%s",
			         gb_buf_str(&why));
		}
	} else if (left > 0 && capacity_only &&
	           (tried || cooling || paced || full)) {
		/* Only capacity stands in the way: say where it was closest
		 * and when walking again can change anything. */
		if (pace.loaded)
			gb_engine__pace_load(e, spec->name, need, &pace);
		if (!w.retry_ms)
			note_retry(&w, gb_now_ms() + e->cooldown_s * 1000);
		*retry_ms = w.retry_ms;
		no_room_msg(spec, need, left, &w, &pace, msg, cap);
		if (tried || full) {
			size_t l = strlen(msg);
			snprintf(msg + l, cap - l, "\nTried:%s", gb_buf_str(&why));
		}
	} else if (left > 0 && !pl->ncands && !ep->no_match &&
	           ep->cool_until_s) {
		/* The plan had no candidate only because of cooldowns: wait
		 * for the first to end. */
		char *note = gb_engine__cooldown_note(ep);
		*retry_ms = ep->cool_until_s * 1000;
		snprintf(msg, cap, "pool %s: %s", spec->name, note);
		free(note);
	} else if (left > 0) {
		if (!tried && cooling) {
			snprintf(msg, cap,
			         "pool %s: every candidate%s is cooling down after "
			         "a capacity or quota error (%d skipped); they are "
			         "retried after the cooldown (%llds)", spec->name,
			         cloud ? " there" : "", cooling,
			         (long long)e->cooldown_s);
		} else if (!tried) {
			char *m = gb_plan_no_candidate_msg(pl);
			if (cloud || region || zone)
				snprintf(msg, cap,
				         "pool %s: no candidate left in %s%s%s%s%s "
				         "(%zu candidates elsewhere)", spec->name,
				         cloud ? cloud : "", region ? "/" : "",
				         region ? region : "", zone ? "/" : "",
				         zone ? zone : "", pl->ncands);
			else
				snprintf(msg, cap, "%s", m);
			free(m);
		} else {
			snprintf(msg, cap,
			         "pool %s: placed %d of %d instance%s; every "
			         "candidate tried failed:%s\nCapacity and quota "
			         "failures are retried after the cooldown (%llds); "
			         "the daemon's reconciler keeps trying.",
			         spec->name, need - left, need, gb_plural(need),
			         gb_buf_str(&why),
			         (long long)e->cooldown_s);
		}
	}
	if (left > 0 && node_note[0])
		/* the pool's waiting (the first line) says which machine
		 * failed, not only that there was no room */
		splice_first_line(msg, cap, node_note);
	if (left > 0)
		note_failed_drivers(e, spec, msg, cap);
out:
	free(failed_at);
	zones_free(&zs);
	gb_buf_free(&rf.words);
	gb_strset_free(&rf.clouds);
	gb_buf_free(&why);
	gb_buf_free(&unused);
	gb_strset_free(&w.types);
	gb_engine__pace_free(&pace);
	return stopped_by_store ? -2 : left > 0 ? -1 : 0;
}
