/*
 * ec2_info.c -- the catalog-backed EC2 reads: DescribeInstanceTypes (with
 * GpuInfo), DescribeSpotPriceHistory (one record per type and zone, in
 * effect since an hour before cloudsim started) and
 * DescribeAvailabilityZones.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ec2.h"

static int cmp_type(const void *a, const void *b)
{
	const sim_ctype *x = *(const sim_ctype *const *)a;
	const sim_ctype *y = *(const sim_ctype *const *)b;
	return strcmp(x->type, y->type);
}

/* The region's types sorted by name; caller frees the array. */
static const sim_ctype **region_types(const char *region, size_t *n)
{
	const sim_catalog *cat = &sim_g.cat[SIM_AWS];
	const sim_ctype **v = gb_xcalloc(cat->ntypes + 1, sizeof(*v));
	size_t k = 0;
	for (size_t i = 0; i < cat->ntypes; i++)
		if (sim_ctype_region(&cat->types[i], region))
			v[k++] = &cat->types[i];
	qsort(v, k, sizeof(*v), cmp_type);
	*n = k;
	return v;
}

static void gpu_name(const char *model, char *buf, size_t cap)
{
	const char *dash = strchr(model, '-');
	size_t n = dash ? (size_t)(dash - model) : strlen(model);
	snprintf(buf, cap, "%.*s", (int)n, model);
}

static int offers_spot(const sim_ctype *t)
{
	for (size_t i = 0; i < t->nregs; i++)
		if (t->regs[i].spot >= 0)
			return 1;
	return 0;
}

static void type_xml(gb_buf *b, const sim_ctype *t)
{
	char g[32];
	gb_buf_puts(b, "<item>");
	ec2_tag(b, "instanceType", t->type);
	gb_buf_puts(b, "<currentGeneration>true</currentGeneration>"
	               "<freeTierEligible>false</freeTierEligible>"
	               "<supportedUsageClasses><item>on-demand</item>");
	if (offers_spot(t))
		gb_buf_puts(b, "<item>spot</item>");
	gb_buf_puts(b, "</supportedUsageClasses>"
	               "<supportedRootDeviceTypes><item>ebs</item>"
	               "</supportedRootDeviceTypes>"
	               "<supportedVirtualizationTypes><item>hvm</item>"
	               "</supportedVirtualizationTypes>"
	               "<bareMetal>false</bareMetal>"
	               "<hypervisor>nitro</hypervisor>"
	               "<processorInfo><supportedArchitectures>"
	               "<item>x86_64</item></supportedArchitectures>"
	               "</processorInfo>");
	gb_buf_printf(b, "<vCpuInfo><defaultVCpus>%d</defaultVCpus>"
	              "<defaultCores>%d</defaultCores>"
	              "<defaultThreadsPerCore>2</defaultThreadsPerCore>"
	              "</vCpuInfo>", t->vcpus, t->vcpus / 2 ? t->vcpus / 2 : 1);
	gb_buf_printf(b, "<memoryInfo><sizeInMiB>%lld</sizeInMiB></memoryInfo>",
	              (long long)(t->ram_gb * 1024.0 + 0.5));
	gb_buf_puts(b, "<instanceStorageSupported>false"
	               "</instanceStorageSupported>");
	if (t->gpus > 0) {
		gpu_name(t->gpu, g, sizeof(g));
		gb_buf_puts(b, "<gpuInfo><gpus><item>");
		ec2_tag(b, "name", g);
		gb_buf_printf(b, "<manufacturer>NVIDIA</manufacturer>"
		              "<count>%d</count><memoryInfo><sizeInMiB>%d"
		              "</sizeInMiB></memoryInfo></item></gpus>"
		              "<totalGpuMemoryInMiB>%d</totalGpuMemoryInMiB>"
		              "</gpuInfo>", t->gpus, t->gpu_mem_gb * 1024,
		              t->gpus * t->gpu_mem_gb * 1024);
	}
	gb_buf_puts(b, "<burstablePerformanceSupported>false"
	               "</burstablePerformanceSupported>"
	               "<hibernationSupported>false</hibernationSupported>"
	               "</item>");
}

