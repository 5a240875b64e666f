/*
 * autoscale.h -- the elastic pool decision, as a pure function.
 *
 * Each reconcile pass asks gb_autoscale_decide what size an autoscaled
 * pool should have.  Everything it reads is in its arguments (bounds,
 * the spec's autoscale block, the running instances' latest heartbeats
 * with their times, the demand signal, the clock) and everything it
 * remembers between passes is in gb_as_state, which the caller keeps;
 * so a benchmark or a test can replay a trace through it with a fake
 * clock.
 *
 * The rule:
 *   - mean = the mean of the latest gpu_util of instances whose heartbeat
 *     is at most fresh_s old; others are unknown (not idle) and do not
 *     count.  Fewer than half the instances reporting: no scale-down.
 *   - load = mean x current; want = ceil(load / target): the size that
 *     brings the mean to the target.
 *   - mean above target + band (GB_AS_BAND) continuously for up_after:
 *     add min(want - current, max_step), at least 1.
 *   - mean below target - band continuously for down_after: remove
 *     min(current - want, max_step), when that is at least 1.
 *   - after any change, both clocks restart: the next action waits its
 *     whole window again (no flapping).
 *   - floor = max(min, the schedule windows open now, an unexpired
 *     demand signal); result = max(floor, the rule), clamped to min..max.
 *     When the floor falls (a demand lapses, a window closes), what it
 *     added is released at once unless the utilisation needs it.
 */
#ifndef GB_AUTOSCALE_H
#define GB_AUTOSCALE_H

#include <stddef.h>
#include <stdint.h>

#include "spec.h"

/* A heartbeat older than this (seconds) is unknown, not idle. */
#define GB_AS_FRESH_S 120

/* Half-width of the dead band around gpu_util_target. */
#define GB_AS_BAND 0.05

typedef struct gb_as_sample {
	int64_t id;
	double util;         /* latest gpu_util, 0..1 */
	int64_t at;          /* its heartbeat's time (unix s); 0 = never */
	int64_t created_at;  /* for the scale-down order */
	double price;        /* USD/h: equal use, the dearest goes first */
} gb_as_sample;

typedef struct gb_as_state {
	int64_t above_since;  /* 0 = not above the band */
	int64_t below_since;  /* 0 = not below the band */
	int64_t last_change;  /* last time the result differed from current */
	int last_floor;       /* the floor of the previous pass; 0 = none */
} gb_as_state;

typedef struct gb_as_input {
	int min, max;
	const gb_autoscale *as;      /* enabled */
	int current;                 /* the pool's desired count now */
	const gb_as_sample *samples; /* the running instances */
	size_t nsamples;
	int demand;                  /* 0 = none */
	int64_t demand_until;        /* the demand holds while now < this */
	int64_t now;                 /* unix seconds */
	int64_t fresh_s;             /* heartbeat age still counted */
} gb_as_input;

typedef struct gb_as_decision {
	int desired;
	int reporting;        /* instances with a fresh heartbeat */
	double mean;          /* of those; -1 when none */
	int floor;            /* max(min, schedule, demand) */
	int schedule_floor;   /* 0 = no window open */
	char reason[192];     /* why desired (or why unchanged) */
	const char *next;     /* "up", "down" or "none": what may come next */
	int64_t next_at;      /* when it may (unix s); 0 = not pending */
} gb_as_decision;

/* Decides; updates *st.  Never fails. */
void gb_autoscale_decide(const gb_as_input *in, gb_as_state *st,
                         gb_as_decision *out);

/* The floor of the schedule windows open at `now` (0 = none). */
int gb_autoscale_schedule_floor(const gb_autoscale *as, int64_t now);

/* The k instances to remove: lowest fresh utilisation first (unknown
 * instances after every known one), then the dearest (price), then the
 * newest.  Writes up to k ids into out; returns how many. */
size_t gb_autoscale_victims(const gb_as_sample *s, size_t n, int64_t now,
                            int64_t fresh_s, size_t k, int64_t *out);

#endif
