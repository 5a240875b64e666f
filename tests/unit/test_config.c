/* test_config.c -- the broker config: defaults, every field, ${VAR}, and
 * bad inputs each checked for location, key path and message (and that
 * secrets never appear in messages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "paths.h"
#include "util.h"

#define H1 "3f0a6c3b8d1f9e2a4c5b6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a"
#define H2 "9b74c9897bac770ffc029102a200c5de8a2d5b1c6f5e2b1f0f4b5e2e3b6c8d10"

static gb_config parse_ok(const char *yaml)
{
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	if (gb_config_load_buf("b.yaml", yaml, strlen(yaml), &c, &d) != 0) {
		char *s = gb_diags_str(&d);
		fail_msg("expected a valid config, got:\n%s", s);
	}
	gb_diags_free(&d);
	return c;
}

static void check_err(const char *name, const char *yaml, size_t len,
                      int line, int col, const char *path, const char *msg)
{
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	int rc = gb_config_load_buf("b.yaml", yaml, len, &c, &d);
	char *all = gb_diags_str(&d);
	if (rc != -1 || d.n == 0 || d.v[0].line != line ||
	    d.v[0].col != col || strcmp(d.v[0].path, path) != 0 ||
	    !strstr(d.v[0].msg, msg))
		fail_msg("%s: expected b.yaml:%d:%d %s: ...%s...\ngot rc=%d:\n%s",
		         name, line, col, path, msg, rc, all);
	/* on error the config comes back freed and zeroed */
	assert_null(c.broker_id);
	assert_null(c.drivers);
	free(all);
	gb_diags_free(&d);
}

/* The reference's defaults (gb_config_keys: help config, the man page,
 * docs/config.md) are the parser's: writing a documented default changes
 * nothing (issue 31.3). */
static void same_as_defaults(const gb_config *c, const char *what)
{
	gb_config d;
	gb_config_defaults(&d);
	if (c->reconcile_period_s != d.reconcile_period_s ||
	    c->failover_cooldown_s != d.failover_cooldown_s ||
	    c->workers != d.workers || c->jobs != d.jobs ||
	    c->log_json != d.log_json ||
	    c->max_connections != d.max_connections ||
	    c->max_conn_per_client != d.max_conn_per_client ||
	    c->header_timeout_s != d.header_timeout_s ||
	    c->api_threads != d.api_threads ||
	    c->api_workers != d.api_workers ||
	    c->audit_retention_s != d.audit_retention_s ||
	    c->events_retention_s != d.events_retention_s ||
	    c->heartbeats_retention_s != d.heartbeats_retention_s ||
	    c->state_size_warning != d.state_size_warning ||
	    c->reconcile_per_minute != d.reconcile_per_minute ||
	    c->refusals_per_minute != d.refusals_per_minute ||
	    c->lease_s != d.lease_s || strcmp(c->broker_id, d.broker_id) ||
	    strcmp(c->listen, d.listen))
		fail_msg("%s: the documented default is not the default", what);
	gb_config_free(&d);
}

static void test_documented_defaults(void **state)
{
	size_t n, checked = 0;
	const gb_config_key *k = gb_config_keys(&n);
	(void)state;
	for (size_t i = 0; i < n; i++) {
		char *y;
		gb_config c;
		if (strcmp(k[i].section, "daemon") == 0)
			y = gb_xasprintf("daemon:\n  %s: %s\n", k[i].key,
			                 k[i].def);
		else if (!k[i].section[0] && (!strcmp(k[i].key, "broker_id") ||
		                              !strcmp(k[i].key, "listen")))
			y = gb_xasprintf("%s: %s\n", k[i].key, k[i].def);
		else
			continue;
		c = parse_ok(y);
		same_as_defaults(&c, y);
		gb_config_free(&c);
		free(y);
		checked++;
	}
	assert_true(checked >= 18);
	/* and every key has a type, a default (or "required") and a meaning */
	for (size_t i = 0; i < n; i++)
		if (!k[i].type[0] || !k[i].meaning[0])
			fail_msg("%s.%s: no type or meaning", k[i].section, k[i].key);
}

/* ------------------------------------------------------------ good */

