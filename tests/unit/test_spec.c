/* test_spec.c -- pool specs: every field, defaults, ${VAR}, durations,
 * several pools per file, JSON, and many bad inputs each checked for its
 * location, key path and message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "catalog.h"
#include "spec.h"
#include "util.h"

/* ------------------------------------------------------------ helpers */

static const char *fake_env(void *ud, const char *name)
{
	const char *const *kv = ud;
	for (size_t i = 0; kv && kv[i]; i += 2)
		if (strcmp(kv[i], name) == 0)
			return kv[i + 1];
	return NULL;
}

static const char *const ENV[] = {"CI_JOB_ID", "4711", "TEAM", "research",
                                  "GPU", "h100", "EMPTY", "", NULL};

/* The clouds of a broker whose drivers are the four shipped ones. */
static const char *const four_clouds[] = {"aws", "azure", "gcp", "onprem",
                                          NULL};

static gb_spec_opts test_opts(void)
{
	gb_spec_opts o;
	memset(&o, 0, sizeof(o));
	o.getenv_fn = fake_env;
	o.getenv_ud = (void *)ENV;
	o.clouds = four_clouds;
	return o;
}

/* Parses a spec that must be valid; fails the test with the errors. */
static gb_spec_set parse_ok(const char *yaml)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	if (gb_spec_load_buf("t.yaml", yaml, strlen(yaml), &o, &set, &d) != 0) {
		char *s = gb_diags_str(&d);
		fail_msg("expected a valid spec, got:\n%s", s);
	}
	assert_int_equal(d.n, 0);
	gb_diags_free(&d);
	return set;
}

/* Parses and checks the FIRST error: line, col, key path and a substring
 * of the message; the set must come back empty. */
static void check_err(const char *name, const char *yaml, size_t len,
                      int line, int col, const char *path, const char *msg)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set = {NULL, 0};
	gb_diags d = GB_DIAGS_INIT;
	int rc = gb_spec_load_buf("t.yaml", yaml, len, &o, &set, &d);
	char *all = gb_diags_str(&d);
	if (rc != -1 || d.n == 0 || d.v[0].line != line ||
	    d.v[0].col != col || strcmp(d.v[0].path, path) != 0 ||
	    !strstr(d.v[0].msg, msg))
		fail_msg("%s: expected t.yaml:%d:%d %s: ...%s...\ngot rc=%d:\n%s",
		         name, line, col, path, msg, rc, all);
	assert_string_equal(d.v[0].file, "t.yaml");
	assert_int_equal(set.n, 0);
	assert_null(set.pools);
	free(all);
	gb_diags_free(&d);
}

#define BASE "pool:\n  name: p\n  gpu: {model: T4}\n"
/* an elastic pool: the autoscale block goes on line 7 */
#define ELASTIC                                                            \
	"pool:\n  name: p\n  purpose: inference\n  min: 1\n  max: 6\n"    \
	"  gpu: {model: T4}\n"

/* ------------------------------------------------------------ bad input */

typedef struct bad_case {
	const char *name;
	const char *yaml;
	int line, col;
	const char *path;
	const char *msg;
} bad_case;

