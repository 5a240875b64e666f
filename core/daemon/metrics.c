/* metrics.c -- /metrics in the Prometheus text format. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "daemon.h"
#include "log.h"

static const double api_bounds[GB_API_LAT_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
	INFINITY,
};

/* Long polls wait up to 60 s (GET /v1/events?wait=N). */
static const double poll_bounds[GB_API_POLL_BUCKETS] = {
	0.1, 1, 5, 15, 30, 60, INFINITY,
};

void gb_metrics_api(gb_daemon *d, double secs, unsigned status,
                    int long_poll)
{
	uint64_t us = secs > 0 ? (uint64_t)(secs * 1e6 + 0.5) : 0;
	const double *bounds = long_poll ? poll_bounds : api_bounds;
	uint64_t *lat = long_poll ? d->poll_lat : d->api_lat;
	int nb = long_poll ? GB_API_POLL_BUCKETS : GB_API_LAT_BUCKETS;
	/* buckets first and the count last: a render, which reads the count
	 * first, never shows more requests than its +Inf bucket holds */
	for (int i = 0; i < nb; i++)
		if (secs <= bounds[i])
			__atomic_fetch_add(&lat[i], 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(long_poll ? &d->poll_lat_sum_us : &d->api_lat_sum_us,
	                   us, __ATOMIC_RELAXED);
	if (status >= 100 && status < 600)
		__atomic_fetch_add(&d->api_by_class[status / 100], 1,
		                   __ATOMIC_RELAXED);
	__atomic_fetch_add(long_poll ? &d->poll_count : &d->api_count, 1,
	                   __ATOMIC_RELEASE);
}

static unsigned long long ld(const uint64_t *p)
{
	return (unsigned long long)__atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void le(gb_buf *b, double v)
{
	if (isinf(v))
		gb_buf_puts(b, "+Inf");
	else
		gb_buf_printf(b, "%g", v);
}

/* Label values are names we validated ([a-z0-9._-]); escape anyway. */
static void lv(gb_buf *b, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			gb_buf_putc(b, '\\');
		if (*s == '\n') {
			gb_buf_puts(b, "\\n");
			continue;
		}
		gb_buf_putc(b, *s);
	}
}

/* The store lists pools sorted by name: find an instance's pool by
 * binary search. */
static int pool_name_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const gb_pool_row *)elem)->name);
}

/* The usage report's pools[] summed by team: bought, measured, idle
 * and unmeasured GPU-hours.  /metrics stays bounded by the teams (CI
 * pools come and go by the thousand); per-pool figures are `gpubroker
 * usage`'s and the API's. */