static void test_defaults(void **state)
{
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	setenv("XDG_STATE_HOME", "/srv/state", 1);
	assert_int_equal(gb_config_load(NULL, &c, &d), 0);
	assert_null(c.file);
	assert_string_equal(c.broker_id, "gpubroker");
	assert_string_equal(c.state_path, "/srv/state/gpubroker/state.db");
	assert_string_equal(c.listen, "127.0.0.1:7878");
	assert_int_equal(c.ndrivers, 0);
	assert_int_equal(c.ntokens, 0);
	assert_int_equal(c.nteams, 0);
	assert_int_equal(c.reconcile_period_s, 15);
	assert_int_equal(c.heartbeats_retention_s, 30 * 86400);
	assert_int_equal(c.failover_cooldown_s, 180);
	assert_int_equal(c.workers, 64);
	assert_int_equal(c.jobs, 8);
	assert_int_equal(c.log_json, 0);
	assert_null(c.tls_cert);
	assert_null(c.onprem_inventory);
	gb_config_free(&c);
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/home/u", 1);
	gb_config_defaults(&c);
	assert_string_equal(c.state_path,
	                    "/home/u/.local/state/gpubroker/state.db");
	gb_config_free(&c);
	/* an empty file is the defaults too */
	c = parse_ok("# nothing yet\n");
	assert_string_equal(c.broker_id, "gpubroker");
	assert_string_equal(c.file, "b.yaml");
	gb_config_free(&c);
}

static const char *FULL =
	"broker_id: acme-ml\n"
	"state: /var/lib/gpubroker/state.db\n"
	"policy_path: [/etc/gpubroker/policies, ./policies]\n"
	"org_policies: [gdpr, budget]\n"
	"drivers:\n"
	"  - name: aws\n"
	"    path: /opt/gb/aws.so\n"
	"    options: {endpoint: \"http://127.0.0.1:${SIM_PORT}\", regions: "
	"\"us-east-1,eu-west-1\"}\n"
	"    credentials:\n"
	"      access_key_id: env:AWS_ACCESS_KEY_ID\n"
	"      secret_access_key: file:/etc/gb/aws-secret\n"
	"  - name: onprem\n"
	"listen: \"[::1]:9443\"\n"
	"tls: {cert: /etc/gb/c.pem, key: /etc/gb/k.pem}\n"
	"tokens:\n"
	"  - {name: ci, sha256: " H1 ", role: operator, team: research}\n"
	"  - {name: root, sha256: " H2 ", role: admin}\n"
	"teams:\n"
	"  - {name: research, max_gpus: 64, max_price_per_hour: 500, "
	"monthly_budget: 20000}\n"
	"  - {name: product}\n"
	"reservations:\n"
	"  - {cloud: aws, region: us-east-1, instance_type: p5.48xlarge, "
	"count: 2, price_per_hour: 60.5}\n"
	"onprem: {inventory: /etc/gpubroker/nodes.yaml}\n"
	"daemon: {reconcile_period: 30s, log_format: json, "
	"failover_cooldown: 5m, workers: 8, jobs: 3, heartbeats_retention: 2d, "
	"plan_per_minute: 50, plan_max_pools: 7, plan_max_answer: 2MiB, "
	"allowed_hosts: [broker.example.com, gb.internal]}\n";

/* The clouds are the listed drivers; with none listed, the installed
 * ones (every NAME.so in the driver directory, sorted). */
static void test_config_clouds(void **state)
{
	const char *y = "drivers:\n  - {name: tiny, path: /opt/tiny.so}\n"
	                "  - {name: aws}\n";
	const char *names[GB_MAX_CLOUDS], *two[2];
	const char *const *dir = gb_driver_dir_names();
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	size_t n;
	(void)state;
	assert_int_equal(gb_config_load_buf("c.yaml", y, strlen(y), &c, &d), 0);
	assert_int_equal(gb_config_clouds(&c, names, GB_ARRAY_LEN(names)), 2);
	assert_string_equal(names[0], "tiny");
	assert_string_equal(names[1], "aws");
	assert_null(names[2]);
	/* cap is respected and the list stays terminated */
	assert_int_equal(gb_config_clouds(&c, two, 2), 1);
	assert_null(two[1]);
	gb_config_free(&c);
	gb_config_defaults(&c);
	n = gb_config_clouds(&c, names, GB_ARRAY_LEN(names));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], dir[i]);
	assert_null(dir[n]);
	/* the build's driver directory holds the shipped drivers */
	assert_true(n >= 4);
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(names[i - 1], names[i]) < 0);
	gb_config_free(&c);
	gb_diags_free(&d);
}

