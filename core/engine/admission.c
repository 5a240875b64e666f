/* admission.c -- the shared-GPU admission decision (see admission.h). */
#include "admission.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The working state of one pass.  Borrowed pointers into the input. */
typedef struct pass {
	const gb_adm_input *in;
	size_t nteams;
	const char **team;   /* distinct team names (borrowed) */
	double *weight;      /* per team */
	size_t *tix;         /* per demand: its team's index */
	int *cap;            /* per resource */
	int *used;           /* per resource: units held */
	int *leaving;        /* per resource: units under notice */
	int *tused;          /* per team x resource: units held */
	int *granted;        /* per demand */
	int *give;           /* per demand: instances chosen as victims */
	int *blocked;        /* per demand: -1 no, else resource index */
	int *reserve;        /* per resource: the highest priority blocked
	                      * on it; INT_MIN none */
	int *reserved;       /* per resource: 1 when reserve is set */
	double *rshare;      /* per resource: the lowest weighted share of a
	                      * team blocked there at priority reserve[] */
	double *ent;         /* per team x resource: its fair share, units
	                      * (water_fill, after the filling) */
} pass;

double gb_admission_share(const gb_adm_input *in, const char *team)
{
	for (size_t i = 0; i < in->nteams; i++)
		if (team && in->teams[i].name &&
		    strcmp(in->teams[i].name, team) == 0)
			return in->teams[i].share > 0 ? in->teams[i].share : 1.0;
	return 1.0;
}

static size_t team_index(pass *p, const char *t)
{
	const char *name = t ? t : "";
	for (size_t i = 0; i < p->nteams; i++)
		if (strcmp(p->team[i], name) == 0)
			return i;
	p->team[p->nteams] = name;
	p->weight[p->nteams] = gb_admission_share(p->in, t);
	return p->nteams++;
}

/* A resource that counts for the fair share (not a team's own quota). */
static int fair(const gb_adm_input *in, size_t r)
{
	return in->res[r].kind != GB_ADM_TEAM_QUOTA;
}

/* Demand i's team's weighted dominant share over the resources i asks
 * for: what the team holds of them, the largest fraction, divided by its
 * share. */
static double dominant(const pass *p, size_t i)
{
	const gb_adm_input *in = p->in;
	size_t t = p->tix[i];
	double d = 0;
	for (size_t r = 0; r < in->nres; r++) {
		if (!fair(in, r) || p->cap[r] <= 0 || in->dem[i].per[r] <= 0)
			continue;
		double s = (double)p->tused[t * in->nres + r] / p->cap[r];
		if (s > d)
			d = s;
	}
	return d / p->weight[t];
}

/* Each team's fair share of each resource, for entitled(): the
 * capacity water-filled over the teams that want the resource, by
 * their weights, no team past what it asks for (the count of its
 * demands there), so a share nobody else needs is the asker's.  Run
 * after the filling (preemption changes no grant). */
static void water_fill(pass *p)
{
	const gb_adm_input *in = p->in;
	size_t nres = in->nres, nt = p->nteams;
	double *dem = gb_xcalloc(nt + 1, sizeof *dem);
	unsigned char *on = gb_xcalloc(nt + 1, 1);
	for (size_t r = 0; r < nres; r++) {
		memset(dem, 0, nt * sizeof *dem);
		for (size_t i = 0; i < in->ndem; i++) {
			const gb_adm_demand *d = &in->dem[i];
			int n = d->count > p->granted[i] ? d->count : p->granted[i];
			if (d->per[r] > 0 && n > 0)
				dem[p->tix[i]] += (double)n * d->per[r];
		}
		double left = p->cap[r];
		for (size_t t = 0; t < nt; t++)
			on[t] = dem[t] > 0;
		for (;;) {
			double w = 0;
			for (size_t t = 0; t < nt; t++)
				if (on[t])
					w += p->weight[t];
			if (w <= 0 || left <= 1e-9)
				break;
			double level = left / w;
			long sat = -1;
			for (size_t t = 0; t < nt; t++)
				if (on[t] && dem[t] / p->weight[t] < level) {
					level = dem[t] / p->weight[t];
					sat = (long)t;
				}
			for (size_t t = 0; t < nt; t++)
				if (on[t]) {
					double g = level * p->weight[t];
					p->ent[t * nres + r] += g;
					dem[t] -= g;
					left -= g;
					if (dem[t] <= 1e-9)
						on[t] = 0;
				}
			if (sat < 0)
				break;
			on[sat] = 0;
		}
	}
	free(dem);
	free(on);
}