typedef struct team_use {
	const char *team; /* borrowed from the report */
	double bought, measured, idle, unmeasured;
} team_use;

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* One gauge per team; what: 0 bought, 1 utilisation, 2 idle,
 * 3 unmeasured (hours -> seconds, Prometheus's base unit). */
static void usage_gauge(gb_buf *b, const team_use *u, size_t n,
                        const char *name, const char *help, int what)
{
	gb_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (size_t i = 0; i < n; i++) {
		double x;
		if (what == 1 && !(u[i].measured > 0))
			continue; /* nothing measured: no utilisation */
		x = what == 0 ? u[i].bought * 3600
		    : what == 1 ? 1 - u[i].idle / u[i].measured
		    : what == 2 ? u[i].idle * 3600 : u[i].unmeasured * 3600;
		gb_buf_printf(b, "%s{team=\"", name);
		lv(b, u[i].team);
		gb_buf_printf(b, "\"} %.4f\n", x);
	}
}

/* The usage report of the last 7 days by team (gb_engine_usage).  It
 * reads every heartbeat sample of the week, and every heartbeat changes
 * the state (which renders the store's part again), so it is computed
 * at most once a minute (USAGE_EVERY_MS) and reused meanwhile; caller
 * holds render_mu, which guards the copy. */
#define USAGE_EVERY_MS 60000
static char *usage_text;
static int64_t usage_at_ms; /* monotonic */

static void render_usage(gb_daemon *d, gb_buf *b)
{
	int64_t now = gb_now_ms(), mono = gb_mono_ms();
	gb_buf u_b = GB_BUF_INIT;
	json_t *u, *pools;
	if (usage_text && mono - usage_at_ms < USAGE_EVERY_MS) {
		gb_buf_puts(b, usage_text);
		return;
	}
	u = gb_engine_usage(d->eng, "hour", NULL, NULL, now - 7 * 86400000LL,
	                    now);
	if (!u)
		return; /* the store failed: the last figures are gone too */
	pools = json_object_get(u, "pools");
	{
		/* a few teams: found by a linear search */
		team_use *uses = gb_xcalloc(json_array_size(pools) + 1,
		                            sizeof(*uses));
		size_t i, k, nu = 0;
		json_t *p;
		json_array_foreach(pools, i, p) {
			const char *t = json_string_value(json_object_get(p, "team"));
			t = t ? t : "unknown";
			for (k = 0; k < nu && strcmp(uses[k].team, t) != 0; k++)
				;
			if (k == nu)
				uses[nu++].team = t;
			uses[k].bought += num(p, "gpu_hours");
			uses[k].measured += num(p, "measured_gpu_hours");
			uses[k].idle += num(p, "idle_gpu_hours");
			uses[k].unmeasured += num(p, "unmeasured_gpu_hours");
		}
		usage_gauge(&u_b, uses, nu, "gpubroker_usage_gpu_seconds",
		            "GPU-seconds bought in the last 7 days, by team (/ "
		            "3600: GPU-hours; by pool: gpubroker usage).", 0);
		usage_gauge(&u_b, uses, nu, "gpubroker_usage_gpu_util", "Mean "
		            "GPU utilisation (0..1) of the measured GPU-hours of "
		            "the last 7 days, by team (none: nothing measured).", 1);
		usage_gauge(&u_b, uses, nu, "gpubroker_usage_idle_gpu_seconds",
		            "Measured GPU-seconds x (1 - utilisation) in the last "
		            "7 days, by team.", 2);
		usage_gauge(&u_b, uses, nu,
		            "gpubroker_usage_unmeasured_gpu_seconds", "GPU-seconds "
		            "bought in the last 7 days that no heartbeat covers "
		            "(not counted as idle), by team.", 3);
		free(uses);
	}
	json_decref(u);
	free(usage_text);
	usage_text = gb_buf_take(&u_b);
	usage_at_ms = mono;
	if (usage_text)
		gb_buf_puts(b, usage_text);
}

/* An instance's states before it is terminated (gb_inst_row.state). */
static const char *const live_states[] = {
	"pending", "running", "stopping", "preempted", "failed", "terminating",
};

/* NAME{pool="...",team="..."} v */
/* Each configured team's month against its budget (gb_engine_budgets):
 * budget (0 = none), spent, projection to the month's end, and the
 * warning fraction. */
static void render_budgets(gb_daemon *d, gb_buf *b)
{
	static const struct {
		const char *name, *key, *help;
	} series[] = {
		{"gpubroker_team_budget_usd", "budget", "The team's monthly "
		 "budget (teams[].monthly_budget; 0 = none)."},
		{"gpubroker_team_spend_month_usd", "spent", "What the team's "
		 "instances cost this month (UTC), as gpubroker cost bills."},
		{"gpubroker_team_spend_projected_usd", "projected", "This "
		 "month's spend plus what the team runs now until the month's "
		 "end (or its pools' TTL)."},
		{"gpubroker_team_budget_warn_fraction", "warn_fraction", "The share of "
		 "the budget spent at which a budget-warning event is written "
		 "(teams[].budget_warn_at)."},
	};
	/* NULL when the store failed: the series are left out (a scrape
	 * then shows no budget rather than a month of $0) */
	json_t *a = gb_engine_budgets(d->eng, NULL);
	for (size_t k = 0; k < sizeof(series) / sizeof(*series); k++) {
		size_t i;
		json_t *t;
		gb_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n",
		              series[k].name, series[k].help, series[k].name);
		json_array_foreach(a, i, t) {
			gb_buf_printf(b, "%s{team=\"", series[k].name);
			lv(b, json_string_value(json_object_get(t, "team")));
			gb_buf_printf(b, "\"} %.4f\n", json_number_value(
			                               json_object_get(t, series[k].key)));
		}
	}
	json_decref(a);
}

/* What the store holds: pools, instances, what they cost per hour, the
 * usage of the last 7 days.  Malloc'd text, caller frees. */
