/*
 * ec2_describe.c -- DescribeInstances and the instance item shape.
 *
 * New instances stay invisible for eventual_consistency_ms (asking for
 * them by id gives InvalidInstanceID.NotFound, lists omit them);
 * terminated ones stay listed as terminated for
 * lifecycle.aws.terminated_visible_ms.  Paging: MaxResults 5..1000 with
 * an opaque NextToken (the position after the last instance returned).
 */
#include <stdlib.h>
#include <string.h>

#include "ec2.h"

static const char *state_name(sim_phase ph, int *code)
{
	switch (ph) {
	case SIM_PH_PENDING: *code = 0; return "pending";
	case SIM_PH_RUNNING: *code = 16; return "running";
	case SIM_PH_STOPPING: *code = 32; return "shutting-down";
	case SIM_PH_STOPPED: *code = 80; return "stopped";
	case SIM_PH_FAILED:
	case SIM_PH_GONE: break;
	}
	*code = 48;
	return "terminated";
}

void ec2_state_xml(gb_buf *b, const char *tag, sim_phase ph)
{
	int code;
	const char *name = state_name(ph, &code);
	gb_buf_printf(b, "<%s><code>%d</code><name>%s</name></%s>", tag, code,
	              name, tag);
}

const gb_strv *ec2_region_zones(ec2_ctx *c)
{
	static const gb_strv none = {NULL, 0};
	const sim_region *r = sim_region_find(SIM_AWS, c->region);
	return r ? &r->zones : &none;
}

void ec2_instance_xml(gb_buf *b, const sim_inst *in, int64_t now)
{
	sim_phase ph = sim_inst_phase(in, now);
	char ts[40], gmt[40];
	int live = ph == SIM_PH_PENDING || ph == SIM_PH_RUNNING;
	gb_buf_puts(b, "<item>");
	ec2_tag(b, "instanceId", in->id);
	ec2_tag(b, "imageId", in->image_id);
	ec2_state_xml(b, "instanceState", ph);
	{
		char dash[16];
		snprintf(dash, sizeof(dash), "%s", in->priv_ip);
		for (char *p = dash; *p; p++)
			if (*p == '.')
				*p = '-';
		ec2_tagf(b, "privateDnsName", "ip-%s.ec2.internal", dash);
	}
	if (live) {
		char dash[16];
		snprintf(dash, sizeof(dash), "%s", in->pub_ip);
		for (char *p = dash; *p; p++)
			if (*p == '.')
				*p = '-';
		ec2_tagf(b, "dnsName", "ec2-%s.compute-1.amazonaws.com", dash);
	} else {
		ec2_tag(b, "dnsName", "");
	}
	if (in->t_stop) {
		sim_time_s(in->t_stop, gmt, sizeof(gmt));
		gmt[10] = ' ';
		gmt[19] = '\0';
		ec2_tagf(b, "reason", "%s initiated (%s GMT)",
		         in->end_reason == SIM_END_SPOT ? "Service" : "User",
		         gmt);
	} else {
		ec2_tag(b, "reason", "");
	}
	if (in->key_name)
		ec2_tag(b, "keyName", in->key_name);
	ec2_tagf(b, "amiLaunchIndex", "%d", in->launch_index);
	gb_buf_puts(b, "<productCodes/>");
	ec2_tag(b, "instanceType", in->type);
	ec2_tag(b, "launchTime", sim_time_ms(in->t_create, ts, sizeof(ts)));
	gb_buf_puts(b, "<placement>");
	ec2_tag(b, "availabilityZone", in->zone);
	gb_buf_puts(b, "<groupName/><tenancy>default</tenancy></placement>");
	gb_buf_puts(b, "<monitoring><state>disabled</state></monitoring>");
	if (in->subnet_id)
		ec2_tag(b, "subnetId", in->subnet_id);
	if (ph != SIM_PH_GONE)
		ec2_tag(b, "privateIpAddress", in->priv_ip);
	if (live)
		ec2_tag(b, "ipAddress", in->pub_ip);
	gb_buf_puts(b, "<groupSet/>");
	if (ph == SIM_PH_PENDING) {
		gb_buf_puts(b, "<stateReason><code>pending</code>"
		               "<message>pending</message></stateReason>");
	} else if (in->t_stop && in->end_reason == SIM_END_SPOT) {
		gb_buf_puts(b, "<stateReason><code>Server.SpotInstanceTermination"
		               "</code><message>Server.SpotInstanceTermination: "
		               "Spot instance termination</message>"
		               "</stateReason>");
	} else if (in->t_stop) {
		gb_buf_puts(b, "<stateReason><code>Client.UserInitiatedShutdown"
		               "</code><message>Client.UserInitiatedShutdown: "
		               "User initiated shutdown</message>"
		               "</stateReason>");
	}
	gb_buf_puts(b, "<architecture>x86_64</architecture>"
	               "<rootDeviceType>ebs</rootDeviceType>"
	               "<rootDeviceName>/dev/sda1</rootDeviceName>"
	               "<blockDeviceMapping/>");
	if (in->spot) {
		gb_buf_puts(b, "<instanceLifecycle>spot</instanceLifecycle>");
		ec2_tag(b, "spotInstanceRequestId", in->spot_req_id);
	}
	gb_buf_puts(b, "<virtualizationType>hvm</virtualizationType>");
	ec2_tag(b, "clientToken", in->client_token ? in->client_token : "");
	if (in->tags.n) {
		gb_buf_puts(b, "<tagSet>");
		for (size_t i = 0; i < in->tags.n; i++) {
			gb_buf_puts(b, "<item>");
			ec2_tag(b, "key", in->tags.keys[i]);
			ec2_tag(b, "value", in->tags.vals[i]);
			gb_buf_puts(b, "</item>");
		}
		gb_buf_puts(b, "</tagSet>");
	}
	gb_buf_puts(b, "<hypervisor>xen</hypervisor>"
	               "<networkInterfaceSet/>"
	               "<ebsOptimized>false</ebsOptimized>"
	               "<enaSupport>true</enaSupport>"
	               "</item>");
}

