/* aws_ec2.c -- see aws_ec2.h. */
#include "aws_ec2.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_util.h"
#include "aws_xml.h"
#include "drvc_json.h"
#include "drvc_util.h"

/* ------------------------------------------------------------ bodies */

void aws_form_start(aws_form *f, const char *action)
{
	memset(f, 0, sizeof(*f));
	aws_form_add(f, "Action", action);
	aws_form_add(f, "Version", AWS_EC2_VERSION);
}

void aws_form_add(aws_form *f, const char *name, const char *value)
{
	if (f->b.len)
		drvc_buf_adds(&f->b, "&");
	drvc_pct_encode(&f->b, name, strlen(name), 0);
	drvc_buf_adds(&f->b, "=");
	if (value)
		drvc_pct_encode(&f->b, value, strlen(value), 0);
}

void aws_form_addf(aws_form *f, const char *value, const char *name_fmt, ...)
{
	char name[256];
	va_list ap;
	va_start(ap, name_fmt);
	vsnprintf(name, sizeof(name), name_fmt, ap);
	va_end(ap);
	aws_form_add(f, name, value);
}

char *aws_form_take(aws_form *f)
{
	char *s = drvc_buf_take(&f->b);
	if (!s)
		abort();
	return s;
}

static void add_tags(aws_form *f, int spec, const gb_create_req *r,
                     const char *index_base)
{
	static const char *const ours[] = {
		"Name", GB_TAG_POOL, GB_TAG_BROKER, GB_TAG_TOKEN, GB_TAG_TEAM,
		AWS_TAG_INDEX_BASE,
	};
	const char *vals[6];
	int n = 0;
	vals[0] = r->name_prefix && *r->name_prefix ? r->name_prefix : NULL;
	vals[1] = r->pool;
	vals[2] = r->broker_id;
	vals[3] = r->token;
	vals[4] = r->team && *r->team ? r->team : NULL;
	vals[5] = index_base;
	for (int i = 0; i < 6; i++) {
		if (!vals[i])
			continue;
		n++;
		aws_form_addf(f, ours[i], "TagSpecification.%d.Tag.%d.Key",
		              spec, n);
		aws_form_addf(f, vals[i], "TagSpecification.%d.Tag.%d.Value",
		              spec, n);
	}
	for (size_t i = 0; i < r->ntags; i++) {
		int dup = 0;
		if (!r->tags[i].key || !*r->tags[i].key)
			continue;
		for (int k = 0; k < 6; k++)
			if (strcmp(r->tags[i].key, ours[k]) == 0)
				dup = 1; /* ours win */
		if (dup)
			continue;
		n++;
		aws_form_addf(f, r->tags[i].key,
		              "TagSpecification.%d.Tag.%d.Key", spec, n);
		aws_form_addf(f, r->tags[i].value ? r->tags[i].value : "",
		              "TagSpecification.%d.Tag.%d.Value", spec, n);
	}
}

/* "#cloud-config" with the given public keys (single-quoted YAML). */
static char *ssh_cloud_config(const char *const *keys, size_t n,
                              gb_error *err)
{
	drvc_buf b = DRVC_BUF_INIT;
	char *s;
	drvc_buf_adds(&b, "#cloud-config\nssh_authorized_keys:\n");
	for (size_t i = 0; i < n; i++) {
		const char *k = keys[i] ? keys[i] : "";
		if (strpbrk(k, "\r\n") || !*k) {
			drvc_buf_free(&b);
			drvc_err(err, GB_ERR_INVALID, 0, "InvalidSshKey",
			         "ssh key %zu is empty or spans several lines; "
			         "give each public key on one line", i + 1);
			return NULL;
		}
		drvc_buf_adds(&b, "  - '");
		for (; *k; k++) {
			if (*k == '\'')
				drvc_buf_adds(&b, "''");
			else
				drvc_buf_add(&b, k, 1);
		}
		drvc_buf_adds(&b, "'\n");
	}
	s = drvc_buf_take(&b);
	if (!s)
		abort();
	return s;
}