static void test_every_field(void **state)
{
	gb_config c;
	const gb_team_cfg *t;
	(void)state;
	setenv("SIM_PORT", "4566", 1);
	c = parse_ok(FULL);
	unsetenv("SIM_PORT");
	assert_string_equal(c.broker_id, "acme-ml");
	assert_string_equal(c.state_path, "/var/lib/gpubroker/state.db");
	assert_int_equal(c.policy_path.n, 2);
	assert_string_equal(c.policy_path.v[1], "./policies");
	assert_int_equal(c.org_policies.n, 2);
	assert_string_equal(c.org_policies.v[0], "gdpr");
	assert_int_equal(c.ndrivers, 2);
	assert_string_equal(c.drivers[0].name, "aws");
	assert_string_equal(c.drivers[0].path, "/opt/gb/aws.so");
	assert_string_equal(gb_kvs_get(&c.drivers[0].options, "endpoint"),
	                    "http://127.0.0.1:4566");
	assert_string_equal(gb_kvs_get(&c.drivers[0].options, "regions"),
	                    "us-east-1,eu-west-1");
	assert_string_equal(gb_kvs_get(&c.drivers[0].options,
	                               "credentials.access_key_id"),
	                    "env:AWS_ACCESS_KEY_ID");
	assert_string_equal(gb_kvs_get(&c.drivers[0].options,
	                               "credentials.secret_access_key"),
	                    "file:/etc/gb/aws-secret");
	assert_string_equal(c.drivers[1].name, "onprem");
	assert_null(c.drivers[1].path);
	assert_int_equal(c.drivers[1].options.n, 0);
	assert_string_equal(c.listen, "[::1]:9443");
	assert_string_equal(c.tls_cert, "/etc/gb/c.pem");
	assert_string_equal(c.tls_key, "/etc/gb/k.pem");
	assert_int_equal(c.ntokens, 2);
	assert_string_equal(c.tokens[0].name, "ci");
	assert_string_equal(c.tokens[0].sha256, H1);
	assert_int_equal(c.tokens[0].role, GB_ROLE_OPERATOR);
	assert_string_equal(c.tokens[0].team, "research");
	assert_int_equal(c.tokens[1].role, GB_ROLE_ADMIN);
	assert_null(c.tokens[1].team);
	assert_int_equal(c.nteams, 2);
	t = gb_config_team(&c, "research");
	assert_non_null(t);
	assert_int_equal(t->max_gpus, 64);
	assert_true(t->max_price_per_hour == 500);
	assert_true(t->monthly_budget == 20000);
	t = gb_config_team(&c, "product");
	assert_int_equal(t->max_gpus, 0);
	assert_null(gb_config_team(&c, "nope"));
	assert_null(gb_config_team(&c, NULL));
	assert_int_equal(c.nreservations, 1);
	assert_string_equal(c.reservations[0].cloud, "aws");
	assert_string_equal(c.reservations[0].region, "us-east-1");
	assert_string_equal(c.reservations[0].instance_type, "p5.48xlarge");
	assert_int_equal(c.reservations[0].count, 2);
	assert_true(c.reservations[0].price_per_hour == 60.5);
	assert_string_equal(c.onprem_inventory, "/etc/gpubroker/nodes.yaml");
	assert_int_equal(c.reconcile_period_s, 30);
	assert_int_equal(c.log_json, 1);
	assert_int_equal(c.failover_cooldown_s, 300);
	assert_int_equal(c.workers, 8);
	assert_int_equal(c.jobs, 3);
	assert_int_equal(c.heartbeats_retention_s, 2 * 86400);
	assert_int_equal(c.plan_per_minute, 50);
	assert_int_equal(c.plan_max_pools, 7);
	assert_int_equal(c.plan_max_answer, 2 << 20);
	assert_int_equal(c.allowed_hosts.n, 2);
	assert_string_equal(c.allowed_hosts.v[1], "gb.internal");
	gb_config_free(&c);
	assert_null(c.broker_id);
}

static void test_listen_forms(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"127.0.0.1:7878", "127.0.0.1:7878"},
		{"\":9000\"", "127.0.0.1:9000"},
		{"0.0.0.0:443", "0.0.0.0:443"},
		{"localhost:8080", "localhost:8080"},
		{"\"[::1]:7878\"", "[::1]:7878"},
		{"7979", "127.0.0.1:7979"},
	};
	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		char y[128];
		gb_config c;
		snprintf(y, sizeof(y), "listen: %s\n", cases[i].in);
		c = parse_ok(y);
		assert_string_equal(c.listen, cases[i].out);
		gb_config_free(&c);
	}
}

static void test_env_substitution(void **state)
{
	gb_config c;
	(void)state;
	setenv("GB_TEST_STATE", "/data/s.db", 1);
	c = parse_ok("state: ${GB_TEST_STATE}\nbroker_id: ${GB_TEST_NOPE:-b-1}\n");
	assert_string_equal(c.state_path, "/data/s.db");
	assert_string_equal(c.broker_id, "b-1");
	gb_config_free(&c);
	unsetenv("GB_TEST_STATE");
}

