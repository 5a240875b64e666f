/* onprem_mig.c -- MIG GPU and compute instances through nvidia-smi, run on
 * the node over its transport:
 *   create:  nvidia-smi mig -i <gpu> -cgi <profile> -C
 *   destroy: nvidia-smi mig -i <gpu> -gi <gi> -ci <ci> -dci
 *            nvidia-smi mig -i <gpu> -gi <gi> -dgi
 * The ids are read from nvidia-smi's "Successfully created GPU instance ID
 * N ..." / "... compute instance ID M ..." lines and kept in the lease. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drvc_mem.h"
#include "drvc_util.h"
#include "onprem.h"

/* The number after `label` (case-insensitive, blanks skipped), or -1. */
static int id_after(const char *text, const char *label)
{
	size_t ll = strlen(label);
	for (const char *p = text; *p; p++) {
		const char *q;
		if (strncasecmp(p, label, ll) != 0)
			continue;
		q = p + ll;
		while (*q == ' ' || *q == '\t')
			q++;
		if (isdigit((unsigned char)*q))
			return atoi(q);
	}
	return -1;
}

static int run_smi(const onprem_ctx *c, const onprem_node *n, const char *args,
                   onprem_runres *r, gb_error *err, const char *what)
{
	char *smi = onprem_shquote(c->nvidia_smi);
	char *cmd = drvc_xasprintf("%s %s", smi, args);
	int rc = onprem_run(c, n, cmd, NULL, 0, 120, r);
	free(cmd);
	free(smi);
	if (rc != 0) {
		onprem_run_err(c, n, err, r, what);
		return -1;
	}
	return 0;
}

int onprem_mig_create(const onprem_ctx *c, const onprem_node *n,
                      onprem_lease *l, gb_error *err)
{
	onprem_runres r;
	char args[160], tail[400];
	snprintf(args, sizeof(args), "mig -i %d -cgi %s -C", l->gpu, l->profile);
	if (run_smi(c, n, args, &r, err, "creating a MIG instance") != 0) {
		onprem_runres_free(&r);
		return -1;
	}
	if (r.exit_code != 0) {
		int cap;
		onprem_tail(tail, sizeof(tail), *r.err ? r.err : r.out, 300);
		cap = strstr(r.out, "nsufficient") || strstr(r.err, "nsufficient");
		drvc_err(err, cap ? GB_ERR_CAPACITY : GB_ERR_INVALID, 0,
		         cap ? "MigInsufficientResources" : "MigCreateFailed",
		         "nvidia-smi %s on node %s failed (exit %d): %s", args,
		         n->name, r.exit_code, tail);
		onprem_runres_free(&r);
		return -1;
	}
	l->gi = id_after(r.out, "GPU instance ID");
	l->ci = id_after(r.out, "compute instance ID");
	if (l->gi < 0) {
		onprem_tail(tail, sizeof(tail), r.out, 300);
		drvc_err(err, GB_ERR_INVALID, 0, "MigCreateFailed",
		         "nvidia-smi %s on node %s printed no GPU instance ID: %s",
		         args, n->name, tail);
		onprem_runres_free(&r);
		return -1;
	}
	onprem_runres_free(&r);
	return 0;
}

/* nvidia-smi saying the instance does not exist (already destroyed). */
static int gone(const onprem_runres *r)
{
	return strstr(r->out, "Not Found") || strstr(r->err, "Not Found") ||
	       strstr(r->out, "not found") || strstr(r->err, "not found");
}

int onprem_mig_destroy(const onprem_ctx *c, const onprem_node *n,
                       const onprem_lease *l, gb_error *err)
{
	onprem_runres r;
	char args[160], tail[400];
	if (l->gi < 0)
		return 0; /* never created */
	if (l->ci >= 0) {
		snprintf(args, sizeof(args), "mig -i %d -gi %d -ci %d -dci",
		         l->gpu, l->gi, l->ci);
		if (run_smi(c, n, args, &r, err, "destroying a MIG compute "
		            "instance") != 0) {
			onprem_runres_free(&r);
			return -1;
		}
		if (r.exit_code != 0 && !gone(&r)) {
			onprem_tail(tail, sizeof(tail), *r.err ? r.err : r.out,
			            300);
			onprem_log(c, GB_LOG_WARN, "node %s: nvidia-smi %s failed "
			           "(exit %d): %s", n->name, args, r.exit_code,
			           tail);
		}
		onprem_runres_free(&r);
	}
	snprintf(args, sizeof(args), "mig -i %d -gi %d -dgi", l->gpu, l->gi);
	if (run_smi(c, n, args, &r, err, "destroying a MIG GPU instance") != 0) {
		onprem_runres_free(&r);
		return -1;
	}
	if (r.exit_code != 0 && !gone(&r)) {
		onprem_tail(tail, sizeof(tail), *r.err ? r.err : r.out, 300);
		drvc_err(err, GB_ERR_INVALID, 0, "MigDestroyFailed",
		         "nvidia-smi %s on node %s failed (exit %d): %s", args,
		         n->name, r.exit_code, tail);
		onprem_runres_free(&r);
		return -1;
	}
	onprem_runres_free(&r);
	return 0;
}