void ec2_describe_instance_types(ec2_ctx *c)
{
	static const char *const known[] = {"instance-type",
	                                    "current-generation",
	                                    "supported-usage-class", NULL};
	gb_strv want = {NULL, 0};
	ec2_filter *f = NULL;
	size_t nf = 0, n = 0, k = 0, end;
	const sim_ctype **all = NULL, **sel = NULL;
	int64_t maxr = 0, start = 0;
	const char *tok;
	gb_buf b = GB_BUF_INIT;
	ec2_list(&c->params, "InstanceType", &want);
	if (ec2_filters(c, &f, &nf) != 0 ||
	    ec2_filters_known(c, f, nf, known) != 0 ||
	    ec2_max_results(c, 5, 100, &maxr) != 0)
		goto out;
	tok = gb_kvs_get(&c->params, "NextToken");
	if (tok && *tok && ec2_token_parse("dt", tok, &start) != 0) {
		ec2_error(c, 400, "InvalidPaginationToken",
		          "Invalid pagination token");
		goto out;
	}
	all = region_types(c->region, &n);
	if (want.n) {
		gb_buf bad = GB_BUF_INIT;
		for (size_t i = 0; i < want.n; i++) {
			int found = 0;
			for (size_t j = 0; j < n && !found; j++)
				found = strcmp(all[j]->type, want.v[i]) == 0;
			if (!found) {
				if (bad.len)
					gb_buf_puts(&bad, ", ");
				gb_buf_puts(&bad, want.v[i]);
			}
		}
		if (bad.len) {
			ec2_error(c, 400, "InvalidInstanceType",
			          "The following supplied instance types do not "
			          "exist: [%s]", gb_buf_str(&bad));
			gb_buf_free(&bad);
			goto out;
		}
	}
	sel = gb_xcalloc(n + 1, sizeof(*sel));
	for (size_t j = 0; j < n; j++) {
		int ok = want.n == 0 || gb_strv_contains(&want, all[j]->type);
		for (size_t i = 0; ok && i < nf; i++) {
			if (strcmp(f[i].name, "instance-type") == 0)
				ok = ec2_filter_any(&f[i], all[j]->type);
			else if (strcmp(f[i].name, "current-generation") == 0)
				ok = ec2_filter_any(&f[i], "true");
			else
				ok = ec2_filter_any(&f[i], "on-demand") ||
				     (offers_spot(all[j]) &&
				      ec2_filter_any(&f[i], "spot"));
		}
		if (ok)
			sel[k++] = all[j];
	}
	end = k;
	if ((size_t)start > k)
		start = (int64_t)k;
	if (maxr && k - (size_t)start > (size_t)maxr)
		end = (size_t)start + (size_t)maxr;
	ec2_begin(c, &b);
	gb_buf_puts(&b, "<instanceTypeSet>");
	for (size_t i = (size_t)start; i < end; i++)
		type_xml(&b, sel[i]);
	gb_buf_puts(&b, "</instanceTypeSet>\n");
	if (end < k) {
		char *t = ec2_token_make("dt", (int64_t)end);
		ec2_tag(&b, "nextToken", t);
		free(t);
	}
	ec2_finish(c, &b);
out:
	gb_buf_free(&b);
	free(all);
	free(sel);
	ec2_filters_free(f, nf);
	gb_strv_free(&want);
}

