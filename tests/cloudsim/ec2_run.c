/*
 * ec2_run.c -- RunInstances and TerminateInstances.
 *
 * RunInstances launches min(MaxCount, what capacity and quota allow) when
 * that is at least MinCount, else fails with the quota error (checked
 * first) or InsufficientInstanceCapacity.  ClientToken makes a retry with
 * the same parameters return the original reservation; the token is
 * zonal when Placement.AvailabilityZone or SubnetId is given and regional
 * otherwise, and a changed parameter gives IdempotentParameterMismatch.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ec2.h"

typedef struct run_args {
	const char *image, *type, *az, *subnet, *token, *key_name;
	int64_t min, max;
	int spot;
	double max_price; /* < 0: not given */
	gb_kvs tags;
} run_args;

static int valid_image(const char *s)
{
	size_t n;
	if (strncmp(s, "resolve:ssm:", 12) == 0)
		return s[12] != '\0';
	if (strncmp(s, "ami-", 4) != 0)
		return 0;
	n = strlen(s + 4);
	if (n != 8 && n != 17)
		return 0;
	for (const char *p = s + 4; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return 0;
	return 1;
}

static int parse_count(ec2_ctx *c, const char *name, int64_t *out)
{
	const char *v = gb_kvs_get(&c->params, name);
	if (!v) {
		ec2_error(c, 400, "MissingParameter",
		          "The request must contain the parameter %s", name);
		return -1;
	}
	if (gb_parse_int64(v, out) != 0) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Invalid value '%s' for %s", v, name);
		return -1;
	}
	if (*out < 1) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Value (%lld) for parameter %c%s is invalid. Expecting "
		          "a value greater than 0.", (long long)*out,
		          tolower((unsigned char)name[0]), name + 1);
		return -1;
	}
	return 0;
}

/* TagSpecification.N.ResourceType=instance, .Tag.M.Key/.Value */
static int parse_tags(ec2_ctx *c, gb_kvs *tags)
{
	for (int n = 1; n <= 50; n++) {
		char k[96];
		const char *rt;
		snprintf(k, sizeof(k), "TagSpecification.%d.ResourceType", n);
		rt = gb_kvs_get(&c->params, k);
		if (!rt)
			continue;
		if (strcmp(rt, "instance") != 0)
			continue; /* volumes etc.: accepted, not modelled */
		for (int m = 1; m <= 51; m++) {
			const char *key, *val;
			snprintf(k, sizeof(k), "TagSpecification.%d.Tag.%d.Key",
			         n, m);
			key = gb_kvs_get(&c->params, k);
			snprintf(k, sizeof(k),
			         "TagSpecification.%d.Tag.%d.Value", n, m);
			val = gb_kvs_get(&c->params, k);
			if (!key)
				continue;
			if (!*key || strlen(key) > 128) {
				ec2_error(c, 400, "InvalidParameterValue",
				          "Tag key must be 1 to 128 characters");
				return -1;
			}
			if (strncmp(key, "aws:", 4) == 0) {
				ec2_error(c, 400, "InvalidParameterValue",
				          "Tag keys starting with 'aws:' are "
				          "reserved for internal use");
				return -1;
			}
			if (val && strlen(val) > 256) {
				ec2_error(c, 400, "InvalidParameterValue",
				          "Tag value for key '%s' exceeds 256 "
				          "characters", key);
				return -1;
			}
			gb_kvs_set(tags, key, val ? val : "");
		}
	}
	if (tags->n > 50) {
		ec2_error(c, 400, "TagLimitExceeded",
		          "The maximum number of tags (50) per resource has "
		          "been exceeded.");
		return -1;
	}
	return 0;
}