char *aws_ec2_run_body(const aws_run_params *p, gb_error *err)
{
	const gb_create_req *r = p->req;
	aws_form f;
	char num[32], base[32];
	const char *ud = r->user_data && *r->user_data ? r->user_data : NULL;
	char *gen = NULL;

	aws_form_start(&f, "RunInstances");
	aws_form_add(&f, "ClientToken", r->token);
	aws_form_add(&f, "ImageId", p->image);
	aws_form_add(&f, "InstanceType", r->instance_type);
	snprintf(num, sizeof(num), "%u", r->count);
	aws_form_add(&f, "MinCount", num);
	aws_form_add(&f, "MaxCount", num);
	if (r->zone && *r->zone)
		aws_form_add(&f, "Placement.AvailabilityZone", r->zone);
	if (p->subnet_id && *p->subnet_id)
		aws_form_add(&f, "SubnetId", p->subnet_id);
	if (p->security_group_ids && *p->security_group_ids) {
		const char *s = p->security_group_ids;
		int n = 0;
		while (*s) {
			size_t len;
			char id[128];
			while (*s == ',' || *s == ' ')
				s++;
			len = strcspn(s, ", ");
			if (len == 0)
				break;
			snprintf(id, sizeof(id), "%.*s", (int)len, s);
			aws_form_addf(&f, id, "SecurityGroupId.%d", ++n);
			s += len;
		}
	}
	if (p->key_name && *p->key_name)
		aws_form_add(&f, "KeyName", p->key_name);
	if (p->iam_instance_profile && *p->iam_instance_profile)
		aws_form_add(&f,
		             strncmp(p->iam_instance_profile, "arn:", 4) == 0
		                     ? "IamInstanceProfile.Arn"
		                     : "IamInstanceProfile.Name",
		             p->iam_instance_profile);
	if (!ud && r->nssh_keys) {
		gen = ssh_cloud_config(r->ssh_keys, r->nssh_keys, err);
		if (!gen) {
			drvc_buf_free(&f.b);
			return NULL;
		}
		ud = gen;
	}
	if (ud) {
		char *b64 = drvc_b64(ud, strlen(ud));
		if (!b64)
			abort();
		aws_form_add(&f, "UserData", b64);
		free(b64);
	}
	free(gen);
	if (r->capacity == GB_CAPACITY_SPOT) {
		aws_form_add(&f, "InstanceMarketOptions.MarketType", "spot");
		aws_form_add(&f, "InstanceMarketOptions.SpotOptions."
		                 "SpotInstanceType", "one-time");
		aws_form_add(&f, "InstanceMarketOptions.SpotOptions."
		                 "InstanceInterruptionBehavior", "terminate");
		if (r->max_price > 0) {
			char price[48];
			size_t n;
			snprintf(price, sizeof(price), "%.6f", r->max_price);
			n = strlen(price);
			while (n > 1 && price[n - 1] == '0')
				price[--n] = '\0';
			if (n && price[n - 1] == '.')
				price[--n] = '\0';
			aws_form_add(&f, "InstanceMarketOptions.SpotOptions."
			                 "MaxPrice", price);
		}
	}
	snprintf(base, sizeof(base), "%u", r->first_index);
	aws_form_add(&f, "TagSpecification.1.ResourceType", "instance");
	add_tags(&f, 1, r, base);
	aws_form_add(&f, "TagSpecification.2.ResourceType", "volume");
	add_tags(&f, 2, r, base);
	return aws_form_take(&f);
}

static void add_filter(aws_form *f, int *n, const char *name,
                       const char *value)
{
	++*n;
	aws_form_addf(f, name, "Filter.%d.Name", *n);
	aws_form_addf(f, value, "Filter.%d.Value.1", *n);
}

