/* onprem_pool.c -- create, describe and terminate: leasing nodes (or MIG
 * slices) to pools, running the inventory's setup/teardown commands on
 * them, and reporting leases as instances.  README.md has the rules. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "onprem.h"

#define MAX_SETUP_THREADS 16

static const char *site_of(const onprem_ctx *c, const onprem_node *n)
{
	return c->inv.sites[n->site].name;
}

/* ---------------------------------------------------------------- emit */

static int emit_lease(const onprem_ctx *c, const onprem_lease *l,
                      gb_instance_state st, const char *reason,
                      gb_instance_cb emit, void *ud)
{
	const onprem_node *n = onprem_node_find(&c->inv, l->node);
	gb_instance in;
	gb_kv *kv;
	size_t nk = 0;
	const char *k;
	json_t *v;
	char id[160];
	int rc;
	memset(&in, 0, sizeof(in));
	kv = drvc_xcalloc(json_object_size(l->tags) + 1, sizeof(gb_kv));
	json_object_foreach(l->tags, k, v) {
		if (!json_is_string(v))
			continue;
		kv[nk].key = k;
		kv[nk].value = json_string_value(v);
		nk++;
	}
	in.id = onprem_lease_id(l, id, sizeof(id));
	in.name = l->name ? l->name : in.id;
	in.region = l->site ? l->site : n ? site_of(c, n) : "";
	in.zone = "";
	in.instance_type = l->instance_type ? l->instance_type : "";
	in.capacity = l->capacity;
	in.state = st;
	in.state_reason = reason;
	in.private_ip = n ? n->address : NULL;
	in.public_ip = NULL;
	in.tags = kv;
	in.ntags = nk;
	in.created_at = l->leased_at;
	rc = emit(ud, &in);
	free(kv);
	return rc;
}

/* The state of a lease: PENDING while set up, FAILED when the node has
 * been found unhealthy or unreachable since it was leased (reason into
 * buf), else RUNNING. */
static gb_instance_state lease_state(const onprem_ctx *c,
                                     const onprem_lease *l, char *buf,
                                     size_t cap)
{
	const onprem_node *n = onprem_node_find(&c->inv, l->node);
	onprem_health h;
	gb_instance_state st = GB_INST_RUNNING;
	buf[0] = '\0';
	if (!n) {
		snprintf(buf, cap, "node %s is no longer in the inventory",
		         l->node);
		return GB_INST_FAILED;
	}
	if (l->unreadable || !l->state || strcmp(l->state, "ready") != 0)
		return GB_INST_PENDING;
	onprem_health_get(c, n, &h);
	if ((h.state == ONPREM_H_UNHEALTHY || h.state == ONPREM_H_UNREACHABLE) &&
	    h.probed_at >= l->leased_at) {
		snprintf(buf, cap, "node %s %s: %s", n->name,
		         h.state == ONPREM_H_UNREACHABLE ? "unreachable"
		                                         : "unhealthy",
		         h.failures.n ? h.failures.v[0] : "?");
		st = GB_INST_FAILED;
	}
	onprem_health_free(&h);
	return st;
}

static int emit_current(const onprem_ctx *c, const onprem_lease *l,
                        gb_instance_cb emit, void *ud)
{
	char reason[600];
	gb_instance_state st = lease_state(c, l, reason, sizeof(reason));
	return emit_lease(c, l, st, *reason ? reason : NULL, emit, ud);
}

/* ---------------------------------------------------------------- setup */

typedef struct job {
	const onprem_ctx *c;
	const onprem_node *n;
	onprem_lease *l;
	const gb_create_req *req;
	int mig_made;    /* this job created the MIG instance */
	int setup_ok;    /* setup ran and succeeded (or there is none) */
	int failed;
	gb_error err;
} job;

typedef struct jobs {
	job *v;
	size_t n, next;
	pthread_mutex_t mu;
} jobs;

