/* api_auth.c -- POST /v1/auth/oidc: a CI job's OIDC ID token exchanged
 * for a broker token of the matching auth.oidc rule's role and team
 * (README, 'CI pipelines'), and what such a token carries: the labels its
 * pools get. */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "oidc.h"
#include "timejson.h"

#define XTOKEN_PREFIX "gbo_"

/* The ID token's replay keys: 0 new, else the 401 is set. */
static int refuse_replay(gb_api_req *r, const gb_oidc_match *m,
                         int64_t now_ms)
{
	int64_t until = (m->exp_s + GB_OIDC_SKEW_S) * 1000;
	int seen = gb_store_oidc_seen(r->d->store, m->replay_token, until, now_ms);
	if (seen == 0 && m->replay_jti[0])
		seen = gb_store_oidc_seen(r->d->store, m->replay_jti, until, now_ms);
	if (seen < 0) {
		gb_api_error(r, 500, "StoreError", "%s",
		             gb_store_errmsg(r->d->store));
		return -1;
	}
	if (seen) {
		gb_api_error(r, 401, "Unauthenticated", "OIDC token refused: it "
		             "was exchanged before (a replay); ask the CI "
		             "platform for a new ID token");
		return -1;
	}
	return 0;
}

static void audit_detail(gb_api_req *r, const gb_oidc_match *m,
                         int64_t expires_s)
{
	char when[40];
	size_t o;
	o = (size_t)snprintf(r->detail, sizeof(r->detail), "auth.oidc[%zu] "
	                     "matched", m->rule);
	for (size_t i = 0; i < m->claims.n && o < sizeof(r->detail); i++)
		o += (size_t)snprintf(r->detail + o, sizeof(r->detail) - o,
		                      "%s %s=%s", i ? "," : "", m->claims.keys[i],
		                      m->claims.vals[i]);
	if (o < sizeof(r->detail))
		snprintf(r->detail + o, sizeof(r->detail) - o, "; expires %s",
		         gb_format_time(expires_s, when, sizeof(when)));
}