char *aws_ec2_describe_body(const char *const *ids, size_t nids,
                            const char *pool, const char *broker_id,
                            const char *token, const char *next_token)
{
	aws_form f;
	aws_form_start(&f, "DescribeInstances");
	if (nids) {
		for (size_t i = 0; i < nids; i++)
			aws_form_addf(&f, ids[i], "InstanceId.%zu", i + 1);
		return aws_form_take(&f);
	}
	{
		int n = 0;
		if (pool && *pool)
			add_filter(&f, &n, "tag:" GB_TAG_POOL, pool);
		if (broker_id && *broker_id)
			add_filter(&f, &n, "tag:" GB_TAG_BROKER, broker_id);
		if (token && *token)
			add_filter(&f, &n, "tag:" GB_TAG_TOKEN, token);
	}
	aws_form_add(&f, "MaxResults", "500");
	if (next_token && *next_token)
		aws_form_add(&f, "NextToken", next_token);
	return aws_form_take(&f);
}

char *aws_ec2_terminate_body(const char *const *ids, size_t nids)
{
	aws_form f;
	aws_form_start(&f, "TerminateInstances");
	for (size_t i = 0; i < nids; i++)
		aws_form_addf(&f, ids[i], "InstanceId.%zu", i + 1);
	return aws_form_take(&f);
}

char *aws_ec2_types_body(const char *const *types, size_t ntypes,
                         const char *next_token)
{
	aws_form f;
	aws_form_start(&f, "DescribeInstanceTypes");
	aws_form_add(&f, "Filter.1.Name", "instance-type");
	for (size_t i = 0; i < ntypes; i++)
		aws_form_addf(&f, types[i], "Filter.1.Value.%zu", i + 1);
	aws_form_add(&f, "MaxResults", "100");
	if (next_token && *next_token)
		aws_form_add(&f, "NextToken", next_token);
	return aws_form_take(&f);
}

char *aws_ec2_spot_body(const char *const *types, size_t ntypes,
                        int64_t now_ms, const char *next_token)
{
	aws_form f;
	char now[21];
	aws_fmt_iso8601(now_ms, now);
	aws_form_start(&f, "DescribeSpotPriceHistory");
	for (size_t i = 0; i < ntypes; i++)
		aws_form_addf(&f, types[i], "InstanceType.%zu", i + 1);
	aws_form_add(&f, "ProductDescription.1", "Linux/UNIX");
	aws_form_add(&f, "StartTime", now);
	aws_form_add(&f, "EndTime", now);
	aws_form_add(&f, "MaxResults", "1000");
	if (next_token && *next_token)
		aws_form_add(&f, "NextToken", next_token);
	return aws_form_take(&f);
}

/* ----------------------------------------------------------- answers */

static int is_spot_reason(const char *r)
{
	return r && (strcmp(r, "Server.SpotInstanceTermination") == 0 ||
	             strcmp(r, "Server.SpotInstanceShutdown") == 0);
}

static int is_failure_reason(const char *r)
{
	return r && ((strncmp(r, "Server.", 7) == 0 && !is_spot_reason(r)) ||
	             strcmp(r, "Client.VolumeLimitExceeded") == 0 ||
	             strcmp(r, "Client.InternalError") == 0 ||
	             strcmp(r, "Client.InvalidSnapshot.NotFound") == 0);
}

gb_instance_state aws_ec2_map_state(int code, const char *name,
                                    const char *reason)
{
	int c = code >= 0 ? (code & 0xFF) : -1;
	if (c < 0 && name) {
		if (strcmp(name, "pending") == 0)
			c = 0;
		else if (strcmp(name, "running") == 0)
			c = 16;
		else if (strcmp(name, "shutting-down") == 0)
			c = 32;
		else if (strcmp(name, "terminated") == 0)
			c = 48;
		else if (strcmp(name, "stopping") == 0)
			c = 64;
		else if (strcmp(name, "stopped") == 0)
			c = 80;
	}
	switch (c) {
	case 0:
		return GB_INST_PENDING;
	case 16:
		return GB_INST_RUNNING;
	case 32:
	case 64:
		return is_spot_reason(reason) ? GB_INST_PREEMPTED
		                              : GB_INST_STOPPING;
	case 48:
		if (is_spot_reason(reason))
			return GB_INST_PREEMPTED;
		return is_failure_reason(reason) ? GB_INST_FAILED
		                                 : GB_INST_TERMINATED;
	case 80:
		return is_spot_reason(reason) ? GB_INST_PREEMPTED
		                              : GB_INST_FAILED;
	default:
		return GB_INST_UNKNOWN;
	}
}

