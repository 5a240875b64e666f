/* engine.c -- engine lifetime, events, per-pool locks and shared helpers. */
#include "engine_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cancel.h"
#include "log.h"

static void *keeper_main(void *arg);

gb_engine *gb_engine_new(const gb_engine_opts *o)
{
	gb_engine *e = gb_xcalloc(1, sizeof(*e));
	e->o = *o;
	/* a stop also cancels driver calls in flight (host->cancelled) */
	if (o->stop)
		gb_cancel_set_stop(o->stop);
	e->workers = o->workers > 0 ? o->workers
	             : o->cfg && o->cfg->workers > 0 ? o->cfg->workers
	                                             : 64;
	e->cooldown_s = o->cooldown_s > 0 ? o->cooldown_s
	                : o->cfg && o->cfg->failover_cooldown_s > 0
	                        ? o->cfg->failover_cooldown_s
	                        : 180;
	e->confirm_timeout_s = o->confirm_timeout_s > 0 ? o->confirm_timeout_s
	                                                : 600;
	e->poll_ms = o->poll_ms > 0 ? o->poll_ms : 1000;
	e->broker_id = gb_xstrdup(o->cfg && o->cfg->broker_id
	                                  ? o->cfg->broker_id
	                                  : "gpubroker");
	pthread_mutex_init(&e->locks_mu, NULL);
	pthread_mutex_init(&e->stats_mu, NULL);
	pthread_mutex_init(&e->kept_mu, NULL);
	pthread_mutex_init(&e->pend_mu, NULL);
	pthread_mutex_init(&e->settle_mu, NULL);
	pthread_mutex_init(&e->plans_mu, NULL);
	pthread_mutex_init(&e->settled_mu, NULL);
	pthread_mutex_init(&e->refused_mu, NULL);
	pthread_mutex_init(&e->keeper_mu, NULL);
	pthread_cond_init(&e->keeper_cv, NULL);
	e->lease_ms = o->lease_ms > 0 ? o->lease_ms
	              : o->cfg && o->cfg->lease_s > 0 ? o->cfg->lease_s * 1000
	                                              : 15000;
	if (o->store && gb_store_is_shared(o->store)) {
		/* every journal write checks the pool's lease from now on */
		gb_store_fence_on(o->store);
		/* a replica paused inside a transaction holds the writers'
		 * lock: ended by the server well within the others' renewals */
		if (gb_store_set_idle_tx(o->store, e->lease_ms / 4 > 1000
		                                           ? e->lease_ms / 4
		                                           : 1000) != 0)
			gb_log(GB_LOG_ERROR, "engine", "%s (a paused replica "
			       "may hold the others up for longer)",
			       gb_store_errmsg(o->store));
		e->keeper_started = pthread_create(&e->keeper, NULL, keeper_main,
		                                   e) == 0;
	}
	return e;
}

void gb_engine_free(gb_engine *e)
{
	if (!e)
		return;
	if (e->o.stop)
		gb_cancel_clear_stop(e->o.stop);
	if (e->keeper_started) {
		pthread_mutex_lock(&e->keeper_mu);
		e->keeper_stop = 1;
		pthread_cond_signal(&e->keeper_cv);
		pthread_mutex_unlock(&e->keeper_mu);
		pthread_join(e->keeper, NULL);
	}
	if (e->o.store && gb_store_is_shared(e->o.store))
		gb_store_lease_release_all(e->o.store); /* others take over now */
	pthread_mutex_destroy(&e->keeper_mu);
	pthread_cond_destroy(&e->keeper_cv);
	gb_engine__drop_pending(e);
	gb_engine__drop_plans(e);
	pthread_mutex_destroy(&e->plans_mu);
	gb_engine__drop_settled(e);
	pthread_mutex_destroy(&e->settled_mu);
	gb_engine__forget_refusals(e, NULL);
	pthread_mutex_destroy(&e->refused_mu);
	while (e->locks) {
		pool_lock *l = e->locks;
		e->locks = l->next;
		pthread_mutex_destroy(&l->mu);
		free(l->name);
		free(l);
	}
	pthread_mutex_destroy(&e->locks_mu);
	pthread_mutex_destroy(&e->stats_mu);
	gb_engine__drop_kept(e);
	pthread_mutex_destroy(&e->kept_mu);
	pthread_mutex_destroy(&e->pend_mu);
	pthread_mutex_destroy(&e->settle_mu);
	free(e->broker_id);
	free(e);
}

