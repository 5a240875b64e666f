/*
 * aws_prices.c -- refresh_prices: shapes from DescribeInstanceTypes, spot
 * prices per zone from DescribeSpotPriceHistory, on-demand prices from the
 * shipped catalog (EC2 has no on-demand price API; the AWS Price List API
 * is a separate service).  Only the catalog's GPU types are asked about.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws.h"
#include "aws_ec2.h"
#include "aws_util.h"
#include "drvc_catalog.h"
#include "drvc_util.h"

#define TYPES_PER_CALL 100
#define SPOT_TYPES_PER_CALL 50
#define MAX_PAGES 1000

typedef struct ctype {
	char *type;
	char *gpu;
	int gpus, gpu_mem_gb, vcpus;
	double ram_gb;
	double od;               /* on-demand USD/h, <= 0 when none */
	char *source;            /* the catalog's source */
	int64_t fetched_at;
	char **zones;
	size_t nzones;
	/* from DescribeInstanceTypes */
	int confirmed;
	char gpu_canon[32];
	int e_gpus, e_gpu_mem_gb, e_vcpus;
	double e_ram_gb;
} ctype;

typedef struct spot {
	size_t t; /* index into types */
	char zone[64];
	double price;
	int64_t ts;
} spot;

typedef struct rset {
	ctype *t;
	size_t n, cap;
	spot *s;
	size_t ns, scap;
	char **regions; /* distinct catalog regions (region == NULL) */
	size_t nregions;
} rset;

static ctype *find_type(rset *r, const char *type)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->t[i].type, type) == 0)
			return &r->t[i];
	return NULL;
}

static void add_zone(ctype *t, const char *zone)
{
	if (!zone || !*zone)
		return;
	for (size_t i = 0; i < t->nzones; i++)
		if (strcmp(t->zones[i], zone) == 0)
			return;
	t->zones = aws_xrealloc(t->zones, (t->nzones + 1) * sizeof(char *));
	t->zones[t->nzones++] = aws_xstrdup(zone);
}

static int collect_offer(void *ud, const gb_offer *o)
{
	rset *r = ud;
	ctype *t = find_type(r, o->instance_type);
	if (!t) {
		if (r->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 16;
			r->t = aws_xrealloc(r->t, r->cap * sizeof(*r->t));
		}
		t = &r->t[r->n++];
		memset(t, 0, sizeof(*t));
		t->type = aws_xstrdup(o->instance_type);
		t->gpu = aws_xstrdup(o->gpu_model);
		t->gpus = o->gpu_count;
		t->gpu_mem_gb = o->gpu_memory_gb;
		t->vcpus = o->vcpus;
		t->ram_gb = o->ram_gb;
		t->source = aws_xstrdup(o->source);
		t->fetched_at = o->fetched_at;
		t->od = -1;
	}
	if (o->capacity == GB_CAPACITY_ON_DEMAND)
		t->od = o->price_per_hour;
	add_zone(t, o->zone);
	return 0;
}

static int collect_region(void *ud, const gb_offer *o)
{
	rset *r = ud;
	for (size_t i = 0; i < r->nregions; i++)
		if (strcmp(r->regions[i], o->region) == 0)
			return 0;
	r->regions = aws_xrealloc(r->regions,
	                          (r->nregions + 1) * sizeof(char *));
	r->regions[r->nregions++] = aws_xstrdup(o->region);
	return 0;
}

static void rset_clear_types(rset *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->t[i].type);
		free(r->t[i].gpu);
		free(r->t[i].source);
		for (size_t z = 0; z < r->t[i].nzones; z++)
			free(r->t[i].zones[z]);
		free(r->t[i].zones);
	}
	free(r->t);
	free(r->s);
	r->t = NULL;
	r->s = NULL;
	r->n = r->cap = r->ns = r->scap = 0;
}

static int on_type(void *ud, const aws_type_info *ti)
{
	rset *r = ud;
	ctype *t = find_type(r, ti->type);
	if (!t)
		return 0;
	t->confirmed = 1;
	t->e_vcpus = ti->vcpus;
	t->e_ram_gb = (double)ti->mem_mib / 1024.0;
	t->e_gpus = ti->gpu_count;
	t->e_gpu_mem_gb = (int)lround((double)ti->gpu_mem_mib / 1024.0);
	if (ti->gpu_name)
		aws_gpu_canonical(ti->gpu_name, ti->gpu_mem_mib, t->gpu_canon,
		                  sizeof(t->gpu_canon));
	return 0;
}