static int parse_args(ec2_ctx *c, run_args *a)
{
	const char *mt, *st, *ib, *mp;
	memset(a, 0, sizeof(*a));
	a->max_price = -1;
	a->image = gb_kvs_get(&c->params, "ImageId");
	if (!a->image) {
		ec2_error(c, 400, "MissingParameter",
		          "The request must contain the parameter ImageId");
		return -1;
	}
	if (!valid_image(a->image)) {
		ec2_error(c, 400, "InvalidAMIID.Malformed",
		          "Invalid id: \"%s\" (expecting \"ami-...\")",
		          a->image);
		return -1;
	}
	a->type = gb_kvs_get(&c->params, "InstanceType");
	if (!a->type) {
		ec2_error(c, 400, "MissingParameter",
		          "The request must contain the parameter "
		          "InstanceType");
		return -1;
	}
	if (parse_count(c, "MinCount", &a->min) ||
	    parse_count(c, "MaxCount", &a->max))
		return -1;
	if (a->max < a->min) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Value (%lld) for parameter maxCount is invalid. "
		          "maxCount must be greater than or equal to minCount "
		          "(%lld).", (long long)a->max, (long long)a->min);
		return -1;
	}
	if (a->min > 1000) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Value (%lld) for parameter minCount is invalid. "
		          "Expecting a value up to 1000.", (long long)a->min);
		return -1;
	}
	if (a->max > 1000)
		a->max = 1000;
	a->token = gb_kvs_get(&c->params, "ClientToken");
	if (a->token && (strlen(a->token) > 64 || !*a->token)) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Value for parameter clientToken is invalid: it must "
		          "be 1 to 64 ASCII characters");
		return -1;
	}
	for (const char *p = a->token; p && *p; p++) {
		if ((unsigned char)*p > 126 || (unsigned char)*p < 32) {
			ec2_error(c, 400, "InvalidParameterValue",
			          "Value for parameter clientToken is invalid: "
			          "it must be ASCII");
			return -1;
		}
	}
	a->az = gb_kvs_get(&c->params, "Placement.AvailabilityZone");
	if (a->az && !*a->az)
		a->az = NULL;
	a->subnet = gb_kvs_get(&c->params, "SubnetId");
	a->key_name = gb_kvs_get(&c->params, "KeyName");
	mt = gb_kvs_get(&c->params, "InstanceMarketOptions.MarketType");
	if (mt) {
		if (strcmp(mt, "spot") != 0) {
			ec2_error(c, 400, "InvalidParameterValue",
			          "Value (%s) for parameter "
			          "InstanceMarketOptions.MarketType is invalid. "
			          "Valid values: spot, capacity-block", mt);
			return -1;
		}
		a->spot = 1;
	}
	st = gb_kvs_get(&c->params,
	                "InstanceMarketOptions.SpotOptions.SpotInstanceType");
	ib = gb_kvs_get(&c->params, "InstanceMarketOptions.SpotOptions."
	                            "InstanceInterruptionBehavior");
	mp = gb_kvs_get(&c->params, "InstanceMarketOptions.SpotOptions.MaxPrice");
	if ((st || ib || mp) && !a->spot) {
		ec2_error(c, 400, "InvalidParameterCombination",
		          "SpotOptions require "
		          "InstanceMarketOptions.MarketType=spot");
		return -1;
	}
	if (st && strcmp(st, "one-time") != 0) {
		ec2_error(c, 400, "InvalidParameterCombination",
		          "SpotInstanceType '%s' is not supported here; only "
		          "one-time Spot Instances can be launched with "
		          "RunInstances in this emulator", st);
		return -1;
	}
	if (ib && strcmp(ib, "terminate") != 0) {
		ec2_error(c, 400, "InvalidParameterCombination",
		          "The interruption behavior '%s' is not supported "
		          "for one-time Spot Instance requests.", ib);
		return -1;
	}
	if (mp && (gb_parse_double(mp, &a->max_price) != 0 ||
	           a->max_price <= 0)) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Invalid value '%s' for SpotOptions.MaxPrice", mp);
		return -1;
	}
	return parse_tags(c, &a->tags);
}

/* The parameters a retry must repeat for ClientToken idempotency. */
static char *params_hash(const ec2_ctx *c)
{
	gb_strv keys = {NULL, 0};
	gb_buf b = GB_BUF_INIT;
	char out[65];
	for (size_t i = 0; i < c->params.n; i++) {
		const char *k = c->params.keys[i];
		if (strcmp(k, "Version") == 0 || strcmp(k, "ClientToken") == 0 ||
		    strcmp(k, "DryRun") == 0 ||
		    strcmp(k, "Placement.AvailabilityZone") == 0 ||
		    strncmp(k, "X-Amz-", 6) == 0)
			continue;
		gb_strv_push(&keys, k);
	}
	for (size_t i = 0; i + 1 < keys.n; i++)
		for (size_t j = i + 1; j < keys.n; j++)
			if (strcmp(keys.v[i], keys.v[j]) > 0) {
				char *t = keys.v[i];
				keys.v[i] = keys.v[j];
				keys.v[j] = t;
			}
	for (size_t i = 0; i < keys.n; i++)
		gb_buf_printf(&b, "%s=%s\n", keys.v[i],
		              gb_kvs_get(&c->params, keys.v[i]));
	gb_sha256_hex(b.data ? b.data : "", b.len, out);
	gb_buf_free(&b);
	gb_strv_free(&keys);
	return gb_xstrdup(out);
}