static char *render_store(gb_daemon *d)
{
	gb_buf b = GB_BUF_INIT;
	gb_pool_row *pools = NULL;
	gb_inst_row *rows = NULL;
	size_t np = 0, n = 0;
	json_t *inst_counts = json_object(), *team_cost = json_object();
	int *running;             /* per pool (pools[] order) */
	const char *k;
	json_t *v;
	int pools_by[3] = {0, 0, 0};

	/* unreadable: logged (the gauges below then count nothing) */
	if (gb_store_pool_list(d->store, NULL, 0, &pools, &np) != 0)
		gb_log(GB_LOG_ERROR, "metrics", "%s", gb_store_errmsg(d->store));
	for (size_t i = 0; i < np; i++)
		pools_by[strcmp(pools[i].state, "active") == 0 ? 0 : 1]++;
	if (gb_store_inst_list(d->store, NULL, 1, &rows, &n) != 0)
		gb_log(GB_LOG_ERROR, "metrics", "%s", gb_store_errmsg(d->store));
	running = gb_xcalloc(np + 1, sizeof(*running));
	/* every series a dashboard plots is there from the start, 0 when
	 * nothing counts: each team the config or a pool names, each live
	 * state on each cloud the daemon drives (a series that went away
	 * would show its last value, or "No data") */
	for (size_t i = 0; i < d->cfg->nteams; i++)
		json_object_set_new(team_cost, d->cfg->teams[i].name,
		                    json_real(0));
	for (size_t i = 0; i < d->cfg->ntokens; i++)
		if (d->cfg->tokens[i].team)
			json_object_set_new(team_cost, d->cfg->tokens[i].team,
			                    json_real(0));
	for (size_t i = 0; i < np; i++)
		if (pools[i].team)
			json_object_set_new(team_cost, pools[i].team, json_real(0));
	for (size_t i = 0; i < d->app.rt.drivers.n; i++)
		for (size_t j = 0; j < sizeof(live_states) / sizeof(*live_states);
		     j++) {
			char key[256];
			snprintf(key, sizeof(key), "%s\x1f%s", live_states[j],
			         d->app.rt.drivers.v[i]->name);
			json_object_set_new(inst_counts, key, json_integer(0));
		}
	for (size_t i = 0; i < n; i++) {
		char key[256];
		json_int_t c;
		const char *team = "unknown";
		snprintf(key, sizeof(key), "%s\x1f%s", rows[i].state, rows[i].cloud);
		c = json_integer_value(json_object_get(inst_counts, key));
		json_object_set_new(inst_counts, key, json_integer(c + 1));
		const gb_pool_row *p = bsearch(rows[i].pool, pools, np,
		                               sizeof(*pools), pool_name_cmp);
		if (p) {
			team = p->team;
			if (strcmp(rows[i].state, "running") == 0)
				running[p - pools]++;
		}
		if (strcmp(rows[i].state, "pending") == 0 ||
		    strcmp(rows[i].state, "running") == 0 ||
		    strcmp(rows[i].state, "terminating") == 0) {
			double cur = json_real_value(json_object_get(team_cost, team));
			json_object_set_new(team_cost, team,
			                    json_real(cur + rows[i].price_per_hour));
		}
	}
	gb_buf_puts(&b, "# HELP gpubroker_up The daemon is serving.\n"
	                "# TYPE gpubroker_up gauge\ngpubroker_up 1\n");
	gb_buf_printf(&b, "# HELP gpubroker_pools Pools by state.\n"
	                  "# TYPE gpubroker_pools gauge\n"
	                  "gpubroker_pools{state=\"active\"} %d\n"
	                  "gpubroker_pools{state=\"destroying\"} %d\n",
	              pools_by[0], pools_by[1]);
	/* pools by team and state: bounded by the teams, per pool detail is
	 * `gpubroker status`'s and the API's */
	gb_buf_puts(&b, "# HELP gpubroker_team_pools Pools by team and "
	                "state.\n# TYPE gpubroker_team_pools gauge\n");
	{
		json_t *by = json_object();
		for (size_t i = 0; i < np; i++) {
			char key[256];
			snprintf(key, sizeof(key), "%s\x1f%s",
			         pools[i].team ? pools[i].team : "unknown",
			         strcmp(pools[i].state, "active") == 0 ? "active"
			                                               : "destroying");
			json_object_set_new(by, key, json_integer(
				json_integer_value(json_object_get(by, key)) + 1));
		}
		json_object_foreach(by, k, v) {
			const char *sep = strchr(k, '\x1f');
			gb_buf_puts(&b, "gpubroker_team_pools{team=\"");
			gb_buf_append(&b, k, (size_t)(sep - k));
			gb_buf_printf(&b, "\",state=\"%s\"} %lld\n", sep + 1,
			              (long long)json_integer_value(v));
		}
		json_decref(by);
	}
	gb_buf_puts(&b, "# HELP gpubroker_instances Live instances by state "
	                "and cloud.\n# TYPE gpubroker_instances gauge\n");
	json_object_foreach(inst_counts, k, v) {
		const char *sep = strchr(k, '\x1f');
		gb_buf_puts(&b, "gpubroker_instances{state=\"");
		gb_buf_append(&b, k, (size_t)(sep - k));
		gb_buf_puts(&b, "\",cloud=\"");
		lv(&b, sep + 1);
		gb_buf_printf(&b, "\"} %lld\n", (long long)json_integer_value(v));
	}
	gb_buf_puts(&b, "# HELP gpubroker_cost_per_hour_usd What the "
	                "instances billed now (pending, running and "
	                "terminating) cost per hour, by team.\n"
	                "# TYPE gpubroker_cost_per_hour_usd gauge\n");
	json_object_foreach(team_cost, k, v) {
		gb_buf_puts(&b, "gpubroker_cost_per_hour_usd{team=\"");
		lv(&b, k);
		gb_buf_printf(&b, "\"} %.4f\n", json_real_value(v));
	}
	/* pools short of their desired size, by team (bounded: the alert
	 * names the team; `gpubroker status` names the pools); 0 for every
	 * team the $/h series names */
	gb_buf_puts(&b, "# HELP gpubroker_team_pools_short Active pools "
	                "running fewer instances than they desire, by team.\n"
	                "# TYPE gpubroker_team_pools_short gauge\n");
	{
		json_t *shortby = json_object();
		json_object_foreach(team_cost, k, v)
			json_object_set_new(shortby, k, json_integer(0));
		for (size_t i = 0; i < np; i++) {
			const char *t = pools[i].team ? pools[i].team : "unknown";
			if (strcmp(pools[i].state, "active") != 0 ||
			    running[i] >= pools[i].desired)
				continue;
			json_object_set_new(shortby, t, json_integer(
				json_integer_value(json_object_get(shortby, t)) + 1));
		}
		json_object_foreach(shortby, k, v) {
			gb_buf_puts(&b, "gpubroker_team_pools_short{team=\"");
			lv(&b, k);
			gb_buf_printf(&b, "\"} %lld\n",
			              (long long)json_integer_value(v));
		}
		json_decref(shortby);
	}
	free(running);
	render_budgets(d, &b);
	render_usage(d, &b);
	json_decref(inst_counts);
	json_decref(team_cost);
	gb_pool_list_free(pools, np);
	gb_inst_list_free(rows, n);
	return gb_buf_take(&b);
}

