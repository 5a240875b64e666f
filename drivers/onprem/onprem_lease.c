/* onprem_lease.c -- leases of nodes and MIG slices as files under
 * <state_dir>/leases:
 *   <node>.json             the whole node
 *   <node>.mig.<slot>.json  one MIG slice of the node
 * A lease is taken with open(O_CREAT|O_EXCL), so two processes (the CLI
 * and the daemon) or two threads can never hold the same file; every
 * change to a node's leases also holds flock() on .<node>.lock so whole
 * and sliced leases of one node exclude each other and slice placement
 * is decided by one process at a time. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drvc_mem.h"
#include "drvc_util.h"
#include "onprem.h"

#define MIG_SLICES 7

static int lock_node(const onprem_ctx *c, const char *node, gb_error *err);

void onprem_lease_clear(onprem_lease *l)
{
	free(l->file);
	free(l->node);
	free(l->profile);
	free(l->pool);
	free(l->token);
	free(l->broker_id);
	free(l->team);
	free(l->name);
	free(l->state);
	free(l->site);
	free(l->instance_type);
	json_decref(l->tags);
	memset(l, 0, sizeof(*l));
}

void onprem_leases_free(onprem_leases *l)
{
	for (size_t i = 0; i < l->n; i++)
		onprem_lease_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

const char *onprem_lease_id(const onprem_lease *l, char *buf, size_t cap)
{
	if (l->mig)
		snprintf(buf, cap, "%s/mig%d", l->node, l->slot);
	else
		snprintf(buf, cap, "%s", l->node);
	return buf;
}

int onprem_parse_id(const char *id, char *nodebuf, size_t cap, int *slot)
{
	const char *sl = strchr(id, '/');
	size_t nlen = sl ? (size_t)(sl - id) : strlen(id);
	*slot = -1;
	if (nlen == 0 || nlen >= cap)
		return -1;
	for (size_t i = 0; i < nlen; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '-'))
			return -1;
	memcpy(nodebuf, id, nlen);
	nodebuf[nlen] = '\0';
	if (sl) {
		char *end;
		long v;
		if (strncmp(sl, "/mig", 4) != 0 || !sl[4])
			return -1;
		v = strtol(sl + 4, &end, 10);
		if (*end || v < 0 || v > 4096 || sl[4] == '-' || sl[4] == '+')
			return -1;
		*slot = (int)v;
	}
	return 0;
}

static char *lease_file_name(const char *node, int slot)
{
	if (slot < 0)
		return drvc_xasprintf("%s.json", node);
	return drvc_xasprintf("%s.mig.%d.json", node, slot);
}

/* Splits a lease file name into node and slot (-1 = whole).  0 or -1. */
static int split_name(const char *fname, char *node, size_t cap, int *slot)
{
	size_t len = strlen(fname);
	const char *mig;
	if (fname[0] == '.' || len < 6 || strcmp(fname + len - 5, ".json"))
		return -1;
	len -= 5;
	mig = strstr(fname, ".mig.");
	if (mig && (size_t)(mig - fname) < len) {
		char *end;
		long v = strtol(mig + 5, &end, 10);
		if (end != fname + len || v < 0)
			return -1;
		*slot = (int)v;
		len = (size_t)(mig - fname);
	} else {
		*slot = -1;
	}
	if (len == 0 || len >= cap || memchr(fname, '.', len))
		return -1;
	memcpy(node, fname, len);
	node[len] = '\0';
	return 0;
}

static char *dup_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? drvc_xstrdup(s) : NULL;
}

static int get_int(const json_t *o, const char *key, int def)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int)json_integer_value(v) : def;
}