void gb_engine_set_catalog(gb_engine *e, gb_catalog *cat)
{
	/* kept plans point into the old catalog, which the caller frees */
	gb_engine__drop_plans(e);
	e->o.cat = cat;
}

void gb_engine_result_free(gb_engine_result *r)
{
	json_decref(r->pool);
	r->pool = NULL;
}

int gb_engine__store_failed(gb_engine *e, gb_engine_result *res)
{
	snprintf(res->message, sizeof(res->message),
	         "state store failed: %s (nothing more was done; run the "
	         "command again once the store works)",
	         gb_store_errmsg(e->o.store));
	res->store_failed = 1;
	res->ok = 0;
	return -1;
}

void gb_engine_stats_get(gb_engine *e, gb_engine_stats *out)
{
	pthread_mutex_lock(&e->stats_mu);
	*out = e->stats;
	pthread_mutex_unlock(&e->stats_mu);
}

void gb_engine__stat(gb_engine *e, uint64_t *field, uint64_t by)
{
	pthread_mutex_lock(&e->stats_mu);
	*field += by;
	pthread_mutex_unlock(&e->stats_mu);
}

void gb_engine__event(gb_engine *e, const char *pool, const char *instance,
                      const char *kind, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	if (gb_store_event(e->o.store, pool, instance, kind, "%s", msg) != 0)
		gb_log(GB_LOG_ERROR, "engine", "cannot record event: %s",
		       gb_store_errmsg(e->o.store));
	gb_log(GB_LOG_INFO, "engine", "%s%s%s: %s", pool ? pool : "-",
	       instance ? " " : "", instance ? instance : "", msg);
	if (e->o.progress)
		e->o.progress(e->o.progress_ud, pool, instance, kind, msg);
	free(msg);
}

gb_drv *gb_engine__drv(gb_engine *e, const char *cloud)
{
	gb_drv *d = gb_drivers_find(e->o.drivers, cloud);
	return d && d->ready ? d : NULL;
}

/* How to fix a lock path that cannot be used (errno err, about path). */
static const char *lock_fix(int err, const char *path, char *buf, size_t cap)
{
	switch (err) {
	case ENOTDIR:
		snprintf(buf, cap, "%s must be a folder (gpubroker creates it): "
		         "move the file of that name away", path);
		break;
	case EISDIR:
		snprintf(buf, cap, "%s must be a file (gpubroker creates it): "
		         "remove that folder", path);
		break;
	case EACCES:
	case EPERM:
	case EROFS:
		snprintf(buf, cap, "make %s writable by this user (or run as "
		         "the user that owns the state database)", path);
		break;
	default:
		snprintf(buf, cap, "check %s", path);
	}
	return buf;
}

#define LOCK_WHY "the lock keeps a CLI and the daemon from changing one " \
	"pool at once"

/* The cross-process half of a pool lock: an flock on
 * <state>.locks/<pool>, so two CLIs, or a CLI and the daemon, never
 * converge one pool at once.  The kernel drops it when the holder dies,
 * even by SIGKILL.  The flock'ed fd, or -1 with err when it cannot be
 * taken (the caller refuses its operation: carrying on with only the
 * in-process lock would let another process change the pool too). */