/* The GPUBROKER_* variables setup and teardown see. */
static char *env_cmd(const onprem_ctx *c, const onprem_lease *l,
                     const char *cmd)
{
	char gpu[16], gi[16], ci[16];
	const char *kv[24];
	size_t k = 0;
	char *out;
	kv[k++] = "GPUBROKER_POOL";
	kv[k++] = l->pool ? l->pool : "";
	kv[k++] = "GPUBROKER_TOKEN";
	kv[k++] = l->token ? l->token : "";
	kv[k++] = "GPUBROKER_BROKER";
	kv[k++] = l->broker_id ? l->broker_id : c->broker_id;
	kv[k++] = "GPUBROKER_NAME";
	kv[k++] = l->name ? l->name : "";
	kv[k++] = "GPUBROKER_NODE";
	kv[k++] = l->node;
	if (l->mig) {
		snprintf(gpu, sizeof(gpu), "%d", l->gpu);
		snprintf(gi, sizeof(gi), "%d", l->gi);
		snprintf(ci, sizeof(ci), "%d", l->ci);
		kv[k++] = "GPUBROKER_MIG_PROFILE";
		kv[k++] = l->profile ? l->profile : "";
		kv[k++] = "GPUBROKER_MIG_GPU";
		kv[k++] = gpu;
		kv[k++] = "GPUBROKER_MIG_GI";
		kv[k++] = gi;
		kv[k++] = "GPUBROKER_MIG_CI";
		kv[k++] = ci;
	}
	kv[k] = NULL;
	out = onprem_with_env(cmd, kv);
	return out;
}

/* Run setup or teardown of node n for lease l.  0, or -1 with err. */
static int run_hook(const onprem_ctx *c, const onprem_node *n,
                    const onprem_lease *l, const char *what,
                    const char *hook, gb_error *err)
{
	char *cmd;
	onprem_runres r;
	char tail[400];
	int rc;
	if (!hook)
		return 0;
	cmd = env_cmd(c, l, hook);
	rc = onprem_run(c, n, cmd, NULL, 0, c->setup_timeout_s, &r);
	free(cmd);
	if (rc != 0) {
		onprem_run_err(c, n, err, &r, what);
		onprem_runres_free(&r);
		return -1;
	}
	if (r.exit_code != 0) {
		onprem_tail(tail, sizeof(tail), *r.err ? r.err : r.out, 300);
		drvc_err(err, GB_ERR_INVALID, 0, "SetupFailed",
		         "%s on node %s failed (exit %d)%s%s", what, n->name,
		         r.exit_code, *tail ? ": " : "", tail);
		onprem_runres_free(&r);
		return -1;
	}
	onprem_runres_free(&r);
	return 0;
}

static void do_job(job *j)
{
	const onprem_ctx *c = j->c;
	if (j->l->mig && j->l->gi < 0) {
		/* one nvidia-smi mig at a time per node */
		int fd = onprem_node_lock(c, j->n->name, &j->err), rc;
		if (fd < 0) {
			j->failed = 1;
			return;
		}
		rc = onprem_mig_create(c, j->n, j->l, &j->err);
		close(fd);
		if (rc != 0) {
			j->failed = 1;
			return;
		}
		j->mig_made = 1;
		if (onprem_lease_write(c, j->l, &j->err) != 0) {
			j->failed = 1;
			return;
		}
	}
	if (run_hook(c, j->n, j->l, "setup", j->n->setup, &j->err) != 0) {
		j->failed = 1;
		return;
	}
	j->setup_ok = 1;
	free(j->l->state);
	j->l->state = drvc_xstrdup("ready");
	if (onprem_lease_write(c, j->l, &j->err) != 0)
		j->failed = 1;
}

static void *worker(void *arg)
{
	jobs *js = arg;
	for (;;) {
		size_t i;
		pthread_mutex_lock(&js->mu);
		i = js->next++;
		pthread_mutex_unlock(&js->mu);
		if (i >= js->n)
			return NULL;
		do_job(&js->v[i]);
	}
}

static void run_jobs(jobs *js)
{
	pthread_t th[MAX_SETUP_THREADS];
	size_t nt = js->n < MAX_SETUP_THREADS ? js->n : MAX_SETUP_THREADS, k;
	pthread_mutex_init(&js->mu, NULL);
	js->next = 0;
	if (nt <= 1) {
		worker(js);
	} else {
		for (k = 0; k < nt; k++)
			if (pthread_create(&th[k], NULL, worker, js) != 0)
				break;
		if (k == 0)
			worker(js);
		for (size_t t = 0; t < k; t++)
			pthread_join(th[t], NULL);
	}
	pthread_mutex_destroy(&js->mu);
}

/* Undo a job: teardown when setup ran, destroy the MIG instance this call
 * made, release the lease. */