static const bad_case bad_cases[] = {
	/* typos: unknown keys with the nearest valid key */
	{"typo_top_key", BASE "  lifecyle: {ttl: 1h}\n", 4, 3,
	 "pool.lifecyle", "unknown key \"lifecyle\"; did you mean \"lifecycle\"?"},
	{"typo_memory_gb", "pool:\n  name: p\n  gpu: {model: T4, memroy_gb: 8}\n",
	 3, 20, "pool.gpu.memroy_gb", "did you mean \"memory_gb\"?"},
	{"typo_placement_key", BASE "  placement: {cloud: [aws]}\n", 4, 15,
	 "pool.placement.cloud", "did you mean \"clouds\"?"},
	{"typo_pools_root", "pools:\n  name: p\n", 1, 1, "pools",
	 "unknown key \"pools\"; did you mean \"pool\"?"},
	{"unknown_key_no_near", BASE "  zzzzzzzzzz: 1\n", 4, 3,
	 "pool.zzzzzzzzzz", "valid keys here: name, team, labels"},
	{"missing_pool_wrapper", "name: p\ngpu: {model: T4}\n", 1, 1, "",
	 "\"pool:\" is missing"},
	/* wrong types */
	{"count_quoted", BASE "  count: \"4\"\n", 4, 10, "pool.count",
	 "found the string \"4\" (remove the quotes)"},
	{"count_word", BASE "  count: four\n", 4, 10, "pool.count",
	 "expected an integer from 1 to 10000, found the string \"four\""},
	{"count_float", BASE "  count: 2.5\n", 4, 10, "pool.count",
	 "(a whole number is needed)"},
	{"count_list", BASE "  count: [1]\n", 4, 10, "pool.count",
	 "found a list"},
	{"gpu_scalar", "pool:\n  name: p\n  gpu: H100\n", 3, 8, "pool.gpu",
	 "expected a mapping (key: value), found the string \"H100\""},
	{"pool_is_list", "pool:\n  - name: p\n", 2, 3, "pool",
	 "found a list: write one pool per document"},
	{"root_is_list", "- a\n- b\n", 1, 1, "",
	 "expected a pool spec (a mapping with the key \"pool\"), found a list"},
	{"labels_list", BASE "  labels: [a, b]\n", 4, 11, "pool.labels",
	 "expected a mapping"},
	{"max_price_quoted", BASE "  limits: {max_price_per_hour: \"5\"}\n", 4,
	 32, "pool.limits.max_price_per_hour", "(remove the quotes)"},
	{"user_data_map", BASE "  user_data: {a: b}\n", 4, 14,
	 "pool.user_data", "expected a string, found a mapping"},
	{"agent_not_bool", BASE "  agent: yes please\n", 4, 10, "pool.agent",
	 "expected"},
	/* negative, zero, huge, overflowing numbers */
	{"count_negative", BASE "  count: -1\n", 4, 10, "pool.count",
	 "expected an integer from 1 to 10000, found -1"},
	{"count_zero", BASE "  count: 0\n", 4, 10, "pool.count", "found 0"},
	{"count_huge", BASE "  count: 10001\n", 4, 10, "pool.count",
	 "from 1 to 10000, found 10001"},
	{"count_overflow", BASE "  count: 99999999999999999999\n", 4, 10,
	 "pool.count", "(the number is too large)"},
	{"gpu_count_17", "pool:\n  name: p\n  gpu: {model: T4, count: 17}\n", 3,
	 27, "pool.gpu.count", "expected an integer from 1 to 16, found 17"},
	{"memory_negative", "pool:\n  name: p\n  gpu: {model: T4, memory_gb: -8}\n",
	 3, 31, "pool.gpu.memory_gb", "from 0 to 1024, found -8"},
	{"memory_impossible", "pool:\n  name: p\n  gpu: {model: [T4, L4], memory_gb: 80}\n",
	 3, 37, "pool.gpu.memory_gb",
	 "no listed GPU model has 80 GB (the largest, L4, has 24 GB)"},
	{"max_price_zero", BASE "  limits: {max_price_per_hour: 0}\n", 4, 32,
	 "pool.limits.max_price_per_hour", "must be more than 0"},
	{"max_price_huge", BASE "  limits: {max_price_per_hour: 1e9}\n", 4, 32,
	 "pool.limits.max_price_per_hour",
	 "expected a number from 0 to 1e+06, found 1e9"},
	{"max_price_nan", BASE "  limits: {max_price_per_hour: .nan}\n", 4, 32,
	 "pool.limits.max_price_per_hour", "expected a number"},
	/* counts against min/max */
	{"min_gt_max", BASE "  purpose: inference\n  min: 5\n  max: 2\n", 6, 8,
	 "pool.max", "max (2) is less than min (5)"},
	{"count_outside_minmax",
	 BASE "  purpose: inference\n  min: 1\n  max: 4\n  count: 8\n", 7, 10,
	 "pool.count", "count 8 is outside min..max (1..4)"},
	{"training_range", BASE "  min: 1\n  max: 4\n", 5, 8, "pool.max",
	 "training pools have a fixed size"},
	/* unknown names */
	{"unknown_cloud", BASE "  placement: {clouds: [aws, amazon]}\n", 4, 29,
	 "pool.placement.clouds[1]",
	 "unknown cloud \"amazon\"; expected aws, azure, gcp or onprem (the "
	 "clouds are the loaded drivers; to use another cloud, list its driver "
	 "under drivers: in the broker config"},
	{"cloud_typo", BASE "  placement: {clouds: gpc}\n", 4, 23,
	 "pool.placement.clouds", "unknown cloud \"gpc\"; did you mean \"gcp\"?"},
	{"cloud_twice", BASE "  placement: {clouds: [aws, aws]}\n", 4, 29,
	 "pool.placement.clouds[1]", "\"aws\" is listed twice"},
	{"clouds_empty", BASE "  placement: {clouds: []}\n", 4, 23,
	 "pool.placement.clouds", "the list of clouds is empty"},
	{"gpu_unknown_near", "pool:\n  name: p\n  gpu: {model: H10}\n", 3, 16,
	 "pool.gpu.model", "unknown GPU model \"H10\"; did you mean \"H100\"?"},
	{"gpu_unknown_far", "pool:\n  name: p\n  gpu: {model: [T4, banana]}\n", 3,
	 21, "pool.gpu.model[1]", "unknown GPU model \"banana\"; known models:"},
	{"gpu_model_empty", "pool:\n  name: p\n  gpu: {model: []}\n", 3, 16,
	 "pool.gpu.model", "the list of GPU models is empty: give at least one"},
	{"gpu_twice", "pool:\n  name: p\n  gpu: {model: [h100, H100-80GB]}\n", 3,
	 23, "pool.gpu.model[1]", "GPU model H100 is listed twice"},
	{"purpose_typo", BASE "  purpose: trainig\n", 4, 12, "pool.purpose",
	 "did you mean \"training\"?"},
	{"capacity_typo", BASE "  capacity: [spot, ondemand]\n", 4, 20,
	 "pool.capacity[1]", "unknown capacity \"ondemand\"; did you mean "
	 "\"on-demand\"?"},
	{"capacity_twice", BASE "  capacity: [spot, spot]\n", 4, 20,
	 "pool.capacity[1]", "\"spot\" is listed twice"},
	{"colocate_bad", BASE "  placement: {colocate: rack}\n", 4, 25,
	 "pool.placement.colocate", "expected none, region or zone"},
	{"compliance_typo", BASE "  placement: {compliance: [gdrp]}\n", 4, 28,
	 "pool.placement.compliance[0]", "did you mean \"gdpr\"?"},
	/* no region records PCI DSS: refused rather than never placeable */
	{"compliance_pci", BASE "  placement: {compliance: [pci]}\n", 4, 28,
	 "pool.placement.compliance[0]", "expected gdpr, uk-gdpr, hipaa or fedramp"},
	/* one vocabulary with the region tags: the old tag name says so */
	{"compliance_old_tag", BASE "  placement: {compliance: [hipaa-eligible]}\n",
	 4, 28, "pool.placement.compliance[0]",
	 "\"hipaa-eligible\" is now called \"hipaa\""},
	{"data_region_unknown", BASE "  placement: {data: {region: eu-west-9}}\n",
	 4, 30, "pool.placement.data.region",
	 "unknown region \"eu-west-9\"; did you mean \"eu-west-1\"?"},
	{"data_region_missing", BASE "  placement: {data: {}}\n", 4, 21,
	 "pool.placement.data.region", "required key \"region\" is missing"},
	{"image_unknown_cloud", BASE "  image: {amazon: ami-1}\n", 4, 11,
	 "pool.image.amazon", "unknown cloud \"amazon\"; expected aws, azure, "
	 "gcp or onprem (the clouds are the loaded drivers; to use another "
	 "cloud, list its driver under drivers: in the broker config"},
	{"region_glob_space", BASE "  placement: {regions: [\"eu west\"]}\n", 4,
	 25, "pool.placement.regions[0]", "invalid region glob \"eu west\""},
	/* durations */
	{"ttl_words", BASE "  lifecycle: {ttl: 6 hours}\n", 4, 20,
	 "pool.lifecycle.ttl", "found the string \"6 hours\" (write it without "
	 "spaces"},
	{"ttl_negative", BASE "  lifecycle: {ttl: -5m}\n", 4, 20,
	 "pool.lifecycle.ttl", "(durations cannot be negative)"},
	{"ttl_no_unit", BASE "  lifecycle: {idle_timeout: 1h30}\n", 4, 29,
	 "pool.lifecycle.idle_timeout", "(give every number a unit"},
	{"ttl_zero", BASE "  lifecycle: {ttl: 0s}\n", 4, 20,
	 "pool.lifecycle.ttl", "must be longer than 0s"},
	{"ttl_too_long", BASE "  lifecycle: {ttl: 99999d}\n", 4, 20,
	 "pool.lifecycle.ttl", "at most 100 years"},
	/* autoscale */
	{"autoscale_fixed_pool", BASE "  autoscale: {gpu_util_target: 0.7}\n",
	 4, 14, "pool.autoscale", "give the pool a range with min < max"},
	{"autoscale_typo", ELASTIC "  autoscale: {gpu_util_target: 0.7, "
	 "up_afer: 1m}\n", 7, 37, "pool.autoscale.up_afer",
	 "did you mean \"up_after\"?"},
	{"autoscale_no_target", ELASTIC "  autoscale: {up_after: 1m}\n", 7, 14,
	 "pool.autoscale.gpu_util_target", "required key \"gpu_util_target\""},
	{"autoscale_target_zero", ELASTIC "  autoscale: {gpu_util_target: 0}\n",
	 7, 32, "pool.autoscale.gpu_util_target", "must be more than 0"},
	{"autoscale_target_pct", ELASTIC "  autoscale: {gpu_util_target: 70}\n",
	 7, 32, "pool.autoscale.gpu_util_target", "from 0 to 1"},
	{"autoscale_down_words", ELASTIC "  autoscale: {gpu_util_target: 0.7, "
	 "down_after: ten minutes}\n", 7, 49, "pool.autoscale.down_after",
	 "expected a duration"},
	{"autoscale_step_zero", ELASTIC "  autoscale: {gpu_util_target: 0.7, "
	 "max_step: 0}\n", 7, 47, "pool.autoscale.max_step",
	 "expected an integer from 1 to 10000"},
	{"autoscale_days", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: mon-fry, from: \"08:00\", to: \"20:00\","
	 " min: 2}\n", 10, 16, "pool.autoscale.schedule[0].days",
	 "expected days such as mon-fri"},
	{"autoscale_from", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: daily, from: \"8am\", to: \"20:00\","
	 " min: 2}\n", 10, 29, "pool.autoscale.schedule[0].from",
	 "expected a time \"HH:MM\""},
	{"autoscale_to_before", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: daily, from: \"20:00\", to: \"08:00\","
	 " min: 2}\n", 10, 42, "pool.autoscale.schedule[0].to",
	 "must be after from"},
	{"autoscale_tz_typo", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: daily, from: \"08:00\", to: \"20:00\","
	 " tz: Europe/Berlim, min: 2}\n", 10, 55,
	 "pool.autoscale.schedule[0].tz", "\"Europe/Berlim\" is not a zone in "
	 "/usr/share/zoneinfo (no such zone file); did you mean Europe/Berlin?"},
	{"autoscale_tz_unknown", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: daily, from: \"08:00\", to: \"20:00\","
	 " tz: Mars/Olympus_Mons, min: 2}\n", 10, 55,
	 "pool.autoscale.schedule[0].tz", "expected an IANA zone name such as "
	 "Europe/Berlin"},
	{"autoscale_tz_path", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: daily, from: \"08:00\", to: \"20:00\","
	 " tz: ../../etc/passwd, min: 2}\n", 10, 55,
	 "pool.autoscale.schedule[0].tz", "is not a zone name"},
	{"autoscale_window_min", ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	 "    schedule:\n      - {days: daily, from: \"08:00\", to: \"20:00\","
	 " min: 9}\n", 10, 56, "pool.autoscale.schedule[0].min",
	 "expected an integer from 1 to 6"},
	{"autoscale_window_no_min", ELASTIC "  autoscale:\n"
	 "    gpu_util_target: 0.7\n    schedule:\n"
	 "      - {days: daily, from: \"08:00\", to: \"20:00\"}\n", 10, 9,
	 "pool.autoscale.schedule[0].min", "required key \"min\""},
	/* names, labels, keys, policies */
	/* serve.webhook: https, or http to loopback (issue 42.3) */
	{"webhook_http_off_loopback",
	 BASE "  serve: {port: 8000, webhook: \"http://10.1.2.3/h\"}\n", 4, 32,
	 "pool.serve.webhook", "plain http:// to 10.1.2.3 would send the "
	 "pool's addresses in clear; use https://"},
	{"webhook_scheme", BASE "  serve: {port: 8000, webhook: \"ftp://x/h\"}\n",
	 4, 32, "pool.serve.webhook", "the ftp:// scheme is not allowed"},
	{"webhook_userinfo",
	 BASE "  serve: {port: 8000, webhook: \"https://u:pw@lb.example/h\"}\n",
	 4, 32, "pool.serve.webhook", "the URL carries a user or password"},
	{"name_upper", "pool:\n  name: Train_1\n  gpu: {model: T4}\n", 2, 9,
	 "pool.name", "invalid name \"Train_1\"" },
	{"name_suggest", "pool:\n  name: Train_1\n  gpu: {model: T4}\n", 2, 9,
	 "pool.name", "did you mean \"train-1\"?"},
	{"name_trailing_dash", "pool:\n  name: abc-\n  gpu: {model: T4}\n", 2, 9,
	 "pool.name", "not ending with '-'"},
	{"name_too_long",
	 "pool:\n  name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
	 "  gpu: {model: T4}\n", 2, 9, "pool.name",
	 "is 49 characters long; the limit is 48"},
	{"name_missing", "pool:\n  gpu: {model: T4}\n", 2, 3, "pool.name",
	 "required key \"name\" is missing"},
	{"gpu_missing", "pool:\n  name: p\n", 2, 3, "pool.gpu",
	 "required key \"gpu\" is missing"},
	{"gpu_model_missing", "pool:\n  name: p\n  gpu: {count: 2}\n", 3, 8,
	 "pool.gpu.model", "required key \"model\" is missing"},
	{"team_bad", BASE "  team: R&D\n", 4, 9, "pool.team",
	 "invalid team \"R&D\""},
	{"label_key_upper", BASE "  labels: {Project: x}\n", 4, 12,
	 "pool.labels.Project", "invalid label key \"Project\""},
	{"label_reserved", BASE "  labels: {gpubroker-pool: x}\n", 4, 12,
	 "pool.labels.gpubroker-pool", "reserved for the broker's own tags"},
	{"label_value_long",
	 BASE "  labels: {k: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n",
	 4, 15, "pool.labels.k", "label value is 64 characters long"},
	{"policy_bad", BASE "  policy: [cost, \"Cost Policy\"]\n", 4, 18,
	 "pool.policy[1]", "\"Cost Policy\" is neither a policy name"},
	{"policy_twice", BASE "  policy: [cost, cost]\n", 4, 18,
	 "pool.policy[1]", "policy \"cost\" is listed twice"},
	/* issue 31.2: {name:, args:} entries */
	{"policy_entry_key", BASE "  policy: [{nmae: budget}]\n", 4, 13,
	 "pool.policy[0].nmae", "unknown key \"nmae\"; did you mean \"name\"?"},
	{"policy_entry_noname", BASE "  policy: [{args: {a: 1}}]\n", 4, 12,
	 "pool.policy[0].name", "expected the policy's name"},
	{"policy_args_list", BASE "  policy: [{name: budget, args: {a: [1]}}]\n",
	 4, 37, "pool.policy[0].args.a", "expected a string value"},
	{"policy_entry_list", BASE "  policy: [[budget]]\n", 4, 12,
	 "pool.policy[0]", "expected a policy name or {name: NAME, args"},
	{"ssh_not_key", BASE "  ssh_keys: [hello]\n", 4, 14, "pool.ssh_keys[0]",
	 "not an OpenSSH public key"},
	{"ssh_private_key",
	 BASE "  ssh_keys: \"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3Blbn\"\n", 4,
	 13, "pool.ssh_keys", "this is a PRIVATE key"},
	/* duplicates */
	{"duplicate_key", "pool:\n  name: p\n  name: q\n  gpu: {model: T4}\n", 3,
	 3, "", "duplicate key \"name\" (first at line 2)"},
	{"duplicate_pool_name", BASE "---\n" BASE, 6, 9, "pool.name",
	 "pool name \"p\" is already used by the pool at line 1"},
	/* environment */
	{"env_unset", "pool:\n  name: t-${NOPE}\n  gpu: {model: T4}\n", 2, 9, "",
	 "environment variable NOPE is not set"},
	{"env_bad_ref", "pool:\n  name: t-${no pe}\n  gpu: {model: T4}\n", 2, 9,
	 "", "is not a valid variable reference"},
	{"env_value_invalid", "pool:\n  name: ${TEAM}_x\n  gpu: {model: T4}\n", 2,
	 9, "pool.name", "invalid name \"research_x\""},
	/* abuse and malformed files */
	{"tab_indent", "pool:\n\tname: p\n", 2, 1, "", "tab character"},
	{"tab_inner", "pool:\n  name: p\n  gpu:\n  \tmodel: T4\n", 4, 3, "",
	 "tab character"},
	{"alias", "pool:\n  name: &n p\n  team: *n\n", 3, 9, "",
	 "YAML aliases (*n) are not allowed"},
	{"merge_key", "base: &b {count: 1}\npool:\n  <<: *b\n", 3, 7, "",
	 "YAML aliases (*b) are not allowed"},
	{"invalid_utf8", "pool:\n  name: caf\xe9\n", 2, 12, "",
	 "not valid UTF-8 (byte 0xe9"},
	{"utf16_bom", "\xff\xfep\0o\0", 1, 1, "",
	 "not valid UTF-8 (byte 0xff at offset 0)"},
	{"syntax_unclosed", "pool:\n  name: [p\n", 3, 1, "", "invalid YAML"},
	{"nul_escape", "pool:\n  name: \"p\\0q\"\n  gpu: {model: T4}\n", 2, 9, "",
	 "NUL character"},
	{"empty_file", "", 1, 1, "", "no pool in this file"},
	{"comments_only", "# nothing\n---\n", 1, 1, "", "no pool in this file"},
	{"scalar_root", "hello\n", 1, 1, "", "found the string \"hello\""},
};