static void reservation_xml(ec2_ctx *c, const char *rid, sim_inst **v,
                            size_t n)
{
	gb_buf b = GB_BUF_INIT;
	ec2_begin(c, &b);
	ec2_tag(&b, "reservationId", rid);
	ec2_tag(&b, "ownerId", sim_g.sc.aws_account);
	gb_buf_puts(&b, "<groupSet/><instancesSet>");
	for (size_t i = 0; i < n; i++)
		ec2_instance_xml(&b, v[i], c->now);
	gb_buf_puts(&b, "</instancesSet>\n");
	ec2_finish(c, &b);
}

static void idempotent_reply(ec2_ctx *c, const sim_ctoken *ct)
{
	sim_inst **v = gb_xcalloc(ct->ids.n + 1, sizeof(*v));
	size_t k = 0;
	for (size_t i = 0; i < ct->ids.n; i++) {
		char key[64];
		sim_inst *in;
		snprintf(key, sizeof(key), "aws|%s", ct->ids.v[i]);
		in = sim_inst_find(key);
		if (in)
			v[k++] = in;
	}
	reservation_xml(c, ct->reservation_id, v, k);
	free(v);
}

/* How many instances quota still allows; sets the error when < min. */
static int64_t quota_left(ec2_ctx *c, const run_args *a,
                          const sim_ctype *t, char *keys[2],
                          int64_t amounts[2])
{
	char fam[32];
	const sim_opval *q;
	int64_t left = INT64_MAX;
	sim_aws_family(a->type, fam, sizeof(fam));
	keys[0] = gb_xasprintf("q|aws|%s|%s|%s", c->region,
	                       a->spot ? "spot_vcpus" : "vcpus", fam);
	amounts[0] = t->vcpus;
	keys[1] = gb_xasprintf("q|aws|%s|instances|%s", c->region, a->type);
	amounts[1] = 1;
	q = sim_optab_find(a->spot ? &sim_g.sc.q_aws_spot_vcpus
	                           : &sim_g.sc.q_aws_vcpus, fam);
	if (q && t->vcpus > 0) {
		int64_t used = sim_count_get(&sim_g.usage, keys[0]);
		int64_t lim = (int64_t)q->a;
		int64_t l = lim > used ? (lim - used) / t->vcpus : 0;
		if (l < a->min) {
			sim_count_fault(SIM_AWS, SIM_F_QUOTA);
			if (a->spot)
				ec2_error(c, 400, "MaxSpotInstanceCountExceeded",
				          "Max spot instance count exceeded");
			else
				ec2_error(c, 400, "VcpuLimitExceeded",
				          "You have requested more vCPU capacity "
				          "than your current vCPU limit of %lld "
				          "allows for the instance bucket that the "
				          "specified instance type belongs to. "
				          "Please visit http://aws.amazon.com/"
				          "contact-us/ec2-request to request an "
				          "adjustment to this limit.",
				          (long long)lim);
			return -1;
		}
		left = l;
	}
	q = sim_optab_find(&sim_g.sc.q_aws_instances, a->type);
	if (q) {
		int64_t used = sim_count_get(&sim_g.usage, keys[1]);
		int64_t lim = (int64_t)q->a;
		int64_t l = lim > used ? lim - used : 0;
		if (l < a->min) {
			sim_count_fault(SIM_AWS, SIM_F_QUOTA);
			ec2_error(c, 400, "InstanceLimitExceeded",
			          "You have requested more instances (%lld) "
			          "than your current instance limit of %lld "
			          "allows for the specified instance type. "
			          "Please visit http://aws.amazon.com/"
			          "contact-us/ec2-request to request an "
			          "adjustment to this limit.",
			          (long long)a->min, (long long)lim);
			return -1;
		}
		if (l < left)
			left = l;
	}
	return left;
}