static void test_role_names(void **state)
{
	(void)state;
	assert_string_equal(gb_role_name(GB_ROLE_VIEWER), "viewer");
	assert_string_equal(gb_role_name(GB_ROLE_OPERATOR), "operator");
	assert_string_equal(gb_role_name(GB_ROLE_ADMIN), "admin");
}

static void test_example_file(void **state)
{
	const char *src = getenv("GB_SRC");
	char path[1024];
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	snprintf(path, sizeof(path), "%s/examples/broker.yaml", src ? src : ".");
	if (access(path, R_OK) != 0) {
		print_message("skipping: %s not found (set GB_SRC)\n", path);
		return;
	}
	if (gb_config_load(path, &c, &d) != 0) {
		char *s = gb_diags_str(&d);
		fail_msg("%s", s);
	}
	assert_string_equal(c.file, path);
	assert_true(c.ndrivers >= 1);
	assert_true(c.ntokens >= 1);
	/* CI signs in by OIDC, not with a token of its own */
	assert_int_equal(c.noidc, 1);
	assert_string_equal(c.oidc[0].issuer,
	                    "https://token.actions.githubusercontent.com");
	assert_int_equal(c.oidc[0].role, GB_ROLE_OPERATOR);
	assert_int_equal(c.oidc[0].max_ttl_s, 7200);
	assert_string_equal(gb_kvs_get(&c.oidc[0].claims, "ref"),
	                    "refs/heads/main");
	gb_config_free(&c);
}

/* ------------------------------------------------------------ bad */

typedef struct bad_case {
	const char *name;
	const char *yaml;
	int line, col;
	const char *path;
	const char *msg;
} bad_case;