static void run_bad_case(void **state)
{
	const bad_case *c = *state;
	check_err(c->name, c->yaml, strlen(c->yaml), c->line, c->col, c->path,
	          c->msg);
}

/* cases that need bytes strlen cannot carry */
static void test_bad_nul_bytes(void **state)
{
	static const char y[] = "pool:\n  na\0me: p\n";
	(void)state;
	check_err("nul", y, sizeof(y) - 1, 2, 5, "", "NUL byte");
}

static void test_bad_binary_garbage(void **state)
{
	unsigned char buf[4096];
	uint32_t x = 2463534242u;
	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)(x | 1); /* no NUL: reach the UTF-8 check */
	}
	buf[0] = 0xC3; /* a lead byte followed by a non-continuation */
	buf[1] = 'a';
	check_err("garbage", (const char *)buf, sizeof(buf), 1, 1, "",
	          "not valid UTF-8 (byte 0xc3 at offset 0)");
}

static void test_bad_25mb(void **state)
{
	size_t n = 25u << 20;
	char *big = gb_xmalloc(n);
	int64_t t0 = gb_mono_ms();
	(void)state;
	memset(big, '#', n);
	memcpy(big, BASE, strlen(BASE));
	check_err("25mb", big, n, 0, 0, "",
	          "file is 26214400 bytes, larger than the limit of 1048576");
	assert_true(gb_mono_ms() - t0 < 2000);
	free(big);
}

static void test_bad_25mb_file(void **state)
{
	char path[] = "/tmp/gb_spec_big_XXXXXX";
	int fd = mkstemp(path);
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	char block[65536];
	int64_t t0;
	(void)state;
	assert_true(fd >= 0);
	memset(block, '#', sizeof(block));
	for (int i = 0; i < 400; i++)
		assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
	close(fd);
	t0 = gb_mono_ms();
	assert_int_equal(gb_spec_load_file(path, &o, &set, &d), -1);
	assert_true(gb_mono_ms() - t0 < 2000);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].file, path);
	assert_non_null(strstr(d.v[0].msg, "larger than the limit of 1048576"));
	assert_int_equal(set.n, 0);
	unlink(path);
	gb_diags_free(&d);
}

static void test_bad_alias_bomb(void **state)
{
	gb_buf b = GB_BUF_INIT;
	int64_t t0;
	(void)state;
	gb_buf_puts(&b, "pool:\n  name: p\n  gpu: {model: T4}\n  labels:\n"
	                "    a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
	for (int i = 1; i < 10; i++) {
		gb_buf_printf(&b, "    %c: &%c [", 'a' + i, 'a' + i);
		for (int k = 0; k < 9; k++)
			gb_buf_printf(&b, "%s*%c", k ? "," : "", 'a' + i - 1);
		gb_buf_puts(&b, "]\n");
	}
	t0 = gb_mono_ms();
	/* stops at the very first alias: line 6, column 12 */
	check_err("bomb", b.data, b.len, 6, 12, "",
	          "YAML aliases (*a) are not allowed");
	assert_true(gb_mono_ms() - t0 < 1000);
	gb_buf_free(&b);
}

static void test_bad_deep_nesting(void **state)
{
	gb_buf b = GB_BUF_INIT;
	(void)state;
	gb_buf_puts(&b, "pool:\n  labels: ");
	for (int i = 0; i < 100; i++)
		gb_buf_putc(&b, '[');
	for (int i = 0; i < 100; i++)
		gb_buf_putc(&b, ']');
	gb_buf_putc(&b, '\n');
	/* root map + pool map = 2 levels; the 31st '[' is level 33 */
	check_err("deep", b.data, b.len, 2, 11 + 30, "",
	          "nesting deeper than 32 levels");
	gb_buf_free(&b);
}

static void test_bad_user_data_large(void **state)
{
	gb_buf b = GB_BUF_INIT;
	(void)state;
	gb_buf_puts(&b, BASE "  user_data: \"");
	for (int i = 0; i < 17000; i++)
		gb_buf_putc(&b, 'x');
	gb_buf_puts(&b, "\"\n");
	check_err("user_data", b.data, b.len, 4, 14, "pool.user_data",
	          "user_data is 17000 bytes; the limit is 16384");
	gb_buf_free(&b);
}

static void test_bad_too_many_labels(void **state)
{
	gb_buf b = GB_BUF_INIT;
	(void)state;
	gb_buf_puts(&b, BASE "  labels:\n");
	for (int i = 0; i < 33; i++)
		gb_buf_printf(&b, "    k%d: v\n", i);
	check_err("labels", b.data, b.len, 5, 5, "pool.labels",
	          "33 labels; at most 32 are allowed");
	gb_buf_free(&b);
}

/* Every error of a file is reported, in file order. */
static void test_all_errors_reported(void **state)
{
	const char *y = "pool:\n"
	                "  name: Bad_Name\n"
	                "  count: -2\n"
	                "  gpu: {model: H10, count: 99, memroy_gb: 1}\n"
	                "  capacity: [spto]\n"
	                "  placement: {clouds: [amazon], colocate: rack}\n"
	                "  lifecycle: {ttl: 6 hours}\n"
	                "  labels: {gpubroker-x: y}\n"
	                "  ssh_keys: [nope]\n"
	                "---\n"
	                "pool:\n"
	                "  name: ok\n"
	                "  gpu: {model: T4}\n"
	                "  purpose: serving\n";
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	static const struct {
		int line, col;
		const char *path;
	} want[] = {
		{2, 9, "pool.name"},
		{3, 10, "pool.count"},
		{4, 16, "pool.gpu.model"},
		{4, 28, "pool.gpu.count"},
		{4, 32, "pool.gpu.memroy_gb"},
		{5, 14, "pool.capacity[0]"},
		{6, 24, "pool.placement.clouds[0]"},
		{6, 43, "pool.placement.colocate"},
		{7, 20, "pool.lifecycle.ttl"},
		{8, 12, "pool.labels.gpubroker-x"},
		{9, 14, "pool.ssh_keys[0]"},
		{14, 12, "pool.purpose"},
	};
	(void)state;
	assert_int_equal(gb_spec_load_buf("t.yaml", y, strlen(y), &o, &set, &d),
	                 -1);
	if (d.n != GB_ARRAY_LEN(want)) {
		char *s = gb_diags_str(&d);
		fail_msg("expected %zu errors, got %zu:\n%s", GB_ARRAY_LEN(want),
		         d.n, s);
	}
	for (size_t i = 0; i < d.n; i++) {
		assert_int_equal(d.v[i].line, want[i].line);
		assert_int_equal(d.v[i].col, want[i].col);
		assert_string_equal(d.v[i].path, want[i].path);
	}
	assert_int_equal(set.n, 0);
	gb_diags_free(&d);
}

static void test_diag_format(void **state)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	const char *y = "pool:\n  name: p\n  gpu: {model: T4, count: eight}\n";
	char *s;
	(void)state;
	assert_int_equal(gb_spec_load_buf("specs/a.yaml", y, strlen(y), &o, &set,
	                                  &d), -1);
	s = gb_diags_str(&d);
	assert_string_equal(s, "specs/a.yaml:3:27: error: pool.gpu.count: "
	                       "expected an integer from 1 to 16, found the "
	                       "string \"eight\"\n");
	free(s);
	gb_diags_free(&d);
}