static int read_lease(const char *dir, const char *fname, onprem_lease *l)
{
	char node[128];
	int slot;
	char *path;
	json_t *doc;
	json_error_t je;
	memset(l, 0, sizeof(*l));
	if (split_name(fname, node, sizeof(node), &slot) != 0)
		return -1;
	l->file = drvc_xstrdup(fname);
	l->node = drvc_xstrdup(node);
	l->mig = slot >= 0;
	l->slot = slot;
	l->gi = l->ci = l->gpu = -1;
	path = drvc_xasprintf("%s/%s", dir, fname);
	doc = json_load_file(path, 0, &je);
	free(path);
	if (!doc || !json_is_object(doc)) {
		json_decref(doc);
		{
			struct stat st;
			char *p2 = drvc_xasprintf("%s/%s", dir, fname);
			int gone = stat(p2, &st) != 0;
			free(p2);
			if (gone) {
				onprem_lease_clear(l);
				return 1;
			}
		}
		l->unreadable = 1;
		l->state = drvc_xstrdup("setup");
		l->tags = json_object();
		return 0;
	}
	l->gpu = get_int(doc, "gpu", -1);
	l->gi = get_int(doc, "gi", -1);
	l->ci = get_int(doc, "ci", -1);
	l->slices = get_int(doc, "slices", 1);
	l->profile = dup_str(doc, "profile");
	l->pool = dup_str(doc, "pool");
	l->token = dup_str(doc, "token");
	l->broker_id = dup_str(doc, "broker_id");
	l->team = dup_str(doc, "team");
	l->name = dup_str(doc, "name");
	l->site = dup_str(doc, "site");
	l->instance_type = dup_str(doc, "instance_type");
	{
		const char *cap = json_string_value(json_object_get(doc,
		                                                    "capacity"));
		l->capacity = cap && !strcmp(cap, "reserved")
		                      ? GB_CAPACITY_RESERVED
		                      : GB_CAPACITY_ON_DEMAND;
	}
	l->state = dup_str(doc, "state");
	if (!l->state)
		l->state = drvc_xstrdup("ready");
	l->leased_at = json_is_integer(json_object_get(doc, "leased_at"))
	                       ? json_integer_value(json_object_get(doc, "leased_at"))
	                       : 0;
	l->tags = json_object_get(doc, "tags");
	if (json_is_object(l->tags))
		json_incref(l->tags);
	else
		l->tags = json_object();
	json_decref(doc);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	const onprem_lease *x = a, *y = b;
	return strcmp(x->file, y->file);
}

int onprem_leases_list(const onprem_ctx *c, const char *node,
                       onprem_leases *out, gb_error *err)
{
	DIR *d;
	struct dirent *e;
	size_t nlen = node ? strlen(node) : 0;
	out->v = NULL;
	out->n = 0;
	d = opendir(c->lease_dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot read the lease directory %s: %s", c->lease_dir,
		         strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		onprem_lease l;
		if (e->d_name[0] == '.')
			continue;
		if (node && (strncmp(e->d_name, node, nlen) != 0 ||
		             (strcmp(e->d_name + nlen, ".json") != 0 &&
		              strncmp(e->d_name + nlen, ".mig.", 5) != 0)))
			continue;
		if (read_lease(c->lease_dir, e->d_name, &l) != 0)
			continue;
		out->v = drvc_xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = l;
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), name_cmp);
	return 0;
}

int onprem_lease_read_id(const onprem_ctx *c, const char *id,
                         onprem_lease *out)
{
	char node[128];
	int slot, rc;
	char *fname;
	memset(out, 0, sizeof(*out));
	if (onprem_parse_id(id, node, sizeof(node), &slot) != 0)
		return -1;
	fname = lease_file_name(node, slot);
	rc = read_lease(c->lease_dir, fname, out);
	free(fname);
	if (rc == 0 && out->unreadable) {
		/* an empty file that stat() found: being written or torn */
		return 0;
	}
	return rc;
}

