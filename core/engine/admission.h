/*
 * admission.h -- who gets the shared GPUs, as a pure function (issue 35).
 *
 * Each reconcile pass asks gb_admission_decide which pools waiting for a
 * shared resource (an on-prem site's nodes, a cloud GPU quota, a team's
 * GPU quota) may have what they ask for.  Everything it reads is in its
 * arguments (the resources with their capacity, the demands with what
 * they hold now, the teams' shares, the clock) and it remembers nothing,
 * as gb_autoscale_decide (autoscale.h): a benchmark or a test replays a
 * trace through it with a fake clock.
 *
 * Units: a demand wants `count` instances; each instance uses per[r]
 * units (GPUs, nodes) of resource r.  `held` instances are allocated now
 * (of which `leaving` are already under a preemption notice: they still
 * use the resource until the caller removes them after the grace).
 *
 * The rule, each pass:
 *   1. Free capacity = capacity - what every demand holds.
 *   2. Progressive filling: the wanting demand first in the order
 *        priority (higher first),
 *        its team's weighted dominant share (DRF, Ghodsi et al., NSDI
 *          2011: over the resources the demand asks for, team quotas
 *          aside, the largest use / capacity, divided by the team's
 *          share; lower first: a team's use of another site or cloud
 *          does not push it back in this line),
 *        arrival (older first), then the input order,
 *      is given one more instance (a gang: all it lacks, or nothing)
 *      when it fits every resource it uses; otherwise it is blocked on
 *      the first resource that lacks room and it keeps its place.  A
 *      blocked demand reserves that resource against every lower
 *      priority (no lower class is admitted there while it waits), so
 *      a lower class is admitted only where a higher one does not fit;
 *      and, in its own class, against the teams further over their
 *      share than its team (none overtakes the under-share head).
 *      Borrowing is this filling: a team may pass its share while no
 *      one else wants the room.
 *   3. Preemption, for each blocked demand in that order, where what
 *      is free plus what is already leaving does not cover its next
 *      step: victims are instances of pools marked preemptible that use
 *      the lacking resource and are either of a lower priority
 *      (GB_ADM_PRIORITY), or of the same priority in a team above its
 *      fair share of that resource (GB_ADM_RECLAIM; only the borrowed
 *      part is taken, and only while the move leaves the blocked
 *      demand's team no further over its share than the victim's stays,
 *      so an instance never moves back).  A team's fair share of a
 *      resource: the capacity water-filled over the teams that want it,
 *      by their shares, none past what it asks for.  Never a pool of a higher priority, never below
 *      a pool's min, never on a team quota (preempting another team
 *      frees nothing there).  Victims by lowest priority, then the most
 *      over its share, then the newest.  Nothing is preempted unless
 *      the whole step is covered.
 *   4. The queue: every demand still short of its count, in the order
 *      of 2, with its position, the resource it waits for and whether
 *      preemptions are under way for it.
 *
 * The function is deterministic: the same input gives the same output.
 */
#ifndef GB_ADMISSION_H
#define GB_ADMISSION_H

#include <stddef.h>
#include <stdint.h>

typedef enum gb_adm_kind {
	GB_ADM_ONPREM = 0, /* an on-prem site's nodes */
	GB_ADM_CLOUD_QUOTA,/* a cloud's GPU quota: (cloud, region, family) */
	GB_ADM_TEAM_QUOTA, /* a team's GPU quota */
} gb_adm_kind;

typedef struct gb_adm_resource {
	const char *name;  /* "onprem:lab", "aws:us-east-1:P", "team:ml" */
	gb_adm_kind kind;
	int capacity;      /* units; < 0 counts as 0 */
} gb_adm_resource;

typedef struct gb_adm_team {
	const char *name;
	double share;      /* teams[].share; <= 0 means the default, 1 */
} gb_adm_team;

typedef struct gb_adm_demand {
	const char *pool;
	const char *team;  /* a team not in the teams list has share 1 */
	int priority;      /* the class's value: higher wins */
	int count;         /* instances wanted in all */
	int min;           /* never preempted below this */
	int held;          /* instances allocated now (leaving included) */
	int leaving;       /* of held: already under a preemption notice */
	const int *per;    /* per instance, units of each resource (nres) */
	int gang;          /* cluster-like: all count instances or nothing */
	int preemptible;   /* lifecycle.preemptible */
	int64_t arrival;   /* when it started to wait (unix s) */
} gb_adm_demand;

typedef struct gb_adm_input {
	const gb_adm_resource *res;
	size_t nres;
	const gb_adm_demand *dem;
	size_t ndem;
	const gb_adm_team *teams;
	size_t nteams;
	int64_t now;       /* unix s: for the reasons' wait times */
} gb_adm_input;

typedef enum gb_adm_why {
	GB_ADM_PRIORITY = 1, /* a higher class that does not fit */
	GB_ADM_RECLAIM,      /* a team under its share takes back a loan */
} gb_adm_why;

typedef struct gb_adm_preemption {
	size_t victim;       /* index into dem */
	int count;           /* instances to give up (after the grace) */
	size_t beneficiary;  /* the blocked demand they make room for */
	size_t resource;     /* the contended resource */
	gb_adm_why why;
	char reason[256];    /* for the events on both pools */
} gb_adm_preemption;

typedef struct gb_adm_wait {
	size_t demand;       /* index into dem */
	int position;        /* 1 = head */
	long waits_for;      /* resource index; -1: nothing free would do
	                      * (it has room and is only ordered) */
	int preempting;      /* preemptions are under way for it */
	char reason[256];    /* "position 2 for onprem:lab (2 of 4 nodes
	                      * free, needs 3); ahead: a, b" */
} gb_adm_wait;

typedef struct gb_adm_result {
	int *granted;        /* per demand: instances allocated after the
	                      * pass (>= held - leaving is not implied:
	                      * leaving instances stay counted in held) */
	gb_adm_wait *queue;  /* the demands still short of their count */
	size_t nqueue;
	gb_adm_preemption *preempt;
	size_t npreempt;
	int *used;           /* per resource: units in use after the pass */
} gb_adm_result;

/* Decides.  Never fails.  *out is filled with arrays the caller frees
 * with gb_admission_free. */
void gb_admission_decide(const gb_adm_input *in, gb_adm_result *out);

void gb_admission_free(gb_adm_result *r);

/* A team's weight (teams[].share, default 1). */
double gb_admission_share(const gb_adm_input *in, const char *team);

#endif