/* ------------------------------------------------------------ good input */

static const char *FULL =
	"# every field\n"
	"pool:\n"
	"  name: train-${CI_JOB_ID}\n"
	"  team: ${TEAM}\n"
	"  labels: {project: llm, cost-center: \"4411\"}\n"
	"  purpose: training\n"
	"  count: 4\n"
	"  gpu: {model: [H100, a100-80gb], count: 8, memory_gb: 80}\n"
	"  capacity: [spot, on-demand, reserved]\n"
	"  placement:\n"
	"    clouds: [aws, gcp, azure, onprem]\n"
	"    regions: [\"eu-*\", us-east-1]\n"
	"    colocate: region\n"
	"    data: {region: eu-west-1}\n"
	"    compliance: [gdpr, hipaa]\n"
	"  limits: {max_price_per_hour: 250.5}\n"
	"  lifecycle: {ttl: 6h, idle_timeout: 30m}\n"
	"  policy: [org-compliance, cost, ./my/rules.lua]\n"
	"  image: {aws: ami-123, gcp: projects/x/images/y, azure: /subs/z, "
	"onprem: ubuntu}\n"
	"  ssh_keys:\n"
	"    - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB me@host\n"
	"    - ecdsa-sha2-nistp256 AAAAE2VjZHNh\n"
	"  user_data: |\n"
	"    #cloud-config\n"
	"    runcmd: [nvidia-smi]\n";

static void test_every_field(void **state)
{
	gb_spec_set set = parse_ok(FULL);
	const gb_pool_spec *p;
	(void)state;
	assert_int_equal(set.n, 1);
	p = &set.pools[0];
	assert_string_equal(p->name, "train-4711");
	assert_string_equal(p->team, "research");
	assert_int_equal(p->labels.n, 2);
	assert_string_equal(gb_kvs_get(&p->labels, "project"), "llm");
	assert_string_equal(gb_kvs_get(&p->labels, "cost-center"), "4411");
	assert_int_equal(p->purpose, GB_PURPOSE_TRAINING);
	assert_int_equal(p->count, 4);
	assert_int_equal(p->min, 4);
	assert_int_equal(p->max, 4);
	assert_int_equal(p->gpu_models.n, 2);
	assert_string_equal(p->gpu_models.v[0], "H100");
	assert_string_equal(p->gpu_models.v[1], "A100-80GB");
	assert_int_equal(p->gpu_count, 8);
	assert_int_equal(p->gpu_memory_gb, 80);
	assert_int_equal(p->ncapacity, 3);
	assert_int_equal(p->capacity[0], GB_CAPACITY_SPOT);
	assert_int_equal(p->capacity[1], GB_CAPACITY_ON_DEMAND);
	assert_int_equal(p->capacity[2], GB_CAPACITY_RESERVED);
	assert_int_equal(p->clouds.n, 4);
	assert_string_equal(p->clouds.v[3], "onprem");
	assert_int_equal(p->regions.n, 2);
	assert_string_equal(p->regions.v[0], "eu-*");
	assert_int_equal(p->colocate, GB_COLOCATE_REGION);
	assert_string_equal(p->data_region, "eu-west-1");
	assert_int_equal(p->compliance.n, 2);
	assert_string_equal(p->compliance.v[1], "hipaa");
	assert_true(p->max_price_per_hour == 250.5);
	assert_int_equal(p->ttl_s, 6 * 3600);
	assert_int_equal(p->idle_timeout_s, 30 * 60);
	assert_int_equal(p->policies.n, 3);
	assert_string_equal(p->policies.v[2], "./my/rules.lua");
	assert_int_equal(p->images.n, 4);
	assert_string_equal(gb_kvs_get(&p->images, "gcp"), "projects/x/images/y");
	assert_int_equal(p->ssh_keys.n, 2);
	assert_string_equal(p->user_data, "#cloud-config\nruncmd: [nvidia-smi]\n");
	assert_string_equal(p->file, "t.yaml");
	assert_int_equal(p->line, 2);
	assert_non_null(p->source_hash);
	assert_int_equal(strlen(p->source_hash), 64);
	gb_spec_set_free(&set);
	assert_int_equal(set.n, 0);
}

/* lifecycle.consolidate: false (issue 41): parsed, and kept in the
 * stored JSON (which is parsed again on every converge) */
static void test_consolidate_off(void **state)
{
	gb_spec_set set = parse_ok("pool:\n  name: p\n  gpu: {model: t4}\n"
	                           "  lifecycle: {consolidate: false}\n");
	char *js;
	(void)state;
	assert_int_equal(set.pools[0].no_consolidate, 1);
	js = gb_pool_spec_to_json(&set.pools[0]);
	assert_non_null(strstr(js, "\"consolidate\":false"));
	free(js);
	gb_spec_set_free(&set);
}

/* agent: true is kept, and survives the stored JSON */
static void test_agent_key(void **state)
{
	gb_spec_set set = parse_ok(BASE "  agent: true\n"), back = {NULL, 0};
	gb_spec_opts so = test_opts();
	gb_diags d = GB_DIAGS_INIT;
	char *j;
	(void)state;
	assert_int_equal(set.pools[0].agent, 1);
	j = gb_pool_spec_to_json(&set.pools[0]);
	assert_true(strstr(j, "\"agent\":true") || strstr(j, "\"agent\": true"));
	assert_int_equal(gb_spec_load_json("p", j, strlen(j), &so, &back, &d), 0);
	assert_int_equal(back.pools[0].agent, 1);
	free(j);
	gb_spec_set_free(&back);
	gb_spec_set_free(&set);
	set = parse_ok(BASE);
	assert_int_equal(set.pools[0].agent, 0);
	j = gb_pool_spec_to_json(&set.pools[0]);
	assert_null(strstr(j, "agent"));
	free(j);
	gb_spec_set_free(&set);
	gb_diags_free(&d);
}

static void test_defaults(void **state)
{
	gb_spec_set set = parse_ok("pool:\n  name: p\n  gpu: {model: t4}\n");
	const gb_pool_spec *p = &set.pools[0];
	(void)state;
	assert_string_equal(p->team, "default");
	assert_int_equal(p->labels.n, 0);
	assert_int_equal(p->purpose, GB_PURPOSE_TRAINING);
	assert_int_equal(p->count, 1);
	assert_int_equal(p->min, 1);
	assert_int_equal(p->max, 1);
	assert_string_equal(p->gpu_models.v[0], "T4");
	assert_int_equal(p->gpu_count, 1);
	assert_int_equal(p->gpu_memory_gb, 0);
	assert_int_equal(p->ncapacity, 2);
	assert_int_equal(p->capacity[0], GB_CAPACITY_SPOT);
	assert_int_equal(p->capacity[1], GB_CAPACITY_ON_DEMAND);
	assert_int_equal(p->clouds.n, 0);
	assert_int_equal(p->regions.n, 0);
	assert_int_equal(p->colocate, GB_COLOCATE_NONE);
	assert_null(p->data_region);
	assert_int_equal(p->compliance.n, 0);
	assert_true(p->max_price_per_hour == 0);
	assert_int_equal(p->ttl_s, 0);
	assert_int_equal(p->idle_timeout_s, 0);
	assert_int_equal(p->no_consolidate, 0);
	assert_int_equal(p->policies.n, 0);
	assert_int_equal(p->images.n, 0);
	assert_int_equal(p->ssh_keys.n, 0);
	assert_null(p->user_data);
	gb_spec_set_free(&set);
}

static void test_defaults_by_purpose(void **state)
{
	gb_spec_set set = parse_ok(
		"pool: {name: a, gpu: {model: L4}, purpose: inference}\n---\n"
		"pool: {name: b, gpu: {model: L4}, purpose: dev, count: 3}\n---\n"
		"pool: {name: c, gpu: {model: L4}, count: 2}\n---\n"
		"pool: {name: d, gpu: {model: L4}, count: 2, placement: "
		"{colocate: none}}\n");
	(void)state;
	assert_int_equal(set.n, 4);
	assert_int_equal(set.pools[0].ncapacity, 1);
	assert_int_equal(set.pools[0].capacity[0], GB_CAPACITY_ON_DEMAND);
	assert_int_equal(set.pools[0].colocate, GB_COLOCATE_NONE);
	assert_int_equal(set.pools[1].ncapacity, 2);
	assert_int_equal(set.pools[1].capacity[0], GB_CAPACITY_SPOT);
	assert_int_equal(set.pools[1].colocate, GB_COLOCATE_NONE);
	/* training with more than one instance wants one zone */
	assert_int_equal(set.pools[2].colocate, GB_COLOCATE_ZONE);
	assert_int_equal(set.pools[3].colocate, GB_COLOCATE_NONE);
	gb_spec_set_free(&set);
}

