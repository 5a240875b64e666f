/*
 * metadata.c -- each instance's metadata service, as the instance agent
 * reads it, below $CONTROL/_sim/meta/<instance id or name>/ with the
 * paths and headers of the real services:
 *   EC2 IMDSv2: PUT latest/api/token (X-aws-ec2-metadata-token-ttl-seconds
 *     1..21600) answers a session token; GET latest/meta-data/instance-id
 *     needs it in X-aws-ec2-metadata-token (else 401)
 *   GCE: GET computeMetadata/v1/instance/{id,name} with
 *     Metadata-Flavor: Google (else 403)
 *   Azure IMDS: GET metadata/instance/compute/{vmId,name}?api-version=...
 *     &format=text with Metadata: true (else 400)
 * Real services answer on 169.254.169.254 (and metadata.google.internal);
 * the agent's metadata_url points here instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* The session token of an instance: derived from its id and a secret of
 * this cloudsim (a guess of another instance's is wrong). */
static void imds_token(const sim_inst *in, char out[65])
{
	char *s = gb_xasprintf("imds:%s:%s", sim_g.sc.aws_secret, in->id);
	gb_sha256_hex(s, strlen(s), out);
	free(s);
}

static void text(sim_resp *resp, int status, const char *body)
{
	sim_resp_text(resp, status, "text/plain", body);
}

void sim_metadata(sim_req *req, sim_resp *resp, const char *rest)
{
	const char *slash = strchr(rest, '/');
	char id[200], tok[65];
	const char *path;
	sim_inst *in;
	int get = strcmp(req->method, "GET") == 0;
	req->op = "metadata";
	if (!slash || (size_t)(slash - rest) >= sizeof(id)) {
		text(resp, 404, "Not Found");
		return;
	}
	memcpy(id, rest, (size_t)(slash - rest));
	id[slash - rest] = '\0';
	path = slash + 1;
	if (!(in = sim_inst_find_any(id)) ||
	    sim_inst_phase(in, sim_now()) == SIM_PH_GONE) {
		text(resp, 404, "Not Found");
		return;
	}
	if (in->cloud == SIM_AWS) {
		const char *ttl = sim_req_header(req, "X-aws-ec2-metadata-token-ttl-seconds");
		const char *got = sim_req_header(req, "X-aws-ec2-metadata-token");
		imds_token(in, tok);
		if (strcmp(req->method, "PUT") == 0 &&
		    strcmp(path, "latest/api/token") == 0) {
			int t = ttl ? atoi(ttl) : 0;
			if (t < 1 || t > 21600)
				text(resp, 400, "Bad Request");
			else
				text(resp, 200, tok);
		} else if (!got || strcmp(got, tok) != 0) {
			text(resp, 401, "Unauthorized");
		} else if (get && strcmp(path, "latest/meta-data/instance-id") == 0) {
			text(resp, 200, in->id);
		} else {
			text(resp, 404, "Not Found");
		}
	} else if (in->cloud == SIM_GCP) {
		const char *f = sim_req_header(req, "Metadata-Flavor");
		if (!f || strcmp(f, "Google") != 0)
			text(resp, 403, "Missing Metadata-Flavor:Google header.");
		else if (get && strcmp(path, "computeMetadata/v1/instance/id") == 0)
			text(resp, 200, in->id);
		else if (get && strcmp(path, "computeMetadata/v1/instance/name") == 0)
			text(resp, 200, in->name);
		else
			text(resp, 404, "Not Found");
		if (f && strcmp(f, "Google") == 0)
			sim_resp_header(resp, "Metadata-Flavor", "Google");
	} else if (in->cloud == SIM_AZURE) {
		const char *m = sim_req_header(req, "Metadata");
		const char *v = sim_req_qarg(req, "api-version");
		const char *fmt = sim_req_qarg(req, "format");
		if (!m || strcmp(m, "true") != 0 || !v)
			sim_resp_json(resp, 400, json_pack("{s:s}", "error",
			        "Bad request. Required metadata header not "
			        "specified or api-version missing"));
		else if (get && fmt && strcmp(fmt, "text") == 0 &&
		         strcmp(path, "metadata/instance/compute/vmId") == 0)
			text(resp, 200, in->id);
		else if (get && fmt && strcmp(fmt, "text") == 0 &&
		         strcmp(path, "metadata/instance/compute/name") == 0)
			text(resp, 200, in->name);
		else
			text(resp, 404, "Not Found");
	} else {
		text(resp, 404, "Not Found");
	}
}