void gb_api_auth_oidc(gb_api_req *r)
{
	const gb_config *cfg = r->d->cfg;
	gb_oidc_match m;
	gb_xtoken_row row;
	json_t *body, *labels;
	const char *idt;
	char err[512], tok[80], hex[65];
	int64_t now_ms = gb_now_ms(), expires_s;
	const gb_oidc_rule *rule;

	r->action = "oidc-exchange";
	if (!cfg->noidc) {
		gb_api_error(r, 404, "NotFound", "this broker trusts no OIDC "
		             "issuer: add a rule under auth.oidc in its config "
		             "(README, 'CI pipelines')");
		return;
	}
	if (!(body = gb_api_body_json(r)))
		return;
	idt = json_string_value(json_object_get(body, "token"));
	if (!idt || !*idt) {
		json_decref(body);
		gb_api_error(r, 400, "InvalidRequest", "send {\"token\": \"<the "
		             "CI job's OIDC ID token>\"}");
		return;
	}
	if (gb_oidc_verify(r->d->oidc, cfg, idt, now_ms / 1000, &m, err,
	                   sizeof(err)) != 0) {
		json_decref(body);
		gb_api_error(r, 401, "Unauthenticated", "OIDC token refused: %s",
		             err);
		return;
	}
	json_decref(body);
	rule = &cfg->oidc[m.rule];
	expires_s = now_ms / 1000 + rule->max_ttl_s;
	if (m.exp_s < expires_s)
		expires_s = m.exp_s;
	if (expires_s <= now_ms / 1000) {
		gb_api_error(r, 401, "Unauthenticated", "OIDC token refused: it "
		             "expires now; ask the CI platform for a new one");
		gb_oidc_match_free(&m);
		return;
	}
	if (refuse_replay(r, &m, now_ms) != 0) {
		gb_oidc_match_free(&m);
		return;
	}
	memcpy(tok, XTOKEN_PREFIX, sizeof(XTOKEN_PREFIX));
	if (gb_random_hex(tok + strlen(XTOKEN_PREFIX), 32) != 0) {
		gb_api_error(r, 500, "Internal", "no randomness for a token");
		gb_oidc_match_free(&m);
		return;
	}
	labels = json_object();
	for (size_t i = 0; i < m.labels.n; i++)
		json_object_set_new(labels, m.labels.keys[i],
		                    json_string(m.labels.vals[i]));
	memset(&row, 0, sizeof(row));
	row.actor = gb_xasprintf("oidc:%.120s", m.subject);
	row.role = (char *)gb_role_name(rule->role);
	row.team = rule->team;
	row.labels = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
	row.created_ms = now_ms;
	row.expires_ms = expires_s * 1000;
	gb_sha256_hex(tok, strlen(tok), hex);
	/* who it is from now on, for the audit row */
	free(r->actor_copy);
	free(r->team_copy);
	r->actor_copy = gb_xstrdup(row.actor);
	r->team_copy = gb_xstrdup(rule->team);
	r->actor = r->actor_copy;
	r->team = r->team_copy;
	r->role = rule->role;
	if (gb_store_xtoken_add(r->d->store, hex, &row) != 0) {
		gb_api_error(r, 500, "StoreError", "%s",
		             gb_store_errmsg(r->d->store));
	} else {
		/* a time as every answer has it: RFC 3339 with milliseconds
		 * (docs/json.md) */
		r->resp = json_pack("{s:s, s:o, s:I, s:s, s:s, s:s, s:O}",
		                    "token", tok, "expires_at",
		                    gb_json_time(expires_s * 1000),
		                    "expires_in", (json_int_t)(expires_s -
		                                               now_ms / 1000),
		                    "name", row.actor, "role",
		                    gb_role_name(rule->role), "team", rule->team,
		                    "labels", labels);
		r->status = 200;
		audit_detail(r, &m, expires_s);
	}
	memset(tok, 0, sizeof(tok));
	free(row.actor);
	free(row.labels);
	json_decref(labels);
	gb_oidc_match_free(&m);
}

int gb_api_xtoken_auth(gb_api_req *r, const char *hex)
{
	gb_xtoken_row row;
	int rc, role = GB_ROLE_VIEWER;
	if (!r->d->cfg->noidc)
		return 1;
	rc = gb_store_xtoken_get(r->d->store, hex, gb_now_ms(), &row);
	if (rc != 0)
		return rc;
	if (strcmp(row.role, "operator") == 0)
		role = GB_ROLE_OPERATOR;
	free(r->actor_copy);
	free(r->team_copy);
	r->actor_copy = row.actor;
	r->team_copy = row.team;
	r->actor = r->actor_copy;
	r->team = r->team_copy;
	r->role = (gb_role)role;
	json_decref(r->ci_labels);
	r->ci_labels = json_loads(row.labels, 0, NULL);
	free(row.role);
	free(row.labels);
	return 0;
}

void gb_api_ci_labels(gb_api_req *r, gb_pool_spec *p)
{
	const char *k;
	json_t *v;
	json_object_foreach(r->ci_labels, k, v)
		if (json_is_string(v))
			gb_kvs_set(&p->labels, k, json_string_value(v));
}

void gb_api_ci_event(gb_api_req *r, const char *pool)
{
	gb_buf b = GB_BUF_INIT;
	const char *k;
	json_t *v;
	json_object_foreach(r->ci_labels, k, v)
		if (json_is_string(v))
			gb_buf_printf(&b, " %s=%s", k, json_string_value(v));
	if (gb_store_event(r->d->store, pool, NULL, "ci", "applied by %s%s",
	                   r->actor, b.len ? gb_buf_str(&b) : "") != 0)
		gb_log(GB_LOG_WARN, "api", "pool %s: cannot record its ci event: "
		       "%s", pool, gb_store_errmsg(r->d->store));
	gb_api_wake(r->d, pool);
	gb_buf_free(&b);
}