/* priority: and lifecycle.preemptible / preempt_grace (issue 35). */
static void test_priority_and_preemptible(void **state)
{
	(void)state;
	gb_spec_set set = parse_ok(
		"pool: {name: a, gpu: {model: L4}, purpose: dev}\n---\n"
		"pool: {name: b, gpu: {model: L4}}\n---\n"
		"pool: {name: c, gpu: {model: L4}, priority: production, "
		"lifecycle: {preemptible: true, preempt_grace: 5m}}\n---\n"
		"pool: {name: d, gpu: {model: L4}, purpose: dev, "
		"lifecycle: {preemptible: false}}\n");
	assert_int_equal(set.n, 4);
	assert_int_equal(set.pools[0].preemptible, 1);
	assert_null(set.pools[0].priority);
	assert_int_equal(set.pools[1].preemptible, 0);
	assert_int_equal(set.pools[1].preempt_grace_s, 0);
	assert_int_equal(set.pools[2].preemptible, 1);
	assert_int_equal(set.pools[2].preempt_grace_s, 300);
	assert_string_equal(set.pools[2].priority, "production");
	assert_int_equal(set.pools[3].preemptible, 0);
	/* defaults are not written out: an older pool's hash stays */
	char *j = gb_pool_spec_to_json(&set.pools[0]);
	assert_null(strstr(j, "preempt"));
	assert_null(strstr(j, "priority"));
	free(j);
	/* and what is given survives the JSON round trip */
	for (size_t i = 2; i < 4; i++) {
		j = gb_pool_spec_to_json(&set.pools[i]);
		gb_spec_set back;
		gb_diags d = GB_DIAGS_INIT;
		assert_int_equal(gb_spec_load_json("j", j, strlen(j), NULL,
		                                   &back, &d), 0);
		assert_int_equal(back.pools[0].preemptible,
		                 set.pools[i].preemptible);
		assert_int_equal(back.pools[0].preempt_grace_s,
		                 set.pools[i].preempt_grace_s);
		if (set.pools[i].priority)
			assert_string_equal(back.pools[0].priority,
			                    set.pools[i].priority);
		gb_spec_set_free(&back);
		gb_diags_free(&d);
		free(j);
	}
	gb_pool_spec cp;
	gb_pool_spec_copy(&cp, &set.pools[2]);
	assert_string_equal(cp.priority, "production");
	gb_pool_spec_free(&cp);
	gb_spec_set_free(&set);

	const char *y1 = BASE "  lifecycle: {preemptible: maybe}\n";
	check_err("preemptible", y1, strlen(y1), 4, 28,
	          "pool.lifecycle.preemptible", "true or false");
	const char *y2 = BASE "  lifecycle: {preempt_grace: 2d}\n";
	check_err("grace", y2, strlen(y2), 4, 30,
	          "pool.lifecycle.preempt_grace", "at most 1d");
	const char *y3 = BASE "  priority: Top\n";
	check_err("class", y3, strlen(y3), 4, 13, "pool.priority",
	          "invalid priority class");
	/* with the config's classes: an unknown one is named with them */
	static const char *const classes[] = {"production", "batch", "dev",
	                                      NULL};
	gb_spec_opts o = test_opts();
	o.priorities = classes;
	gb_diags d = GB_DIAGS_INIT;
	const char *y4 = BASE "  priority: urgent\n";
	assert_int_equal(gb_spec_load_buf("t.yaml", y4, strlen(y4), &o, &set,
	                                  &d), -1);
	assert_int_equal(d.v[0].line, 4);
	assert_string_equal(d.v[0].path, "pool.priority");
	assert_non_null(strstr(d.v[0].msg, "production, batch, dev"));
	gb_diags_free(&d);
}

static void test_min_max(void **state)
{
	gb_spec_set set = parse_ok(
		"pool: {name: a, gpu: {model: L4}, purpose: inference, min: 2, max: 8}\n"
		"---\n"
		"pool: {name: b, gpu: {model: L4}, purpose: inference, min: 2, max: 8, count: 5}\n"
		"---\n"
		"pool: {name: c, gpu: {model: L4}, purpose: inference, max: 4}\n"
		"---\n"
		"pool: {name: d, gpu: {model: L4}, purpose: inference, min: 3}\n"
		"---\n"
		"pool: {name: e, gpu: {model: L4}, purpose: inference, count: 2, max: 6}\n"
		"---\n"
		"pool: {name: f, gpu: {model: L4}, min: 3, max: 3}\n");
	(void)state;
	assert_int_equal(set.n, 6);
	assert_int_equal(set.pools[0].count, 2);
	assert_int_equal(set.pools[0].min, 2);
	assert_int_equal(set.pools[0].max, 8);
	assert_int_equal(set.pools[1].count, 5);
	assert_int_equal(set.pools[2].min, 1);
	assert_int_equal(set.pools[2].count, 1);
	assert_int_equal(set.pools[2].max, 4);
	assert_int_equal(set.pools[3].min, 3);
	assert_int_equal(set.pools[3].max, 3);
	assert_int_equal(set.pools[3].count, 3);
	assert_int_equal(set.pools[4].min, 2);
	assert_int_equal(set.pools[4].count, 2);
	assert_int_equal(set.pools[4].max, 6);
	/* training may use min == max */
	assert_int_equal(set.pools[5].count, 3);
	assert_int_equal(set.pools[5].colocate, GB_COLOCATE_ZONE);
	gb_spec_set_free(&set);
}

static void test_env_substitution(void **state)
{
	gb_spec_set set = parse_ok(
		"pool:\n"
		"  name: ci-${CI_JOB_ID}-${MISSING:-x}\n"
		"  team: ${NOTEAM:-platform}\n"
		"  labels: {a: \"${EMPTY:-dflt}\", b: \"$${LITERAL}\"}\n"
		"  gpu: {model: \"${GPU}\"}\n");
	const gb_pool_spec *p = &set.pools[0];
	(void)state;
	assert_string_equal(p->name, "ci-4711-x");
	assert_string_equal(p->team, "platform");
	assert_string_equal(gb_kvs_get(&p->labels, "a"), "dflt");
	assert_string_equal(gb_kvs_get(&p->labels, "b"), "${LITERAL}");
	assert_string_equal(p->gpu_models.v[0], "H100");
	gb_spec_set_free(&set);
}

static void test_durations(void **state)
{
	static const struct {
		const char *text;
		int64_t secs;
	} cases[] = {{"90s", 90},       {"30m", 1800},   {"6h", 21600},
	             {"2d", 172800},    {"1h30m", 5400}, {"1w", 604800},
	             {"3600", 3600},    {"1d12h", 129600}};
	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		char y[256];
		gb_spec_set set;
		snprintf(y, sizeof(y), BASE "  lifecycle: {ttl: %s, idle_timeout: "
		         "%s}\n", cases[i].text, cases[i].text);
		set = parse_ok(y);
		assert_int_equal(set.pools[0].ttl_s, cases[i].secs);
		assert_int_equal(set.pools[0].idle_timeout_s, cases[i].secs);
		gb_spec_set_free(&set);
	}
}

static void test_multi_doc(void **state)
{
	gb_spec_set set = parse_ok("---\n" BASE "---\n---\n# empty\n---\n"
	                           "pool:\n  name: q\n  gpu: {model: L4}\n...\n");
	(void)state;
	assert_int_equal(set.n, 2);
	assert_string_equal(set.pools[0].name, "p");
	assert_int_equal(set.pools[0].line, 2);
	assert_string_equal(set.pools[1].name, "q");
	assert_int_equal(set.pools[1].line, 9);
	assert_string_not_equal(set.pools[0].source_hash,
	                        set.pools[1].source_hash);
	gb_spec_set_free(&set);
}

static void test_scalar_lists(void **state)
{
	gb_spec_set set = parse_ok(
		"pool:\n  name: p\n  gpu: {model: L40S}\n  capacity: spot\n"
		"  placement: {clouds: AWS, regions: eu-west-1, compliance: gdpr}\n"
		"  policy: cost\n  ssh_keys: ssh-rsa AAAAB3Nza me\n");
	const gb_pool_spec *p = &set.pools[0];
	(void)state;
	assert_int_equal(p->ncapacity, 1);
	assert_int_equal(p->capacity[0], GB_CAPACITY_SPOT);
	assert_string_equal(p->clouds.v[0], "aws");
	assert_string_equal(p->regions.v[0], "eu-west-1");
	assert_string_equal(p->compliance.v[0], "gdpr");
	assert_string_equal(p->policies.v[0], "cost");
	assert_int_equal(p->ssh_keys.n, 1);
	gb_spec_set_free(&set);
}

static void test_gpu_canonical(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"H100", "H100"},          {"h100", "H100"},
		{"h100-80gb", "H100"},     {"nvidia h100", "H100"},
		{"a100", "A100"},          {"A100-40GB", "A100"},
		{"a100-40gb", "A100"},     {"a100-80gb", "A100-80GB"},
		{"A100_80GB", "A100-80GB"}, {"l4", "L4"},
		{"l40s", "L40S"},          {"a10g", "A10G"},
		{"A10", "A10"},            {"t4", "T4"},
		{"v100", "V100"},          {"b200", "B200"},
		{"h200", "H200"},          {"mi300x", "MI300X"},
		{"AMD MI300X", "MI300X"},
	};
	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
		const char *c = gb_gpu_canonical(cases[i].in);
		if (!c || strcmp(c, cases[i].out) != 0)
			fail_msg("%s -> %s, expected %s", cases[i].in,
			         c ? c : "NULL", cases[i].out);
	}
	assert_null(gb_gpu_canonical("banana"));
	assert_null(gb_gpu_canonical(""));
	assert_null(gb_gpu_canonical(NULL));
	assert_string_equal(gb_gpu_suggest("h10"), "H100");
	assert_int_equal(gb_gpu_memory_gb("H100"), 80);
	assert_int_equal(gb_gpu_memory_gb("A100"), 40);
	assert_int_equal(gb_gpu_memory_gb("nope"), 0);
	assert_true(gb_gpu_model_count() >= 12);
	for (size_t i = 0; i < gb_gpu_model_count(); i++)
		assert_string_equal(gb_gpu_canonical(gb_gpu_model_at(i)),
		                    gb_gpu_model_at(i));
	assert_null(gb_gpu_model_at(gb_gpu_model_count()));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(gb_purpose_name(GB_PURPOSE_TRAINING), "training");
	assert_string_equal(gb_purpose_name(GB_PURPOSE_INFERENCE), "inference");
	assert_string_equal(gb_purpose_name(GB_PURPOSE_DEV), "dev");
	assert_string_equal(gb_colocate_name(GB_COLOCATE_ZONE), "zone");
	assert_string_equal(gb_colocate_name(GB_COLOCATE_REGION), "region");
	assert_string_equal(gb_colocate_name(GB_COLOCATE_NONE), "none");
}