static aws_xml_doc *open_doc(const char *body, size_t len,
                             const char *expect, const char *what,
                             gb_error *err)
{
	char xerr[200];
	aws_xml_doc *d = aws_xml_parse(body ? body : "", body ? len : 0, xerr,
	                               sizeof(xerr));
	const aws_xml_node *root;
	if (!d) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 %s answer is not well-formed XML: %s", what, xerr);
		return NULL;
	}
	root = aws_xml_root(d);
	if (strcmp(root->name, expect) != 0) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 %s answer has root <%.60s>, expected <%s>", what,
		         root->name, expect);
		aws_xml_free(d);
		return NULL;
	}
	return d;
}

static char *take_next_token(const aws_xml_node *root)
{
	const char *t = aws_xml_text(root, "nextToken");
	while (t && isspace((unsigned char)*t))
		t++;
	return t && *t ? aws_xstrdup(t) : NULL;
}

/* Text of path with surrounding whitespace removed, into buf; NULL when
 * the element is absent or empty. */
static const char *id_text(const aws_xml_node *n, const char *path, char *buf,
                           size_t cap)
{
	const char *s = aws_xml_text(n, path);
	size_t len;
	if (!s)
		return NULL;
	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len == 0 || len >= cap)
		return NULL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

/* One instancesSet item -> emit.  Returns 0, 1 = stop, -1 = err. */
static int emit_instance(const aws_xml_node *it, size_t idx,
                         const char *region, gb_instance_cb emit, void *ud,
                         gb_error *err)
{
	gb_instance in;
	char id[64], type[64], zone[64], reason[128], priv[64], pub[64],
	     name[300], sname[32];
	const char *lifecycle, *launch, *iname = NULL, *ibase = NULL;
	const aws_xml_node *ts, *t;
	gb_kv *tags = NULL;
	size_t ntags = 0, cap = 0;
	long long code = -1, li = -1;
	int rc, r;

	memset(&in, 0, sizeof(in));
	in.id = id_text(it, "instanceId", id, sizeof(id));
	if (!in.id) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 answer: instance %zu has no instanceId", idx + 1);
		return -1;
	}
	r = aws_xml_int(it, "instanceState/code", &code);
	if (r == -2) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 answer: instance %s: instanceState/code is not "
		         "an integer", in.id);
		return -1;
	}
	if (r == -1)
		code = -1;
	if (code < -1 || code > 0xFFFF) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 answer: instance %s: instanceState/code %lld out "
		         "of range", in.id, code);
		return -1;
	}
	if (code < 0 && !id_text(it, "instanceState/name", sname,
	                         sizeof(sname))) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 answer: instance %s has no instanceState", in.id);
		return -1;
	}
	in.state_reason = id_text(it, "stateReason/code", reason,
	                          sizeof(reason));
	in.state = aws_ec2_map_state((int)code, code < 0 ? sname : NULL,
	                             in.state_reason);
	in.instance_type = id_text(it, "instanceType", type, sizeof(type));
	in.zone = id_text(it, "placement/availabilityZone", zone,
	                  sizeof(zone));
	if (!in.zone)
		in.zone = "";
	in.region = region;
	in.private_ip = id_text(it, "privateIpAddress", priv, sizeof(priv));
	in.public_ip = id_text(it, "ipAddress", pub, sizeof(pub));
	lifecycle = aws_xml_text(it, "instanceLifecycle");
	in.capacity = lifecycle && strstr(lifecycle, "spot")
	                      ? GB_CAPACITY_SPOT
	              : lifecycle && strstr(lifecycle, "capacity-block")
	                      ? GB_CAPACITY_RESERVED
	                      : GB_CAPACITY_ON_DEMAND;
	launch = aws_xml_text(it, "launchTime");
	if (launch) {
		in.created_at = aws_parse_iso8601(launch);
		if (in.created_at < 0) {
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
			         "EC2 answer: instance %s: launchTime is not an "
			         "ISO 8601 time", in.id);
			return -1;
		}
		/* EC2 gives whole seconds (".000Z"): the host uses this
		 * only when it falls inside the create call */
		in.created_ms = drvc_rfc3339_ms(launch);
		if (in.created_ms < 0)
			in.created_ms = 0;
	}
	r = aws_xml_int(it, "amiLaunchIndex", &li);
	if (r == -2 || (r == 0 && (li < 0 || li > 100000))) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 answer: instance %s: amiLaunchIndex is not a "
		         "small non-negative integer", in.id);
		return -1;
	}
	ts = aws_xml_child(it, "tagSet");
	for (t = aws_xml_child(ts, "item"); t; t = aws_xml_next_named(t)) {
		const char *k = aws_xml_text(t, "key");
		const char *v = aws_xml_text(t, "value");
		if (!k)
			continue;
		if (ntags == cap) {
			cap = cap ? cap * 2 : 16;
			tags = aws_xrealloc(tags, cap * sizeof(*tags));
		}
		tags[ntags].key = k;
		tags[ntags].value = v ? v : "";
		if (strcmp(k, "Name") == 0)
			iname = tags[ntags].value;
		else if (strcmp(k, AWS_TAG_INDEX_BASE) == 0)
			ibase = tags[ntags].value;
		ntags++;
	}
	in.tags = tags;
	in.ntags = ntags;
	if (iname && *iname) {
		char *end = NULL;
		unsigned long base = ibase ? strtoul(ibase, &end, 10) : 0;
		if (ibase && end && *end == '\0' && *ibase && li >= 0)
			snprintf(name, sizeof(name), "%.200s-%lu", iname,
			         base + (unsigned long)li);
		else
			snprintf(name, sizeof(name), "%.200s", iname);
		in.name = name;
	}
	rc = emit(ud, &in) ? 1 : 0;
	free(tags);
	return rc;
}

