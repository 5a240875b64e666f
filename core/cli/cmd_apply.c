/* cmd_apply.c -- `gpubroker apply`: show the plan, ask, converge, wait. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli_app.h"
#include "output.h"
#include "pool_output.h"
#include "pool_wait.h"

static gb_strv a_files;
static const char *a_timeout, *a_wait_for;
static int a_wait, a_yes;

static const gb_flag *apply_flags(void)
{
	static const gb_flag f[] = {
		{"file", 'f', "SPEC", "pool spec file (repeatable)", NULL, NULL,
		 &a_files},
		{"wait", 0, NULL, "wait until every instance runs (and the "
		 "ones removed are confirmed terminated) and print their "
		 "addresses", NULL, &a_wait, NULL},
		{"wait-for", 0, "running|ready", "with --wait on an agent pool "
		 "(agent: true): ready (the default through a daemon) waits "
		 "until every instance's agent reported the offer's GPUs, "
		 "running until the cloud says running", &a_wait_for, NULL,
		 NULL},
		{"timeout", 0, "DURATION", "with --wait: give up after this long "
		 "(exit 3), e.g. 15m", &a_timeout, NULL, NULL},
		{"auto-approve", 0, NULL, "do not ask for confirmation (required "
		 "without a terminal)", NULL, &a_yes, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

/* Asks on the terminal; 1 when the user typed "yes". */
int gb_cli_confirm(const gb_cli *cli, const char *question)
{
	char line[64];
	(void)cli;
	fprintf(stderr, "%s\n  Only 'yes' will be accepted: ", question);
	fflush(stderr);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	line[strcspn(line, "\r\n")] = '\0';
	return strcmp(line, "yes") == 0;
}

/* Plans spec (authorised and validated as its apply would be, nothing
 * stored; the quota and budget checks count the nearlier pools before
 * it, earlier, as if applied): its diff (new reference), or NULL after
 * saying why apply would refuse it (no offer can match it, a quota or
 * budget, a token of another team), with the diff unless -q. */
static json_t *check_one(gb_backend *b, const gb_pool_spec *spec,
                         const gb_pool_spec *const *earlier, size_t nearlier)
{
	gb_cli *cli = b->cli;
	json_t *diff = b->ops->plan_diff(b, spec, earlier, nearlier);
	const char *refused;
	if (!diff)
		return NULL;
	refused = json_string_value(json_object_get(diff, "apply_refused"));
	if (json_is_true(json_object_get(diff, "no_match"))) {
		/* nothing to wait for: no offer can ever match it */
		const char *why = json_string_value(json_object_get(diff, "error"));
		if (!cli->quiet)
			gb_print_diff(stderr, diff);
		gb_cli_err(cli, "pool %s: not applied (nothing stored): no offer "
		           "can match this spec; change the spec or the policies "
		           "('gpubroker plan --explain' lists every refusal)%s%s",
		           spec->name, cli->quiet && why ? ":\n" : "",
		           cli->quiet && why ? why : "");
	} else if (refused) {
		if (!cli->quiet)
			gb_print_diff(stderr, diff);
		gb_cli_err(cli, "pool %s: not applied (nothing stored): %s",
		           spec->name, refused);
	} else {
		return diff;
	}
	json_decref(diff);
	return NULL;
}

/* Shows spec's diff (unless -q; takes it), asks (unless --auto-approve),
 * applies and with --wait waits; the pool as it ends up goes into
 * results. */
static int apply_one(gb_backend *b, const gb_pool_spec *spec, json_t *diff,
                     int64_t timeout, json_t *results)
{
	gb_cli *cli = b->cli;
	json_t *pool = NULL;
	int rc = GB_EXIT_OK;
	if (!cli->quiet)
		gb_print_diff(stderr, diff);
	json_decref(diff);
	if (!a_yes) {
		char q[256];
		snprintf(q, sizeof(q), "Apply pool %s?", spec->name);
		if (!gb_cli_confirm(cli, q)) {
			gb_cli_err(cli, "pool %s: not applied", spec->name);
			return GB_EXIT_FAIL;
		}
	}
	/* with --wait, a pool that could not be placed yet but says when
	 * it tries again (capacity) is waited for */
	if (b->ops->apply(b, spec, &pool) != 0 &&
	    !(a_wait && gb_pool_waits(pool, timeout))) {
		rc = GB_EXIT_FAIL;
		/* stored, but short (capacity): it stays */
		if (json_is_object(json_object_get(pool, "waiting")))
			gb_pool_left_short(b, spec->name, pool);
	} else if (a_wait)
		rc = gb_pool_wait(b, spec->name, timeout, &pool);
	if (pool)
		json_array_append_new(results, pool);
	return rc;
}

/* Every pool of every file is loaded and checked (check_one) before any
 * is applied: one that would be refused (a 403 for its team, a quota)
 * stops them all, with nothing changed.  GB_EXIT_OK, or GB_EXIT_FAIL
 * after saying why; *sets (nsets) the files' pools, *diffs their diffs
 * in order (both the caller's). */