static int on_spot(void *ud, const aws_spot_price *p)
{
	rset *r = ud;
	ctype *t = find_type(r, p->type);
	if (!t || (p->product && strncmp(p->product, "Linux/UNIX", 10) != 0))
		return 0;
	for (size_t i = 0; i < r->ns; i++) {
		spot *s = &r->s[i];
		if (&r->t[s->t] == t && strcmp(s->zone, p->zone) == 0) {
			if (p->timestamp > s->ts) { /* keep the newest */
				s->price = p->price;
				s->ts = p->timestamp;
			}
			return 0;
		}
	}
	if (r->ns == r->scap) {
		r->scap = r->scap ? r->scap * 2 : 32;
		r->s = aws_xrealloc(r->s, r->scap * sizeof(*r->s));
	}
	r->s[r->ns].t = (size_t)(t - r->t);
	snprintf(r->s[r->ns].zone, sizeof(r->s[r->ns].zone), "%s", p->zone);
	r->s[r->ns].price = p->price;
	r->s[r->ns].ts = p->timestamp;
	r->ns++;
	return 0;
}

/* Pages through one kind of call for types[from..from+n). */
static int paged(aws_ctx *c, const char *region, const char *action,
                 const char *const *types, size_t n, int64_t now_ms,
                 rset *r, gb_error *err)
{
	char *next = NULL;
	for (int page = 0; page < MAX_PAGES; page++) {
		gb_http_resp resp;
		char *nn = NULL;
		int is_spot = strcmp(action, "DescribeSpotPriceHistory") == 0;
		char *body = is_spot ? aws_ec2_spot_body(types, n, now_ms, next)
		                  : aws_ec2_types_body(types, n, next);
		int rc = aws_call(c, region, action, body, 0, &resp, err);
		free(body);
		if (rc == 0)
			rc = aws_check_answer(c, action, &resp, err);
		if (rc == 0)
			rc = (is_spot ? aws_ec2_parse_spot(resp.body,
			                                resp.body_len, on_spot,
			                                r, &nn, err)
			           : aws_ec2_parse_types(resp.body,
			                                 resp.body_len, on_type,
			                                 r, &nn, err)) < 0
			             ? -1
			             : 0;
		c->host->http_free(c->host->ctx, &resp);
		if (rc != 0 || (nn && next && strcmp(nn, next) == 0)) {
			if (rc == 0)
				drvc_err(err, GB_ERR_INVALID, 0, "PagingLoop",
				         "EC2 %s in %s returned the same "
				         "nextToken twice", action, region);
			free(nn);
			free(next);
			return -1;
		}
		free(next);
		next = nn;
		if (!next)
			return 0;
	}
	free(next);
	drvc_err(err, GB_ERR_INVALID, 0, "PagingLoop",
	         "EC2 %s in %s did not finish within %d pages", action, region,
	         MAX_PAGES);
	return -1;
}