void ec2_describe_spot_price_history(ec2_ctx *c)
{
	static const char *const known[] = {"availability-zone",
	                                    "instance-type",
	                                    "product-description", NULL};
	gb_strv types = {NULL, 0}, prods = {NULL, 0};
	ec2_filter *f = NULL;
	size_t nf = 0, n = 0, idx = 0, emitted = 0;
	const sim_ctype **all = NULL;
	int64_t maxr = 0, start = 0, t0, t1;
	const char *tok, *az, *st, *et;
	gb_buf b = GB_BUF_INIT;
	const gb_strv *rz = ec2_region_zones(c);
	char ts[40];
	int more = 0, linux_ok = 1;
	ec2_list(&c->params, "InstanceType", &types);
	ec2_list(&c->params, "ProductDescription", &prods);
	if (ec2_filters(c, &f, &nf) != 0 ||
	    ec2_filters_known(c, f, nf, known) != 0 ||
	    ec2_max_results(c, 1, 1000, &maxr) != 0)
		goto out;
	tok = gb_kvs_get(&c->params, "NextToken");
	if (tok && *tok && ec2_token_parse("sp", tok, &start) != 0) {
		ec2_error(c, 400, "InvalidPaginationToken",
		          "Invalid pagination token");
		goto out;
	}
	st = gb_kvs_get(&c->params, "StartTime");
	et = gb_kvs_get(&c->params, "EndTime");
	t0 = 0;
	t1 = c->now;
	if ((st && sim_parse_iso(st, &t0) != 0) ||
	    (et && sim_parse_iso(et, &t1) != 0)) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "Invalid value '%s' for %s: expected an ISO 8601 "
		          "time", st && sim_parse_iso(st, &t0) ? st : et,
		          st && sim_parse_iso(st, &t0) ? "StartTime"
		                                       : "EndTime");
		goto out;
	}
	if (st && et && t1 < t0) {
		ec2_error(c, 400, "InvalidParameterValue",
		          "EndTime must be after StartTime");
		goto out;
	}
	az = gb_kvs_get(&c->params, "AvailabilityZone");
	if (prods.n) {
		linux_ok = 0;
		for (size_t i = 0; i < prods.n; i++)
			if (strcmp(prods.v[i], "Linux/UNIX") == 0 ||
			    strcmp(prods.v[i], "Linux/UNIX (Amazon VPC)") == 0)
				linux_ok = 1;
	}
	for (size_t i = 0; i < nf; i++)
		if (strcmp(f[i].name, "product-description") == 0 &&
		    !ec2_filter_any(&f[i], "Linux/UNIX"))
			linux_ok = 0;
	/* one record per (type, zone), in effect from spot_price_time on */
	if (t1 < sim_g.spot_price_time || t0 > c->now)
		linux_ok = 0;
	all = region_types(c->region, &n);
	ec2_begin(c, &b);
	gb_buf_puts(&b, "<spotPriceHistorySet>");
	for (size_t i = 0; linux_ok && i < n && !more; i++) {
		const sim_creg *r = sim_ctype_region(all[i], c->region);
		gb_strv zones = {NULL, 0};
		if (types.n && !gb_strv_contains(&types, all[i]->type))
			continue;
		if (r->spot < 0)
			continue;
		if (r->nzones)
			for (size_t z = 0; z < r->nzones; z++)
				gb_strv_push(&zones, r->zones[z]);
		else
			for (size_t z = 0; z < rz->n; z++)
				gb_strv_push(&zones, rz->v[z]);
		for (size_t z = 0; z < zones.n; z++) {
			int ok = !az || strcmp(az, zones.v[z]) == 0;
			for (size_t q = 0; ok && q < nf; q++) {
				if (strcmp(f[q].name, "availability-zone") == 0)
					ok = ec2_filter_any(&f[q], zones.v[z]);
				else if (strcmp(f[q].name, "instance-type") == 0)
					ok = ec2_filter_any(&f[q], all[i]->type);
			}
			if (!ok || sim_creg_price(r, zones.v[z], 1) < 0)
				continue;
			if ((int64_t)idx++ < start)
				continue;
			if (maxr && (int64_t)emitted >= maxr) {
				more = 1;
				break;
			}
			gb_buf_puts(&b, "<item>");
			ec2_tag(&b, "instanceType", all[i]->type);
			ec2_tag(&b, "productDescription", "Linux/UNIX");
			ec2_tagf(&b, "spotPrice", "%.6f",
			         sim_creg_price(r, zones.v[z], 1));
			ec2_tag(&b, "timestamp",
			        sim_time_ms(sim_g.spot_price_time, ts,
			                    sizeof(ts)));
			ec2_tag(&b, "availabilityZone", zones.v[z]);
			gb_buf_puts(&b, "</item>");
			emitted++;
		}
		gb_strv_free(&zones);
	}
	gb_buf_puts(&b, "</spotPriceHistorySet>\n");
	if (more) {
		char *t = ec2_token_make("sp", start + (int64_t)emitted);
		ec2_tag(&b, "nextToken", t);
		free(t);
	} else {
		gb_buf_puts(&b, "<nextToken/>");
	}
	ec2_finish(c, &b);