static int flock_pool(gb_engine *e, const char *name, char *err, size_t cap)
{
	const char *db = gb_store_path(e->o.store);
	char *dir = gb_xasprintf("%s.locks", db);
	char *path = gb_xasprintf("%s/%s", dir, name);
	char fix[1024];
	int fd = -1;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		int en = errno;
		char *parent = gb_xstrdup(db), *slash = strrchr(parent, '/');
		if (!slash) {
			free(parent);
			parent = gb_xstrdup(".");
		} else {
			slash[slash == parent] = '\0'; /* "/x.db": "/" */
		}
		snprintf(err, cap, "cannot take the lock for pool %s: cannot "
		         "create the folder %s: %s; " LOCK_WHY ": %s, then retry",
		         name, dir, strerror(en),
		         lock_fix(en, parent, fix, sizeof(fix)));
		free(parent);
		goto out;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int en = errno;
		snprintf(err, cap, "cannot take the lock for pool %s: %s: %s; "
		         LOCK_WHY ": %s, then retry", name, path, strerror(en),
		         lock_fix(en, en == EISDIR ? path : dir, fix, sizeof(fix)));
		goto out;
	}
	while (flock(fd, LOCK_EX) != 0) {
		int en = errno;
		if (en == EINTR)
			continue;
		snprintf(err, cap, "cannot take the lock for pool %s: flock %s: "
		         "%s; " LOCK_WHY ": keep the state database on a local "
		         "file system that supports flock, then retry", name,
		         path, strerror(en));
		close(fd);
		fd = -1;
		break;
	}
out:
	free(dir);
	free(path);
	return fd;
}

/* The lock entry of pool `name`, or NULL.  Caller holds locks_mu. */
static pool_lock *lock_find(gb_engine *e, const char *name)
{
	pool_lock *l;
	for (l = e->locks; l; l = l->next)
		if (strcmp(l->name, name) == 0)
			break;
	return l;
}

/* Whether pool `name` is in use by an operation of this process. */
static int pool_busy(gb_engine *e, const char *name)
{
	pool_lock *l;
	int busy;
	pthread_mutex_lock(&e->locks_mu);
	l = lock_find(e, name);
	busy = l && l->users > 0;
	pthread_mutex_unlock(&e->locks_mu);
	return busy;
}

/* The keeper: renews this process's leases every third of lease_ms, and
 * gives up a pool another process asked for (gb_store_lease_want) while
 * no operation of this one uses it. */
static void *keeper_main(void *arg)
{
	gb_engine *e = arg;
	int64_t renewed = gb_mono_ms();
	pthread_mutex_lock(&e->keeper_mu);
	while (!e->keeper_stop) {
		struct timespec ts;
		gb_strv wanted = {NULL, 0};
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&e->keeper_cv, &e->keeper_mu, &ts);
		if (e->keeper_stop)
			break;
		pthread_mutex_unlock(&e->keeper_mu);
		if (gb_mono_ms() - renewed >= e->lease_ms / 3) {
			int lost = gb_store_lease_renew_all(e->o.store, e->lease_ms);
			if (lost < 0)
				gb_log(GB_LOG_WARN, "engine", "cannot renew leases: %s",
				       gb_store_errmsg(e->o.store));
			else
				renewed = gb_mono_ms();
			if (lost > 0)
				gb_log(GB_LOG_WARN, "engine", "lost %d lease%s: another "
				       "replica took over (this one was paused or "
				       "cut off past its lease)", lost,
				       lost == 1 ? "" : "s");
		}
		if (gb_store_lease_wanted(e->o.store, &wanted) == 0) {
			for (size_t i = 0; i < wanted.n; i++) {
				const char *pool = wanted.v[i] + 5;
				if (strncmp(wanted.v[i], "pool:", 5) != 0 ||
				    pool_busy(e, pool))
					continue;
				if (gb_store_lease_release(e->o.store, wanted.v[i]) == 0)
					gb_log(GB_LOG_INFO, "engine", "gave pool %s up to "
					       "another replica that asked for it", pool);
			}
		}
		gb_strv_free(&wanted);
		pthread_mutex_lock(&e->keeper_mu);
	}
	pthread_mutex_unlock(&e->keeper_mu);
	return NULL;
}

/* The cross-process half of a pool lock on a shared store: the pool's
 * lease.  Waits (asking the holder to give it up) while another process
 * holds it: a live holder gives it up once its operation ends, a dead or
 * paused one loses it when it expires.  0, or -1 with err. */