static int emit_set(const aws_xml_node *set, size_t *count,
                    const char *region, gb_instance_cb emit, void *ud,
                    gb_error *err)
{
	for (const aws_xml_node *it = aws_xml_child(set, "item"); it;
	     it = aws_xml_next_named(it)) {
		int r = emit_instance(it, *count, region, emit, ud, err);
		if (r < 0)
			return -1;
		++*count;
		if (r > 0)
			return 1;
	}
	return 0;
}

int aws_ec2_parse_instances(const char *body, size_t len, const char *expect,
                            const char *region, gb_instance_cb emit,
                            void *ud, char **next_token, gb_error *err)
{
	const char *what = strcmp(expect, "RunInstancesResponse") == 0
	                           ? "RunInstances"
	                           : "DescribeInstances";
	aws_xml_doc *d = open_doc(body, len, expect, what, err);
	const aws_xml_node *root;
	size_t count = 0;
	int r = 0;
	if (next_token)
		*next_token = NULL;
	if (!d)
		return -1;
	root = aws_xml_root(d);
	if (strcmp(expect, "RunInstancesResponse") == 0) {
		const aws_xml_node *set = aws_xml_child(root, "instancesSet");
		if (!set) {
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
			         "EC2 RunInstances answer has no instancesSet");
			aws_xml_free(d);
			return -1;
		}
		r = emit_set(set, &count, region, emit, ud, err);
	} else {
		const aws_xml_node *rs = aws_xml_child(root, "reservationSet");
		if (!rs) {
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
			         "EC2 DescribeInstances answer has no "
			         "reservationSet");
			aws_xml_free(d);
			return -1;
		}
		for (const aws_xml_node *res = aws_xml_child(rs, "item");
		     res && r == 0; res = aws_xml_next_named(res))
			r = emit_set(aws_xml_child(res, "instancesSet"), &count,
			             region, emit, ud, err);
	}
	if (r >= 0 && next_token)
		*next_token = take_next_token(root);
	aws_xml_free(d);
	return r < 0 ? -1 : (int)count;
}