static void undo_job(job *j)
{
	gb_error e;
	memset(&e, 0, sizeof(e));
	if (j->setup_ok && j->n->setup &&
	    run_hook(j->c, j->n, j->l, "teardown", j->n->teardown, &e) != 0)
		onprem_log(j->c, GB_LOG_WARN, "%s", e.message);
	if (j->mig_made) {
		int fd = onprem_node_lock(j->c, j->n->name, &e);
		if (fd < 0 || onprem_mig_destroy(j->c, j->n, j->l, &e) != 0)
			onprem_log(j->c, GB_LOG_WARN, "%s", e.message);
		if (fd >= 0)
			close(fd);
	}
	if (onprem_lease_release(j->c, j->l, &e) != 0)
		onprem_log(j->c, GB_LOG_ERROR, "%s", e.message);
}

/* ---------------------------------------------------------------- create */

/* A job that failed because of its node (setup exited non-zero, the node
 * could not be reached or timed out) marks the node (onprem_mark.c), so
 * it is not offered again until probed healthy or cleared; the call's
 * error then becomes CAPACITY/NodeUnhealthy naming the node, so the
 * engine asks again at once (another node, or the next candidate).  The
 * call is undone either way, so the outcome is known: nothing made. */
static void mark_failed(const onprem_ctx *c, const jobs *js, gb_error *err)
{
	drvc_buf b = DRVC_BUF_INIT;
	char *msg;
	const char *one = NULL;
	int nbad = 0;
	for (size_t i = 0; i < js->n; i++) {
		const job *j = &js->v[i];
		int unreach = !strcmp(j->err.code, "Unreachable");
		if (!j->failed || (strcmp(j->err.code, "SetupFailed") != 0 &&
		                   j->err.cls != GB_ERR_TRANSIENT))
			continue;
		onprem_mark_node(c, j->n->name, unreach, j->err.message);
		drvc_buf_addf(&b, "%s%s; node %s is marked %s", nbad ? "; " : "",
		              j->err.message, j->n->name,
		              unreach ? "unreachable" : "unhealthy");
		one = j->n->name;
		nbad++;
	}
	if (!nbad)
		return;
	if (nbad == 1)
		drvc_buf_addf(&b, " and not offered until 'gpubroker nodes "
		              "probe %s' finds it healthy or 'gpubroker nodes "
		              "clear %s'", one, one);
	else
		drvc_buf_addf(&b, "; they are not offered until 'gpubroker "
		              "nodes probe NODE' finds them healthy or "
		              "'gpubroker nodes clear NODE'");
	msg = drvc_buf_take(&b);
	drvc_err(err, GB_ERR_CAPACITY, 0, GB_ERR_CODE_NODE_UNHEALTHY, "%s",
	         msg);
	free(msg);
}

static void fill_proto(const onprem_ctx *c, const gb_create_req *req,
                       const char *site, unsigned index, onprem_lease *l)
{
	json_t *t = json_object();
	memset(l, 0, sizeof(*l));
	l->gi = l->ci = l->gpu = -1;
	l->slot = -1;
	l->pool = drvc_xstrdup(req->pool ? req->pool : "");
	l->token = drvc_xstrdup(req->token ? req->token : "");
	l->broker_id = drvc_xstrdup(req->broker_id && *req->broker_id
	                                    ? req->broker_id
	                                    : c->broker_id);
	l->team = req->team ? drvc_xstrdup(req->team) : NULL;
	l->name = drvc_xasprintf("%s-%u",
	                         req->name_prefix && *req->name_prefix
	                                 ? req->name_prefix
	                                 : l->pool,
	                         index);
	l->state = drvc_xstrdup("setup");
	l->leased_at = onprem_now(c);
	l->site = drvc_xstrdup(site);
	l->instance_type = drvc_xstrdup(req->instance_type);
	l->capacity = req->capacity;
	for (size_t i = 0; i < req->ntags; i++)
		if (req->tags[i].key && req->tags[i].value)
			json_object_set_new(t, req->tags[i].key,
			                    json_string(req->tags[i].value));
	json_object_set_new(t, GB_TAG_POOL, json_string(l->pool));
	json_object_set_new(t, GB_TAG_BROKER, json_string(l->broker_id));
	json_object_set_new(t, GB_TAG_TOKEN, json_string(l->token));
	if (l->team)
		json_object_set_new(t, GB_TAG_TEAM, json_string(l->team));
	l->tags = t;
}

static int name_taken(const onprem_leases *ls, const char *name)
{
	for (size_t i = 0; i < ls->n; i++)
		if (ls->v[i].name && !strcmp(ls->v[i].name, name))
			return 1;
	return 0;
}

static int view_matches(const onprem_view *w, const char *site,
                        const char *shape)
{
	return !strcmp(w->site->name, site) && w->gpus_known &&
	       !strcmp(w->shape, shape);
}