static int match_filter(const ec2_filter *f, const sim_inst *in,
                        int64_t now)
{
	const char *n = f->name;
	if (strncmp(n, "tag:", 4) == 0) {
		const char *v = gb_kvs_get(&in->tags, n + 4);
		return v && ec2_filter_any(f, v);
	}
	if (strcmp(n, "tag-key") == 0) {
		for (size_t i = 0; i < in->tags.n; i++)
			if (ec2_filter_any(f, in->tags.keys[i]))
				return 1;
		return 0;
	}
	if (strcmp(n, "instance-state-name") == 0) {
		int code;
		return ec2_filter_any(f, state_name(sim_inst_phase(in, now),
		                                    &code));
	}
	if (strcmp(n, "instance-state-code") == 0) {
		int code;
		char buf[8];
		state_name(sim_inst_phase(in, now), &code);
		snprintf(buf, sizeof(buf), "%d", code);
		return ec2_filter_any(f, buf);
	}
	if (strcmp(n, "instance-id") == 0)
		return ec2_filter_any(f, in->id);
	if (strcmp(n, "instance-type") == 0)
		return ec2_filter_any(f, in->type);
	if (strcmp(n, "availability-zone") == 0)
		return ec2_filter_any(f, in->zone);
	if (strcmp(n, "instance-lifecycle") == 0)
		return in->spot && ec2_filter_any(f, "spot");
	if (strcmp(n, "client-token") == 0)
		return in->client_token && ec2_filter_any(f, in->client_token);
	if (strcmp(n, "reservation-id") == 0)
		return ec2_filter_any(f, in->reservation_id);
	if (strcmp(n, "image-id") == 0)
		return ec2_filter_any(f, in->image_id);
	if (strcmp(n, "private-ip-address") == 0)
		return ec2_filter_any(f, in->priv_ip);
	if (strcmp(n, "ip-address") == 0)
		return ec2_filter_any(f, in->pub_ip);
	return 0;
}

static const char *const known_filters[] = {
	"tag:*", "tag-key", "instance-state-name", "instance-state-code",
	"instance-id", "instance-type", "availability-zone",
	"instance-lifecycle", "client-token", "reservation-id", "image-id",
	"private-ip-address", "ip-address", NULL,
};

static int visible(const sim_inst *in, const ec2_ctx *c)
{
	return in->cloud == SIM_AWS && strcmp(in->region, c->region) == 0 &&
	       c->now >= in->t_visible;
}