int aws_ec2_parse_terminate(const char *body, size_t len, gb_error *err)
{
	aws_xml_doc *d = open_doc(body, len, "TerminateInstancesResponse",
	                          "TerminateInstances", err);
	const aws_xml_node *set;
	int n = 0;
	if (!d)
		return -1;
	set = aws_xml_child(aws_xml_root(d), "instancesSet");
	if (!set) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 TerminateInstances answer has no instancesSet");
		aws_xml_free(d);
		return -1;
	}
	for (const aws_xml_node *it = aws_xml_child(set, "item"); it;
	     it = aws_xml_next_named(it)) {
		char id[64];
		if (!id_text(it, "instanceId", id, sizeof(id))) {
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
			         "EC2 TerminateInstances answer: item %d has no "
			         "instanceId", n + 1);
			aws_xml_free(d);
			return -1;
		}
		n++;
	}
	aws_xml_free(d);
	return n;
}

static int get_int(const aws_xml_node *n, const char *path, long long *out,
                   const char *what, const char *type, gb_error *err)
{
	int r = aws_xml_int(n, path, out);
	if (r == -2 || (r == 0 && (*out < 0 || *out > 100000000))) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 %s answer: %s: %s is not a non-negative integer",
		         what, type, path);
		return -1;
	}
	if (r == -1)
		*out = 0;
	return 0;
}

int aws_ec2_parse_types(const char *body, size_t len, aws_type_cb cb,
                        void *ud, char **next_token, gb_error *err)
{
	aws_xml_doc *d = open_doc(body, len, "DescribeInstanceTypesResponse",
	                          "DescribeInstanceTypes", err);
	const aws_xml_node *root, *set;
	int n = 0;
	if (next_token)
		*next_token = NULL;
	if (!d)
		return -1;
	root = aws_xml_root(d);
	set = aws_xml_child(root, "instanceTypeSet");
	if (!set) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 DescribeInstanceTypes answer has no "
		         "instanceTypeSet");
		aws_xml_free(d);
		return -1;
	}
	for (const aws_xml_node *it = aws_xml_child(set, "item"); it;
	     it = aws_xml_next_named(it)) {
		aws_type_info ti;
		char type[64];
		const aws_xml_node *g;
		long long v;
		memset(&ti, 0, sizeof(ti));
		ti.type = id_text(it, "instanceType", type, sizeof(type));
		if (!ti.type) {
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
			         "EC2 DescribeInstanceTypes answer: item %d has "
			         "no instanceType", n + 1);
			goto bad;
		}
		if (get_int(it, "vCpuInfo/defaultVCpus", &v,
		            "DescribeInstanceTypes", ti.type, err))
			goto bad;
		ti.vcpus = (int)v;
		if (get_int(it, "memoryInfo/sizeInMiB", &v,
		            "DescribeInstanceTypes", ti.type, err))
			goto bad;
		ti.mem_mib = (long)v;
		g = aws_xml_path(it, "gpuInfo/gpus/item");
		if (g) {
			ti.gpu_name = aws_xml_text(g, "name");
			ti.manufacturer = aws_xml_text(g, "manufacturer");
			if (get_int(g, "count", &v, "DescribeInstanceTypes",
			            ti.type, err))
				goto bad;
			ti.gpu_count = (int)v;
			if (get_int(g, "memoryInfo/sizeInMiB", &v,
			            "DescribeInstanceTypes", ti.type, err))
				goto bad;
			ti.gpu_mem_mib = (long)v;
		}
		n++;
		if (cb(ud, &ti))
			break;
	}
	if (next_token)
		*next_token = take_next_token(root);
	aws_xml_free(d);
	return n;