static const bad_case bad_cases[] = {
	{"typo_listen", "listn: 1.2.3.4:80\n", 1, 1, "listn",
	 "did you mean \"listen\"?"},
	{"typo_driver_key", "drivers:\n  - name: aws\n    option: {}\n", 3, 5,
	 "drivers[0].option", "did you mean \"options\"?"},
	{"root_list", "- a\n", 1, 1, "", "expected the broker config"},
	{"two_documents", "listen: :1\n---\nlisten: :2\n", 3, 1, "",
	 "a broker config is a single document"},
	{"broker_id_bad", "broker_id: Acme_ML\n", 1, 12, "broker_id",
	 "invalid broker id \"Acme_ML\""},
	{"broker_id_long", "broker_id: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 1, 12,
	 "broker_id", "1 to 32 lowercase letters"},
	{"listen_port_65536", "listen: 127.0.0.1:65536\n", 1, 9, "listen",
	 "port 65536 is out of range"},
	{"listen_port_big", "listen: 127.0.0.1:70000\n", 1, 9, "listen",
	 "port 70000 is out of range"},
	{"listen_no_port", "listen: localhost\n", 1, 9, "listen",
	 "expected host:port such as 127.0.0.1:7878"},
	{"listen_word_port", "listen: \"localhost:http\"\n", 1, 9, "listen",
	 "expected host:port"},
	{"listen_map", "listen: {host: x}\n", 1, 9, "listen",
	 "expected host:port, found a mapping"},
	{"tls_half", "tls: {cert: /c.pem}\n", 1, 6, "tls.key",
	 "TLS needs both cert and key"},
	{"state_empty", "state: \"\"\n", 1, 8, "state", "the state path is empty"},
	{"org_policy_bad", "org_policies: [\"Org Rules\"]\n", 1, 16,
	 "org_policies[0]", "is neither a policy name"},
	{"drivers_map", "drivers: {aws: {}}\n", 1, 10, "drivers",
	 "expected a list of drivers"},
	{"driver_no_name", "drivers:\n  - path: /x.so\n", 2, 5, "drivers[0].name",
	 "required key \"name\" is missing"},
	{"driver_bad_name", "drivers:\n  - name: AWS-1\n", 2, 11,
	 "drivers[0].name", "invalid driver name \"AWS-1\""},
	{"driver_twice", "drivers:\n  - name: aws\n  - name: aws\n", 3, 11,
	 "drivers[1].name", "driver \"aws\" is listed twice"},
	{"cred_inline_secret",
	 "drivers:\n  - name: aws\n    credentials: {secret_access_key: "
	 "wJalrXUtnFEMI}\n", 3, 38, "drivers[0].credentials.secret_access_key",
	 "secrets are never written inline"},
	{"cred_env_bad_name",
	 "drivers:\n  - name: aws\n    credentials: {k: \"env:1BAD\"}\n", 3, 22,
	 "drivers[0].credentials.k", "write env:VARIABLE or file:/absolute/path"},
	{"cred_file_relative",
	 "drivers:\n  - name: aws\n    credentials: {k: \"file:creds.json\"}\n", 3,
	 22, "drivers[0].credentials.k", "not a credential source"},
	{"cred_not_scalar",
	 "drivers:\n  - name: aws\n    credentials: {k: [a]}\n", 3, 22,
	 "drivers[0].credentials.k", "found a list"},
	{"option_secret",
	 "drivers:\n  - name: azure\n    options: {client_secret: abc}\n", 3, 15,
	 "drivers[0].options.client_secret", "looks like a secret"},
	{"option_credentials_prefix",
	 "drivers:\n  - name: aws\n    options: {credentials.x: \"env:X\"}\n", 3,
	 15, "drivers[0].options.credentials.x",
	 "credential sources go under \"credentials:\""},
	{"option_not_string",
	 "drivers:\n  - name: aws\n    options: {regions: [a, b]}\n", 3, 24,
	 "drivers[0].options.regions", "expected a string value, found a list"},
	{"token_short_hash",
	 "tokens:\n  - {name: ci, sha256: deadbeef, role: admin}\n", 2, 24,
	 "tokens[0].sha256", "64 lowercase hex characters"},
	{"token_upper_hash",
	 "tokens:\n  - {name: ci, sha256: " "3F0A6C3B8D1F9E2A4C5B6D7E8F9A0B1C2D3E4F5A6B7C8D9E0F1A2B3C4D5E6F7A"
	 ", role: admin}\n", 2, 24, "tokens[0].sha256", "lowercase hex"},
	{"token_one_char",
	 "tokens:\n  - {name: ci, sha256: 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881, role: admin}\n", 2, 24,
	 "tokens[0].sha256", "hash of a token that is far too short (1 "
	 "character): API tokens need at least 12 characters"},
	{"token_two_chars",
	 "tokens:\n  - {name: ci, sha256: b5bf04141f3d23a1e2714c7e3315dc6c9f0a0f44be6482dc34ffca4563aaa333, role: admin}\n", 2, 24,
	 "tokens[0].sha256", "far too short (2 characters)"},
	{"token_common_word",
	 "tokens:\n  - {name: ci, sha256: 057ba03d6c44104863dc7361fe4578965d1887360f90a0895882e58a6248fc86, role: admin}\n", 2, 24,
	 "tokens[0].sha256", "hash of a common word (8 characters)"},
	{"token_missing_hash", "tokens:\n  - {name: ci, role: admin}\n", 2, 5,
	 "tokens[0].sha256", "never the token itself"},
	{"token_role_typo",
	 "tokens:\n  - {name: ci, sha256: " H1 ", role: operater, team: t}\n", 2,
	 96, "tokens[0].role", "did you mean \"operator\"?"},
	{"token_no_team",
	 "tokens:\n  - {name: ci, sha256: " H1 ", role: operator}\n", 2, 5,
	 "tokens[0].team", "operator tokens act for one team"},
	{"token_no_role", "tokens:\n  - {name: ci, sha256: " H1 "}\n", 2, 5,
	 "tokens[0].role", "required key \"role\" is missing"},
	{"token_dup_name",
	 "tokens:\n  - {name: ci, sha256: " H1 ", role: admin}\n"
	 "  - {name: ci, sha256: " H2 ", role: admin}\n", 3, 12,
	 "tokens[1].name", "token name \"ci\" is used twice"},
	{"token_dup_hash",
	 "tokens:\n  - {name: a, sha256: " H1 ", role: admin}\n"
	 "  - {name: b, sha256: " H1 ", role: admin}\n", 3, 23,
	 "tokens[1].sha256", "the same token hash is given to \"a\" already"},
	{"token_unknown_key",
	 "tokens:\n  - {name: ci, token: abc, sha256: " H1 ", role: admin}\n", 2,
	 16,
	 "tokens[0].token", "unknown key \"token\""},
	{"team_dup", "teams:\n  - {name: a}\n  - {name: a}\n", 3, 12,
	 "teams[1].name", "team \"a\" is listed twice"},
	{"team_negative_gpus", "teams:\n  - {name: a, max_gpus: -1}\n", 2, 25,
	 "teams[0].max_gpus", "expected an integer from 0 to 1000000, found -1"},
	{"team_budget_string", "teams:\n  - {name: a, monthly_budget: lots}\n",
	 2, 31, "teams[0].monthly_budget", "expected a number"},
	{"team_bad_name", "teams:\n  - {name: Research Team}\n", 2, 12,
	 "teams[0].name", "invalid team name \"Research Team\""},
	/* the clouds a reservation may name are the config's drivers */
	{"reservation_cloud",
	 "drivers:\n  - {name: aws}\n  - {name: tiny, path: /opt/tiny.so}\n"
	 "reservations:\n  - {cloud: amazon, region: r, instance_type: t, "
	 "count: 1}\n", 5, 13, "reservations[0].cloud",
	 "expected aws or tiny"},
	{"reservation_no_count",
	 "reservations:\n  - {cloud: aws, region: r, instance_type: t}\n", 2, 5,
	 "reservations[0].count", "required key \"count\" is missing"},
	{"onprem_no_inventory", "onprem: {}\n", 1, 9, "onprem.inventory",
	 "required key \"inventory\" is missing"},
	{"reconcile_zero", "daemon: {reconcile_period: 0s}\n", 1, 28,
	 "daemon.reconcile_period", "must be at least 1s"},
	{"cooldown_words", "daemon: {failover_cooldown: 3 min}\n", 1, 29,
	 "daemon.failover_cooldown", "write it without spaces"},
	{"workers_zero", "daemon: {workers: 0}\n", 1, 19, "daemon.workers",
	 "expected an integer from 1 to 256, found 0"},
	{"workers_big", "daemon: {workers: 300}\n", 1, 19, "daemon.workers",
	 "found 300"},
	{"jobs_zero", "daemon: {jobs: 0}\n", 1, 16, "daemon.jobs",
	 "expected an integer from 1 to 64, found 0"},
	{"log_format_bad", "daemon: {log_format: xml}\n", 1, 22,
	 "daemon.log_format", "expected text or json"},
	{"plan_answer_small", "daemon: {plan_max_answer: 1KiB}\n", 1, 27,
	 "daemon.plan_max_answer", "must be from 64KiB to 1GiB"},
	{"plan_pools_zero", "daemon: {plan_max_pools: 0}\n", 1, 26,
	 "daemon.plan_max_pools", "expected an integer from 1 to 1000"},
	{"allowed_host_url", "daemon: {allowed_hosts: [\"http://x:80\"]}\n", 1,
	 25, "daemon.allowed_hosts", "is not a host name"},
	{"env_unset", "state: ${GB_TEST_UNSET_VAR}/s.db\n", 1, 8, "",
	 "environment variable GB_TEST_UNSET_VAR is not set"},
	{"alias", "a: &x 1\nbroker_id: *x\n", 2, 12, "", "aliases"},
	{"tab", "daemon:\n\tworkers: 2\n", 2, 1, "", "tab character"},
	/* a newline or escape in a directory would forge log lines */
	{"policy_path_control", "policy_path: [\"/tmp\\n/etc\"]\n", 1, 14,
	 "policy_path", "directory \"/tmp?/etc\" contains control characters"},
	/* with teams: given, a token's team must be one of them */
	{"token_team_unlisted",
	 "tokens:\n  - {name: ci, sha256: " H1 ", role: operator, team: resaerch}\n"
	 "teams:\n  - {name: research, max_gpus: 8}\n", 2, 112, "tokens[0].team",
	 "team \"resaerch\" is not listed under teams: (did you mean "
	 "\"research\"?); add it there"},
};