static void test_custom_clouds(void **state)
{
	static const char *const clouds[] = {"aws", "sim", NULL};
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	const char *ok = BASE "  placement: {clouds: [sim]}\n  image: {sim: x}\n";
	const char *bad = BASE "  placement: {clouds: [gcp]}\n";
	(void)state;
	o.clouds = clouds;
	assert_int_equal(gb_spec_load_buf("t", ok, strlen(ok), &o, &set, &d), 0);
	assert_string_equal(set.pools[0].clouds.v[0], "sim");
	gb_spec_set_free(&set);
	assert_int_equal(gb_spec_load_buf("t", bad, strlen(bad), &o, &set, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "expected aws or sim"));
	gb_diags_free(&d);
}

/* No list (a stored spec; a client that hands its spec to a daemon): any
 * driver-like name passes, folded to lower case; a malformed one does
 * not.  An empty list (no driver loaded) refuses every cloud, saying so. */
static void test_clouds_any_or_none(void **state)
{
	static const char *const none[] = {NULL};
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	const char *third = BASE "  placement: {clouds: [TinyCloud, aws]}\n"
	                         "  image: {tinycloud: img-1}\n";
	const char *twice = BASE "  placement: {clouds: [tiny, Tiny]}\n";
	const char *bad = BASE "  placement: {clouds: [\"tiny cloud\"]}\n";
	(void)state;
	o.clouds = NULL;
	assert_int_equal(gb_spec_load_buf("t", third, strlen(third), &o, &set,
	                                  &d), 0);
	assert_int_equal(set.pools[0].clouds.n, 2);
	assert_string_equal(set.pools[0].clouds.v[0], "tinycloud");
	assert_string_equal(gb_kvs_get(&set.pools[0].images, "tinycloud"),
	                    "img-1");
	gb_spec_set_free(&set);
	assert_int_equal(gb_spec_load_buf("t", twice, strlen(twice), &o, &set,
	                                  &d), -1);
	assert_non_null(strstr(d.v[0].msg, "\"tiny\" is listed twice"));
	gb_diags_free(&d);
	assert_int_equal(gb_spec_load_buf("t", bad, strlen(bad), &o, &set,
	                                  &d), -1);
	assert_string_equal(d.v[0].path, "pool.placement.clouds[0]");
	assert_non_null(strstr(d.v[0].msg, "invalid cloud name \"tiny cloud\""));
	gb_diags_free(&d);
	o.clouds = none;
	assert_int_equal(gb_spec_load_buf("t", third, strlen(third), &o, &set,
	                                  &d), -1);
	assert_non_null(strstr(d.v[0].msg, "no driver is loaded"));
	assert_non_null(strstr(d.v[0].msg, "list its driver under drivers:"));
	gb_diags_free(&d);
}

/* An image for a cloud this broker has no driver for is kept when the
 * pool does not use that cloud (a spec shared by brokers), but not when
 * the pool would use every loaded cloud, nor when it is a near miss of a
 * cloud the pool names (a typo). */
static void test_image_for_other_brokers(void **state)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	const char *shared = BASE "  placement: {clouds: [onprem]}\n"
	                          "  image: {onprem: img, tinycloud: t-1}\n";
	const char *all = BASE "  image: {tinycloud: t-1}\n";
	const char *typo = BASE "  placement: {clouds: [gcp]}\n"
	                        "  image: {gpc: x}\n";
	(void)state;
	assert_int_equal(gb_spec_load_buf("t", shared, strlen(shared), &o, &set,
	                                  &d), 0);
	assert_string_equal(gb_kvs_get(&set.pools[0].images, "tinycloud"), "t-1");
	gb_spec_set_free(&set);
	assert_int_equal(gb_spec_load_buf("t", all, strlen(all), &o, &set, &d),
	                 -1);
	assert_string_equal(d.v[0].path, "pool.image.tinycloud");
	assert_non_null(strstr(d.v[0].msg, "unknown cloud \"tinycloud\""));
	gb_diags_free(&d);
	assert_int_equal(gb_spec_load_buf("t", typo, strlen(typo), &o, &set, &d),
	                 -1);
	assert_non_null(strstr(d.v[0].msg, "did you mean \"gcp\""));
	gb_diags_free(&d);
}

/* ------------------------------------------------------------ JSON */

static void test_json_roundtrip(void **state)
{
	gb_spec_set a = parse_ok(FULL), b;
	gb_spec_opts o = test_opts();
	gb_diags d = GB_DIAGS_INIT;
	char *ja = gb_pool_spec_to_json(&a.pools[0]), *jb;
	(void)state;
	assert_non_null(strstr(ja, "\"name\":\"train-4711\""));
	assert_int_equal(gb_spec_load_json("api", ja, strlen(ja), &o, &b, &d), 0);
	jb = gb_pool_spec_to_json(&b.pools[0]);
	assert_string_equal(ja, jb);
	assert_string_equal(a.pools[0].source_hash, b.pools[0].source_hash);
	assert_int_equal(b.pools[0].ttl_s, 6 * 3600);
	assert_int_equal(b.pools[0].line, 0);
	free(ja);
	free(jb);
	gb_spec_set_free(&a);
	gb_spec_set_free(&b);
}

/* issue 42.2/3: a capacity mix, placement.spread (zone by default for
 * inference), serve.port: decoded, and the same through JSON. */
static void test_mix_spread_serve(void **state)
{
	gb_spec_set a = parse_ok(ELASTIC "  capacity: {on_demand_base: 2, "
	                         "spot_share: 0.7}\n  serve: {port: 8000, "
	                         "webhook: \"http://127.0.0.1:9/h\"}\n"),
	            b, t = parse_ok(BASE "  count: 2\n"
	                            "  placement: {spread: zone, colocate: none}\n");
	gb_spec_set tr = parse_ok(BASE "  count: 2\n");
	gb_spec_opts o = test_opts();
	gb_diags d = GB_DIAGS_INIT;
	gb_pool_spec c;
	char *ja = gb_pool_spec_to_json(&a.pools[0]), *jb;
	(void)state;
	assert_int_equal(a.pools[0].mix, 1);
	assert_int_equal(a.pools[0].on_demand_base, 2);
	assert_true(a.pools[0].spot_share > 0.69 && a.pools[0].spot_share < 0.71);
	assert_int_equal(a.pools[0].ncapacity, 2);
	assert_int_equal(a.pools[0].spread_zone, 1); /* inference default */
	assert_int_equal(a.pools[0].serve_port, 8000);
	assert_int_equal(t.pools[0].spread_zone, 1);
	assert_int_equal(tr.pools[0].spread_zone, 0); /* training: none */
	assert_int_equal(tr.pools[0].colocate, GB_COLOCATE_ZONE);
	assert_int_equal(gb_spec_load_json("api", ja, strlen(ja), &o, &b, &d), 0);
	jb = gb_pool_spec_to_json(&b.pools[0]);
	assert_string_equal(ja, jb);
	assert_int_equal(b.pools[0].mix, 1);
	assert_int_equal(b.pools[0].serve_port, 8000);
	assert_string_equal(b.pools[0].serve_webhook, "http://127.0.0.1:9/h");
	free(jb);
	gb_pool_spec_copy(&c, &b.pools[0]);
	jb = gb_pool_spec_to_json(&c);
	assert_string_equal(ja, jb);
	gb_pool_spec_free(&c);
	gb_spec_set_free(&b);
	/* a stored spec (no clouds: the daemon's own loads) keeps a plain
	 * http webhook applied with the opt-in */
	{
		const char *at = strstr(ja, "127.0.0.1:9/h");
		char *js = gb_xasprintf("%.*s10.1.2.3/h%s", (int)(at - ja), ja,
		                        at + strlen("127.0.0.1:9/h"));
		assert_int_equal(gb_spec_load_json("stored", js, strlen(js), NULL,
		                                   &b, &d), 0);
		assert_string_equal(b.pools[0].serve_webhook, "http://10.1.2.3/h");
		free(js);
	}
	free(ja);
	free(jb);
	gb_spec_set_free(&a);
	gb_spec_set_free(&b);
	gb_spec_set_free(&t);
	gb_spec_set_free(&tr);
}

/* issue 31.2: policy entries with args keep them (YAML, JSON, copy) and
 * the old form stays a plain name. */
static void test_policy_args(void **state)
{
	gb_spec_set a = parse_ok(BASE "  policy:\n"
	                         "    - cost\n"
	                         "    - {name: budget, args: {max_per_gpu_hour: 3,"
	                         " note: \"x y\"}}\n"), b;
	gb_spec_opts o = test_opts();
	gb_diags d = GB_DIAGS_INIT;
	gb_pool_spec c;
	char *ja = gb_pool_spec_to_json(&a.pools[0]), *jb;
	(void)state;
	assert_int_equal(a.pools[0].policies.n, 2);
	assert_string_equal(a.pools[0].policies.v[1], "budget");
	assert_int_equal(a.pools[0].policy_args[0].n, 0);
	assert_string_equal(gb_kvs_get(&a.pools[0].policy_args[1],
	                               "max_per_gpu_hour"), "3");
	assert_non_null(strstr(ja, "\"policy\":[\"cost\",{\"args\":"
	                           "{\"max_per_gpu_hour\":\"3\",\"note\":"
	                           "\"x y\"},\"name\":\"budget\"}]"));
	assert_int_equal(gb_spec_load_json("api", ja, strlen(ja), &o, &b, &d), 0);
	jb = gb_pool_spec_to_json(&b.pools[0]);
	assert_string_equal(ja, jb);
	free(jb);
	gb_pool_spec_copy(&c, &b.pools[0]);
	jb = gb_pool_spec_to_json(&c);
	assert_string_equal(ja, jb);
	gb_pool_spec_free(&c);
	free(ja);
	free(jb);
	gb_spec_set_free(&a);
	gb_spec_set_free(&b);
}

