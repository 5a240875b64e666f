/*
 * billing.c -- the true bill: one entry per allocation, priced at launch
 * (on-demand or spot price of the type in that region/zone), charged from
 * the moment the create was accepted until the terminate/delete was
 * accepted or the instance was reclaimed, and at least the cloud's
 * minimum billed time (scenario key billing.<cloud>.minimum_s, as it was
 * at launch).  Entries outlive the instance
 * records; beyond a cap the oldest finished ones are folded into a
 * per-cloud "archived" sum so memory stays bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define SIM_MAX_BILLS 200000

static void bill_free(sim_bill *b)
{
	free(b->id);
	free(b->region);
	free(b->zone);
	free(b->type);
	free(b);
}

static double bill_seconds(const sim_bill *b, int64_t now)
{
	int64_t end = b->ended ? b->ended : now;
	return end > b->started ? (double)(end - b->started) / 1000.0 : 0.0;
}

/* What is billed: the lifetime, or the minimum when it lived less (a live
 * one too: it cannot cost less than the minimum any more). */
static double billed_seconds(const sim_bill *b, int64_t now)
{
	double s = bill_seconds(b, now);
	return s < (double)b->min_s ? (double)b->min_s : s;
}

static void fold_old(int64_t now)
{
	size_t k = 0;
	size_t target = SIM_MAX_BILLS * 3 / 4;
	size_t excess = sim_g.nbills - target;
	for (size_t i = 0; i < sim_g.nbills; i++) {
		sim_bill *b = sim_g.bills[i];
		if (excess > 0 && b->ended && !b->inst) {
			double s = bill_seconds(b, now);
			sim_g.archived_seconds[b->cloud] += s;
			sim_g.archived_cost[b->cloud] +=
				billed_seconds(b, now) * b->price / 3600.0;
			sim_g.archived_n[b->cloud]++;
			bill_free(b);
			excess--;
			continue;
		}
		sim_g.bills[k++] = b;
	}
	sim_g.nbills = k;
}

void sim_bill_add(sim_inst *in)
{
	sim_bill *b;
	if (in->bill)
		return;
	if (sim_g.nbills >= SIM_MAX_BILLS)
		fold_old(sim_now());
	if (sim_g.nbills == sim_g.capbills) {
		sim_g.capbills = sim_g.capbills ? sim_g.capbills * 2 : 256;
		sim_g.bills = gb_xrealloc(sim_g.bills,
		                          sim_g.capbills * sizeof(*sim_g.bills));
	}
	b = gb_xcalloc(1, sizeof(*b));
	b->id = gb_xstrdup(in->cloud == SIM_AWS || in->cloud == SIM_LAMBDA
	                           ? in->id
	                           : in->name);
	b->cloud = in->cloud;
	b->region = gb_xstrdup(in->region);
	b->zone = gb_xstrdup(in->zone ? in->zone : "");
	b->type = gb_xstrdup(in->type);
	b->spot = in->spot;
	b->price = in->price;
	b->started = in->t_create;
	b->min_s = sim_g.sc.bill_min_s[in->cloud];
	b->inst = in;
	in->bill = b;
	sim_g.bills[sim_g.nbills++] = b;
}

void sim_bill_end(sim_inst *in, int64_t now)
{
	if (in->bill && !in->bill->ended)
		in->bill->ended = now;
	/* a later re-allocation (Azure re-PUT of a failed VM) opens a new
	 * entry */
	if (in->bill)
		in->bill->inst = NULL;
	in->bill = NULL;
}

void sim_bill_detach(sim_inst *in)
{
	if (in->bill)
		in->bill->inst = NULL;
	in->bill = NULL;
}

void sim_bill_free_all(void)
{
	for (size_t i = 0; i < sim_g.nbills; i++) {
		if (sim_g.bills[i]->inst)
			sim_g.bills[i]->inst->bill = NULL;
		bill_free(sim_g.bills[i]);
	}
	free(sim_g.bills);
	sim_g.bills = NULL;
	sim_g.nbills = sim_g.capbills = 0;
	memset(sim_g.archived_cost, 0, sizeof(sim_g.archived_cost));
	memset(sim_g.archived_seconds, 0, sizeof(sim_g.archived_seconds));
	memset(sim_g.archived_n, 0, sizeof(sim_g.archived_n));
}

static double round6(double x)
{
	return (double)(int64_t)(x * 1e6 + (x >= 0 ? 0.5 : -0.5)) / 1e6;
}

json_t *sim_billing_json(void)
{
	json_t *o = json_object();
	for (int c = 0; c < SIM_NCLOUD; c++)
		json_object_set_new(o, sim_cloud_name(c),
		                    json_pack("{s:I}", "minimum_s",
		                              (json_int_t)sim_g.sc.bill_min_s[c]));
	return o;
}

json_t *sim_bill_json(int64_t now)
{
	json_t *root = json_object(), *arr = json_array(), *byc = json_object();
	double total = 0, ctot[SIM_NCLOUD] = {0};
	for (size_t i = 0; i < sim_g.nbills; i++) {
		const sim_bill *b = sim_g.bills[i];
		json_t *e = json_object();
		char ts[40];
		double secs = bill_seconds(b, now);
		double billed = billed_seconds(b, now);
		double cost = billed * b->price / 3600.0;
		json_object_set_new(e, "id", json_string(b->id));
		json_object_set_new(e, "cloud",
		                    json_string(sim_cloud_name(b->cloud)));
		json_object_set_new(e, "region", json_string(b->region));
		json_object_set_new(e, "zone", json_string(b->zone));
		json_object_set_new(e, "type", json_string(b->type));
		json_object_set_new(e, "capacity",
		                    json_string(b->spot ? "spot" : "on-demand"));
		json_object_set_new(e, "price_per_hour", json_real(b->price));
		json_object_set_new(e, "started",
		                    json_string(sim_time_ms(b->started, ts,
		                                            sizeof(ts))));
		json_object_set_new(e, "ended",
		                    b->ended ? json_string(sim_time_ms(
		                                   b->ended, ts, sizeof(ts)))
		                             : json_null());
		json_object_set_new(e, "seconds", json_real(round6(secs)));
		json_object_set_new(e, "billed_seconds",
		                    json_real(round6(billed)));
		json_object_set_new(e, "cost", json_real(round6(cost)));
		json_array_append_new(arr, e);
		total += cost;
		ctot[b->cloud] += cost;
	}
	for (int c = 0; c < SIM_NCLOUD; c++) {
		total += sim_g.archived_cost[c];
		ctot[c] += sim_g.archived_cost[c];
		json_object_set_new(byc, sim_cloud_name(c),
		                    json_real(round6(ctot[c])));
	}
	json_object_set_new(root, "currency", json_string("USD"));
	json_object_set_new(root, "billing", sim_billing_json());
	json_object_set_new(root, "instances", arr);
	json_object_set_new(root, "by_cloud", byc);
	int64_t narch = 0;
	for (int c = 0; c < SIM_NCLOUD; c++)
		narch += sim_g.archived_n[c];
	if (narch) {
		json_t *a = json_object();
		for (int c = 0; c < SIM_NCLOUD; c++)
			json_object_set_new(
				a, sim_cloud_name(c),
				json_pack("{s:I,s:f,s:f}", "count",
				          (json_int_t)sim_g.archived_n[c],
				          "seconds", sim_g.archived_seconds[c],
				          "cost", round6(sim_g.archived_cost[c])));
		json_object_set_new(root, "archived", a);
	}
	json_object_set_new(root, "total", json_real(round6(total)));
	return root;
}