static void zone_list(const sim_creg *r, const gb_strv *region_zones,
                      gb_strv *out)
{
	if (r->nzones) {
		for (size_t i = 0; i < r->nzones; i++)
			if (gb_strv_contains(region_zones, r->zones[i]))
				gb_strv_push(out, r->zones[i]);
		return;
	}
	for (size_t i = 0; i < region_zones->n; i++)
		gb_strv_push(out, region_zones->v[i]);
}

static void capacity_msg(ec2_ctx *c, const run_args *a, const char *zone,
                         const gb_strv *zones)
{
	gb_buf others = GB_BUF_INIT;
	for (size_t i = 0; i < zones->n; i++) {
		if (strcmp(zones->v[i], zone) == 0)
			continue;
		if (others.len)
			gb_buf_puts(&others, ", ");
		gb_buf_puts(&others, zones->v[i]);
	}
	sim_count_fault(SIM_AWS, SIM_F_CAPACITY);
	if (a->spot)
		ec2_error(c, 500, "InsufficientInstanceCapacity",
		          "There is no Spot capacity available that matches "
		          "your request.");
	else
		ec2_error(c, 500, "InsufficientInstanceCapacity",
		          "We currently do not have sufficient %s capacity in "
		          "the Availability Zone you requested (%s). Our system "
		          "will be working on provisioning additional capacity. "
		          "You can currently get %s capacity by not specifying "
		          "an Availability Zone in your request or choosing %s.",
		          a->type, zone, a->type,
		          others.len ? gb_buf_str(&others) : "another type");
	gb_buf_free(&others);
}

