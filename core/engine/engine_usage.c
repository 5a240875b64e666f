/* engine_usage.c -- `usage`: GPU-hours bought, their mean utilisation
 * (from the heartbeat samples kept) and the idle GPU-hours, per hour of
 * day or day of week (UTC), and per pool. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timejson.h"

static const char *const weekdays[7] = {"mon", "tue", "wed", "thu", "fri",
                                        "sat", "sun"};

/* The bucket of unix ms t: its hour of day, or its weekday (mon = 0). */
static int bucket_of(int64_t t, int by_weekday)
{
	time_t sec = (time_t)(t / 1000);
	struct tm tm;
	gmtime_r(&sec, &tm);
	return by_weekday ? (tm.tm_wday + 6) % 7 : tm.tm_hour;
}

/* Adds gpus x [a, b) to the buckets, split at each UTC hour; with
 * util >= 0 as measured time (and busy time x util), else as bought. */
static void spread(gb_usage_bucket *out, int by_weekday, int64_t a, int64_t b,
                   int gpus, double util)
{
	while (a < b) {
		int64_t next = (a / 3600000 + 1) * 3600000;
		double h;
		gb_usage_bucket *k;
		if (next > b)
			next = b;
		h = (double)(next - a) / 3600000.0 * gpus;
		k = &out[bucket_of(a, by_weekday)];
		if (util < 0) {
			k->bought_h += h;
		} else {
			k->measured_h += h;
			k->busy_h += h * util;
		}
		a = next;
	}
}

/* The first sample of instance id (samples sorted by instance). */
static size_t first_sample(const gb_hb_sample *s, size_t ns, int64_t id)
{
	size_t lo = 0, hi = ns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].instance_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int gb_usage_compute(const gb_usage_inst *v, size_t n,
                     const gb_hb_sample *s, size_t ns, int by_weekday,
                     int64_t since_ms, int64_t until_ms,
                     gb_usage_bucket *out, gb_usage_bucket *per_inst)
{
	int measured_any = 0;
	memset(out, 0, sizeof(*out) * (by_weekday ? 7 : 24));
	for (size_t i = 0; i < n; i++) {
		int64_t a = v[i].start_ms > since_ms ? v[i].start_ms : since_ms;
		int64_t b = v[i].end_ms < until_ms ? v[i].end_ms : until_ms;
		gb_usage_bucket one[24];
		int nb = by_weekday ? 7 : 24;
		memset(one, 0, sizeof(one));
		if (b > a) {
			spread(one, by_weekday, a, b, v[i].gpu_count, -1);
			for (size_t j = first_sample(s, ns, v[i].id);
			     j < ns && s[j].instance_id == v[i].id; j++) {
				int64_t from = s[j].time_ms, to = from + GB_USAGE_HOLD_MS;
				if (j + 1 < ns && s[j + 1].instance_id == v[i].id &&
				    s[j + 1].time_ms < to)
					to = s[j + 1].time_ms;
				if (from < a)
					from = a;
				if (to > b)
					to = b;
				if (to > from)
					spread(one, by_weekday, from, to, v[i].gpu_count,
					       s[j].gpu_util);
			}
		}
		if (per_inst)
			memset(&per_inst[i], 0, sizeof(per_inst[i]));
		for (int k = 0; k < nb; k++) {
			out[k].bought_h += one[k].bought_h;
			out[k].measured_h += one[k].measured_h;
			out[k].busy_h += one[k].busy_h;
			if (per_inst) {
				per_inst[i].bought_h += one[k].bought_h;
				per_inst[i].measured_h += one[k].measured_h;
				per_inst[i].busy_h += one[k].busy_h;
			}
			if (one[k].measured_h > 0)
				measured_any = 1;
		}
	}
	return measured_any;
}

/* {gpu_hours, measured_gpu_hours, unmeasured_gpu_hours, gpu_util,
 * idle_gpu_hours} of one sum; gpu_util null when nothing was measured. */
static void set_figures(json_t *j, const gb_usage_bucket *k)
{
	double unmeasured = k->bought_h - k->measured_h;
	json_object_set_new(j, "gpu_hours", json_real(k->bought_h));
	json_object_set_new(j, "measured_gpu_hours", json_real(k->measured_h));
	json_object_set_new(j, "unmeasured_gpu_hours",
	                    json_real(unmeasured > 0 ? unmeasured : 0));
	json_object_set_new(j, "gpu_util", k->measured_h > 0
	                            ? json_real(k->busy_h / k->measured_h)
	                            : json_null());
	json_object_set_new(j, "idle_gpu_hours",
	                    json_real(k->measured_h - k->busy_h));
}

static void add_to(gb_usage_bucket *sum, const gb_usage_bucket *k)
{
	sum->bought_h += k->bought_h;
	sum->measured_h += k->measured_h;
	sum->busy_h += k->busy_h;
}