/* tz: an IANA name is kept by name (JSON round trip) and resolves to the
 * cached zone.  Skips without /usr/share/zoneinfo (install tzdata). */
static void test_autoscale_zone(void **state)
{
	gb_spec_set a, b;
	gb_spec_opts o = test_opts();
	gb_diags d = GB_DIAGS_INIT;
	gb_pool_spec copy;
	char *ja, *jb;
	(void)state;
	if (access(GB_ZONEINFO_DIR "/Europe/Berlin", R_OK) != 0) {
		fprintf(stderr, "skip: %s/Europe/Berlin missing (install "
		        "tzdata)\n", GB_ZONEINFO_DIR);
		skip();
	}
	a = parse_ok(ELASTIC "  autoscale:\n    gpu_util_target: 0.7\n"
	    "    schedule:\n      - {days: mon-fri, from: \"08:00\","
	    " to: \"20:00\", tz: Europe/Berlin, min: 4}\n");
	const gb_autoscale_window *w = &a.pools[0].autoscale.windows[0];
	assert_non_null(w->zone);
	assert_string_equal(gb_tz_name(w->zone), "Europe/Berlin");
	assert_int_equal(gb_tz_offset(w->zone, 1784116800), 7200);
	ja = gb_pool_spec_to_json(&a.pools[0]);
	assert_non_null(strstr(ja, "\"tz\":\"Europe/Berlin\""));
	assert_int_equal(gb_spec_load_json("api", ja, strlen(ja), &o, &b, &d), 0);
	jb = gb_pool_spec_to_json(&b.pools[0]);
	assert_string_equal(ja, jb);
	assert_ptr_equal(b.pools[0].autoscale.windows[0].zone, w->zone);
	/* a copy shares the cached zone; freeing both is clean */
	gb_pool_spec_copy(&copy, &a.pools[0]);
	assert_ptr_equal(copy.autoscale.windows[0].zone, w->zone);
	gb_pool_spec_free(&copy);
	free(ja);
	free(jb);
	gb_diags_free(&d);
	gb_spec_set_free(&a);
	gb_spec_set_free(&b);
}

static void test_autoscale(void **state)
{
	gb_spec_set a = parse_ok(ELASTIC "  autoscale:\n"
	    "    gpu_util_target: 0.7\n    up_after: 30s\n"
	    "    max_step: 2\n    schedule:\n"
	    "      - {days: mon-fri, from: \"08:00\", to: \"20:00\","
	    " tz: \"+01:00\", min: 4}\n"
	    "      - {days: \"fri-mon\", from: \"00:00\", to: \"24:00\","
	    " tz: UTC-05:30, min: 2}\n"), b, n;
	gb_spec_opts o = test_opts();
	gb_diags d = GB_DIAGS_INIT;
	const gb_autoscale *as = &a.pools[0].autoscale;
	char *ja = gb_pool_spec_to_json(&a.pools[0]), *jb;
	(void)state;
	assert_true(as->enabled);
	assert_true(as->gpu_util_target > 0.69 && as->gpu_util_target < 0.71);
	assert_int_equal(as->up_after_s, 30);
	assert_int_equal(as->down_after_s, 600); /* default */
	assert_int_equal(as->max_step, 2);
	assert_int_equal(as->nwindows, 2);
	assert_int_equal(as->windows[0].days, 0x1f);
	assert_int_equal(as->windows[0].from_min, 8 * 60);
	assert_int_equal(as->windows[0].to_min, 20 * 60);
	assert_int_equal(as->windows[0].tz_min, 60);
	assert_int_equal(as->windows[0].min, 4);
	assert_int_equal(as->windows[1].days, 0x71); /* fri sat sun mon */
	assert_int_equal(as->windows[1].to_min, 24 * 60);
	assert_int_equal(as->windows[1].tz_min, -330);
	assert_non_null(strstr(ja, "\"days\":\"mon,tue,wed,thu,fri\""));
	assert_non_null(strstr(ja, "\"tz\":\"-05:30\""));
	assert_int_equal(gb_spec_load_json("api", ja, strlen(ja), &o, &b, &d), 0);
	jb = gb_pool_spec_to_json(&b.pools[0]);
	assert_string_equal(ja, jb);
	assert_int_equal(b.pools[0].autoscale.windows[1].tz_min, -330);
	/* no block: not enabled, and nothing in the JSON */
	n = parse_ok(ELASTIC);
	assert_false(n.pools[0].autoscale.enabled);
	free(jb);
	jb = gb_pool_spec_to_json(&n.pools[0]);
	assert_null(strstr(jb, "autoscale"));
	free(ja);
	free(jb);
	gb_spec_set_free(&a);
	gb_spec_set_free(&b);
	gb_spec_set_free(&n);
}

static void test_json_canonical_and_hash(void **state)
{
	/* key order and spelling do not change the canonical form */
	gb_spec_set a = parse_ok("pool:\n  name: p\n  count: 2\n"
	                         "  gpu: {model: h100, count: 2}\n"),
	            b = parse_ok("pool:\n  gpu: {count: 2, model: H100}\n"
	                         "  count: 2\n  name: p\n"),
	            c = parse_ok("pool:\n  name: p\n  count: 3\n"
	                         "  gpu: {model: h100, count: 2}\n");
	char *ja = gb_pool_spec_to_json(&a.pools[0]);
	char *jb = gb_pool_spec_to_json(&b.pools[0]);
	(void)state;
	assert_string_equal(ja, jb);
	assert_string_equal(a.pools[0].source_hash, b.pools[0].source_hash);
	assert_string_not_equal(a.pools[0].source_hash, c.pools[0].source_hash);
	free(ja);
	free(jb);
	gb_spec_set_free(&a);
	gb_spec_set_free(&b);
	gb_spec_set_free(&c);
}

static void test_json_errors_have_paths(void **state)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	const char *j = "{\"pool\": {\"name\": \"p\", \"count\": \"4\", "
	                "\"gpu\": {\"model\": [\"H100\"], \"memroy_gb\": 8}}}";
	(void)state;
	assert_int_equal(gb_spec_load_json("api", j, strlen(j), &o, &set, &d), -1);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0].path, "pool.count");
	assert_non_null(strstr(d.v[0].msg, "(remove the quotes)"));
	assert_string_equal(d.v[1].path, "pool.gpu.memroy_gb");
	assert_non_null(strstr(d.v[1].msg, "did you mean \"memory_gb\"?"));
	gb_diags_free(&d);
}

static void test_json_no_env_and_bad_input(void **state)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	const char *j1 = "{\"pool\": {\"name\": \"${CI_JOB_ID}\", \"gpu\": "
	                 "{\"model\": \"T4\"}}}";
	const char *j2 = "{\"pool\": {\"name\": \"p\", \"name\": \"q\"}}";
	const char *j3 = "[{\"pool\": {\"name\": \"a\", \"gpu\": {\"model\": "
	                 "\"T4\"}}}, {\"pool\": {\"name\": \"b\", \"gpu\": "
	                 "{\"model\": \"T4\"}}}]";
	gb_buf deep = GB_BUF_INIT;
	(void)state;
	/* API input never reads the daemon's environment */
	assert_int_equal(gb_spec_load_json("api", j1, strlen(j1), &o, &set, &d),
	                 -1);
	assert_non_null(strstr(d.v[0].msg, "invalid name \"${CI_JOB_ID}\""));
	gb_diags_free(&d);
	assert_int_equal(gb_spec_load_json("api", j2, strlen(j2), &o, &set, &d),
	                 -1);
	assert_non_null(strstr(d.v[0].msg, "invalid JSON: duplicate object key"));
	assert_int_equal(d.v[0].line, 1);
	gb_diags_free(&d);
	assert_int_equal(gb_spec_load_json("api", j3, strlen(j3), &o, &set, &d),
	                 0);
	assert_int_equal(set.n, 2);
	gb_spec_set_free(&set);
	gb_buf_puts(&deep, "{\"pool\": ");
	for (int i = 0; i < 100; i++)
		gb_buf_putc(&deep, '[');
	for (int i = 0; i < 100; i++)
		gb_buf_putc(&deep, ']');
	gb_buf_putc(&deep, '}');
	assert_int_equal(gb_spec_load_json("api", deep.data, deep.len, &o, &set,
	                                   &d), -1);
	assert_non_null(strstr(d.v[0].msg, "nesting deeper than 32"));
	gb_diags_free(&d);
	gb_buf_free(&deep);
	assert_int_equal(gb_spec_load_json("api", "{", 1, &o, &set, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "invalid JSON"));
	gb_diags_free(&d);
}

static void test_copy(void **state)
{
	gb_spec_set a = parse_ok(FULL);
	gb_pool_spec c;
	char *ja, *jc;
	(void)state;
	gb_pool_spec_copy(&c, &a.pools[0]);
	gb_spec_set_free(&a); /* the copy owns everything */
	assert_string_equal(c.name, "train-4711");
	assert_string_equal(c.file, "t.yaml");
	assert_int_equal(strlen(c.source_hash), 64);
	a = parse_ok(FULL);
	ja = gb_pool_spec_to_json(&a.pools[0]);
	jc = gb_pool_spec_to_json(&c);
	assert_string_equal(ja, jc);
	free(ja);
	free(jc);
	gb_pool_spec_free(&c);
	assert_null(c.name);
	gb_spec_set_free(&a);
}