void ec2_run_instances(ec2_ctx *c)
{
	run_args a;
	const sim_ctype *t;
	const sim_creg *r;
	const gb_strv *rz;
	gb_strv zones = {NULL, 0};
	const char *zone = NULL;
	char *qkeys[2] = {NULL, NULL}, *hash = NULL;
	char *tkey = NULL, *cap_key = NULL;
	int64_t qamt[2] = {0, 0}, qleft, cleft = -1, n;
	double price;
	char rid[20], sir[24], ami[22];
	sim_inst **made = NULL;

	if (parse_args(c, &a) != 0)
		goto out;
	if (ec2_resolve_image(c, a.image, ami) != 0)
		goto out;
	if (a.token) {
		sim_ctoken *ct;
		hash = params_hash(c);
		tkey = gb_xasprintf("%s|%s|%s", c->region,
		                    a.az ? a.az : (a.subnet ? a.subnet : ""),
		                    a.token);
		ct = sim_map_get(&sim_g.ctokens, tkey);
		if (ct) {
			if (strcmp(ct->hash, hash) != 0)
				ec2_error(c, 400, "IdempotentParameterMismatch",
				          "Arguments on this idempotent request "
				          "are inconsistent with arguments used in "
				          "previous request(s).");
			else
				idempotent_reply(c, ct);
			goto out;
		}
	}
	t = sim_catalog_type(&sim_g.cat[SIM_AWS], a.type);
	if (!t) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Invalid value '%s' for InstanceType.", a.type);
		goto out;
	}
	r = sim_ctype_region(t, c->region);
	rz = ec2_region_zones(c);
	if (a.az && !gb_strv_contains(rz, a.az)) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Invalid availability zone: [%s]", a.az);
		goto out;
	}
	if (!r || (a.spot ? r->spot : r->on_demand) < 0) {
		ec2_error(c, 400, "Unsupported",
		          "The requested configuration is currently not "
		          "supported. Please check the documentation for "
		          "supported configurations. (%s%s is not offered in "
		          "%s)", a.type, a.spot ? " spot" : "", c->region);
		goto out;
	}
	zone_list(r, rz, &zones);
	if (a.az && !gb_strv_contains(&zones, a.az)) {
		gb_buf ok = GB_BUF_INIT;
		for (size_t i = 0; i < zones.n; i++) {
			if (i)
				gb_buf_puts(&ok, ", ");
			gb_buf_puts(&ok, zones.v[i]);
		}
		ec2_error(c, 400, "Unsupported",
		          "Your requested instance type (%s) is not supported "
		          "in your requested Availability Zone (%s). Please "
		          "retry your request by not specifying an Availability "
		          "Zone or choosing %s.", a.type, a.az,
		          ok.len ? gb_buf_str(&ok) : "another region");
		gb_buf_free(&ok);
		goto out;
	}
	if (zones.n == 0) {
		ec2_error(c, 400, "Unsupported",
		          "The requested configuration is currently not "
		          "supported. (%s has no zone in %s)", a.type,
		          c->region);
		goto out;
	}
	if (a.spot && a.max_price >= 0) {
		double sp = sim_creg_price(r, a.az, 1);
		if (a.max_price < sp) {
			ec2_error(c, 400, "SpotMaxPriceTooLow",
			          "Your Spot request price of %g is lower than "
			          "the minimum required Spot request fulfillment "
			          "price of %g.", a.max_price, sp);
			goto out;
		}
	}
	qleft = quota_left(c, &a, t, qkeys, qamt);
	if (qleft < 0)
		goto out;
	if (sim_throttle_peek(SIM_AWS, c->region, "RunInstancesResource") <
	    a.min) {
		sim_count_fault(SIM_AWS, SIM_F_THROTTLED);
		ec2_error(c, 503, "RequestLimitExceeded",
		          "Request limit exceeded.");
		goto out;
	}
	/* the zone: as asked, else the one with the most room */
	if (a.az) {
		zone = a.az;
		cleft = sim_capacity_left(SIM_AWS, c->region, zone, a.type,
		                          a.spot, &cap_key);
		if (sim_creg_price(r, zone, a.spot) < 0)
			cleft = 0; /* no spot market in this zone */
	} else {
		for (size_t i = 0; i < zones.n; i++) {
			char *k = NULL;
			int64_t l = sim_capacity_left(SIM_AWS, c->region,
			                              zones.v[i], a.type,
			                              a.spot, &k);
			if (sim_creg_price(r, zones.v[i], a.spot) < 0)
				l = -1;
			if (l > cleft) {
				cleft = l;
				zone = zones.v[i];
				free(cap_key);
				cap_key = k;
			} else {
				free(k);
			}
		}
	}
	if (!zone)
		zone = zones.v[0];
	if (cleft < a.min) {
		capacity_msg(c, &a, zone, &zones);
		goto out;
	}
	n = a.max;
	if (cleft < n)
		n = cleft;
	if (qleft < n)
		n = qleft;
	if ((int64_t)sim_g.ninsts + n > sim_g.sc.max_instances) {
		sim_count_fault(SIM_AWS, SIM_F_CAPACITY);
		ec2_error(c, 500, "InsufficientInstanceCapacity",
		          "cloudsim holds its maximum of %lld instances "
		          "(limits.max_instances)",
		          (long long)sim_g.sc.max_instances);
		goto out;
	}
	if (ec2_bool(&c->params, "DryRun")) {
		ec2_error(c, 412, "DryRunOperation",
		          "Request would have succeeded, but DryRun flag is "
		          "set.");
		goto out;
	}
	price = sim_creg_price(r, zone, a.spot);
	snprintf(rid, sizeof(rid), "r-");
	sim_hex_id(rid + 2, 17);
	made = gb_xcalloc((size_t)n + 1, sizeof(*made));
	for (int64_t i = 0; i < n; i++) {
		char id[24], key[40];
		sim_inst *in;
		do {
			snprintf(id, sizeof(id), "i-");
			sim_hex_id(id + 2, 17);
			snprintf(key, sizeof(key), "aws|%s", id);
		} while (sim_map_get(&sim_g.insts, key));
		in = sim_inst_new(SIM_AWS, key);
		in->id = gb_xstrdup(id);
		in->name = gb_xstrdup(id);
		in->region = gb_xstrdup(c->region);
		in->zone = gb_xstrdup(zone);
		in->type = gb_xstrdup(a.type);
		in->spot = a.spot;
		in->price = price;
		in->vcpus = t->vcpus;
		in->gpus = t->gpus;
		in->gpu = gb_xstrdup(t->gpu);
		for (size_t k = 0; k < a.tags.n; k++)
			gb_kvs_set(&in->tags, a.tags.keys[k], a.tags.vals[k]);
		in->t_create = c->now;
		in->t_visible = c->now + sim_g.sc.eventual_ms;
		in->t_running = c->now + sim_g.sc.pending_ms[SIM_AWS];
		in->image_id = gb_xstrdup(ami);
		in->client_token = a.token ? gb_xstrdup(a.token) : NULL;
		in->ctoken_key = tkey ? gb_xstrdup(tkey) : NULL;
		in->reservation_id = gb_xstrdup(rid);
		in->key_name = a.key_name ? gb_xstrdup(a.key_name) : NULL;
		in->subnet_id = a.subnet ? gb_xstrdup(a.subnet) : NULL;
		in->launch_index = (int)i;
		if (a.spot) {
			snprintf(sir, sizeof(sir), "sir-");
			sim_hex_id(sir + 4, 8);
			in->spot_req_id = gb_xstrdup(sir);
		}
		in->cap_key = gb_xstrdup(cap_key);
		for (int q = 0; q < 2; q++) {
			in->quse[q].key = gb_xstrdup(qkeys[q]);
			in->quse[q].amount = qamt[q];
		}
		sim_inst_allocate(in, c->now);
		made[i] = in;
	}
	sim_throttle_charge(SIM_AWS, c->region, "RunInstancesResource",
	                    (double)n);
	if (a.token) {
		sim_ctoken *ct = gb_xcalloc(1, sizeof(*ct));
		ct->hash = hash;
		hash = NULL;
		ct->reservation_id = gb_xstrdup(rid);
		for (int64_t i = 0; i < n; i++)
			gb_strv_push(&ct->ids, made[i]->id);
		ct->refs = (int)n;
		sim_map_put(&sim_g.ctokens, tkey, ct);
	}
	reservation_xml(c, rid, made, (size_t)n);
