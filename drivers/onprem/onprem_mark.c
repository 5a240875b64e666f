/* onprem_mark.c -- a node the driver itself found failing (its setup
 * exited non-zero, or it could not be reached while a pool was being
 * given it) is marked: <probe_dir>/<node>.mark.json holds why.  A marked
 * node is unhealthy (or unreachable) whatever its last probe said, so it
 * is neither offered nor leased, until a probe finds it healthy or an
 * administrator clears the mark (`gpubroker nodes clear NODE`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drvc_mem.h"
#include "onprem.h"

static char *mark_file(const onprem_ctx *c, const char *node)
{
	return drvc_xasprintf("%s/%s.mark.json", c->probe_dir, node);
}

int onprem_mark_node(const onprem_ctx *c, const char *node, int unreachable,
                     const char *reason)
{
	char *path = mark_file(c, node);
	char *tmp = drvc_xasprintf("%s.tmp", path);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:I}", "node", node, "state",
	                        unreachable ? "unreachable" : "unhealthy",
	                        "reason", reason, "marked_at",
	                        (json_int_t)onprem_now(c));
	int rc = -1;
	if (doc && json_dump_file(doc, tmp, JSON_INDENT(2)) == 0 &&
	    rename(tmp, path) == 0)
		rc = 0;
	if (rc != 0) {
		onprem_log(c, GB_LOG_ERROR, "cannot mark node %s %s in %s: %s",
		           node, unreachable ? "unreachable" : "unhealthy", path,
		           strerror(errno));
		unlink(tmp);
	} else {
		onprem_log(c, GB_LOG_WARN, "node %s marked %s: %s (not offered "
		           "until 'gpubroker nodes probe %s' finds it healthy or "
		           "'gpubroker nodes clear %s')", node,
		           unreachable ? "unreachable" : "unhealthy", reason,
		           node, node);
	}
	json_decref(doc);
	free(tmp);
	free(path);
	return rc;
}

int onprem_mark_remove(const onprem_ctx *c, const char *node)
{
	char *path = mark_file(c, node);
	int rc = unlink(path) == 0 ? 1 : errno == ENOENT ? 0 : -1;
	free(path);
	return rc;
}

void onprem_mark_apply(const onprem_ctx *c, const onprem_node *n,
                       onprem_health *h)
{
	char *path = mark_file(c, n->name);
	json_t *doc = json_load_file(path, 0, NULL);
	const char *st, *reason;
	onprem_strv keep = {NULL, 0};
	free(path);
	if (!doc)
		return;
	st = json_string_value(json_object_get(doc, "state"));
	reason = json_string_value(json_object_get(doc, "reason"));
	h->marked_at = json_integer_value(json_object_get(doc, "marked_at"));
	h->state = st && !strcmp(st, "unreachable") ? ONPREM_H_UNREACHABLE
	                                            : ONPREM_H_UNHEALTHY;
	/* the mark's reason first: it is what the node's status says */
	keep = h->failures;
	h->failures.v = NULL;
	h->failures.n = 0;
	onprem_strv_push(&h->failures, reason ? reason : "marked failing");
	for (size_t i = 0; i < keep.n; i++)
		onprem_strv_push(&h->failures, keep.v[i]);
	onprem_strv_free(&keep);
	json_decref(doc);
}
