/* pool_wait.c -- waiting for a pool to run (apply --wait, scale --wait). */
#include "pool_wait.h"

#include "timejson.h"

#include <stdio.h>
#include <string.h>

int gb_pool_waits(json_t *pool, int64_t timeout_s)
{
	json_t *w = json_object_get(pool, "waiting");
	int64_t at_ms;
	if (json_is_true(json_object_get(w, "refused")))
		return 0; /* refused for good: nothing to wait for */
	if (gb_json_time_get(json_object_get(w, "next_attempt_at"), &at_ms) != 0)
		return 0;
	return timeout_s <= 0 || at_ms <= gb_now_ms() + timeout_s * 1000;
}

/* Who keeps trying to place a pool this command leaves short. */
static const char *keeps_trying(const gb_backend *b)
{
	return b->cli->server
	               ? " and the daemon keeps trying to place it"
	               : ": a daemon on this state ('gpubroker serve') keeps "
	                 "trying to place it, as does the next apply";
}

void gb_pool_still_exists(gb_backend *b, const char *name)
{
	gb_cli_err(b->cli, "The pool still exists%s; 'gpubroker destroy %s' "
	           "removes it.", keeps_trying(b), name);
}

void gb_pool_left_short(gb_backend *b, const char *name, json_t *pool)
{
	json_t *w = json_object_get(pool, "waiting");
	if (!json_is_true(json_object_get(w, "refused"))) {
		gb_pool_still_exists(b, name);
		return;
	}
	gb_cli_err(b->cli, "The pool still exists, and nothing more is "
	           "placed before its next attempt: fix what was refused and "
	           "apply again (that asks at once), or 'gpubroker destroy %s' "
	           "removes it.", name);
}

/* The wait ran out of time: how far it got, why the pool is short when
 * it says, and that the pool stays (and is still worked on) until
 * destroyed. */
static void timed_out(gb_backend *b, const char *name, json_t *pool,
                      const char *err)
{
	const char *why = json_string_value(
	        json_object_get(json_object_get(pool, "waiting"), "reason"));
	char got[128];
	snprintf(got, sizeof(got), "%lld of %lld instances running",
	         (long long)json_integer_value(json_object_get(pool, "running")),
	         (long long)json_integer_value(json_object_get(pool, "desired")));
	gb_cli_err(b->cli, "pool %s: timed out waiting: %s%s%s.", name,
	           *err ? err : got, why ? "; waiting: " : "", why ? why : "");
	gb_pool_still_exists(b, name);
}

/* Why a pool was destroyed, from its "reason" (the engine's). */
static const char *gone_why(json_t *pool)
{
	const char *r = json_string_value(json_object_get(pool, "reason"));
	if (r && strcmp(r, "ttl") == 0)
		return "its TTL passed";
	if (r && strcmp(r, "idle") == 0)
		return "its idle_timeout passed";
	return "a destroy was asked for";
}

int gb_pool_wait(gb_backend *b, const char *name, int64_t timeout_s,
                 json_t **pool)
{
	char err[1024];
	json_t *last = NULL;
	int w = b->ops->wait(b, name, timeout_s, err, sizeof(err), &last);
	if (last) {
		json_decref(*pool);
		*pool = last;
	}
	if (w == 0 && gb_backend_stopped(b))
		return gb_backend_stop_status(b); /* the command says so */
	if (w == 0) {
		timed_out(b, name, *pool, err);
		return GB_EXIT_TIMEOUT;
	}
	if (w == GB_BACKEND_GONE) {
		const char *st = json_string_value(json_object_get(*pool, "state"));
		gb_cli_err(b->cli, "pool %s: stopped waiting: the pool %s "
		           "destroyed (%s), so it will not run; re-apply the spec "
		           "for a new one", name,
		           st && strcmp(st, "destroyed") == 0 ? "was" : "is being",
		           gone_why(*pool));
		return GB_EXIT_FAIL;
	}
	if (w < 0)
		return w == GB_BACKEND_LOST ? GB_EXIT_UNREACHABLE : GB_EXIT_FAIL;
	return GB_EXIT_OK;
}

void gb_pool_interrupted(gb_backend *b, json_t *pools)
{
	size_t i;
	json_t *p;
	json_array_foreach(pools, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *st = json_string_value(json_object_get(p, "state"));
		json_t *ttl = json_object_get(p, "ttl_left_s");
		char ttl_s[128] = "", tbuf[32];
		if (!name || !st || strcmp(st, "active") != 0)
			continue;
		if (json_is_integer(ttl)) {
			json_int_t t = json_integer_value(ttl);
			gb_format_duration(t > 0 ? t : 0, tbuf, sizeof(tbuf));
			snprintf(ttl_s, sizeof(ttl_s), b->cli->server
			         ? " and destroys it when its TTL ends (in %s)"
			         : "; its TTL (%s left) is enforced by that daemon "
			           "only", tbuf);
		}
		gb_cli_err(b->cli, "pool %s: left as it is: %lld running, %lld "
		           "pending (billed until removed); 'gpubroker destroy "
		           "%s' removes it. %s%s.", name,
		           (long long)json_integer_value(json_object_get(p, "running")),
		           (long long)json_integer_value(json_object_get(p, "pending")),
		           name,
		           b->cli->server ? "The daemon goes on converging it"
		                          : "Nothing converges it unless a daemon "
		                            "('gpubroker serve') runs on this state",
		           ttl_s);
	}
}