static void shapes_at(const onprem_view *v, size_t nv, const char *site,
                      char *buf, size_t cap)
{
	drvc_buf b = DRVC_BUF_INIT;
	onprem_strv seen = {NULL, 0};
	char *s;
	for (size_t i = 0; i < nv; i++)
		if (!strcmp(v[i].site->name, site) && *v[i].shape &&
		    !onprem_strv_has(&seen, v[i].shape)) {
			onprem_strv_push(&seen, v[i].shape);
			drvc_buf_addf(&b, "%s%s", seen.n > 1 ? ", " : "",
			              v[i].shape);
		}
	s = drvc_buf_take(&b);
	snprintf(buf, cap, "%s", *s ? s : "none known");
	free(s);
	onprem_strv_free(&seen);
}

static int lease_cmp(const void *a, const void *b)
{
	const onprem_lease *x = a, *y = b;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

int onprem_create(void *ctx, const gb_create_req *req, gb_instance_cb emit,
                  void *ud, gb_error *err)
{
	onprem_ctx *c = ctx;
	onprem_view *v = NULL;
	size_t nv = 0;
	onprem_leases all = {NULL, 0}, existing = {NULL, 0}, mine = {NULL, 0};
	const char *profile_name;
	const onprem_mig_profile *prof = NULL;
	char shape[128], list[300];
	const char *site;
	unsigned need, taken = 0, index;
	int rc = -1, any_shape = 0, any_cap = 0;
	jobs js;

	memset(&js, 0, sizeof(js));
	if (!c->have_inventory) {
		drvc_err(err, GB_ERR_INVALID, 0, "NoInventory",
		         "no on-prem inventory is configured (set onprem: "
		         "{inventory: PATH} in the broker config)");
		return -1;
	}
	site = req->region;
	if (!site || !onprem_site_find(&c->inv, site)) {
		drvc_err(err, GB_ERR_INVALID, 0, "UnknownSite",
		         "no site \"%s\" in the on-prem inventory %s",
		         site ? site : "", c->inv.path);
		return -1;
	}
	if (!req->instance_type || !*req->instance_type || req->count == 0 ||
	    req->count > 10000) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "create needs an instance type (a shape) and a count "
		         "from 1 to 10000");
		return -1;
	}
	if (req->token && strlen(req->token) > 64) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidToken",
		         "the idempotency token is longer than 64 characters");
		return -1;
	}
	profile_name = onprem_mig_type(req->instance_type, shape, sizeof(shape));
	if (!profile_name)
		snprintf(shape, sizeof(shape), "%s", req->instance_type);
	if (onprem_views(c, &v, &nv, &all, err) != 0)
		return -1;

	/* an earlier call with this token: return what it leased */
	for (size_t i = 0; req->token && *req->token && i < all.n; i++) {
		onprem_lease *l = &all.v[i];
		if (!l->token || strcmp(l->token, req->token) != 0)
			continue;
		if (!l->pool || !req->pool || strcmp(l->pool, req->pool) != 0) {
			drvc_err(err, GB_ERR_CONFLICT, 0, "TokenInUse",
			         "idempotency token %s already leased node %s to "
			         "pool %s", req->token, l->node,
			         l->pool ? l->pool : "?");
			goto out;
		}
		existing.v = drvc_xrealloc(existing.v, (existing.n + 1) *
		                                               sizeof(onprem_lease));
		existing.v[existing.n++] = *l; /* shallow: owned by all */
	}
	need = existing.n >= req->count ? 0 : req->count - (unsigned)existing.n;

	for (size_t i = 0; i < nv; i++) {
		const onprem_view *w = &v[i];
		if (!view_matches(w, site, shape))
			continue;
		any_shape = 1;
		if (w->n->capacity == req->capacity)
			any_cap = 1;
		if (profile_name && w->model && !prof &&
		    onprem_strv_has(&w->n->mig_profiles, profile_name) &&
		    w->n->mig_enabled)
			prof = onprem_mig_find(w->model, profile_name);
	}
	if (!any_shape || (profile_name && !prof)) {
		shapes_at(v, nv, site, list, sizeof(list));
		drvc_err(err, GB_ERR_INVALID, 0, "UnknownShape",
		         profile_name ? "no node of shape %s at site %s offers "
		                        "MIG profile %s (shapes there: %s)"
		                      : "no nodes of shape %s at site %s%s "
		                        "(shapes there: %s)",
		         shape, site, profile_name ? profile_name : "", list);
		goto out;
	}
	if (!any_cap) {
		drvc_err(err, GB_ERR_INVALID, 0, "NoSuchCapacity",
		         "shape %s at site %s is not sold as %s capacity",
		         shape, site, req->capacity == GB_CAPACITY_SPOT
		                              ? "spot"
		                              : req->capacity == GB_CAPACITY_RESERVED
		                                        ? "reserved" : "on-demand");
		goto out;
	}

	index = req->first_index;
	for (size_t i = 0; i < nv && taken < need; i++) {
		const onprem_view *w = &v[i];
		int r;
		if (!view_matches(w, site, shape) || !w->usable ||
		    w->n->capacity != req->capacity)
			continue;
		if (prof && (!w->n->mig_enabled ||
		             !onprem_strv_has(&w->n->mig_profiles, prof->name) ||
		             onprem_mig_find(w->model, prof->name) != prof))
			continue;
		do {
			onprem_lease l;
			char nm[200];
			for (;; index++) {
				snprintf(nm, sizeof(nm), "%s-%u",
				         req->name_prefix && *req->name_prefix
				                 ? req->name_prefix
				                 : req->pool ? req->pool : "",
				         index);
				if (!name_taken(&existing, nm) &&
				    !name_taken(&mine, nm))
					break;
			}
			fill_proto(c, req, site, index, &l);
			r = prof ? onprem_lease_slice(c, w->n, prof, w->count, &l,
			                              err)
			         : onprem_lease_node(c, w->n, &l, err);
			if (r < 0) {
				onprem_lease_clear(&l);
				goto undo;
			}
			if (r > 0) {
				onprem_lease_clear(&l);
				break;
			}
			mine.v = drvc_xrealloc(mine.v, (mine.n + 1) *
			                                       sizeof(onprem_lease));
			mine.v[mine.n++] = l;
			taken++;
			index++;
		} while (prof && taken < need); /* several slices per node */
	}
	if (taken < need) {
		if (prof)
			drvc_err(err, GB_ERR_CAPACITY, 0, "InsufficientCapacity",
			         "only %u of %u MIG %s slices of shape %s free at "
			         "site %s", taken, need, prof->name, shape, site);
		else
			drvc_err(err, GB_ERR_CAPACITY, 0, "InsufficientCapacity",
			         "only %u of %u nodes of shape %s free at site %s",
			         taken, need, shape, site);
		goto undo;
	}

	/* set up what this call leased and what an interrupted earlier call
	 * left half done */
	js.v = drvc_xcalloc(mine.n + existing.n + 1, sizeof(job));
	for (size_t i = 0; i < mine.n + existing.n; i++) {
		onprem_lease *l = i < mine.n ? &mine.v[i] : &existing.v[i - mine.n];
		const onprem_node *n = onprem_node_find(&c->inv, l->node);
		if (i >= mine.n && l->state && !strcmp(l->state, "ready"))
			continue;
		if (!n)
			continue;
		js.v[js.n].c = c;
		js.v[js.n].n = n;
		js.v[js.n].l = l;
		js.v[js.n].req = req;
		js.n++;
	}
	run_jobs(&js);
	for (size_t i = 0; i < js.n; i++)
		if (js.v[i].failed) {
			*err = js.v[i].err;
			mark_failed(c, &js, err);
			for (size_t k = 0; k < js.n; k++)
				undo_job(&js.v[k]);
			/* undo_job released this call's leases */
			for (size_t k = 0; k < mine.n; k++)
				onprem_lease_clear(&mine.v[k]);
			mine.n = 0;
			goto out;
		}
	{
		onprem_leases res = {NULL, 0};
		res.v = drvc_xcalloc(mine.n + existing.n + 1, sizeof(onprem_lease));
		for (size_t i = 0; i < existing.n; i++)
			res.v[res.n++] = existing.v[i];
		for (size_t i = 0; i < mine.n; i++)
			res.v[res.n++] = mine.v[i];
		qsort(res.v, res.n, sizeof(onprem_lease), lease_cmp);
		for (size_t i = 0; i < res.n; i++)
			if (emit_current(c, &res.v[i], emit, ud) != 0)
				break;
		free(res.v);
	}
	rc = 0;
	goto out;