static int lease_pool(gb_engine *e, const char *name, char *err, size_t cap)
{
	char lname[300], holder[128] = "";
	int64_t token, t0 = gb_mono_ms(), limit = 20 * e->lease_ms;
	int logged = 0;
	if (limit < 300000)
		limit = 300000;
	snprintf(lname, sizeof(lname), "pool:%s", name);
	for (;;) {
		char was[128];
		int rc;
		snprintf(was, sizeof(was), "%s", holder);
		rc = gb_store_lease_acquire(e->o.store, lname, e->lease_ms, &token,
		                            holder, sizeof(holder));
		if (rc == 0) {
			if (logged)
				gb_log(GB_LOG_INFO, "engine", "pool %s: took it over "
				       "from %s after waiting %lld ms (lease token "
				       "%lld)", name, was,
				       (long long)(gb_mono_ms() - t0),
				       (long long)token);
			return 0;
		}
		if (rc < 0) {
			snprintf(err, cap, "cannot take the lease of pool %s: %s",
			         name, gb_store_errmsg(e->o.store));
			return -1;
		}
		/* asking is a courtesy: the lease lapses anyway */
		GB_IGNORE(gb_store_lease_want(e->o.store, lname));
		if (e->o.stop && *e->o.stop) {
			snprintf(err, cap, "pool %s is converged by %s (it holds "
			         "the pool's lease); stopped waiting for it", name,
			         holder);
			return -1;
		}
		if (gb_mono_ms() - t0 > limit) {
			snprintf(err, cap, "pool %s has been held by %s for over "
			         "%llds (its lease, renewed while it works on the "
			         "pool): retry later, or look at that replica",
			         name, holder, (long long)(limit / 1000));
			return -1;
		}
		if (!logged++)
			gb_log(GB_LOG_INFO, "engine", "pool %s: waiting for %s, "
			       "which holds its lease", name, holder);
		usleep(100 * 1000);
	}
}

/* The lock entry of pool `name`, made when there is none yet (kept
 * until gb_engine_free).  Caller holds locks_mu. */
static pool_lock *lock_entry(gb_engine *e, const char *name)
{
	pool_lock *l = lock_find(e, name);
	if (l)
		return l;
	l = gb_xcalloc(1, sizeof(*l));
	l->name = gb_xstrdup(name);
	l->fd = -1;
	pthread_mutex_init(&l->mu, NULL);
	l->next = e->locks;
	e->locks = l;
	return l;
}

void gb_engine__want_destroy(gb_engine *e, const char *name, int on)
{
	pool_lock *l;
	pthread_mutex_lock(&e->locks_mu);
	l = lock_entry(e, name);
	l->destroy_wanted += on ? 1 : -1;
	pthread_mutex_unlock(&e->locks_mu);
}

int gb_engine__destroy_wanted(gb_engine *e, const char *name)
{
	pool_lock *l;
	int wanted;
	pthread_mutex_lock(&e->locks_mu);
	l = lock_find(e, name);
	wanted = l && l->destroy_wanted > 0;
	pthread_mutex_unlock(&e->locks_mu);
	return wanted;
}

int gb_engine__lock_pool(gb_engine *e, const char *name, char *err,
                         size_t cap)
{
	pool_lock *l;
	int fd = -1, shared = gb_store_is_shared(e->o.store);
	pthread_mutex_lock(&e->locks_mu);
	l = lock_entry(e, name);
	l->users++;
	pthread_mutex_unlock(&e->locks_mu);
	pthread_mutex_lock(&l->mu);
	if (shared ? lease_pool(e, name, err, cap) != 0
	           : (fd = flock_pool(e, name, err, cap)) < 0) {
		/* nothing stays held: as gb_engine__unlock_pool, minus the fd */
		pthread_mutex_lock(&e->locks_mu);
		l->users--;
		pthread_mutex_unlock(&l->mu);
		pthread_mutex_unlock(&e->locks_mu);
		gb_log(GB_LOG_INFO, "engine", "refused: %s", err);
		return -1;
	}
	l->fd = fd;
	l->leased = shared;
	return 0;
}