/* The drivers' HTTP figures: each metric one group after its HELP and
 * TYPE (the text format's rule), from one snapshot per driver. */
static void render_drivers(gb_daemon *d, gb_buf *b)
{
	size_t n = 0;
	gb_http_metrics *m = gb_xcalloc(d->app.rt.drivers.n + 1, sizeof(*m));
	const char **name = gb_xcalloc(d->app.rt.drivers.n + 1, sizeof(*name));
	for (size_t i = 0; i < d->app.rt.drivers.n; i++) {
		gb_drv *drv = d->app.rt.drivers.v[i];
		if (!drv->http)
			continue;
		gb_http_metrics_get(drv->http, &m[n]);
		name[n++] = drv->name;
	}
	gb_buf_puts(b, "# HELP gpubroker_driver_request_duration_seconds Driver "
	                "HTTP calls.\n# TYPE gpubroker_driver_request_duration_"
	                "seconds histogram\n");
	for (size_t i = 0; i < n; i++) {
		for (int j = 0; j < GB_HTTP_LAT_BUCKETS; j++) {
			gb_buf_printf(b, "gpubroker_driver_request_duration_seconds_"
			                  "bucket{driver=\"%s\",le=\"", name[i]);
			le(b, gb_http_lat_bounds[j]);
			gb_buf_printf(b, "\"} %llu\n",
			              (unsigned long long)m[i].lat_count[j]);
		}
		gb_buf_printf(b, "gpubroker_driver_request_duration_seconds_sum"
		                  "{driver=\"%s\"} %.6f\n"
		                  "gpubroker_driver_request_duration_seconds_count"
		                  "{driver=\"%s\"} %llu\n",
		              name[i], m[i].lat_sum_s, name[i],
		              (unsigned long long)m[i].requests);
	}
	gb_buf_puts(b, "# HELP gpubroker_driver_calls_total Driver HTTP calls "
	                "by outcome class (after retries).\n"
	                "# TYPE gpubroker_driver_calls_total counter\n");
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c <= GB_ERR_INTERNAL; c++)
			if (m[i].errors[c])
				gb_buf_printf(b, "gpubroker_driver_calls_total{driver="
				                  "\"%s\",class=\"%s\"} %llu\n",
				              name[i],
				              c ? gb_err_class_name((gb_err_class)c) : "ok",
				              (unsigned long long)m[i].errors[c]);
	gb_buf_puts(b, "# HELP gpubroker_driver_retries_total Driver HTTP "
	                "calls sent again after a throttled or transient "
	                "failure.\n"
	                "# TYPE gpubroker_driver_retries_total counter\n");
	for (size_t i = 0; i < n; i++)
		gb_buf_printf(b, "gpubroker_driver_retries_total{driver=\"%s\"} "
		                  "%llu\n", name[i],
		              (unsigned long long)m[i].retries);
	free(m);
	free(name);
}