json_t *onprem_lease_json(const onprem_lease *l)
{
	json_t *o = json_object();
	json_object_set_new(o, "node", json_string(l->node));
	json_object_set_new(o, "kind", json_string(l->mig ? "mig" : "node"));
	if (l->mig) {
		json_object_set_new(o, "slot", json_integer(l->slot));
		json_object_set_new(o, "gpu", json_integer(l->gpu));
		json_object_set_new(o, "profile", json_string(l->profile));
		json_object_set_new(o, "slices", json_integer(l->slices));
		json_object_set_new(o, "gi", json_integer(l->gi));
		json_object_set_new(o, "ci", json_integer(l->ci));
	}
	json_object_set_new(o, "site", l->site ? json_string(l->site)
	                                       : json_null());
	json_object_set_new(o, "instance_type",
	                    l->instance_type ? json_string(l->instance_type)
	                                     : json_null());
	json_object_set_new(o, "capacity",
	                    json_string(l->capacity == GB_CAPACITY_RESERVED
	                                        ? "reserved" : "on-demand"));
	json_object_set_new(o, "pool", l->pool ? json_string(l->pool) : json_null());
	json_object_set_new(o, "token", l->token ? json_string(l->token)
	                                         : json_null());
	json_object_set_new(o, "broker_id", l->broker_id
	                                            ? json_string(l->broker_id)
	                                            : json_null());
	json_object_set_new(o, "team", l->team ? json_string(l->team)
	                                       : json_null());
	json_object_set_new(o, "name", l->name ? json_string(l->name)
	                                       : json_null());
	json_object_set_new(o, "state", json_string(l->state ? l->state
	                                                     : "setup"));
	json_object_set_new(o, "leased_at", json_integer(l->leased_at));
	json_object_set_new(o, "tags", l->tags ? json_deep_copy(l->tags)
	                                       : json_object());
	return o;
}

static int write_all(int fd, const char *s, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, s + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

static char *lease_text(const onprem_lease *l)
{
	json_t *o = onprem_lease_json(l);
	char *t = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(o);
	return t;
}

int onprem_node_lock(const onprem_ctx *c, const char *node, gb_error *err)
{
	return lock_node(c, node, err);
}

/* flock() on the node's lock file; returns the fd (close to unlock), or
 * -1 with err. */
static int lock_node(const onprem_ctx *c, const char *node, gb_error *err)
{
	char *path = drvc_xasprintf("%s/.%s.lock", c->lease_dir, node);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot open the lock file %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	while (flock(fd, LOCK_EX) != 0) {
		if (errno == EINTR)
			continue;
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot lock %s: %s", path, strerror(errno));
		close(fd);
		free(path);
		return -1;
	}
	free(path);
	return fd;
}

/* Create the lease file exclusively.  0, 1 when it exists, -1 on error. */
static int create_excl(const onprem_ctx *c, onprem_lease *l, gb_error *err)
{
	char *path = drvc_xasprintf("%s/%s", c->lease_dir, l->file);
	char *text = lease_text(l);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int rc = 0;
	if (fd < 0) {
		if (errno == EEXIST) {
			rc = 1;
		} else {
			drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
			         "cannot create the lease %s: %s", path,
			         strerror(errno));
			rc = -1;
		}
	} else if (write_all(fd, text, strlen(text)) != 0 ||
	           write_all(fd, "\n", 1) != 0 || fsync(fd) != 0) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot write the lease %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		rc = -1;
	} else if (close(fd) != 0) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot write the lease %s: %s", path, strerror(errno));
		unlink(path);
		rc = -1;
	}
	free(text);
	free(path);
	return rc;
}

int onprem_lease_node(const onprem_ctx *c, const onprem_node *n,
                      onprem_lease *l, gb_error *err)
{
	onprem_leases mine;
	int fd, rc;
	free(l->node);
	free(l->file);
	l->node = drvc_xstrdup(n->name);
	l->file = lease_file_name(n->name, -1);
	l->mig = 0;
	l->slot = -1;
	if ((fd = lock_node(c, n->name, err)) < 0)
		return -1;
	if (onprem_leases_list(c, n->name, &mine, err) != 0) {
		close(fd);
		return -1;
	}
	rc = mine.n ? 1 : create_excl(c, l, err);
	onprem_leases_free(&mine);
	close(fd);
	return rc;
}

/* Per-GPU usage of a node's MIG leases. */
static void gpu_usage(const onprem_leases *ls, int gpu,
                      const onprem_mig_profile *p, int *slices, int *same)
{
	*slices = 0;
	*same = 0;
	for (size_t i = 0; i < ls->n; i++) {
		const onprem_lease *l = &ls->v[i];
		if (!l->mig || l->gpu != gpu)
			continue;
		*slices += l->slices > 0 ? l->slices : 1;
		if (l->profile && !strcmp(l->profile, p->name))
			(*same)++;
	}
}