/* Team t's fair share of resource r, in units. */
static double entitled(const pass *p, size_t t, size_t r)
{
	return p->ent[t * p->in->nres + r];
}

/* a before b in the queue's order: < 0 */
static int order(const pass *p, size_t a, size_t b)
{
	const gb_adm_demand *da = &p->in->dem[a], *db = &p->in->dem[b];
	if (da->priority != db->priority)
		return da->priority > db->priority ? -1 : 1;
	double sa = dominant(p, a), sb = dominant(p, b);
	if (sa < sb - 1e-12)
		return -1;
	if (sb < sa - 1e-12)
		return 1;
	if (da->arrival != db->arrival)
		return da->arrival < db->arrival ? -1 : 1;
	return a < b ? -1 : a > b ? 1 : 0;
}

/* The instances demand i asks for in its next step (0: none). */
static int step_of(const pass *p, size_t i)
{
	const gb_adm_demand *d = &p->in->dem[i];
	int lack = d->count - p->granted[i];
	if (lack <= 0)
		return 0;
	return d->gang ? lack : 1;
}

/* The first resource where n more instances of i do not fit, -1 when
 * they fit; a resource reserved for a higher priority lacks room. */
static long lacks(const pass *p, size_t i, int n)
{
	const gb_adm_input *in = p->in;
	const gb_adm_demand *d = &in->dem[i];
	for (size_t r = 0; r < in->nres; r++) {
		if (d->per[r] <= 0)
			continue;
		if (p->cap[r] - p->used[r] < n * d->per[r])
			return (long)r;
		if (p->reserved[r] && p->reserve[r] > d->priority)
			return (long)r;
		/* within the blocked class: no team further over its
		 * share than the blocked one's takes the room */
		if (p->reserved[r] && p->reserve[r] == d->priority &&
		    dominant(p, i) > p->rshare[r] + 1e-12)
			return (long)r;
	}
	return -1;
}

static void grant(pass *p, size_t i, int n)
{
	const gb_adm_input *in = p->in;
	p->granted[i] += n;
	for (size_t r = 0; r < in->nres; r++) {
		int u = n * in->dem[i].per[r];
		p->used[r] += u;
		p->tused[p->tix[i] * in->nres + r] += u;
	}
}

static void fill(pass *p)
{
	const gb_adm_input *in = p->in;
	for (;;) {
		long best = -1;
		for (size_t i = 0; i < in->ndem; i++) {
			if (p->blocked[i] >= 0 || step_of(p, i) == 0)
				continue;
			if (best < 0 || order(p, i, (size_t)best) < 0)
				best = (long)i;
		}
		if (best < 0)
			return;
		size_t i = (size_t)best;
		int n = step_of(p, i);
		long r = lacks(p, i, n);
		if (r < 0) {
			grant(p, i, n);
			continue;
		}
		p->blocked[i] = (int)r;
		/* Reserve what it lacks against the lower classes: every
		 * resource where it does not fit. */
		const gb_adm_demand *d = &in->dem[i];
		for (size_t k = 0; k < in->nres; k++) {
			if (d->per[k] <= 0 ||
			    p->cap[k] - p->used[k] >= n * d->per[k])
				continue;
			double sh = dominant(p, i);
			if (!p->reserved[k] || p->reserve[k] < d->priority) {
				p->reserved[k] = 1;
				p->reserve[k] = d->priority;
				p->rshare[k] = sh;
			} else if (p->reserve[k] == d->priority &&
			           sh < p->rshare[k]) {
				p->rshare[k] = sh;
			}
		}
	}
}

typedef struct cand {
	size_t i;
	gb_adm_why why;
	double over;   /* its team's use of the resource / entitlement */
} cand;

static const pass *sort_pass;

