/* engine_autoscale.c -- the elastic pool decision (see autoscale.h). */
#include "autoscale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gb_autoscale_schedule_floor(const gb_autoscale *as, int64_t now)
{
	int floor = 0;
	for (int i = 0; i < as->nwindows; i++) {
		const gb_autoscale_window *w = &as->windows[i];
		int64_t local = now + (w->zone ? gb_tz_offset(w->zone, now)
		                               : (int64_t)w->tz_min * 60);
		int64_t days = local >= 0 ? local / 86400
		                          : -((-local + 86399) / 86400);
		int64_t sec = local - days * 86400;
		/* 1970-01-01 was a Thursday; bit 0 is Monday */
		int wday = (int)(((days + 3) % 7 + 7) % 7);
		int minute = (int)(sec / 60);
		if ((w->days & (1u << wday)) && minute >= w->from_min &&
		    minute < w->to_min && w->min > floor)
			floor = w->min;
	}
	return floor;
}

static int fresh(const gb_as_sample *s, int64_t now, int64_t fresh_s)
{
	return s->at > 0 && now - s->at <= fresh_s && s->at <= now + fresh_s;
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void fmt_dur(int64_t s, char *buf, size_t cap)
{
	if (s % 3600 == 0 && s >= 3600)
		snprintf(buf, cap, "%lldh", (long long)(s / 3600));
	else if (s % 60 == 0 && s >= 60)
		snprintf(buf, cap, "%lldm", (long long)(s / 60));
	else
		snprintf(buf, cap, "%llds", (long long)s);
}

void gb_autoscale_decide(const gb_as_input *in, gb_as_state *st,
                         gb_as_decision *out)
{
	const gb_autoscale *as = in->as;
	double sum = 0, target = as->gpu_util_target;
	int cur = in->current, rule = in->current, want = in->current;
	int n = 0, demand = 0, can_down;
	char dur[32];

	memset(out, 0, sizeof(*out));
	out->next = "none";
	for (size_t i = 0; i < in->nsamples; i++)
		if (fresh(&in->samples[i], in->now, in->fresh_s)) {
			sum += in->samples[i].util;
			n++;
		}
	out->reporting = n;
	out->mean = n ? sum / n : -1;
	can_down = n > 0 && 2 * n >= (int)in->nsamples;

	/* the floor */
	out->schedule_floor = gb_autoscale_schedule_floor(as, in->now);
	if (in->demand > 0 && in->now < in->demand_until)
		demand = in->demand;
	out->floor = in->min;
	if (out->schedule_floor > out->floor)
		out->floor = out->schedule_floor;
	if (demand > out->floor)
		out->floor = demand;
	out->floor = clampi(out->floor, in->min, in->max);

	/* the utilisation rule's clocks */
	if (n && out->mean > target + GB_AS_BAND) {
		if (!st->above_since)
			st->above_since = in->now;
		st->below_since = 0;
	} else if (n && out->mean < target - GB_AS_BAND && can_down) {
		if (!st->below_since)
			st->below_since = in->now;
		st->above_since = 0;
	} else {
		st->above_since = st->below_since = 0;
	}
	if (n)
		want = (int)ceil(out->mean * cur / target - 1e-9);
	if (want < 1)
		want = 1;
	snprintf(out->reason, sizeof(out->reason), "steady");
	if (n == 0)
		snprintf(out->reason, sizeof(out->reason),
		         "no instance reported gpu_util in the last %llds: "
		         "holding %d", (long long)in->fresh_s, cur);
	else if (!can_down && out->mean < target - GB_AS_BAND)
		snprintf(out->reason, sizeof(out->reason),
		         "only %d of %zu instances report gpu_util: no "
		         "scale-down", n, in->nsamples);

	if (st->above_since) {
		int64_t since = st->above_since > st->last_change
		                        ? st->above_since : st->last_change;
		out->next = "up";
		out->next_at = since + as->up_after_s;
		if (in->now >= out->next_at) {
			int step = want - cur;
			step = clampi(step, 1, as->max_step);
			rule = cur + step;
			fmt_dur(as->up_after_s, dur, sizeof(dur));
			snprintf(out->reason, sizeof(out->reason),
			         "mean gpu_util %.2f > %.2f for %s", out->mean,
			         target, dur);
		}
	} else if (st->below_since && want < cur) {
		int64_t since = st->below_since > st->last_change
		                        ? st->below_since : st->last_change;
		out->next = "down";
		out->next_at = since + as->down_after_s;
		if (in->now >= out->next_at) {
			rule = cur - clampi(cur - want, 1, as->max_step);
			fmt_dur(as->down_after_s, dur, sizeof(dur));
			snprintf(out->reason, sizeof(out->reason),
			         "mean gpu_util %.2f < %.2f for %s", out->mean,
			         target, dur);
		}
	}

	/* a floor that fell releases what it added, unless the load needs
	 * it */
	if (st->last_floor > out->floor && cur > out->floor) {
		int release = st->last_floor - out->floor;
		int keep = cur - release;
		if (n && want > keep)
			keep = want < cur ? want : cur;
		if (keep < rule) {
			rule = keep;
			snprintf(out->reason, sizeof(out->reason),
			         "%s ended (floor %d -> %d)",
			         !demand && in->demand > 0 &&
			                 clampi(in->demand, in->min, in->max) ==
			                         st->last_floor
			                 ? "demand signal"
			                 : "schedule window",
			         st->last_floor, out->floor);
		}
	}

	out->desired = clampi(rule > out->floor ? rule : out->floor, in->min,
	                      in->max);
	if (out->desired > rule) {
		char why[96] = "";
		if (demand && demand >= out->schedule_floor &&
		    out->desired == clampi(demand, in->min, in->max))
			snprintf(why, sizeof(why),
			         "demand signal %d (for %llds more)", demand,
			         (long long)(in->demand_until - in->now));
		else if (out->schedule_floor && out->desired ==
		         out->schedule_floor)
			snprintf(why, sizeof(why), "schedule window floor %d",
			         out->schedule_floor);
		else if (out->desired == in->min)
			snprintf(why, sizeof(why), "pool min %d", in->min);
		if (why[0] && out->desired > cur) {
			/* the floor raised the pool: it is the reason */
			snprintf(out->reason, sizeof(out->reason), "%s", why);
		} else if (why[0] && rule < cur) {
			/* the load brought it down, the floor holds the rest */
			size_t l = strlen(out->reason);
			snprintf(out->reason + l, sizeof(out->reason) - l,
			         " (held at %s)", why);
		}
	} else if (rule > in->max && out->desired == in->max) {
		size_t l = strlen(out->reason);
		snprintf(out->reason + l, sizeof(out->reason) - l,
		         " (held at max %d)", in->max);
	}
	/* nothing can come that the bounds do not allow: no "up" at max,
	 * no "down" at the floor */
	if ((strcmp(out->next, "up") == 0 && out->desired >= in->max) ||
	    (strcmp(out->next, "down") == 0 && out->desired <= out->floor)) {
		out->next = "none";
		out->next_at = 0;
	}
	if (out->desired != cur) {
		size_t l = strlen(out->reason);
		snprintf(out->reason + l, sizeof(out->reason) - l, ": %d -> %d",
		         cur, out->desired);
		st->last_change = in->now;
		st->above_since = st->below_since = 0;
		out->next = "none";
		out->next_at = 0;
	}
	st->last_floor = out->floor > in->min ? out->floor : 0;
}

typedef struct victim {
	int64_t id;
	int known;
	double util;
	double price;
	int64_t created_at;
} victim;

static int victim_cmp(const void *a, const void *b)
{
	const victim *x = a, *y = b;
	if (x->known != y->known)
		return y->known - x->known; /* known first */
	if (x->known && x->util != y->util)
		return x->util < y->util ? -1 : 1;
	if (x->price != y->price)
		return x->price > y->price ? -1 : 1; /* dearest */
	if (x->created_at != y->created_at)
		return x->created_at > y->created_at ? -1 : 1; /* newest */
	return x->id > y->id ? -1 : x->id < y->id;
}

size_t gb_autoscale_victims(const gb_as_sample *s, size_t n, int64_t now,
                            int64_t fresh_s, size_t k, int64_t *out)
{
	victim *v;
	if (!n || !k)
		return 0;
	v = gb_xcalloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].id = s[i].id;
		v[i].known = fresh(&s[i], now, fresh_s);
		v[i].util = s[i].util;
		v[i].created_at = s[i].created_at;
		v[i].price = s[i].price;
	}
	qsort(v, n, sizeof(*v), victim_cmp);
	if (k > n)
		k = n;
	for (size_t i = 0; i < k; i++)
		out[i] = v[i].id;
	free(v);
	return k;
}