/* A histogram of the API's counters (metrics.c's atomics). */
static void histogram(gb_buf *b, const char *name, const char *help,
                      const double *bounds, const uint64_t *lat, int nb,
                      const uint64_t *sum_us, const uint64_t *count)
{
	/* the count first (see gb_metrics_api) */
	unsigned long long c = ld(count);
	gb_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help,
	              name);
	for (int i = 0; i < nb; i++) {
		gb_buf_printf(b, "%s_bucket{le=\"", name);
		le(b, bounds[i]);
		gb_buf_printf(b, "\"} %llu\n", ld(&lat[i]));
	}
	gb_buf_printf(b, "%s_sum %.6f\n%s_count %llu\n", name,
	              (double)ld(sum_us) / 1e6, name, c);
}

/* What the daemon counts in memory: requests, passes, driver calls.
 * Cheap (no store, a few dozen lines), so written for every request. */
static void render_live(gb_daemon *d, gb_buf *b)
{
	gb_engine_stats st;
	double rsum, rlast;
	unsigned long long rcount, rheld, rskip, ttl, idle;
	unsigned long long as_up[3], as_down[3], as_refused[3];
	histogram(b, "gpubroker_api_request_duration_seconds", "API latency "
	          "(long polls that waited for an event are in "
	          "gpubroker_api_long_poll_duration_seconds).", api_bounds,
	          d->api_lat, GB_API_LAT_BUCKETS, &d->api_lat_sum_us,
	          &d->api_count);
	histogram(b, "gpubroker_api_long_poll_duration_seconds", "Long polls "
	          "(GET /v1/events?wait=N) that waited for an event: how long "
	          "they waited.", poll_bounds, d->poll_lat, GB_API_POLL_BUCKETS,
	          &d->poll_lat_sum_us, &d->poll_count);
	gb_buf_puts(b, "# HELP gpubroker_api_requests_total API requests by "
	                "status class.\n# TYPE gpubroker_api_requests_total "
	                "counter\n");
	for (int c = 1; c <= 5; c++)
		gb_buf_printf(b, "gpubroker_api_requests_total{code=\"%dxx\"} %llu\n",
		              c, ld(&d->api_by_class[c]));
	/* copied under mmu, written outside it: a thread preempted while
	 * holding a lock the other 49 want is a p99 */
	pthread_mutex_lock(&d->mmu);
	rsum = d->recon_sum_s;
	rlast = d->recon_last_s;
	rcount = (unsigned long long)d->recon_count;
	rheld = (unsigned long long)d->pools_held;
	rskip = (unsigned long long)d->pools_skipped;
	ttl = (unsigned long long)d->ttl_destroys;
	idle = (unsigned long long)d->idle_destroys;
	for (int k = 0; k < 3; k++) {
		as_up[k] = (unsigned long long)d->autoscale_up[k];
		as_down[k] = (unsigned long long)d->autoscale_down[k];
		as_refused[k] = (unsigned long long)d->autoscale_refused[k];
	}
	pthread_mutex_unlock(&d->mmu);
	gb_buf_printf(b, "# HELP gpubroker_reconcile_duration_seconds "
	                  "Reconcile passes.\n"
	                  "# TYPE gpubroker_reconcile_duration_seconds summary\n"
	                  "gpubroker_reconcile_duration_seconds_sum %.6f\n"
	                  "gpubroker_reconcile_duration_seconds_count %llu\n"
	                  "# HELP gpubroker_reconcile_last_duration_seconds The "
	                  "last pass.\n"
	                  "# TYPE gpubroker_reconcile_last_duration_seconds gauge\n"
	                  "gpubroker_reconcile_last_duration_seconds %.6f\n",
	              rsum, rcount, rlast);
	gb_buf_printf(b, "# HELP gpubroker_reconcile_pools The pools the last "
	                  "pass reconciled, and of those the steady ones whose "
	                  "converge it skipped.\n"
	                  "# TYPE gpubroker_reconcile_pools gauge\n"
	                  "gpubroker_reconcile_pools{converge=\"done\"} %llu\n"
	                  "gpubroker_reconcile_pools{converge=\"skipped\"} "
	                  "%llu\n",
	              rheld - rskip, rskip);
	gb_buf_printf(b, "# HELP gpubroker_teardowns_total Pools destroyed "
	                  "by the reconciler.\n"
	                  "# TYPE gpubroker_teardowns_total counter\n"
	                  "gpubroker_teardowns_total{reason=\"ttl\"} %llu\n"
	                  "gpubroker_teardowns_total{reason=\"idle\"} %llu\n",
	              ttl, idle);
	gb_buf_puts(b, "# HELP gpubroker_autoscale_decisions_total Autoscale "
	               "decisions that changed a pool's size, and scale-ups "
	               "refused (quota, budget), by the pool's purpose.\n"
	               "# TYPE gpubroker_autoscale_decisions_total counter\n");
	for (int k = 0; k < 3; k++)
		gb_buf_printf(b, "gpubroker_autoscale_decisions_total{action="
		                 "\"up\",purpose=\"%s\"} %llu\n"
		                 "gpubroker_autoscale_decisions_total{action="
		                 "\"down\",purpose=\"%s\"} %llu\n"
		                 "gpubroker_autoscale_decisions_total{action="
		                 "\"refused\",purpose=\"%s\"} %llu\n",
		              gb_purpose_name((gb_purpose)k), as_up[k],
		              gb_purpose_name((gb_purpose)k), as_down[k],
		              gb_purpose_name((gb_purpose)k), as_refused[k]);
	gb_engine_stats_get(d->eng, &st);
	gb_buf_printf(b, "# HELP gpubroker_failovers_total Capacity/quota "
	                  "failovers to the next candidate.\n"
	                  "# TYPE gpubroker_failovers_total counter\n"
	                  "gpubroker_failovers_total %llu\n"
	                  "# HELP gpubroker_preemptions_total Spot instances "
	                  "reclaimed.\n# TYPE gpubroker_preemptions_total counter\n"
	                  "gpubroker_preemptions_total %llu\n"
	                  "# HELP gpubroker_gc_total Leaked instances found by "
	                  "gc.\n# TYPE gpubroker_gc_total counter\n"
	                  "gpubroker_gc_total{action=\"terminated\"} %llu\n"
	                  "gpubroker_gc_total{action=\"adopted\"} %llu\n"
	                  "# HELP gpubroker_gc_listings_total (driver, region) "
	                  "listings the gc looked through: made for it, or "
	                  "reused from the same pass's refresh.\n"
	                  "# TYPE gpubroker_gc_listings_total counter\n"
	                  "gpubroker_gc_listings_total{source=\"listed\"} %llu\n"
	                  "gpubroker_gc_listings_total{source=\"reused\"} %llu\n"
	                  "# HELP gpubroker_rolled_back_instances_total "
	                  "Instances a partial colocated create made and the "
	                  "engine deleted again (each billed the provider's "
	                  "minimum).\n"
	                  "# TYPE gpubroker_rolled_back_instances_total counter\n"
	                  "gpubroker_rolled_back_instances_total %llu\n",
	              (unsigned long long)st.failovers,
	              (unsigned long long)st.preemptions,
	              (unsigned long long)st.gc_terminated,
	              (unsigned long long)st.gc_adopted,
	              (unsigned long long)st.gc_listed,
	              (unsigned long long)st.gc_reused,
	              (unsigned long long)st.rolled_back);
	render_drivers(d, b);
	gb_api_metrics(d, b);
	{
		int64_t bytes, avail;
		unsigned long long pa, pe, ph;
		pthread_mutex_lock(&d->mmu);
		ph = (unsigned long long)d->pruned_heartbeats;
		bytes = d->state_bytes;
		avail = d->state_free_bytes;
		pa = (unsigned long long)d->pruned_audit;
		pe = (unsigned long long)d->pruned_events;
		pthread_mutex_unlock(&d->mmu);
		gb_buf_printf(b,
			"# HELP gpubroker_state_bytes The state database on disk "
			"(with its -wal and -shm files), as of the last reconcile "
			"pass.\n# TYPE gpubroker_state_bytes gauge\n"
			"gpubroker_state_bytes %lld\n"
			"# HELP gpubroker_state_size_warning_bytes "
			"daemon.state_size_warning (0: none).\n"
			"# TYPE gpubroker_state_size_warning_bytes gauge\n"
			"gpubroker_state_size_warning_bytes %lld\n"
			"# HELP gpubroker_state_disk_free_bytes What the state's "
			"filesystem has left (-1: unknown).\n"
			"# TYPE gpubroker_state_disk_free_bytes gauge\n"
			"gpubroker_state_disk_free_bytes %lld\n"
			"# HELP gpubroker_retention_deleted_total Rows deleted "
			"past their retention.\n"
			"# TYPE gpubroker_retention_deleted_total counter\n"
			"gpubroker_retention_deleted_total{table=\"audit\"} %llu\n"
			"gpubroker_retention_deleted_total{table=\"events\"} %llu\n"
			"gpubroker_retention_deleted_total{table=\"heartbeats\"} "
			"%llu\n",
			(long long)bytes, (long long)d->cfg->state_size_warning,
			(long long)avail, pa, pe, ph);
	}
	{
		/* which pools this replica holds (a shared store's leases) */
		gb_strv held = {NULL, 0};
		int leader;
		/* only a shared store has leases; the list takes the store's
		 * lock, which a reconcile pass may hold for a while */
		if (gb_store_is_shared(d->store) &&
		    gb_store_lease_list(d->store, &held) != 0)
			gb_log(GB_LOG_ERROR, "metrics", "%s",
			       gb_store_errmsg(d->store));
		pthread_mutex_lock(&d->mmu);
		leader = d->leader;
		pthread_mutex_unlock(&d->mmu);
		gb_buf_printf(b, "# HELP gpubroker_replica_leader 1 while this "
		                  "replica runs the orphan gc (always 1 on SQLite).\n"
		                  "# TYPE gpubroker_replica_leader gauge\n"
		                  "gpubroker_replica_leader{backend=\"%s\"} %d\n"
		                  "# HELP gpubroker_replica_pools_held The pools "
		                  "whose lease this replica holds (shared state; "
		                  "which ones: GET /v1/pools).\n"
		                  "# TYPE gpubroker_replica_pools_held gauge\n",
		              gb_store_backend_name(d->store), leader);
		{
			size_t nheld = 0;
			/* user pools: not the gc's GB_ORPHAN_POOL, which no
			 * pool name can be */
			for (size_t i = 0; i < held.n; i++)
				nheld += strncmp(held.v[i], "pool:", 5) == 0 &&
				         held.v[i][5] != '(';
			gb_buf_printf(b, "gpubroker_replica_pools_held %zu\n", nheld);
		}
		gb_strv_free(&held);
	}
	gb_buf_printf(b, "# HELP gpubroker_api_snapshot_builds_total Times "
	                  "the store's part of GET /v1/pools and /metrics was "
	                  "rebuilt (only after a change).\n"
	                  "# TYPE gpubroker_api_snapshot_builds_total counter\n"
	                  "gpubroker_api_snapshot_builds_total{endpoint=\"pools\"} "
	                  "%llu\n"
	                  "gpubroker_api_snapshot_builds_total{endpoint="
	                  "\"metrics\"} %llu\n",
	              ld(&d->pools_builds), ld(&d->metrics_builds));
}