out:
	gb_buf_free(&b);
	free(all);
	ec2_filters_free(f, nf);
	gb_strv_free(&types);
	gb_strv_free(&prods);
}

/* "us-east-1" -> "use1" */
static void zone_id_prefix(const char *region, char *buf, size_t cap)
{
	size_t o = 0;
	const char *p = region;
	int part = 0;
	while (*p && o + 1 < cap) {
		if (*p == '-') {
			part++;
			p++;
			continue;
		}
		if (part == 0 || isdigit((unsigned char)*p) ||
		    (p == region || p[-1] == '-'))
			buf[o++] = *p;
		p++;
	}
	buf[o] = '\0';
}

void ec2_describe_availability_zones(ec2_ctx *c)
{
	static const char *const known[] = {"zone-name", "region-name",
	                                    "state", "zone-type", NULL};
	gb_strv names = {NULL, 0};
	ec2_filter *f = NULL;
	size_t nf = 0;
	const gb_strv *rz = ec2_region_zones(c);
	gb_buf b = GB_BUF_INIT;
	char pre[32];
	ec2_list(&c->params, "ZoneName", &names);
	if (ec2_filters(c, &f, &nf) != 0 ||
	    ec2_filters_known(c, f, nf, known) != 0)
		goto out;
	for (size_t i = 0; i < names.n; i++) {
		if (!gb_strv_contains(rz, names.v[i])) {
			ec2_error(c, 400, "InvalidParameterValue",
			          "The zone '%s' does not exist.", names.v[i]);
			goto out;
		}
	}
	zone_id_prefix(c->region, pre, sizeof(pre));
	ec2_begin(c, &b);
	gb_buf_puts(&b, "<availabilityZoneInfo>");
	for (size_t i = 0; i < rz->n; i++) {
		int ok = !names.n || gb_strv_contains(&names, rz->v[i]);
		for (size_t q = 0; ok && q < nf; q++) {
			if (strcmp(f[q].name, "zone-name") == 0)
				ok = ec2_filter_any(&f[q], rz->v[i]);
			else if (strcmp(f[q].name, "region-name") == 0)
				ok = ec2_filter_any(&f[q], c->region);
			else if (strcmp(f[q].name, "state") == 0)
				ok = ec2_filter_any(&f[q], "available");
			else
				ok = ec2_filter_any(&f[q], "availability-zone");
		}
		if (!ok)
			continue;
		gb_buf_puts(&b, "<item>");
		ec2_tag(&b, "zoneName", rz->v[i]);
		gb_buf_puts(&b, "<zoneState>available</zoneState>");
		ec2_tag(&b, "regionName", c->region);
		ec2_tagf(&b, "zoneId", "%s-az%zu", pre, i + 1);
		gb_buf_puts(&b, "<zoneType>availability-zone</zoneType>"
		               "<optInStatus>opt-in-not-required</optInStatus>");
		ec2_tag(&b, "groupName", c->region);
		ec2_tag(&b, "networkBorderGroup", c->region);
		gb_buf_puts(&b, "<messageSet/></item>");
	}
	gb_buf_puts(&b, "</availabilityZoneInfo>\n");
	ec2_finish(c, &b);
out:
	gb_buf_free(&b);
	ec2_filters_free(f, nf);
	gb_strv_free(&names);
}