undo:
	for (size_t i = 0; i < mine.n; i++) {
		gb_error e;
		if (onprem_lease_release(c, &mine.v[i], &e) != 0)
			onprem_log(c, GB_LOG_ERROR, "%s", e.message);
	}
out:
	for (size_t i = 0; i < mine.n; i++)
		onprem_lease_clear(&mine.v[i]);
	free(mine.v);
	free(existing.v);
	free(js.v);
	onprem_views_free(v, nv, &all);
	return rc;
}

/* ---------------------------------------------------------------- describe */

static int lease_matches(const onprem_lease *l, const gb_describe_req *req)
{
	if (req->region && *req->region && (!l->site ||
	                                    strcmp(l->site, req->region) != 0))
		return 0;
	if (req->pool && (!l->pool || strcmp(l->pool, req->pool) != 0))
		return 0;
	if (req->broker_id &&
	    (!l->broker_id || strcmp(l->broker_id, req->broker_id) != 0))
		return 0;
	if (req->token && (!l->token || strcmp(l->token, req->token) != 0))
		return 0;
	return 1;
}

int onprem_describe(void *ctx, const gb_describe_req *req,
                    gb_instance_cb emit, void *ud, gb_error *err)
{
	onprem_ctx *c = ctx;
	onprem_leases all;
	if (!c->have_inventory)
		return 0;
	if (req->nids) {
		for (size_t i = 0; i < req->nids; i++) {
			onprem_lease l;
			char node[128];
			int slot, r = onprem_lease_read_id(c, req->ids[i], &l);
			if (r == 0) {
				int stop = emit_current(c, &l, emit, ud);
				onprem_lease_clear(&l);
				if (stop)
					return 0;
				continue;
			}
			if (!req->include_terminated ||
			    onprem_parse_id(req->ids[i], node, sizeof(node),
			                    &slot) != 0)
				continue;
			{
				const onprem_node *n = onprem_node_find(&c->inv, node);
				gb_instance in;
				memset(&in, 0, sizeof(in));
				in.id = req->ids[i];
				in.name = req->ids[i];
				in.region = n ? site_of(c, n)
				              : req->region ? req->region : "";
				in.zone = "";
				in.instance_type = "";
				in.state = GB_INST_TERMINATED;
				in.state_reason = "released";
				in.private_ip = n ? n->address : NULL;
				if (emit(ud, &in) != 0)
					return 0;
			}
		}
		return 0;
	}
	if (!req->pool && !req->broker_id && !req->token) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidRequest",
		         "describe needs ids, a pool, a broker id or a token");
		return -1;
	}
	if (onprem_leases_list(c, NULL, &all, err) != 0)
		return -1;
	for (size_t i = 0; i < all.n; i++)
		if (lease_matches(&all.v[i], req) &&
		    emit_current(c, &all.v[i], emit, ud) != 0)
			break;
	onprem_leases_free(&all);
	return 0;
}