/* The store's part is rendered again only after the store changed:
 * one request every METRICS_CHECK_MS compares the store's version
 * (gb_store_version_try) with the one the text was rendered at and, when
 * it moved, renders it while the others serve the current text (under a
 * saturating load the rendering thread gets a small share of the CPU,
 * and readers that waited for it made the API's p99).  Only when there
 * is no text yet do requests wait.  The in-memory part is always live. */
#define METRICS_CHECK_MS 250
/* render_live's text with three drivers is about 4 KB */
#define LIVE_TEXT_GUESS 8192

/* The store's part as published: one allocation, so daemon.c frees the
 * last one with free().  Readers take a reference under text_mu (which
 * guards refs and d->metrics_cache, nothing longer) and copy outside it. */
typedef struct metrics_text {
	size_t refs;
	size_t len;
	uint64_t serial;  /* the store part: which render (1, 2, ...) */
	char s[];
} metrics_text;

/* The whole text (the store part and the live part) is rendered at most
 * once per WHOLE_REUSE_US: requests within that much of a render (at
 * 50 connections, dozens) copy it instead of formatting ~150 counters
 * again, the larger part of a request's CPU.  A scrape thus sees
 * counters at most a millisecond old. */
#define WHOLE_REUSE_US 1000
static pthread_mutex_t whole_mu = PTHREAD_MUTEX_INITIALIZER;
static char *whole;          /* under whole_mu */
static size_t whole_len;
static uint64_t whole_serial;
static int64_t whole_at_us;