bad:
	aws_xml_free(d);
	return -1;
}

int aws_ec2_parse_spot(const char *body, size_t len, aws_spot_cb cb,
                       void *ud, char **next_token, gb_error *err)
{
	aws_xml_doc *d = open_doc(body, len,
	                          "DescribeSpotPriceHistoryResponse",
	                          "DescribeSpotPriceHistory", err);
	const aws_xml_node *root, *set;
	int n = 0;
	if (next_token)
		*next_token = NULL;
	if (!d)
		return -1;
	root = aws_xml_root(d);
	set = aws_xml_child(root, "spotPriceHistorySet");
	if (!set) {
		drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
		         "EC2 DescribeSpotPriceHistory answer has no "
		         "spotPriceHistorySet");
		aws_xml_free(d);
		return -1;
	}
	for (const aws_xml_node *it = aws_xml_child(set, "item"); it;
	     it = aws_xml_next_named(it)) {
		aws_spot_price sp;
		char type[64], zone[64], prod[64];
		const char *ts;
		memset(&sp, 0, sizeof(sp));
		sp.type = id_text(it, "instanceType", type, sizeof(type));
		sp.zone = id_text(it, "availabilityZone", zone, sizeof(zone));
		sp.product = id_text(it, "productDescription", prod,
		                     sizeof(prod));
		ts = aws_xml_text(it, "timestamp");
		if (!sp.type || !sp.zone ||
		    aws_xml_double(it, "spotPrice", &sp.price) != 0 ||
		    sp.price < 0 || !ts ||
		    (sp.timestamp = aws_parse_iso8601(ts)) < 0) {
			drvc_err(err, GB_ERR_INVALID, 0, "MalformedAnswer",
			         "EC2 DescribeSpotPriceHistory answer: item %d "
			         "needs instanceType, availabilityZone, a numeric "
			         "spotPrice and an ISO 8601 timestamp", n + 1);
			aws_xml_free(d);
			return -1;
		}
		n++;
		if (cb(ud, &sp))
			break;
	}
	if (next_token)
		*next_token = take_next_token(root);
	aws_xml_free(d);
	return n;
}

void aws_gpu_canonical(const char *name, long mem_mib, char *out, size_t cap)
{
	char up[64];
	size_t n = 0;
	for (const char *p = name ? name : ""; *p && n + 1 < sizeof(up); p++)
		if (!isspace((unsigned char)*p))
			up[n++] = (char)toupper((unsigned char)*p);
	up[n] = '\0';
	if (strcmp(up, "A100") == 0 && mem_mib >= 70 * 1024)
		snprintf(out, cap, "A100-80GB");
	else if (n)
		snprintf(out, cap, "%s", up);
	else
		snprintf(out, cap, "unknown");
}

size_t aws_ec2_missing_ids(const char *message, const char *const *ids,
                           size_t nids, unsigned char *gone)
{
	size_t marked = 0;
	const char *p = message ? message : "";
	while ((p = strstr(p, "i-")) != NULL) {
		size_t len = 2;
		if (p > message && (isalnum((unsigned char)p[-1]) ||
		                    p[-1] == '-')) {
			p += 2;
			continue;
		}
		while (isxdigit((unsigned char)p[len]))
			len++;
		if (len > 2 && !isalnum((unsigned char)p[len]))
			for (size_t i = 0; i < nids; i++)
				if (!gone[i] && strlen(ids[i]) == len &&
				    strncmp(ids[i], p, len) == 0) {
					gone[i] = 1;
					marked++;
				}
		p += len;
	}
	return marked;
}
