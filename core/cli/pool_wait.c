/* pool_wait.c -- waiting for a pool to run (apply --wait, scale --wait). */
#include "pool_wait.h"

#include "timejson.h"

int gb_pool_waits(json_t *pool, int64_t timeout_s)
{
	json_t *w = json_object_get(pool, "waiting");
	int64_t at_ms;
	if (gb_json_time_get(json_object_get(w, "next_attempt_at"), &at_ms) != 0)
		return 0;
	return timeout_s <= 0 || at_ms <= gb_now_ms() + timeout_s * 1000;
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
	if (w == 0) {
		gb_cli_err(b->cli, "pool %s: timed out waiting%s%s", name,
		           *err ? ": " : "", err);
		return GB_EXIT_TIMEOUT;
	}
	return w < 0 ? GB_EXIT_FAIL : GB_EXIT_OK;
}