static int refresh_region(aws_ctx *c, const char *path, const char *region,
                          gb_offer_cb emit, void *ud, gb_error *err)
{
	const gb_host *h = c->host;
	rset r;
	const char **types;
	char url[600], hostport[300], source[700];
	int64_t now_ms = h->now_ms(h->ctx);
	int rc = 0, stop = 0;

	memset(&r, 0, sizeof(r));
	if (drvc_catalog_emit(path, region, collect_offer, &r, err) != 0) {
		rset_clear_types(&r);
		return -1;
	}
	if (r.n == 0) {
		if (h->log)
			h->log(h->ctx, GB_LOG_DEBUG, "aws: no catalog types in "
			       "%s: nothing to refresh", region);
		return 0;
	}
	if (aws_endpoint_for(c, region, url, sizeof(url), hostport,
	                     sizeof(hostport), err) != 0) {
		rset_clear_types(&r);
		return -1;
	}
	snprintf(source, sizeof(source), "ec2:DescribeSpotPriceHistory %s",
	         url);
	types = aws_xcalloc(r.n, sizeof(*types));
	for (size_t i = 0; i < r.n; i++)
		types[i] = r.t[i].type;
	for (size_t i = 0; i < r.n && rc == 0; i += TYPES_PER_CALL)
		rc = paged(c, region, "DescribeInstanceTypes", types + i,
		           r.n - i < TYPES_PER_CALL ? r.n - i : TYPES_PER_CALL,
		           now_ms, &r, err);
	for (size_t i = 0; i < r.n && rc == 0; i += SPOT_TYPES_PER_CALL)
		rc = paged(c, region, "DescribeSpotPriceHistory", types + i,
		           r.n - i < SPOT_TYPES_PER_CALL ? r.n - i
		                                         : SPOT_TYPES_PER_CALL,
		           now_ms, &r, err);
	free(types);
	for (size_t i = 0; i < r.n && rc == 0 && !stop; i++) {
		ctype *t = &r.t[i];
		gb_offer o;
		if (!t->confirmed) {
			if (h->log)
				h->log(h->ctx, GB_LOG_INFO, "aws: %s is not "
				       "offered in %s (DescribeInstanceTypes); "
				       "no offers for it", t->type, region);
			continue;
		}
		memset(&o, 0, sizeof(o));
		o.region = region;
		o.instance_type = t->type;
		o.gpu_model = t->gpu_canon[0] ? t->gpu_canon : t->gpu;
		o.gpu_count = t->e_gpus > 0 ? t->e_gpus : t->gpus;
		o.gpu_memory_gb = t->e_gpu_mem_gb > 0 ? t->e_gpu_mem_gb
		                                      : t->gpu_mem_gb;
		o.vcpus = t->e_vcpus > 0 ? t->e_vcpus : t->vcpus;
		o.ram_gb = t->e_ram_gb > 0 ? t->e_ram_gb : t->ram_gb;
		if (t->od > 0) {
			o.capacity = GB_CAPACITY_ON_DEMAND;
			o.price_per_hour = t->od;
			o.source = t->source;
			o.fetched_at = t->fetched_at;
			for (size_t z = 0; z < (t->nzones ? t->nzones : 1) &&
			                   !stop;
			     z++) {
				o.zone = t->nzones ? t->zones[z] : "";
				stop = emit(ud, &o) != 0;
			}
		}
		o.capacity = GB_CAPACITY_SPOT;
		o.source = source;
		o.fetched_at = now_ms / 1000;
		for (size_t s = 0; s < r.ns && !stop; s++) {
			if (r.s[s].t != i)
				continue;
			o.zone = r.s[s].zone;
			o.price_per_hour = r.s[s].price;
			stop = emit(ud, &o) != 0;
		}
	}
	rset_clear_types(&r);
	return rc != 0 ? rc : stop; /* 1: the caller asked to stop */
}

int aws_refresh_prices(void *ctx, const char *region, gb_offer_cb emit,
                       void *ud, gb_error *err)
{
	aws_ctx *c = ctx;
	char buf[1024];
	const char *path = drvc_catalog_path(c->host, "aws", buf, sizeof(buf));
	rset all;
	int rc = 0;

	if (!path) {
		drvc_err(err, GB_ERR_NOT_FOUND, 0, "CatalogMissing",
		         "aws: no offers catalog to refresh: set the driver "
		         "option \"catalog\" (a file) or \"data_dir\"");
		return -1;
	}
	if (!c->creds.have) {
		aws_no_creds_error(c, "DescribeSpotPriceHistory", err);
		return -1;
	}
	if (region && *region)
		return refresh_region(c, path, region, emit, ud, err) < 0 ? -1
		                                                          : 0;
	memset(&all, 0, sizeof(all));
	{
		const char *list = aws_opt(c, "regions");
		if (list) {
			while (*list) {
				size_t n;
				gb_offer o;
				char one[64];
				while (*list == ',' || *list == ' ')
					list++;
				n = strcspn(list, ", ");
				if (n == 0)
					break;
				snprintf(one, sizeof(one), "%.*s", (int)n, list);
				memset(&o, 0, sizeof(o));
				o.region = one;
				collect_region(&all, &o);
				list += n;
			}
		} else if (drvc_catalog_emit(path, NULL, collect_region, &all,
		                             err) != 0) {
			rc = -1;
		}
	}
	for (size_t i = 0; i < all.nregions && rc == 0; i++)
		rc = refresh_region(c, path, all.regions[i], emit, ud, err);
	for (size_t i = 0; i < all.nregions; i++)
		free(all.regions[i]);
	free(all.regions);
	return rc < 0 ? -1 : 0;
}