static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	const gb_adm_demand *dx = &sort_pass->in->dem[x->i];
	const gb_adm_demand *dy = &sort_pass->in->dem[y->i];
	if (dx->priority != dy->priority)
		return dx->priority < dy->priority ? -1 : 1;
	if (x->over != y->over)
		return x->over > y->over ? -1 : 1;
	if (dx->arrival != dy->arrival)
		return dx->arrival > dy->arrival ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i ? 1 : 0;
}

/* Instances of victim v that may still be taken. */
static int takeable(const pass *p, size_t v)
{
	const gb_adm_demand *d = &p->in->dem[v];
	int have = p->granted[v] - d->leaving - p->give[v];
	int floor = d->min > 0 ? d->min : 0;
	if (have <= 0)
		return 0;
	if (d->gang)
		return floor == 0 && p->give[v] == 0 ? have : 0;
	return have > floor ? have - floor : 0;
}

/* Plans preemptions for blocked demand b; appends to out.  It aims at
 * all that b lacks (a reclaim: up to b's team's share) and commits only
 * when at least b's next step is covered. */
static void preempt_for(pass *p, size_t b, gb_adm_result *out,
                        size_t *cap_out)
{
	const gb_adm_input *in = p->in;
	const gb_adm_demand *db = &in->dem[b];
	int n = step_of(p, b);
	int lack = db->count - p->granted[b];
	size_t nres = in->nres;
	size_t bt = p->tix[b];
	int *want = gb_xcalloc(nres, sizeof *want);  /* for all it lacks */
	int *step = gb_xcalloc(nres, sizeof *step);  /* for its next step */
	int any = 0;
	for (size_t r = 0; r < nres; r++) {
		if (db->per[r] <= 0)
			continue;
		int avail = (p->cap[r] - p->used[r]) + p->leaving[r];
		int s = n * db->per[r] - avail;
		if (s <= 0)
			continue;
		if (in->res[r].kind == GB_ADM_TEAM_QUOTA) {
			any = 0;
			break;  /* nobody else's instances free a team quota */
		}
		step[r] = s;
		want[r] = lack * db->per[r] - avail;
		any = 1;
	}
	if (!any)
		goto out;  /* what is leaving covers it, or a team quota */
	cand *c = gb_xmalloc((in->ndem + 1) * sizeof *c);
	size_t nc = 0;
	for (size_t v = 0; v < in->ndem; v++) {
		const gb_adm_demand *dv = &in->dem[v];
		if (v == b || !dv->preemptible || dv->priority > db->priority ||
		    takeable(p, v) == 0)
			continue;
		size_t r;
		for (r = 0; r < nres; r++)
			if (step[r] > 0 && dv->per[r] > 0)
				break;
		if (r == nres)
			continue;
		double ent = entitled(p, p->tix[v], r);
		double use = p->tused[p->tix[v] * nres + r];
		gb_adm_why why = GB_ADM_PRIORITY;
		if (dv->priority == db->priority) {
			/* a loan is taken back when the move leaves b's team
			 * no further over its share than v's team stays: so
			 * the instance never moves back (no ping-pong), and
			 * an instance larger than a share still moves */
			double bent = entitled(p, bt, r);
			int give = dv->gang ? takeable(p, v) : 1;
			double bsh = bent > 0 ? (p->tused[bt * nres + r] +
			                         (double)n * db->per[r]) / bent
			                      : 1e300;
			double vsh = ent > 0 ? (use - (double)give * dv->per[r]) /
			                               ent
			                     : 1e300;
			if (p->tix[v] == bt || use <= ent + 1e-9 ||
			    bsh > vsh + 1e-9)
				continue;
			why = GB_ADM_RECLAIM;
		}
		c[nc].i = v;
		c[nc].why = why;
		c[nc].over = ent > 0 ? use / ent : use;
		nc++;
	}
	sort_pass = p;
	qsort(c, nc, sizeof *c, cand_cmp);
	/* take, tentatively */
	int *take = gb_xcalloc(in->ndem + 1, sizeof *take);
	int *tuse = gb_xmalloc((p->nteams * nres + 1) * sizeof *tuse);
	memcpy(tuse, p->tused, p->nteams * nres * sizeof *tuse);
	for (size_t k = 0; k < nc; k++) {
		size_t v = c[k].i;
		const gb_adm_demand *dv = &in->dem[v];
		size_t vt = p->tix[v];
		int left = takeable(p, v);
		while (left > 0) {
			int helps = 0;
			for (size_t r = 0; r < nres; r++) {
				if (want[r] <= 0 || dv->per[r] <= 0)
					continue;
				if (c[k].why == GB_ADM_RECLAIM &&
				    tuse[vt * nres + r] <=
				            entitled(p, vt, r) + 1e-9)
					continue;  /* only the borrowed part */
				helps = 1;
			}
			if (!helps)
				break;
			int m = dv->gang ? left : 1;
			take[v] += m;
			left -= m;
			for (size_t r = 0; r < nres; r++) {
				int u = m * dv->per[r];
				want[r] -= u;
				step[r] -= u;
				tuse[vt * nres + r] -= u;
			}
		}
	}
	int covered = 1;
	for (size_t r = 0; r < nres; r++)
		if (step[r] > 0)
			covered = 0;
	for (size_t k = 0; covered && k < nc; k++) {
		size_t v = c[k].i;
		if (take[v] == 0)
			continue;
		const gb_adm_demand *dv = &in->dem[v];
		size_t r;
		for (r = 0; r < nres; r++)
			if (dv->per[r] > 0 && db->per[r] > 0 &&
			    p->cap[r] - p->used[r] < n * db->per[r])
				break;
		if (r == nres)
			r = (size_t)(p->blocked[b] >= 0 ? p->blocked[b] : 0);
		p->give[v] += take[v];
		for (size_t q = 0; q < nres; q++)
			p->leaving[q] += take[v] * dv->per[q];
		if (out->npreempt == *cap_out) {
			*cap_out = *cap_out ? *cap_out * 2 : 8;
			out->preempt = gb_xrealloc(out->preempt,
			        *cap_out * sizeof *out->preempt);
		}
		gb_adm_preemption *e = &out->preempt[out->npreempt++];
		memset(e, 0, sizeof *e);
		e->victim = v;
		e->count = take[v];
		e->beneficiary = b;
		e->resource = r;
		e->why = c[k].why;
		if (c[k].why == GB_ADM_PRIORITY)
			snprintf(e->reason, sizeof e->reason,
			         "%d instance(s) preempted on %s for pool %s "
			         "(priority %d over %d)",
			         take[v], in->res[r].name, db->pool,
			         db->priority, dv->priority);
		else
			snprintf(e->reason, sizeof e->reason,
			         "%d instance(s) reclaimed on %s for pool %s: "
			         "team %s is over its share, team %s under",
			         take[v], in->res[r].name, db->pool,
			         dv->team ? dv->team : "-",
			         db->team ? db->team : "-");
	}
	free(take);
	free(tuse);
	free(c);
out:
	free(want);
	free(step);
}