int gb_engine__begin(gb_engine *e, const char *pool, gb_engine_result *res)
{
	char err[sizeof(res->message) - 64];
	if (gb_engine__settle(e, err, sizeof(err)) != 0) {
		snprintf(res->message, sizeof(res->message), "pool %s: %s", pool,
		         err);
		return 1;
	}
	return gb_engine__lock_pool(e, pool, res->message,
	                            sizeof(res->message));
}

const char *gb_engine__walk_stop(gb_engine *e, const char *name)
{
	gb_strv wanted = {0};
	char lname[300];
	int asked = 0;
	if (gb_engine__destroy_wanted(e, name))
		return "the pool is being destroyed";
	if (!gb_store_is_shared(e->o.store))
		return NULL;
	/* another replica's operation (a destroy through it) waits for the
	 * pool's lease; wants lapse after 2 s, so a dead asker stops nothing */
	snprintf(lname, sizeof(lname), "pool:%s", name);
	if (gb_store_lease_wanted(e->o.store, &wanted) == 0)
		asked = gb_strv_contains(&wanted, lname);
	gb_strv_free(&wanted);
	return asked ? "another replica asks for the pool (a destroy, scale "
	               "or apply through it)"
	             : NULL;
}

int gb_engine__begin_destroy(gb_engine *e, const char *pool,
                             gb_engine_result *res)
{
	int rc;
	gb_engine__want_destroy(e, pool, 1);
	rc = gb_engine__begin(e, pool, res);
	gb_engine__want_destroy(e, pool, 0);
	return rc;
}

void gb_engine__unlock_pool(gb_engine *e, const char *name)
{
	pool_lock *l;
	pthread_mutex_lock(&e->locks_mu);
	for (l = e->locks; l; l = l->next)
		if (strcmp(l->name, name) == 0)
			break;
	if (l) {
		if (l->fd >= 0) {
			close(l->fd); /* releases the flock */
			l->fd = -1;
		}
		if (l->leased && !e->o.sticky_leases) {
			/* the CLI gives the pool back at once */
			char lname[300];
			snprintf(lname, sizeof(lname), "pool:%s", name);
			/* unreleased, it expires by itself */
			GB_IGNORE(gb_store_lease_release(e->o.store, lname));
		}
		l->leased = 0;
		l->users--;
		pthread_mutex_unlock(&l->mu);
	}
	pthread_mutex_unlock(&e->locks_mu);
}

int gb_engine_claim(gb_engine *e, const char *pool, char *holder, size_t cap,
                    int *recovered)
{
	char lname[300], who[128];
	int64_t token;
	int fresh, rc;
	if (recovered)
		*recovered = 0;
	if (holder && cap)
		holder[0] = '\0';
	if (!gb_store_is_shared(e->o.store))
		return 0;
	if (pool_busy(e, pool))
		return 0; /* an operation of this process has it */
	snprintf(lname, sizeof(lname), "pool:%s", pool);
	fresh = !gb_store_lease_held(e->o.store, lname);
	rc = gb_store_lease_acquire(e->o.store, lname, e->lease_ms, &token, who,
	                            sizeof(who));
	if (rc == 1 && holder && cap)
		snprintf(holder, cap, "%s", who);
	if (rc != 0 || !fresh)
		return rc;
	/* taken over: what its last holder journaled and did not close is
	 * resolved first, as at a start (a create's replay takes the pool's
	 * lock itself: taking it here too deadlocked this thread) */
	rc = gb_engine__recover_pool(e, pool);
	if (rc > 0)
		gb_log(GB_LOG_INFO, "engine", "pool %s: took it over (lease "
		       "token %lld); resolved %d open intent%s of its last "
		       "holder", pool, (long long)token, rc, rc == 1 ? "" : "s");
	if (recovered)
		*recovered = rc > 0 ? rc : 0;
	return 0;
}