/* ---------------------------------------------------------------- terminate */

static int mig_destroy_locked(const onprem_ctx *c, const onprem_node *n,
                              const onprem_lease *l, gb_error *err)
{
	int fd = onprem_node_lock(c, n->name, err), rc;
	if (fd < 0)
		return -1;
	rc = onprem_mig_destroy(c, n, l, err);
	close(fd);
	return rc;
}

int onprem_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                     gb_error *err)
{
	onprem_ctx *c = ctx;
	int rc = 0;
	if (!c->have_inventory)
		return 0;
	for (size_t i = 0; i < n; i++) {
		onprem_lease l;
		const onprem_node *nd;
		gb_error e;
		int r = onprem_lease_read_id(c, refs[i].id, &l);
		if (r != 0)
			continue; /* already free (or not ours) */
		memset(&e, 0, sizeof(e));
		nd = onprem_node_find(&c->inv, l.node);
		if (nd && run_hook(c, nd, &l, "teardown", nd->teardown, &e) != 0)
			onprem_log(c, GB_LOG_WARN, "%s (the lease is released "
			           "anyway)", e.message);
		if (nd && l.mig && mig_destroy_locked(c, nd, &l, &e) != 0) {
			if (e.cls == GB_ERR_TRANSIENT) {
				/* keep the lease: the slice still exists */
				if (!rc)
					*err = e;
				rc = -1;
				onprem_lease_clear(&l);
				continue;
			}
			onprem_log(c, GB_LOG_WARN, "%s (the lease is released "
			           "anyway)", e.message);
		}
		if (onprem_lease_release(c, &l, &e) != 0) {
			if (!rc)
				*err = e;
			rc = -1;
		}
		onprem_lease_clear(&l);
	}
	return rc;
}