static int64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* render_mu: one render (or version check) at a time; it guards
 * store_ver. */
static pthread_mutex_t render_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t text_mu = PTHREAD_MUTEX_INITIALIZER;
static gb_store_ver store_ver;

static void text_release(metrics_text *t)
{
	int last;
	pthread_mutex_lock(&text_mu);
	last = --t->refs == 0;
	pthread_mutex_unlock(&text_mu);
	if (last)
		free(t);
}

/* Renders and publishes the store's part; caller holds render_mu. */
static void refresh(gb_daemon *d)
{
	int64_t at = gb_mono_ms();
	char *text;
	size_t len;
	metrics_text *t, *old;
	/* the version before the store is read: a change made meanwhile
	 * shows at the next check */
	gb_store_ver_read(d->store, &store_ver);
	text = render_store(d);
	len = strlen(text);
	t = gb_xmalloc(sizeof(*t) + len + 1);
	t->refs = 1;
	t->len = len;
	t->serial = __atomic_add_fetch(&d->metrics_builds, 1, __ATOMIC_RELAXED);
	memcpy(t->s, text, len + 1);
	free(text);
	pthread_mutex_lock(&text_mu);
	old = (metrics_text *)(void *)d->metrics_cache;
	d->metrics_cache = (char *)(void *)t;
	d->metrics_at_ms = at;
	pthread_mutex_unlock(&text_mu);
	if (old)
		text_release(old);
}