static void run_bad_case(void **state)
{
	const bad_case *c = *state;
	check_err(c->name, c->yaml, strlen(c->yaml), c->line, c->col, c->path,
	          c->msg);
}

static void test_secrets_not_echoed(void **state)
{
	const char *y = "drivers:\n  - name: aws\n    credentials: "
	                "{secret_access_key: wJalrXUtnFEMIK7MDENG}\n"
	                "tokens:\n  - {name: ci, sha256: my-raw-token-123, "
	                "role: admin}\n";
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	char *all;
	(void)state;
	assert_int_equal(gb_config_load_buf("b.yaml", y, strlen(y), &c, &d), -1);
	all = gb_diags_str(&d);
	assert_int_equal(d.n, 2);
	assert_null(strstr(all, "wJalrXUtnFEMIK7MDENG"));
	assert_null(strstr(all, "my-raw-token-123"));
	free(all);
	gb_diags_free(&d);
}

/* agent.*: the broker URL (https, or http for a loopback test), the
 * timings with their bounds, defaults when absent. */
static void test_agent_keys(void **state)
{
	const char *bad = "agent: {broker_url: ftp://x, bootstrap_ttl: 10s, "
	                  "interval: 2h, colour: blue}\n";
	gb_config c = parse_ok("broker_id: b\n");
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_null(c.agent_broker_url);
	assert_int_equal(c.agent_bootstrap_ttl_s, 3600);
	assert_int_equal(c.agent_interval_s, 15);
	assert_int_equal(c.agent_ready_timeout_s, 600);
	gb_config_free(&c);
	c = parse_ok("agent: {broker_url: \"https://broker.example/\", "
	             "bootstrap_ttl: 30m, interval: 5s, ready_timeout: 0s}\n");
	assert_string_equal(c.agent_broker_url, "https://broker.example");
	assert_int_equal(c.agent_bootstrap_ttl_s, 1800);
	assert_int_equal(c.agent_interval_s, 5);
	assert_int_equal(c.agent_ready_timeout_s, 0);
	gb_config_free(&c);
	assert_int_equal(gb_config_load_buf("b.yaml", bad, strlen(bad), &c, &d),
	                 -1);
	assert_int_equal(d.n, 4);
	{
		static const char *const want[] = {"colour", "agent.broker_url",
		                                   "agent.bootstrap_ttl",
		                                   "agent.interval"};
		for (size_t w = 0; w < 4; w++) {
			int hit = 0;
			for (size_t i = 0; i < d.n; i++)
				hit |= strstr(d.v[i].msg, want[w]) != NULL ||
				       (d.v[i].path &&
				        strstr(d.v[i].path, want[w]) != NULL);
			if (!hit)
				fail_msg("no error names %s", want[w]);
		}
	}
	gb_diags_free(&d);
}