static const pass *queue_pass;

static int queue_cmp(const void *a, const void *b)
{
	return order(queue_pass, *(const size_t *)a, *(const size_t *)b);
}

static void describe(const pass *p, gb_adm_result *out, size_t *idx,
                     size_t k)
{
	const gb_adm_input *in = p->in;
	gb_adm_wait *w = &out->queue[k];
	size_t i = idx[k];
	const gb_adm_demand *d = &in->dem[i];
	size_t len = 0;
	char *s = w->reason;
	size_t cap = sizeof w->reason;
	int n = step_of(p, i);
	if (w->waits_for >= 0) {
		size_t r = (size_t)w->waits_for;
		int fr = p->cap[r] - p->used[r];
		int need = n * d->per[r];
		len += (size_t)snprintf(s + len, cap - len,
		        "position %d, waits for %s (%d of %d free, needs %d%s%s)",
		        w->position, in->res[r].name, fr < 0 ? 0 : fr,
		        p->cap[r], need,
		        fr >= need ? "; held for a higher priority" : "",
		        w->preempting ? "; preemption under way" : "");
	} else {
		len += (size_t)snprintf(s + len, cap - len, "position %d",
		                        w->position);
	}
	if (k > 0 && len < cap) {
		len += (size_t)snprintf(s + len, cap - len, "; ahead:");
		for (size_t j = 0; j < k && j < 3 && len < cap; j++)
			len += (size_t)snprintf(s + len, cap - len, "%s %s",
			                        j ? "," : "",
			                        in->dem[idx[j]].pool);
		if (k > 3 && len < cap)
			snprintf(s + len, cap - len, " and %zu more", k - 3);
	}
}