out:
	free(made);
	free(qkeys[0]);
	free(qkeys[1]);
	free(hash);
	free(tkey);
	free(cap_key);
	gb_strv_free(&zones);
	gb_kvs_free(&a.tags);
}

void ec2_terminate_instances(ec2_ctx *c)
{
	gb_strv ids = {NULL, 0};
	gb_buf b = GB_BUF_INIT, missing = GB_BUF_INIT;
	sim_inst **v = NULL;
	size_t nmiss = 0;
	int64_t retry;
	ec2_list(&c->params, "InstanceId", &ids);
	if (ids.n == 0) {
		ec2_error(c, 400, "MissingParameter",
		          "The request must contain the parameter InstanceId");
		goto out;
	}
	if (ids.n > 1000) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "You can terminate up to 1000 instances per call");
		goto out;
	}
	v = gb_xcalloc(ids.n + 1, sizeof(*v));
	for (size_t i = 0; i < ids.n; i++) {
		char key[64];
		if (!ec2_valid_instance_id(ids.v[i])) {
			ec2_error(c, 400, "InvalidInstanceID.Malformed",
			          "Invalid id: \"%s\"", ids.v[i]);
			goto out;
		}
		snprintf(key, sizeof(key), "aws|%s", ids.v[i]);
		v[i] = sim_inst_find(key);
		if (!v[i] || v[i]->cloud != SIM_AWS) {
			if (nmiss++)
				gb_buf_puts(&missing, ", ");
			gb_buf_puts(&missing, ids.v[i]);
		}
	}
	if (nmiss) {
		ec2_error(c, 400, "InvalidInstanceID.NotFound",
		          nmiss == 1 ? "The instance ID '%s' does not exist"
		                     : "The instance IDs '%s' do not exist",
		          gb_buf_str(&missing));
		goto out;
	}
	if (sim_throttle(SIM_AWS, c->region, "TerminateInstancesResource",
	                 (double)ids.n, &retry, NULL)) {
		ec2_error(c, 503, "RequestLimitExceeded",
		          "Request limit exceeded.");
		goto out;
	}
	if (ec2_bool(&c->params, "DryRun")) {
		ec2_error(c, 412, "DryRunOperation",
		          "Request would have succeeded, but DryRun flag is "
		          "set.");
		goto out;
	}
	ec2_begin(c, &b);
	gb_buf_puts(&b, "<instancesSet>");
	for (size_t i = 0; i < ids.n; i++) {
		sim_phase prev = sim_inst_phase(v[i], c->now);
		if (prev == SIM_PH_PENDING || prev == SIM_PH_RUNNING)
			sim_inst_stop(v[i], c->now, SIM_END_USER, 0);
		gb_buf_puts(&b, "<item>");
		ec2_tag(&b, "instanceId", v[i]->id);
		ec2_state_xml(&b, "currentState", sim_inst_phase(v[i], c->now));
		ec2_state_xml(&b, "previousState", prev);
		gb_buf_puts(&b, "</item>");
	}
	gb_buf_puts(&b, "</instancesSet>\n");
	ec2_finish(c, &b);
out:
	free(v);
	gb_buf_free(&b);
	gb_buf_free(&missing);
	gb_strv_free(&ids);
}