static void test_all_errors_reported(void **state)
{
	const char *y = "listen: x:99999\n"
	                "daemon: {workers: 0, log_format: xml}\n"
	                "brokr_id: a\n";
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_int_equal(gb_config_load_buf("b.yaml", y, strlen(y), &c, &d), -1);
	assert_int_equal(d.n, 4);
	assert_int_equal(d.v[0].line, 1);
	assert_int_equal(d.v[1].line, 2);
	assert_int_equal(d.v[1].col, 19);
	assert_int_equal(d.v[2].col, 34);
	assert_int_equal(d.v[3].line, 3);
	assert_non_null(strstr(d.v[3].msg, "did you mean \"broker_id\"?"));
	gb_diags_free(&d);
}

static void test_too_large(void **state)
{
	size_t n = 2u << 20;
	char *big = gb_xmalloc(n);
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	memset(big, '#', n);
	assert_int_equal(gb_config_load_buf("b.yaml", big, n, &c, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "larger than the limit of 1048576"));
	free(big);
	gb_diags_free(&d);
}

/* Relative paths in a config file are relative to its directory. */
static void test_relative_paths(void **state)
{
	char dir[] = "/tmp/gb-cfg-XXXXXX", path[128], cmd[160];
	FILE *f;
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/broker.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("state: data/state.db\n"
	      "policy_path: [pol, /abs/pol]\n"
	      "onprem: {inventory: nodes.yaml}\n", f);
	fclose(f);
	assert_int_equal(gb_config_load(path, &c, &d), 0);
	snprintf(cmd, sizeof(cmd), "%s/data/state.db", dir);
	assert_string_equal(c.state_path, cmd);
	snprintf(cmd, sizeof(cmd), "%s/pol", dir);
	assert_string_equal(c.policy_path.v[0], cmd);
	assert_string_equal(c.policy_path.v[1], "/abs/pol");
	snprintf(cmd, sizeof(cmd), "%s/nodes.yaml", dir);
	assert_string_equal(c.onprem_inventory, cmd);
	gb_config_free(&c);
	gb_diags_free(&d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* onprem.inventory must name a readable file: checked (by validate) at
 * the key's position, relative to the config's folder */
static void test_inventory_checked(void **state)
{
	char dir[] = "/tmp/gb-cfg-XXXXXX", path[128], inv[160];
	FILE *f;
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/broker.yaml", dir);
	snprintf(inv, sizeof(inv), "%s/nodes.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("broker_id: b\nonprem:\n  inventory: nodes.yaml\n", f);
	fclose(f);
	assert_int_equal(gb_config_load(path, &c, &d), 0);
	assert_int_equal(gb_config_check_files(&c, &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, path);
	assert_int_equal(d.v[0].line, 3);
	assert_int_equal(d.v[0].col, 14);
	assert_string_equal(d.v[0].path, "onprem.inventory");
	assert_non_null(strstr(d.v[0].msg, "cannot read the on-prem inventory"));
	assert_non_null(strstr(d.v[0].msg, inv));
	assert_non_null(strstr(d.v[0].msg, "No such file"));
	assert_non_null(strstr(d.v[0].msg, "create it"));
	gb_diags_free(&d);
	/* a folder by that name is no inventory either */
	assert_int_equal(mkdir(inv, 0700), 0);
	assert_int_equal(gb_config_check_files(&c, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "Is a directory"));
	gb_diags_free(&d);
	assert_int_equal(rmdir(inv), 0);
	/* once the file is there, the same config passes */
	f = fopen(inv, "w");
	assert_non_null(f);
	fputs("nodes: []\n", f);
	fclose(f);
	assert_int_equal(gb_config_check_files(&c, &d), 0);
	assert_int_equal(d.n, 0);
	gb_config_free(&c);
	/* no inventory: nothing to check */
	gb_config_defaults(&c);
	assert_int_equal(gb_config_check_files(&c, &d), 0);
	gb_config_free(&c);
	unlink(inv);
	unlink(path);
	rmdir(dir);
}

/* priorities: and teams[].share (issue 35). */
static void test_priorities_and_shares(void **state)
{
	(void)state;
	gb_config c;
	gb_config_defaults(&c);
	assert_int_equal(c.npriorities, 3);
	assert_int_equal(gb_config_priority(&c, "production")->value, 1000);
	assert_int_equal(gb_config_priority(&c, "batch")->value, 100);
	assert_int_equal(gb_config_priority(&c, "dev")->value, 10);
	assert_string_equal(gb_config_priority_default(&c, "inference")->name,
	                    "production");
	assert_string_equal(gb_config_priority_default(&c, "training")->name,
	                    "batch");
	assert_string_equal(gb_config_priority_default(&c, "dev")->name, "dev");
	assert_true(gb_config_team_share(&c, "nobody") == 1.0);
	gb_config_free(&c);

	c = parse_ok("priorities: {urgent: 5000, low: 1}\n"
	             "teams:\n  - {name: ml, share: 4}\n  - {name: web}\n");
	assert_int_equal(c.npriorities, 2);
	assert_null(gb_config_priority(&c, "production"));
	assert_int_equal(gb_config_priority(&c, "urgent")->value, 5000);
	/* no class of the purpose's name: the lowest */
	assert_string_equal(gb_config_priority_default(&c, "dev")->name, "low");
	assert_true(gb_config_team_share(&c, "ml") == 4.0);
	assert_true(gb_config_team_share(&c, "web") == 1.0);
	const char *names[8];
	const char *const *nv = gb_config_priority_names(&c, names, 8);
	assert_string_equal(nv[0], "urgent");
	assert_string_equal(nv[1], "low");
	assert_null(nv[2]);
	gb_config_free(&c);

	const char *y1 = "priorities: {prod: many}\n";
	check_err("class value", y1, strlen(y1), 1, 20, "priorities.prod",
	          "integer");
	const char *y2 = "priorities: {Prod: 1}\n";
	check_err("class name", y2, strlen(y2), 1, 14, "priorities.Prod",
	          "invalid class name");
	const char *y3 = "priorities: [a, b]\n";
	check_err("not a map", y3, strlen(y3), 1, 13, "priorities",
	          "expected a map");
	const char *y5 = "teams:\n  - {name: ml, share: 0}\n";
	check_err("share", y5, strlen(y5), 2, 23, "teams[0].share",
	          "from 0.01 to 10000");
}

static void test_missing_file(void **state)
{
	gb_config c;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_int_equal(gb_config_load("/nonexistent/b.yaml", &c, &d), -1);
	assert_string_equal(d.v[0].file, "/nonexistent/b.yaml");
	assert_non_null(strstr(d.v[0].msg, "cannot read"));
	assert_null(c.broker_id);
	gb_diags_free(&d);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_documented_defaults),
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_config_clouds),
		cmocka_unit_test(test_listen_forms),
		cmocka_unit_test(test_env_substitution),
		cmocka_unit_test(test_role_names),
		cmocka_unit_test(test_example_file),
		cmocka_unit_test(test_secrets_not_echoed),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_agent_keys),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_relative_paths),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_priorities_and_shares),
		cmocka_unit_test(test_inventory_checked),
	};
	size_t nbad = GB_ARRAY_LEN(bad_cases);
	size_t n = nbad + GB_ARRAY_LEN(fixed);
	struct CMUnitTest *tests = calloc(n, sizeof(*tests));
	char **names = calloc(nbad, sizeof(char *));
	int rc;
	for (size_t i = 0; i < nbad; i++) {
		names[i] = gb_xasprintf("bad_%s", bad_cases[i].name);
		tests[i].name = names[i];
		tests[i].test_func = run_bad_case;
		tests[i].initial_state = (void *)&bad_cases[i];
	}
	memcpy(tests + nbad, fixed, sizeof(fixed));
	rc = _cmocka_run_group_tests("config", tests, n, NULL, NULL);
	for (size_t i = 0; i < nbad; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}