static void test_examples_valid(void **state)
{
	const char *src = getenv("GB_SRC");
	static const char *const files[] = {"ci-training.yaml", "inference.yaml",
	                                    "gdpr-eu.yaml", "onprem-burst.yaml"};
	(void)state;
	if (!src)
		src = ".";
	for (size_t i = 0; i < GB_ARRAY_LEN(files); i++) {
		char path[1024];
		gb_spec_set set;
		gb_diags d = GB_DIAGS_INIT;
		snprintf(path, sizeof(path), "%s/examples/%s", src, files[i]);
		if (access(path, R_OK) != 0) {
			print_message("skipping %s: not found (set GB_SRC)\n", path);
			continue;
		}
		if (gb_spec_load_file(path, NULL, &set, &d) != 0) {
			char *s = gb_diags_str(&d);
			fail_msg("%s:\n%s", path, s);
		}
		assert_true(set.n >= 1);
		gb_spec_set_free(&set);
	}
}

/* ------------------------------------------- region globs per cloud */

/* A catalog with one offer of "tiny", a cloud the region table does not
 * know: its regions come from its offers only. */
static gb_catalog *tiny_catalog(void)
{
	gb_catalog *c = gb_catalog_new();
	gb_offer o;
	memset(&o, 0, sizeof(o));
	o.region = "moon-1";
	o.zone = "";
	o.instance_type = "tiny.8";
	o.gpu_model = "H100";
	o.gpu_count = 8;
	o.gpu_memory_gb = 80;
	o.vcpus = 8;
	o.ram_gb = 64;
	o.capacity = GB_CAPACITY_ON_DEMAND;
	o.price_per_hour = 10;
	o.source = "test_spec.c";
	o.fetched_at = 1790000000;
	gb_catalog_add(c, "tiny", &o);
	return c;
}

static const char *const five_clouds[] = {"aws", "azure", "gcp", "onprem",
                                          "tiny", NULL};

/* Loads yaml with the region check on (clouds five_clouds, catalog cat,
 * or none when cat is NULL); returns the diagnostics (caller frees). */
static int load_regions(const char *yaml, const gb_catalog *cat,
                        gb_diags *d)
{
	gb_spec_opts o = test_opts();
	gb_spec_set set = {NULL, 0};
	int rc;
	o.clouds = five_clouds;
	o.catalog = cat;
	rc = gb_spec_load_buf("t.yaml", yaml, strlen(yaml), &o, &set, d);
	gb_spec_set_free(&set);
	return rc;
}

static void expect_region_err(const gb_catalog *cat, const char *yaml,
                              int line, int col, const char *path,
                              const char *const *parts)
{
	gb_diags d = GB_DIAGS_INIT;
	int rc = load_regions(yaml, cat, &d);
	char *all = gb_diags_str(&d);
	int ok = rc == -1 && d.n == 1 && d.v[0].line == line &&
	         d.v[0].col == col && strcmp(d.v[0].path, path) == 0;
	for (size_t i = 0; ok && parts[i]; i++)
		ok = strstr(d.v[0].msg, parts[i]) != NULL;
	if (!ok)
		fail_msg("expected one error at t.yaml:%d:%d %s, got rc=%d:\n%s",
		         line, col, path, rc, all);
	free(all);
	gb_diags_free(&d);
}

static void expect_regions_ok(const gb_catalog *cat, const char *yaml)
{
	gb_diags d = GB_DIAGS_INIT;
	if (load_regions(yaml, cat, &d) != 0) {
		char *all = gb_diags_str(&d);
		fail_msg("expected valid, got:\n%s", all);
	}
	gb_diags_free(&d);
}

#define RBASE "pool:\n  name: p\n  gpu: {model: H100}\n"

static void test_region_glob_per_cloud(void **state)
{
	gb_catalog *cat = tiny_catalog();
	static const char *const by_place[] = {
		"\"eu-*\" matches no region of gcp",
		"it matches regions of aws", "europe-west4",
		"compliance: [gdpr]", NULL};
	static const char *const typo[] = {
		"\"europe-west-4\" matches no region of aws, gcp",
		"did you mean \"europe-west4\"?", NULL};
	static const char *const catalog_only[] = {
		"\"mars-*\" matches no region of tiny",
		"known regions there: moon-1", NULL};
	static const char *const uncovered[] = {
		"no glob here names a region of azure, which placement.clouds "
		"lists", "eastus", NULL};
	static const char *const azure[] = {
		"matches no region of azure", "westeurope", "uksouth", NULL};
	(void)state;
	/* AWS naming for a GCP pool: refused, with GCP's European regions */
	expect_region_err(cat, RBASE "  placement:\n    clouds: [gcp]\n"
	                  "    regions: [\"eu-*\"]\n", 6, 15,
	                  "pool.placement.regions[0]", by_place);
	expect_region_err(cat, RBASE "  placement:\n    clouds: [azure]\n"
	                  "    regions: [eastus, \"eu-*\"]\n", 6, 23,
	                  "pool.placement.regions[1]", azure);
	/* a misspelt id: the nearest spelling */
	expect_region_err(cat, RBASE "  placement:\n    clouds: [aws, gcp]\n"
	                  "    regions: [europe-west-4]\n", 6, 15,
	                  "pool.placement.regions[0]", typo);
	/* a cloud outside the region table: its offers' regions count */
	expect_regions_ok(cat, RBASE "  placement:\n    clouds: [tiny]\n"
	                  "    regions: [\"moon-*\"]\n");
	expect_region_err(cat, RBASE "  placement:\n    clouds: [tiny]\n"
	                  "    regions: [\"mars-*\"]\n", 6, 15,
	                  "pool.placement.regions[0]", catalog_only);
	/* every loaded cloud: eu-* is AWS's, so it names something */
	expect_regions_ok(cat, RBASE "  placement: {regions: [\"eu-*\"]}\n");
	/* one glob per cloud's naming, each matching its own cloud */
	expect_regions_ok(cat, RBASE "  placement:\n"
	                  "    clouds: [aws, gcp, azure]\n"
	                  "    regions: [\"eu-*\", \"europe-*\", "
	                  "\"*europe\"]\n");
	/* a cloud listed in placement.clouds that no glob names: it could
	 * never be used ("us-*" is AWS's and GCP's naming, not Azure's) */
	expect_region_err(cat, RBASE "  placement:\n"
	                  "    clouds: [aws, gcp, azure]\n"
	                  "    regions: [\"us-*\"]\n", 6, 14,
	                  "pool.placement.regions", uncovered);
	expect_regions_ok(cat, RBASE "  placement:\n"
	                  "    clouds: [aws, gcp, azure]\n"
	                  "    regions: [\"us-*\", \"*us\"]\n");
	/* no catalog (a stored spec, a client whose daemon checks): no
	 * check */
	expect_regions_ok(NULL, RBASE "  placement:\n    clouds: [gcp]\n"
	                  "    regions: [\"eu-*\"]\n");
	gb_catalog_free(cat);
}

/* The shipped examples mean what they say: each region glob names a
 * region of the pool's clouds (the region table's, no driver loaded). */
static void test_examples_regions_per_cloud(void **state)
{
	const char *src = getenv("GB_SRC");
	static const char *const files[] = {
		"ci-training.yaml", "inference.yaml", "gdpr-eu.yaml",
		"onprem-burst.yaml", "demo-training.yaml", "demo-burst.yaml"};
	gb_catalog *cat = gb_catalog_new();
	gb_spec_opts o;
	(void)state;
	memset(&o, 0, sizeof(o));
	o.clouds = four_clouds;
	o.catalog = cat;
	if (!src)
		src = ".";
	for (size_t i = 0; i < GB_ARRAY_LEN(files); i++) {
		char path[1024];
		gb_spec_set set;
		gb_diags d = GB_DIAGS_INIT;
		snprintf(path, sizeof(path), "%s/examples/%s", src, files[i]);
		if (access(path, R_OK) != 0) {
			print_message("skipping %s: not found (set GB_SRC)\n", path);
			continue;
		}
		if (gb_spec_load_file(path, &o, &set, &d) != 0) {
			char *s = gb_diags_str(&d);
			fail_msg("%s:\n%s", path, s);
		}
		gb_spec_set_free(&set);
	}
	gb_catalog_free(cat);
}

static void test_missing_file(void **state)
{
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_int_equal(gb_spec_load_file("/nonexistent/p.yaml", NULL, &set, &d),
	                 -1);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "cannot read"));
	gb_diags_free(&d);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_bad_nul_bytes),
		cmocka_unit_test(test_bad_binary_garbage),
		cmocka_unit_test(test_bad_25mb),
		cmocka_unit_test(test_bad_25mb_file),
		cmocka_unit_test(test_bad_alias_bomb),
		cmocka_unit_test(test_bad_deep_nesting),
		cmocka_unit_test(test_bad_user_data_large),
		cmocka_unit_test(test_bad_too_many_labels),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_diag_format),
		cmocka_unit_test(test_every_field),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_consolidate_off),
		cmocka_unit_test(test_agent_key),
		cmocka_unit_test(test_defaults_by_purpose),
		cmocka_unit_test(test_priority_and_preemptible),
		cmocka_unit_test(test_min_max),
		cmocka_unit_test(test_env_substitution),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_multi_doc),
		cmocka_unit_test(test_scalar_lists),
		cmocka_unit_test(test_gpu_canonical),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_custom_clouds),
		cmocka_unit_test(test_clouds_any_or_none),
		cmocka_unit_test(test_image_for_other_brokers),
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_mix_spread_serve),
		cmocka_unit_test(test_policy_args),
		cmocka_unit_test(test_autoscale),
		cmocka_unit_test(test_autoscale_zone),
		cmocka_unit_test(test_json_canonical_and_hash),
		cmocka_unit_test(test_json_errors_have_paths),
		cmocka_unit_test(test_json_no_env_and_bad_input),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_examples_valid),
		cmocka_unit_test(test_region_glob_per_cloud),
		cmocka_unit_test(test_examples_regions_per_cloud),
		cmocka_unit_test(test_missing_file),
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
	rc = _cmocka_run_group_tests("spec", tests, n, NULL, NULL);
	for (size_t i = 0; i < nbad; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}