void ec2_describe_instances(ec2_ctx *c)
{
	gb_strv ids = {NULL, 0};
	ec2_filter *f = NULL;
	size_t nf = 0, n = 0, k = 0;
	sim_inst **all = NULL, **sel = NULL;
	int64_t maxr = 0, start = 0, last_seq = 0;
	const char *tok;
	gb_buf b = GB_BUF_INIT, missing = GB_BUF_INIT;
	size_t nmiss = 0, end;
	ec2_list(&c->params, "InstanceId", &ids);
	if (ec2_filters(c, &f, &nf) != 0)
		goto out;
	if (ec2_filters_known(c, f, nf, known_filters) != 0)
		goto out;
	if (ec2_max_results(c, 5, 1000, &maxr) != 0)
		goto out;
	if (maxr && ids.n) {
		ec2_error(c, 400, "InvalidParameterCombination",
		          "The parameter instancesSet cannot be used with the "
		          "parameter maxResults");
		goto out;
	}
	tok = gb_kvs_get(&c->params, "NextToken");
	if (tok && *tok && ec2_token_parse("di", tok, &start) != 0) {
		ec2_error(c, 400, "InvalidPaginationToken",
		          "Invalid pagination token: the NextToken value is "
		          "not one this service returned");
		goto out;
	}
	if (ec2_bool(&c->params, "DryRun")) {
		ec2_error(c, 412, "DryRunOperation",
		          "Request would have succeeded, but DryRun flag is "
		          "set.");
		goto out;
	}
	all = sim_inst_list(SIM_AWS, &n);
	sel = gb_xcalloc(n + 1, sizeof(*sel));
	if (ids.n) {
		for (size_t i = 0; i < ids.n; i++) {
			sim_inst *hit = NULL;
			if (!ec2_valid_instance_id(ids.v[i])) {
				ec2_error(c, 400, "InvalidInstanceID.Malformed",
				          "Invalid id: \"%s\"", ids.v[i]);
				goto out;
			}
			for (size_t j = 0; j < n && !hit; j++)
				if (visible(all[j], c) &&
				    strcmp(all[j]->id, ids.v[i]) == 0)
					hit = all[j];
			if (!hit) {
				if (nmiss++)
					gb_buf_puts(&missing, ", ");
				gb_buf_puts(&missing, ids.v[i]);
			}
		}
		if (nmiss) {
			ec2_error(c, 400, "InvalidInstanceID.NotFound",
			          nmiss == 1
			                  ? "The instance ID '%s' does not exist"
			                  : "The instance IDs '%s' do not exist",
			          gb_buf_str(&missing));
			goto out;
		}
	}
	for (size_t j = 0; j < n; j++) {
		int ok = visible(all[j], c) && all[j]->seq > start;
		if (ok && ids.n)
			ok = gb_strv_contains(&ids, all[j]->id);
		for (size_t i = 0; ok && i < nf; i++)
			ok = match_filter(&f[i], all[j], c->now);
		if (ok)
			sel[k++] = all[j];
	}
	end = k;
	if (maxr && (int64_t)k > maxr)
		end = (size_t)maxr;
	ec2_begin(c, &b);
	gb_buf_puts(&b, "<reservationSet>");
	for (size_t i = 0; i < end;) {
		size_t j = i;
		gb_buf_puts(&b, "<item>");
		ec2_tag(&b, "reservationId", sel[i]->reservation_id);
		ec2_tag(&b, "ownerId", sim_g.sc.aws_account);
		gb_buf_puts(&b, "<groupSet/><instancesSet>");
		while (j < end && strcmp(sel[j]->reservation_id,
		                         sel[i]->reservation_id) == 0) {
			ec2_instance_xml(&b, sel[j], c->now);
			last_seq = sel[j]->seq;
			j++;
		}
		gb_buf_puts(&b, "</instancesSet></item>");
		i = j;
	}
	gb_buf_puts(&b, "</reservationSet>\n");
	if (end < k) {
		char *t = ec2_token_make("di", last_seq);
		ec2_tag(&b, "nextToken", t);
		gb_buf_putc(&b, '\n');
		free(t);
	}
	ec2_finish(c, &b);
out:
	gb_buf_free(&b);
	gb_buf_free(&missing);
	free(all);
	free(sel);
	ec2_filters_free(f, nf);
	gb_strv_free(&ids);
}