const char *gb_engine__state_str(gb_instance_state st)
{
	switch (st) {
	case GB_INST_PENDING: return "pending";
	case GB_INST_RUNNING: return "running";
	case GB_INST_STOPPING: return "stopping";
	case GB_INST_TERMINATED: return "terminated";
	case GB_INST_PREEMPTED: return "preempted";
	case GB_INST_FAILED: return "failed";
	case GB_INST_UNKNOWN: return "pending";
	}
	return "pending";
}

static const char *tag_value(const gb_instance *inst, const char *key)
{
	for (size_t i = 0; i < inst->ntags; i++)
		if (inst->tags[i].key && strcmp(inst->tags[i].key, key) == 0)
			return inst->tags[i].value;
	return NULL;
}

/* Does inst match r (driver.h: ids, else pool, else broker; token
 * narrows; a token tag may carry a "-<n>" suffix)? */
static int wanted(const gb_describe_req *r, const gb_instance *inst)
{
	const char *pool = tag_value(inst, GB_TAG_POOL);
	const char *broker = tag_value(inst, GB_TAG_BROKER);
	const char *token = tag_value(inst, GB_TAG_TOKEN);
	if (r->nids) {
		for (size_t i = 0; i < r->nids; i++)
			if (r->ids[i] && strcmp(r->ids[i], inst->id) == 0)
				return 1;
		return 0;
	}
	if (r->pool && (!pool || strcmp(pool, r->pool) != 0))
		return 0;
	if (r->broker_id && (r->pool ? broker && strcmp(broker, r->broker_id)
	                             : !broker || strcmp(broker, r->broker_id)))
		return 0;
	if (r->token) {
		size_t n = strlen(r->token);
		if (!token || strncmp(token, r->token, n) != 0 ||
		    (token[n] != '\0' && token[n] != '-'))
			return 0;
	}
	return 1;
}

int gb_engine__collect(void *ud, const gb_instance *inst)
{
	gb_seen_list *l = ud;
	gb_seen *s;
	if (!inst->id)
		return 0;
	if (l->want && !wanted(l->want, inst))
		return 0;
	{
		/* the ten strings in one allocation (s->id is its start; a
		 * NULL stays NULL), built before the lock is taken */
		const char *src[10];
		char **dst[10];
		size_t len[10], total = 0;
		char *block, *p;
		gb_seen one;
		memset(&one, 0, sizeof(one));
		src[0] = inst->id;
		src[1] = inst->name;
		src[2] = inst->region;
		src[3] = inst->zone ? inst->zone : "";
		src[4] = inst->instance_type;
		src[5] = inst->state_reason;
		src[6] = inst->private_ip;
		src[7] = inst->public_ip;
		src[8] = tag_value(inst, GB_TAG_TOKEN);
		src[9] = tag_value(inst, GB_TAG_POOL);
		dst[0] = &one.id;
		dst[1] = &one.name;
		dst[2] = &one.region;
		dst[3] = &one.zone;
		dst[4] = &one.instance_type;
		dst[5] = &one.state_reason;
		dst[6] = &one.private_ip;
		dst[7] = &one.public_ip;
		dst[8] = &one.token;
		dst[9] = &one.pool;
		for (int i = 0; i < 10; i++) {
			len[i] = src[i] ? strlen(src[i]) + 1 : 0;
			total += len[i];
		}
		p = block = gb_xmalloc(total);
		for (int i = 0; i < 10; i++)
			if (src[i]) {
				memcpy(p, src[i], len[i]);
				*dst[i] = p;
				p += len[i];
			}
		if (l->mu)
			pthread_mutex_lock(l->mu);
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 64;
			l->v = gb_xrealloc(l->v, l->cap * sizeof(*l->v));
		}
		s = &l->v[l->n++];
		*s = one;
	}
	s->capacity = inst->capacity;
	s->state = inst->state;
	s->created_at = inst->created_at;
	if (l->drv_minor >= 3 && inst->created_ms > 0)
		s->created_ms = inst->created_ms;
	if (l->mu)
		pthread_mutex_unlock(l->mu);
	return 0;
}

void gb_seen_list_free(gb_seen_list *l)
{
	/* each one's strings are one block starting at its id */
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].id);
	free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}