int onprem_mig_room(const onprem_leases *node_leases,
                    const onprem_mig_profile *p, int gpus)
{
	int room = 0;
	for (size_t i = 0; i < node_leases->n; i++)
		if (!node_leases->v[i].mig)
			return 0; /* leased whole */
	for (int g = 0; g < gpus; g++) {
		int used, same, fit;
		gpu_usage(node_leases, g, p, &used, &same);
		fit = (MIG_SLICES - used) / p->slices;
		if (fit > p->max_per_gpu - same)
			fit = p->max_per_gpu - same;
		if (fit > 0)
			room += fit;
	}
	return room;
}

int onprem_lease_slice(const onprem_ctx *c, const onprem_node *n,
                       const onprem_mig_profile *p, int gpus,
                       onprem_lease *l, gb_error *err)
{
	onprem_leases mine;
	int fd, rc = 1, gpu = -1;
	if ((fd = lock_node(c, n->name, err)) < 0)
		return -1;
	if (onprem_leases_list(c, n->name, &mine, err) != 0) {
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < mine.n; i++)
		if (!mine.v[i].mig)
			goto out; /* leased whole */
	for (int g = 0; g < gpus && gpu < 0; g++) {
		int used, same;
		gpu_usage(&mine, g, p, &used, &same);
		if (used + p->slices <= MIG_SLICES && same < p->max_per_gpu)
			gpu = g;
	}
	if (gpu < 0)
		goto out;
	for (int slot = 0;; slot++) {
		int taken = 0;
		for (size_t i = 0; i < mine.n; i++)
			if (mine.v[i].mig && mine.v[i].slot == slot)
				taken = 1;
		if (taken)
			continue;
		free(l->node);
		free(l->file);
		free(l->profile);
		l->node = drvc_xstrdup(n->name);
		l->file = lease_file_name(n->name, slot);
		l->mig = 1;
		l->slot = slot;
		l->gpu = gpu;
		l->profile = drvc_xstrdup(p->name);
		l->slices = p->slices;
		l->gi = l->ci = -1;
		rc = create_excl(c, l, err);
		if (rc != 1)
			break;
		/* a torn file under that name: try the next slot */
	}
out:
	onprem_leases_free(&mine);
	close(fd);
	return rc;
}

int onprem_lease_write(const onprem_ctx *c, const onprem_lease *l,
                       gb_error *err)
{
	char *tmp = drvc_xasprintf("%s/.tmp-XXXXXX", c->lease_dir);
	char *path = drvc_xasprintf("%s/%s", c->lease_dir, l->file);
	char *text = lease_text(l);
	int lfd, fd, rc = -1;
	struct stat st;
	if ((lfd = lock_node(c, l->node, err)) < 0)
		goto done;
	if (stat(path, &st) != 0) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "LeaseGone",
		         "the lease %s was released meanwhile", l->file);
		close(lfd);
		goto done;
	}
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, 0644) != 0 ||
	    write_all(fd, text, strlen(text)) != 0 ||
	    write_all(fd, "\n", 1) != 0 || fsync(fd) != 0 || close(fd) != 0 ||
	    rename(tmp, path) != 0) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot update the lease %s: %s", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
	} else {
		rc = 0;
	}
	close(lfd);
done:
	free(text);
	free(tmp);
	free(path);
	return rc;
}

int onprem_lease_release(const onprem_ctx *c, const onprem_lease *l,
                         gb_error *err)
{
	char *path = drvc_xasprintf("%s/%s", c->lease_dir, l->file);
	int lfd, rc = 0;
	if ((lfd = lock_node(c, l->node, err)) < 0) {
		free(path);
		return -1;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "StateDir",
		         "cannot release the lease %s: %s", path, strerror(errno));
		rc = -1;
	}
	close(lfd);
	free(path);
	return rc;
}
