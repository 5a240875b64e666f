/* gcp_delete.c -- DELETE zones/{z}/instances/{name}?requestId=<uuid>;
 * 404 = already gone.  We do not wait for the operation: describe shows
 * STOPPING and then nothing.  The boot disk goes with the instance
 * (autoDelete).  The requestId is random per call (a name may be reused
 * by a later pool; a derived id would make GCE skip that later delete). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_create.h"
#include "drvc_http.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "gcp.h"

typedef struct find1 {
	const char *name;
	char *zone;
} find1;

static int find_fn(void *ud, gcp_inst *inst)
{
	find1 *f = ud;
	if (strcmp(inst->name, f->name) != 0)
		return 0;
	f->zone = drvc_xstrdup(inst->zone);
	return 1;
}

int gcp_delete_inst(gcp_ctx *c, const char *zone, const char *name,
                    gb_error *err)
{
	gb_http_resp resp;
	char rid[37], what[200], *rest, *url;
	int rc;

	gcp_random_uuid(rid);
	rest = drvc_xasprintf("instances/%s?requestId=%s", name, rid);
	url = gcp_zone_url(c, zone, rest);
	free(rest);
	snprintf(what, sizeof(what), "DELETE instance %.63s in %.63s", name,
	         zone);
	rc = gcp_api(c, "DELETE", url, NULL, "gce-mutate", what, &resp, err);
	c->host->http_free(c->host->ctx, &resp);
	free(url);
	rc = drvc_gone_ok(rc, err);
	if (rc == 0)
		gcp_zone_forget(c, name);
	return rc;
}

static int valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > 63)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-'))
			return 0;
	return 1;
}

int gcp_terminate(void *ctx, const gb_instance_ref *refs, size_t n,
                  gb_error *err)
{
	gcp_ctx *c = ctx;
	drvc_failures fails = DRVC_FAILURES_INIT;
	gb_error e;

	if (gcp_require(c, err) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *name = refs[i].id;
		char *zone = NULL;
		int rc = 0;
		if (!valid(name))
			continue; /* not a GCE name: nothing of ours to delete */
		if (refs[i].zone && *refs[i].zone)
			zone = drvc_xstrdup(refs[i].zone);
		else
			zone = gcp_zone_lookup(c, name);
		if (!zone) {
			find1 f = {name, NULL};
			char *filter = drvc_xasprintf("name = \"%s\"", name);
			rc = gcp_agg_list(c, filter, find_fn, &f, &e);
			free(filter);
			zone = f.zone;
		}
		if (rc == 0 && zone) {
			if (!valid(zone)) {
				drvc_err(&e, GB_ERR_INVALID, 0, "InvalidZone",
				         "GCP terminate %s: zone '%.63s' is not a zone",
				         name, zone);
				rc = -1;
			} else {
				rc = gcp_delete_inst(c, zone, name, &e);
			}
		}
		free(zone);
		if (rc != 0)
			drvc_failures_note(&fails, c->host, "gcp", name, &e);
	}
	return drvc_failures_result(&fails, "instance", err);
}