static int check_all(gb_backend *b, const gb_strv *files, gb_spec_set *sets,
                     json_t *diffs)
{
	gb_cli *cli = b->cli;
	size_t total = 0, bad = 0, all = 0;
	const gb_pool_spec **earlier;
	for (size_t fi = 0; fi < files->n; fi++)
		if (gb_cli_spec_load_in(cli, files->v[fi], b->catalog,
		                        &sets[fi]) != 0)
			return GB_EXIT_FAIL;
	for (size_t fi = 0; fi < files->n; fi++)
		all += sets[fi].n;
	/* the pools are applied together: each is checked with the ones
	 * before it counted (two that fit a quota alone may not together) */
	earlier = gb_xcalloc(all + 1, sizeof(*earlier));
	for (size_t fi = 0; fi < files->n; fi++)
		for (size_t i = 0; i < sets[fi].n && !gb_backend_stopped(b); i++) {
			json_t *d = check_one(b, &sets[fi].pools[i], earlier,
			                      total);
			earlier[total++] = &sets[fi].pools[i];
			bad += !d;
			json_array_append_new(diffs, d ? d : json_null());
		}
	free(earlier);
	if (bad && total > 1)
		gb_cli_err(cli, "nothing applied: %zu of %zu pools would be "
		           "refused (above); fix them and apply again", bad,
		           total);
	return bad ? GB_EXIT_FAIL : GB_EXIT_OK;
}

static int run_apply(gb_cli *cli)
{
	gb_backend *b;
	gb_strv files = {0};
	int64_t timeout = 0;
	int rc = GB_EXIT_OK, r;
	json_t *results, *diffs;
	gb_spec_set *sets;
	size_t k = 0;
	int checked, interactive = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);

	for (size_t i = 0; i < a_files.n; i++)
		gb_strv_push(&files, a_files.v[i]);
	for (size_t i = 0; i < cli->args.n; i++)
		gb_strv_push(&files, cli->args.v[i]);
	gb_strv_free(&a_files);
	if (!files.n)
		return gb_cli_usage(cli, "give a pool spec with -f FILE");
	if (a_timeout && gb_parse_duration(a_timeout, &timeout) != 0) {
		gb_strv_free(&files);
		return gb_cli_usage(cli, "--timeout: expected a duration like "
		                         "90s, 15m or 2h, found \"%s\"", a_timeout);
	}
	if (a_timeout && !a_wait) {
		gb_strv_free(&files);
		return gb_cli_usage(cli, "--timeout is for --wait: give both");
	}
	if (a_wait_for && strcmp(a_wait_for, "running") != 0 &&
	    strcmp(a_wait_for, "ready") != 0) {
		gb_strv_free(&files);
		return gb_cli_usage(cli, "--wait-for: expected running or "
		                         "ready, found \"%s\"", a_wait_for);
	}
	if (!a_yes && !interactive) {
		gb_strv_free(&files);
		gb_cli_err(cli, "refusing to apply without confirmation: there "
		                "is no terminal to ask on. Review the plan with "
		                "'gpubroker plan' and pass --auto-approve.");
		return GB_EXIT_FAIL;
	}
	if ((r = gb_backend_open(cli, GB_BACKEND_PROGRESS | GB_BACKEND_SIGNALS,
	                         &b)) != 0) {
		gb_strv_free(&files);
		return r;
	}
	b->wait_running = a_wait_for && strcmp(a_wait_for, "running") == 0;
	results = json_array();
	diffs = json_array();
	sets = gb_xcalloc(files.n, sizeof(*sets));
	checked = (rc = check_all(b, &files, sets, diffs)) == GB_EXIT_OK;
	for (size_t fi = 0; fi < files.n; fi++) {
		for (size_t i = 0; i < sets[fi].n && checked &&
		                   !gb_backend_stopped(b); i++) {
			json_t *d = json_incref(json_array_get(diffs, k++));
			r = apply_one(b, &sets[fi].pools[i], d, timeout, results);
			/* a failure outranks a timeout */
			if (r == GB_EXIT_TIMEOUT)
				rc = rc ? rc : r;
			else if (r)
				rc = r;
		}
		gb_spec_set_free(&sets[fi]);
	}
	free(sets);
	json_decref(diffs);
	if (gb_backend_stopped(b)) {
		gb_cli_err(cli, "interrupted: the journal is consistent; re-run "
		                "apply (or let the daemon) converge");
		gb_pool_interrupted(b, results);
		rc = gb_backend_stop_status(b);
	}
	gb_print_pools(cli, results, 1);
	json_decref(results);
	gb_backend_close(b);
	gb_strv_free(&files);
	return rc;
}

const gb_cmd gb_cmd_apply = {
	"apply", "create or update pools to match a spec",
	"-f SPEC [--wait [--wait-for running|ready] [--timeout DURATION]] [--auto-approve]",
	"Shows what will change (like 'terraform plan'), asks on a terminal,\n"
	"then converges: journaled creates in parallel, failover down the plan\n"
	"on capacity/quota errors.  Without a terminal, --auto-approve is\n"
	"required.  With --wait, waits until every instance runs (an agent\n"
	"pool's through a daemon: until it is ready, unless --wait-for\n"
	"running) and prints\n"
	"their addresses (exit 3 when --timeout passes first: the pool stays,\n"
	"and 'gpubroker destroy NAME' removes it); a pool no place can hold\n"
	"yet is tried again at the next attempt its status names, when that\n"
	"comes before the timeout.  A spec that no offer can match at all is\n"
	"refused (exit 1, nothing stored) with the plan's reasons.  A pool\n"
	"every candidate cloud refused for good (auth, invalid: no SSH key\n"
	"for Azure, an unknown image) or whose policy fails ends the wait at\n"
	"once (exit 1, the refusal's words; 'waiting: refused: ...').  Through a\n"
	"daemon (--server) the wait prints the events as it does locally, and\n"
	"rides out a daemon restart or failover until the timeout (10m\n"
	"without one); exit 4 when the daemon does not come back in time.\n"
	"A wait ends (exit 1) as soon as the pool is destroyed (its TTL, its\n"
	"idle timeout, a destroy).  SIGINT or SIGTERM stops apply (exit 130\n"
	"or 143) and says what is left running and how to remove it.",
	apply_flags, run_apply,
};