void gb_admission_decide(const gb_adm_input *in, gb_adm_result *out)
{
	size_t nres = in->nres, ndem = in->ndem;
	pass p;
	memset(&p, 0, sizeof p);
	memset(out, 0, sizeof *out);
	p.in = in;
	size_t tcap = ndem + in->nteams + 1;
	p.team = gb_xcalloc(tcap, sizeof *p.team);
	p.weight = gb_xcalloc(tcap, sizeof *p.weight);
	p.tix = gb_xcalloc(ndem + 1, sizeof *p.tix);
	for (size_t i = 0; i < ndem; i++)
		p.tix[i] = team_index(&p, in->dem[i].team);
	p.cap = gb_xcalloc(nres + 1, sizeof *p.cap);
	p.used = gb_xcalloc(nres + 1, sizeof *p.used);
	p.leaving = gb_xcalloc(nres + 1, sizeof *p.leaving);
	p.reserve = gb_xcalloc(nres + 1, sizeof *p.reserve);
	p.reserved = gb_xcalloc(nres + 1, sizeof *p.reserved);
	p.rshare = gb_xcalloc(nres + 1, sizeof *p.rshare);
	p.tused = gb_xcalloc(p.nteams * nres + 1, sizeof *p.tused);
	p.granted = gb_xcalloc(ndem + 1, sizeof *p.granted);
	p.give = gb_xcalloc(ndem + 1, sizeof *p.give);
	p.blocked = gb_xcalloc(ndem + 1, sizeof *p.blocked);
	for (size_t r = 0; r < nres; r++)
		p.cap[r] = in->res[r].capacity > 0 ? in->res[r].capacity : 0;
	for (size_t i = 0; i < ndem; i++) {
		const gb_adm_demand *d = &in->dem[i];
		int held = d->held > 0 ? d->held : 0;
		p.blocked[i] = -1;
		grant(&p, i, held);
		for (size_t r = 0; r < nres; r++)
			p.leaving[r] += (d->leaving > 0 ? d->leaving : 0) *
			                d->per[r];
	}
	fill(&p);
	p.ent = gb_xcalloc(p.nteams * nres + 1, sizeof *p.ent);
	water_fill(&p);

	/* the queue, in order */
	size_t *idx = gb_xcalloc(ndem + 1, sizeof *idx);
	size_t nq = 0;
	for (size_t i = 0; i < ndem; i++)
		if (step_of(&p, i) > 0)
			idx[nq++] = i;
	queue_pass = &p;
	qsort(idx, nq, sizeof *idx, queue_cmp);

	/* preemptions, head first */
	size_t pcap = 0;
	for (size_t k = 0; k < nq; k++)
		if (p.blocked[idx[k]] >= 0)
			preempt_for(&p, idx[k], out, &pcap);

	out->queue = gb_xcalloc(nq + 1, sizeof *out->queue);
	out->nqueue = nq;
	for (size_t k = 0; k < nq; k++) {
		gb_adm_wait *w = &out->queue[k];
		w->demand = idx[k];
		w->position = (int)k + 1;
		w->waits_for = p.blocked[idx[k]];
		for (size_t e = 0; e < out->npreempt; e++)
			if (out->preempt[e].beneficiary == idx[k])
				w->preempting = 1;
		describe(&p, out, idx, k);
	}
	out->granted = p.granted;
	out->used = p.used;
	free(idx);
	free(p.team);
	free(p.weight);
	free(p.tix);
	free(p.cap);
	free(p.leaving);
	free(p.reserve);
	free(p.reserved);
	free(p.rshare);
	free(p.tused);
	free(p.give);
	free(p.blocked);
	free(p.ent);
}

void gb_admission_free(gb_adm_result *r)
{
	if (!r)
		return;
	free(r->granted);
	free(r->queue);
	free(r->preempt);
	free(r->used);
	memset(r, 0, sizeof *r);
}