/* Compares versions (one request at a time) and renders when the store
 * moved; the store busy: the next request's turn. */
static void check(gb_daemon *d, int64_t now)
{
	int rc;
	if (pthread_mutex_trylock(&render_mu) != 0)
		return;
	rc = gb_store_ver_moved(d->store, &store_ver);
	if (rc == 1) {
		refresh(d);
	} else if (rc == 0) {
		pthread_mutex_lock(&text_mu);
		d->metrics_at_ms = now;
		pthread_mutex_unlock(&text_mu);
	}
	pthread_mutex_unlock(&render_mu);
}

/* A reference to the published text (NULL: none yet); *due: time to
 * compare versions. */
static metrics_text *text_get(gb_daemon *d, int64_t now, int *due)
{
	metrics_text *t;
	pthread_mutex_lock(&text_mu);
	t = (metrics_text *)(void *)d->metrics_cache;
	if (t)
		t->refs++;
	*due = now - d->metrics_at_ms >= METRICS_CHECK_MS;
	pthread_mutex_unlock(&text_mu);
	return t;
}

/* The published text plus the live part (new string, caller frees). */
static char *render_with(gb_daemon *d, metrics_text *t)
{
	gb_buf b = GB_BUF_INIT;
	int64_t now = mono_us();
	uint64_t serial = t->serial;
	char *copy = NULL, *old;
	pthread_mutex_lock(&whole_mu);
	if (whole && whole_serial == serial && now - whole_at_us < WHOLE_REUSE_US) {
		copy = gb_xmalloc(whole_len + 1);
		memcpy(copy, whole, whole_len + 1);
	}
	pthread_mutex_unlock(&whole_mu);
	if (copy) {
		text_release(t);
		return copy;
	}
	/* one allocation: under 50 connections every realloc was a turn
	 * at a contended malloc arena */
	gb_buf_reserve(&b, t->len + LIVE_TEXT_GUESS);
	gb_buf_append(&b, t->s, t->len);
	text_release(t);
	render_live(d, &b);
	copy = gb_xmalloc(b.len + 1);
	memcpy(copy, gb_buf_str(&b), b.len + 1);
	pthread_mutex_lock(&whole_mu);
	old = whole;
	whole = copy;
	whole_len = b.len;
	whole_serial = serial;
	whole_at_us = now;
	pthread_mutex_unlock(&whole_mu);
	free(old);
	return gb_buf_take(&b);
}

char *gb_metrics_render_now(gb_daemon *d)
{
	int due;
	metrics_text *t = text_get(d, gb_mono_ms(), &due);
	if (t && due) {
		text_release(t);
		t = NULL;
	}
	return t ? render_with(d, t) : NULL;
}

char *gb_metrics_render(gb_daemon *d)
{
	int64_t now = gb_mono_ms();
	int due;
	metrics_text *t = text_get(d, now, &due);
	if (!t) { /* none yet: wait for one */
		pthread_mutex_lock(&render_mu);
		if (!(t = text_get(d, now, &due)))
			refresh(d);
		pthread_mutex_unlock(&render_mu);
		if (!t)
			t = text_get(d, now, &due);
	} else if (due) {
		check(d, now);
	}
	return render_with(d, t);
}

void gb_metrics_release(void)
{
	pthread_mutex_lock(&whole_mu);
	free(whole);
	whole = NULL;
	whole_len = 0;
	pthread_mutex_unlock(&whole_mu);
	pthread_mutex_lock(&render_mu);
	free(usage_text);
	usage_text = NULL;
	pthread_mutex_unlock(&render_mu);
}