/* One pool's sums (rows[row] is one of its instances). */
typedef struct pool_sum {
	size_t row;
	gb_usage_bucket sum;
	int instances, unmeasured;
} pool_sum;

json_t *gb_engine_usage(gb_engine *e, const char *by, const char *pool,
                        const char *team, int64_t since_ms, int64_t until_ms)
{
	gb_inst_row *rows = NULL;
	gb_hb_sample *samples = NULL;
	gb_usage_inst *v = NULL;
	gb_usage_bucket buckets[24], *per = NULL, total;
	size_t n = 0, ns = 0, nv = 0, unmeasured = 0;
	int by_weekday = by && strcmp(by, "weekday") == 0;
	int nb = by_weekday ? 7 : 24;
	json_t *out = NULL, *arr, *bypool, *g;
	pool_sum *ps = NULL;
	size_t nps = 0;

	if (gb_store_inst_list(e->o.store, pool, 0, &rows, &n) != 0 ||
	    gb_store_hb_list(e->o.store, pool, since_ms - GB_USAGE_HOLD_MS,
	                     until_ms, &samples, &ns) != 0)
		goto done;
	v = calloc(n ? n : 1, sizeof(*v));
	per = calloc(n ? n : 1, sizeof(*per));
	ps = calloc(n ? n : 1, sizeof(*ps));
	if (!v || !per || !ps)
		goto done;
	for (size_t i = 0; i < n; i++) {
		const gb_inst_row *r = &rows[i];
		/* the team that owned the pool when the instance was made */
		if (team && (!r->team || strcmp(r->team, team) != 0))
			continue;
		if (!r->launched_ms || r->gpu_count <= 0)
			continue;
		v[nv].id = r->id;
		v[nv].start_ms = r->launched_ms;
		v[nv].end_ms = gb_engine__billed_end_ms(
			r, until_ms, gb_engine__billing_min_ms(e, r->cloud));
		v[nv].gpu_count = r->gpu_count;
		v[nv].row = i;
		nv++;
	}
	gb_usage_compute(v, nv, samples, ns, by_weekday, since_ms, until_ms,
	                 buckets, per);

	memset(&total, 0, sizeof(total));
	arr = json_array();
	for (int i = 0; i < nb; i++) {
		char hour[12]; /* "%02d" of 0..23; room for any int (format-truncation) */
		json_t *b = json_object();
		snprintf(hour, sizeof(hour), "%02d", i);
		json_object_set_new(b, "bucket", json_string(by_weekday
		                                             ? weekdays[i] : hour));
		set_figures(b, &buckets[i]);
		json_array_append_new(arr, b);
		add_to(&total, &buckets[i]);
	}
	/* per pool and team that owned it (a destroyed pool's name may be
	 * another team's since): the sums of its instances (index into ps by
	 * "team/name") */
	bypool = json_object();
	for (size_t i = 0; i < nv; i++) {
		const gb_inst_row *r = &rows[v[i].row];
		char *key = gb_xasprintf("%s/%s", r->team ? r->team : "", r->pool);
		json_t *at = json_object_get(bypool, key);
		pool_sum *p;
		if (per[i].bought_h <= 0) {
			free(key);
			continue;
		}
		if (!at) {
			at = json_integer((json_int_t)nps);
			json_object_set_new(bypool, key, at);
			ps[nps++].row = v[i].row;
		}
		free(key);
		p = &ps[json_integer_value(at)];
		add_to(&p->sum, &per[i]);
		p->instances++;
		if (per[i].measured_h <= 0) {
			p->unmeasured++;
			unmeasured++;
		}
	}
	json_decref(bypool);
	out = json_pack("{s:s, s:o, s:o, s:s?, s:s?, s:o}", "by",
	                by_weekday ? "weekday" : "hour", "since",
	                gb_json_time(since_ms), "until", gb_json_time(until_ms),
	                "pool", pool, "team", team, "buckets", arr);
	set_figures(out, &total);
	json_object_set_new(out, "unmeasured_instances",
	                    json_integer((json_int_t)unmeasured));
	arr = json_array();
	for (size_t i = 0; i < nps; i++) {
		const gb_inst_row *r = &rows[ps[i].row];
		g = json_pack("{s:s, s:s?, s:i, s:i}", "pool", r->pool, "team",
		              r->team,
		              "instances", ps[i].instances, "unmeasured_instances",
		              ps[i].unmeasured);
		set_figures(g, &ps[i].sum);
		json_array_append_new(arr, g);
	}
	json_object_set_new(out, "pools", arr);
done:
	free(v);
	free(per);
	free(ps);
	free(samples);
	gb_inst_list_free(rows, n);
	return out;
}
