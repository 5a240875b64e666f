/* test_yamldoc.c -- the YAML loader: positions, limits, ${VAR}, and the
 * typed decoders' messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util.h"
#include "yamldoc.h"

/* ------------------------------------------------------------ helpers */

static const char *fake_env(void *ud, const char *name)
{
	const char *const *kv = ud;
	for (size_t i = 0; kv && kv[i]; i += 2)
		if (strcmp(kv[i], name) == 0)
			return kv[i + 1];
	return NULL;
}

static const char *const ENV[] = {"TEAM", "research", "JOB", "1234",
                                  "EMPTY", "", NULL};

static int load(const char *text, size_t len, gb_yaml_opts *o, gb_ydocs *out,
                gb_diags *d)
{
	gb_yaml_opts def;
	if (!o) {
		memset(&def, 0, sizeof(def));
		def.expand_env = 1;
		def.getenv_fn = fake_env;
		def.getenv_ud = (void *)ENV;
		o = &def;
	}
	return gb_yaml_load("t.yaml", text, len, o, out, d);
}

/* Loads text, expects failure with the first error at line:col whose
 * message contains `msg`. */
static void expect_load_err(const char *text, size_t len, int line, int col,
                            const char *msg)
{
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	int rc = load(text, len, NULL, &docs, &d);
	char *all = gb_diags_str(&d);
	if (rc != -1 || d.n == 0 || d.v[0].line != line || d.v[0].col != col ||
	    !strstr(d.v[0].msg, msg))
		fail_msg("expected error at %d:%d containing \"%s\"; got rc=%d:\n%s",
		         line, col, msg, rc, all);
	assert_string_equal(d.v[0].file, "t.yaml");
	free(all);
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

/* Decodes node with fn-specific code in the test; returns the first
 * diagnostic's message (static copy) or "" when none. */
static char last_msg[512];
static char last_path[128];
static int last_line, last_col;

static void grab(gb_diags *d)
{
	last_msg[0] = last_path[0] = '\0';
	last_line = last_col = -1;
	if (d->n) {
		snprintf(last_msg, sizeof(last_msg), "%s", d->v[0].msg);
		snprintf(last_path, sizeof(last_path), "%s", d->v[0].path);
		last_line = d->v[0].line;
		last_col = d->v[0].col;
	}
}

static gb_ydocs docs1(const char *text)
{
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	int rc = load(text, strlen(text), NULL, &docs, &d);
	if (rc != 0) {
		char *s = gb_diags_str(&d);
		fail_msg("unexpected load errors:\n%s", s);
	}
	gb_diags_free(&d);
	return docs;
}

/* ------------------------------------------------------------ loading */

static void test_positions(void **state)
{
	gb_ydocs docs = docs1("a: 1\nb:\n  c: [x, \"y\"]\n  d: |\n    text\n");
	const gb_ynode *r = docs.docs[0], *b, *c;
	(void)state;
	assert_int_equal(docs.n, 1);
	assert_int_equal(r->kind, GB_Y_MAP);
	assert_int_equal(r->line, 1);
	assert_int_equal(r->col, 1);
	assert_int_equal(r->keys[0]->line, 1);
	assert_int_equal(r->items[0]->col, 4);
	b = gb_ymap_get(r, "b");
	assert_non_null(b);
	assert_int_equal(b->kind, GB_Y_MAP);
	assert_int_equal(b->line, 3);
	assert_int_equal(b->col, 3);
	c = gb_ymap_get(b, "c");
	assert_int_equal(c->kind, GB_Y_SEQ);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->items[1]->line, 3);
	assert_int_equal(c->items[1]->col, 10);
	assert_string_equal(c->items[1]->str, "y");
	assert_true(c->items[1]->quoted);
	assert_false(c->items[0]->quoted);
	assert_string_equal(gb_ymap_get(b, "d")->str, "text\n");
	assert_true(gb_ymap_get(b, "d")->quoted);
	assert_null(gb_ymap_get(r, "zz"));
	assert_null(gb_ymap_get(c, "a"));
	gb_ydocs_free(&docs);
}

static void test_nulls(void **state)
{
	gb_ydocs docs = docs1("a:\nb: ~\nc: null\nd: \"\"\ne: 'null'\n");
	const gb_ynode *r = docs.docs[0];
	(void)state;
	assert_true(gb_ymap_get(r, "a")->is_null);
	assert_true(gb_ymap_get(r, "b")->is_null);
	assert_true(gb_ymap_get(r, "c")->is_null);
	assert_false(gb_ymap_get(r, "d")->is_null);
	assert_false(gb_ymap_get(r, "e")->is_null);
	gb_ydocs_free(&docs);
}

static void test_multi_docs(void **state)
{
	gb_ydocs docs = docs1("a: 1\n---\n---\nb: 2\n");
	(void)state;
	assert_int_equal(docs.n, 3);
	assert_non_null(docs.docs[0]);
	assert_null(docs.docs[1]);
	assert_non_null(docs.docs[2]);
	assert_int_equal(docs.docs[2]->line, 4);
	gb_ydocs_free(&docs);
}

static void test_empty_input(void **state)
{
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_int_equal(load("", 0, NULL, &docs, &d), 0);
	assert_int_equal(docs.n, 0);
	assert_int_equal(load("# only a comment\n", 17, NULL, &docs, &d), 0);
	assert_int_equal(docs.n, 0);
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

static void test_alias_refused(void **state)
{
	const char *y = "a: &x [1, 2]\nb: *x\n";
	(void)state;
	expect_load_err(y, strlen(y), 2, 4, "aliases (*x) are not allowed");
}

static void test_alias_bomb_fails_fast(void **state)
{
	/* billion laughs: 9^9 strings if expanded */
	gb_buf b = GB_BUF_INIT;
	int64_t t0;
	(void)state;
	gb_buf_puts(&b, "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
	for (int i = 1; i < 10; i++) {
		gb_buf_printf(&b, "%c: &%c [", 'a' + i, 'a' + i);
		for (int k = 0; k < 9; k++)
			gb_buf_printf(&b, "%s*%c", k ? "," : "", 'a' + i - 1);
		gb_buf_puts(&b, "]\n");
	}
	t0 = gb_mono_ms();
	/* the first alias is at line 2, column 8 */
	expect_load_err(b.data, b.len, 2, 8, "aliases (*a) are not allowed");
	assert_true(gb_mono_ms() - t0 < 1000);
	gb_buf_free(&b);
}

static void test_depth_cap(void **state)
{
	gb_buf b = GB_BUF_INIT;
	(void)state;
	gb_buf_puts(&b, "a: ");
	for (int i = 0; i < 100; i++)
		gb_buf_putc(&b, '[');
	for (int i = 0; i < 100; i++)
		gb_buf_putc(&b, ']');
	gb_buf_putc(&b, '\n');
	/* mapping is level 1; the 32nd '[' is level 33 at column 4 + 31 */
	expect_load_err(b.data, b.len, 1, 35, "nesting deeper than 32 levels");
	gb_buf_free(&b);
}

static void test_depth_custom(void **state)
{
	gb_yaml_opts o;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_depth = 2;
	assert_int_equal(load("a: {b: 1}\n", 10, &o, &docs, &d), 0);
	gb_ydocs_free(&docs);
	assert_int_equal(load("a: {b: [1]}\n", 12, &o, &docs, &d), -1);
	assert_int_equal(d.v[0].col, 8);
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

static void test_node_cap(void **state)
{
	gb_yaml_opts o;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	const char *y = "[1, 2, 3, 4, 5, 6]\n";
	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_nodes = 5;
	assert_int_equal(load(y, strlen(y), &o, &docs, &d), -1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].line, 1);
	assert_int_equal(d.v[0].col, 14);
	assert_non_null(strstr(d.v[0].msg, "more than 5 nodes"));
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

static void test_scalar_cap(void **state)
{
	gb_yaml_opts o;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	const char *y = "a: 0123456789\n";
	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_scalar = 5;
	assert_int_equal(load(y, strlen(y), &o, &docs, &d), -1);
	assert_int_equal(d.v[0].col, 4);
	assert_non_null(strstr(d.v[0].msg, "larger than the limit of 5"));
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

static void test_size_cap(void **state)
{
	gb_yaml_opts o;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	memset(&o, 0, sizeof(o));
	o.max_bytes = 8;
	assert_int_equal(load("a: 123456789\n", 13, &o, &docs, &d), -1);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "13 bytes, larger than the limit of 8"));
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

static void test_duplicate_keys(void **state)
{
	const char *y = "a: 1\nb: 2\na: 3\n";
	(void)state;
	expect_load_err(y, strlen(y), 3, 1,
	                "duplicate key \"a\" (first at line 1); remove one");
}

static void test_duplicate_keys_large_map(void **state)
{
	/* beyond HTAB_MIN_KEYS the check uses the hash index */
	gb_buf b = GB_BUF_INIT;
	(void)state;
	for (int i = 0; i < 500; i++)
		gb_buf_printf(&b, "k%d: %d\n", i, i);
	gb_buf_puts(&b, "k17: again\n");
	expect_load_err(b.data, b.len, 501, 1,
	                "duplicate key \"k17\" (first at line 18)");
	gb_buf_free(&b);
}

static void test_large_map_no_false_dups(void **state)
{
	gb_buf b = GB_BUF_INIT;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	for (int i = 0; i < 3000; i++)
		gb_buf_printf(&b, "key%d: %d\n", i, i);
	assert_int_equal(load(b.data, b.len, NULL, &docs, &d), 0);
	assert_int_equal(docs.docs[0]->n, 3000);
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
	gb_buf_free(&b);
}

static void test_tabs(void **state)
{
	const char *y = "pool:\n\tname: x\n";
	(void)state;
	expect_load_err(y, strlen(y), 2, 1, "tab character: YAML indentation "
	                "must use spaces, not tabs");
}

static void test_tabs_after_utf8(void **state)
{
	/* the tab check must find the tab by byte offset even after
	 * multi-byte characters */
	const char *y = "a: \xc3\xa9\xc3\xa9\xc3\xa9\nb:\n\tc: 1\n";
	(void)state;
	expect_load_err(y, strlen(y), 3, 1, "tab character");
}

/* ${VAR} unquoted in a flow map: the error says to quote it (issue 41) */
static void test_env_in_flow_map(void **state)
{
	const char *y = "labels: {job: ${JOB}}\n";
	(void)state;
	expect_load_err(y, strlen(y), 1, 16,
	                "a ${VAR} inside {...} or [...] needs quotes");
}

static void test_nul_byte(void **state)
{
	const char y[] = "a: 1\nbc\0d: 2\n";
	(void)state;
	expect_load_err(y, sizeof(y) - 1, 2, 3, "NUL byte");
}

static void test_invalid_utf8(void **state)
{
	const char *y = "a: 1\nb: \xc3\xa9t\xc3\n";
	(void)state;
	/* é counts as one column: b=1 :=2 ' '=3 é=4 t=5, bad byte at 6 */
	expect_load_err(y, strlen(y), 2, 6, "not valid UTF-8 (byte 0xc3");
}

static void test_overlong_utf8(void **state)
{
	const char *y = "a: \xc0\xaf\n";
	(void)state;
	expect_load_err(y, strlen(y), 1, 4, "not valid UTF-8");
}

static void test_nul_escape(void **state)
{
	const char *y = "a: ok\nb: \"x\\0y\"\n";
	(void)state;
	expect_load_err(y, strlen(y), 2, 4, "NUL character");
}

static void test_syntax_error(void **state)
{
	const char *y = "a: [1, 2\nb: 3\n";
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	assert_int_equal(load(y, strlen(y), NULL, &docs, &d), -1);
	assert_true(d.n >= 1);
	assert_non_null(strstr(d.v[0].msg, "invalid YAML"));
	assert_true(d.v[0].line >= 1);
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

static void test_complex_key(void **state)
{
	const char *y = "? [a]\n: b\n";
	(void)state;
	expect_load_err(y, strlen(y), 1, 3, "mapping keys must be plain strings");
}

static void test_env_expansion(void **state)
{
	gb_ydocs docs = docs1("a: t-${TEAM}-${JOB}\nb: ${MISSING:-dflt}\n"
	                      "c: ${TEAM:-x}\nd: $${TEAM}\ne: a$b\n"
	                      "f: \"${EMPTY:-z}\"\n");
	const gb_ynode *r = docs.docs[0];
	(void)state;
	assert_string_equal(gb_ymap_get(r, "a")->str, "t-research-1234");
	assert_string_equal(gb_ymap_get(r, "b")->str, "dflt");
	assert_string_equal(gb_ymap_get(r, "c")->str, "research");
	assert_string_equal(gb_ymap_get(r, "d")->str, "${TEAM}");
	assert_string_equal(gb_ymap_get(r, "e")->str, "a$b");
	/* as in sh, ${VAR:-d} also replaces a set but empty value */
	assert_string_equal(gb_ymap_get(r, "f")->str, "z");
	gb_ydocs_free(&docs);
}

static void test_env_off(void **state)
{
	gb_yaml_opts o;
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(load("a: ${NOPE}\n", 11, &o, &docs, &d), 0);
	assert_string_equal(docs.docs[0]->items[0]->str, "${NOPE}");
	gb_ydocs_free(&docs);
}

static void test_env_unset(void **state)
{
	const char *y = "x: 1\nname: train-${CI_JOB_ID}\n";
	(void)state;
	expect_load_err(y, strlen(y), 2, 7,
	                "environment variable CI_JOB_ID is not set: set it, or "
	                "give a default with ${CI_JOB_ID:-value}");
}

static void test_env_bad_name(void **state)
{
	const char *y = "a: ${1X}\n";
	(void)state;
	expect_load_err(y, strlen(y), 1, 4, "\"${1X}\" is not a valid variable");
}

static void test_env_unterminated(void **state)
{
	const char *y = "a: ${TEAM\n";
	(void)state;
	expect_load_err(y, strlen(y), 1, 4, "unterminated ${");
}

static void test_env_error_marks_invalid(void **state)
{
	/* the node of a failed expansion is marked so decoders do not add
	 * a second message for the same mistake */
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	char *s = NULL;
	int64_t v;
	(void)state;
	assert_int_equal(load("a: ${NOPE}\n", 11, NULL, &docs, &d), -1);
	assert_int_equal(d.n, 1);
	assert_true(docs.docs[0]->items[0]->invalid);
	assert_int_equal(gb_ydec_str(&c, docs.docs[0]->items[0], "a", &s), -1);
	assert_int_equal(gb_ydec_int(&c, docs.docs[0]->items[0], "a", 0, 9, &v),
	                 -1);
	assert_int_equal(d.n, 1);
	gb_ydocs_free(&docs);
	gb_diags_free(&d);
}

/* ------------------------------------------------------------ decoders */

static void test_dec_int(void **state)
{
	gb_ydocs docs = docs1("a: 5\nb: \"5\"\nc: five\nd: 2.5\n"
	                      "e: 99999999999999999999\nf: 11\ng: -3\nh:\n");
	const gb_ynode *r = docs.docs[0];
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	int64_t v = 0;
	(void)state;
	assert_int_equal(gb_ydec_int(&c, gb_ymap_get(r, "a"), "x.a", 1, 10, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(d.n, 0);
	struct {
		const char *key, *msg;
		int line, col;
	} bad[] = {
		{"b", "expected an integer, found the string \"5\" (remove the quotes)", 2, 4},
		{"c", "expected an integer from 1 to 10, found the string \"five\"", 3, 4},
		{"d", "found the number 2.5 (a whole number is needed)", 4, 4},
		{"e", "found the number 99999999999999999999 (the number is too large)", 5, 4},
		{"f", "expected an integer from 1 to 10, found 11", 6, 4},
		{"g", "expected an integer from 1 to 10, found -3", 7, 4},
		{"h", "found an empty value", 8, 3},
	};
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		gb_diags_free(&d);
		assert_int_equal(gb_ydec_int(&c, gb_ymap_get(r, bad[i].key),
		                             bad[i].key, 1, 10, &v), -1);
		grab(&d);
		if (!strstr(last_msg, bad[i].msg))
			fail_msg("%s: got \"%s\"", bad[i].key, last_msg);
		assert_int_equal(last_line, bad[i].line);
		assert_int_equal(last_col, bad[i].col);
		assert_string_equal(last_path, bad[i].key);
	}
	gb_diags_free(&d);
	gb_ydocs_free(&docs);
}

static void test_dec_num(void **state)
{
	gb_ydocs docs = docs1("a: 2.5\nb: \"2.5\"\nc: inf\nd: 1e400\ne: -1\n");
	const gb_ynode *r = docs.docs[0];
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	double v = 0;
	(void)state;
	assert_int_equal(gb_ydec_num(&c, gb_ymap_get(r, "a"), "a", 0, 10, &v), 0);
	assert_true(v == 2.5);
	assert_int_equal(gb_ydec_num(&c, gb_ymap_get(r, "b"), "b", 0, 10, &v), -1);
	grab(&d);
	assert_non_null(strstr(last_msg, "(remove the quotes)"));
	gb_diags_free(&d);
	assert_int_equal(gb_ydec_num(&c, gb_ymap_get(r, "c"), "c", 0, 10, &v), -1);
	assert_int_equal(gb_ydec_num(&c, gb_ymap_get(r, "d"), "d", 0, 10, &v), -1);
	assert_int_equal(gb_ydec_num(&c, gb_ymap_get(r, "e"), "e", 0, 10, &v), -1);
	assert_int_equal(d.n, 3);
	assert_non_null(strstr(d.v[2].msg, "expected a number from 0 to 10, found -1"));
	gb_diags_free(&d);
	gb_ydocs_free(&docs);
}

static void test_dec_bool_str_enum(void **state)
{
	gb_ydocs docs = docs1("a: true\nb: \"true\"\nc: yes\nd: spot\n"
	                      "e: spto\nf: [x]\ng: \"s\\x1b[2J\"\n");
	const gb_ynode *r = docs.docs[0];
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	static const char *const vals[] = {"spot", "on-demand", "reserved",
	                                   NULL};
	int b = 0, idx = -1;
	char *s = NULL;
	(void)state;
	assert_int_equal(gb_ydec_bool(&c, gb_ymap_get(r, "a"), "a", &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(gb_ydec_bool(&c, gb_ymap_get(r, "b"), "b", &b), -1);
	assert_int_equal(gb_ydec_bool(&c, gb_ymap_get(r, "c"), "c", &b), -1);
	assert_non_null(strstr(d.v[1].msg, "expected true or false, found the "
	                                    "string \"yes\""));
	assert_int_equal(gb_ydec_enum(&c, gb_ymap_get(r, "d"), "d", vals, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(gb_ydec_enum(&c, gb_ymap_get(r, "e"), "e", vals, &idx), -1);
	assert_non_null(strstr(d.v[2].msg, "expected spot, on-demand or "
	                                    "reserved, found the string \"spto\"; "
	                                    "did you mean \"spot\"?"));
	assert_int_equal(gb_ydec_str(&c, gb_ymap_get(r, "f"), "f", &s), -1);
	assert_non_null(strstr(d.v[3].msg, "expected a string, found a list"));
	/* control characters never reach the terminal */
	assert_int_equal(gb_ydec_enum(&c, gb_ymap_get(r, "g"), "g", vals, &idx), -1);
	assert_null(strchr(d.v[4].msg, 0x1b));
	assert_non_null(strstr(d.v[4].msg, "\"s?[2J\""));
	assert_int_equal(gb_ydec_str(&c, gb_ymap_get(r, "d"), "d", &s), 0);
	assert_string_equal(s, "spot");
	free(s);
	gb_diags_free(&d);
	gb_ydocs_free(&docs);
}

static void test_dec_duration(void **state)
{
	gb_ydocs docs = docs1("a: 90s\nb: 30m\nc: 6h\nd: 2d\ne: 1h30m\nf: 1w\n"
	                      "g: 3600\nh: 6 hours\ni: -5m\nj: 1h30\nk: 1.5h\n"
	                      "l: 200000d\n");
	const gb_ynode *r = docs.docs[0];
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	int64_t v;
	struct {
		const char *k;
		int64_t secs;
	} good[] = {{"a", 90},   {"b", 1800},   {"c", 21600}, {"d", 172800},
	            {"e", 5400}, {"f", 604800}, {"g", 3600}};
	struct {
		const char *k, *hint;
	} bad[] = {{"h", "(write it without spaces, e.g. 6h)"},
	           {"i", "(durations cannot be negative)"},
	           {"j", "(give every number a unit, e.g. 1h30m)"},
	           {"k", "(use whole numbers"},
	           {"l", "at most 100 years"}};
	(void)state;
	for (size_t i = 0; i < GB_ARRAY_LEN(good); i++) {
		assert_int_equal(gb_ydec_duration(&c, gb_ymap_get(r, good[i].k),
		                                  good[i].k, &v), 0);
		assert_int_equal(v, good[i].secs);
	}
	for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
		gb_diags_free(&d);
		assert_int_equal(gb_ydec_duration(&c, gb_ymap_get(r, bad[i].k),
		                                  bad[i].k, &v), -1);
		grab(&d);
		if (!strstr(last_msg, bad[i].hint) ||
		    !strstr(last_msg, "expected a duration such as 90s"))
			fail_msg("%s: got \"%s\"", bad[i].k, last_msg);
		assert_int_equal(last_line, (int)(8 + i));
		assert_int_equal(last_col, 4);
	}
	gb_diags_free(&d);
	gb_ydocs_free(&docs);
}

static void test_dec_map_unknown_keys(void **state)
{
	gb_ydocs docs = docs1("gpu:\n  modle: H100\n  count: 8\n  zzzzzz: 1\n");
	const gb_ynode *g = gb_ymap_get(docs.docs[0], "gpu");
	static const char *const keys[] = {"model", "count", "memory_gb", NULL};
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	(void)state;
	assert_int_equal(gb_ydec_map(&c, g, "pool.gpu", keys), -1);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.v[0].line, 2);
	assert_int_equal(d.v[0].col, 3);
	assert_string_equal(d.v[0].path, "pool.gpu.modle");
	assert_string_equal(d.v[0].msg,
	                    "unknown key \"modle\"; did you mean \"model\"?");
	assert_string_equal(d.v[1].msg, "unknown key \"zzzzzz\"; valid keys "
	                                 "here: model, count, memory_gb");
	gb_diags_free(&d);
	assert_int_equal(gb_ydec_map(&c, gb_ymap_get(g, "count"), "pool.gpu.count",
	                             keys), -1);
	assert_non_null(strstr(d.v[0].msg, "expected a mapping (key: value), "
	                                    "found the number 8"));
	gb_diags_free(&d);
	gb_ydocs_free(&docs);
}

static void test_dec_lists_and_maps(void **state)
{
	gb_ydocs docs = docs1("a: [x, y]\nb: one\nc: [x, {k: v}]\nd: {k: v, n: 1}\n"
	                      "e: {k: [1]}\n");
	const gb_ynode *r = docs.docs[0];
	gb_diags d = GB_DIAGS_INIT;
	gb_ydec c = {"t.yaml", &d};
	gb_strv sv = {NULL, 0};
	gb_kvs kv = {NULL, NULL, 0};
	(void)state;
	assert_int_equal(gb_ydec_strlist(&c, gb_ymap_get(r, "a"), "a", &sv), 0);
	assert_int_equal(gb_ydec_strlist(&c, gb_ymap_get(r, "b"), "b", &sv), 0);
	assert_int_equal(sv.n, 3);
	assert_string_equal(sv.v[2], "one");
	assert_int_equal(gb_ydec_strlist(&c, gb_ymap_get(r, "c"), "c", &sv), -1);
	assert_string_equal(d.v[0].path, "c[1]");
	assert_int_equal(d.v[0].col, 8);
	assert_int_equal(gb_ydec_strmap(&c, gb_ymap_get(r, "d"), "d", &kv), 0);
	assert_string_equal(gb_kvs_get(&kv, "n"), "1");
	assert_int_equal(gb_ydec_strmap(&c, gb_ymap_get(r, "e"), "e", &kv), -1);
	assert_string_equal(d.v[1].path, "e.k");
	assert_non_null(strstr(d.v[1].msg, "expected a string value, found a list"));
	gb_strv_free(&sv);
	gb_kvs_free(&kv);
	gb_diags_free(&d);
	gb_ydocs_free(&docs);
}

static void test_describe_and_paths(void **state)
{
	gb_ydocs docs = docs1("a: 1\nb: x\nc: true\nd: \"0123456789012345678901234567890123456789abc\"\n");
	const gb_ynode *r = docs.docs[0];
	char buf[128];
	char *p;
	(void)state;
	assert_string_equal(gb_ydescribe(NULL, buf, sizeof(buf)), "nothing");
	assert_string_equal(gb_ydescribe(r, buf, sizeof(buf)), "a mapping");
	assert_string_equal(gb_ydescribe(gb_ymap_get(r, "a"), buf, sizeof(buf)),
	                    "the number 1");
	assert_string_equal(gb_ydescribe(gb_ymap_get(r, "b"), buf, sizeof(buf)),
	                    "the string \"x\"");
	assert_string_equal(gb_ydescribe(gb_ymap_get(r, "c"), buf, sizeof(buf)),
	                    "the boolean true");
	assert_string_equal(gb_ydescribe(gb_ymap_get(r, "d"), buf, sizeof(buf)),
	                    "the string \"0123456789012345678901234567890123456789...\"");
	p = gb_ypath_key("", "pool");
	assert_string_equal(p, "pool");
	free(p);
	p = gb_ypath_key("pool", "gpu");
	assert_string_equal(p, "pool.gpu");
	free(p);
	p = gb_ypath_idx("pool.capacity", 2);
	assert_string_equal(p, "pool.capacity[2]");
	free(p);
	gb_ydocs_free(&docs);
}

static void test_load_file_errors(void **state)
{
	gb_ydocs docs;
	gb_diags d = GB_DIAGS_INIT;
	gb_yaml_opts o;
	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(gb_yaml_load_file("/nonexistent/x.yaml", &o, &docs, &d),
	                 -1);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "cannot read"));
	assert_string_equal(d.v[0].file, "/nonexistent/x.yaml");
	gb_diags_free(&d);
	o.max_bytes = 16;
	assert_int_equal(gb_yaml_load_file("/proc/self/exe", &o, &docs, &d), -1);
	assert_non_null(strstr(d.v[0].msg, "larger than the limit of 16 bytes"));
	gb_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_positions),
		cmocka_unit_test(test_nulls),
		cmocka_unit_test(test_multi_docs),
		cmocka_unit_test(test_empty_input),
		cmocka_unit_test(test_alias_refused),
		cmocka_unit_test(test_alias_bomb_fails_fast),
		cmocka_unit_test(test_depth_cap),
		cmocka_unit_test(test_depth_custom),
		cmocka_unit_test(test_node_cap),
		cmocka_unit_test(test_scalar_cap),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_duplicate_keys_large_map),
		cmocka_unit_test(test_large_map_no_false_dups),
		cmocka_unit_test(test_tabs),
		cmocka_unit_test(test_env_in_flow_map),
		cmocka_unit_test(test_tabs_after_utf8),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_overlong_utf8),
		cmocka_unit_test(test_nul_escape),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_complex_key),
		cmocka_unit_test(test_env_expansion),
		cmocka_unit_test(test_env_off),
		cmocka_unit_test(test_env_unset),
		cmocka_unit_test(test_env_bad_name),
		cmocka_unit_test(test_env_unterminated),
		cmocka_unit_test(test_env_error_marks_invalid),
		cmocka_unit_test(test_dec_int),
		cmocka_unit_test(test_dec_num),
		cmocka_unit_test(test_dec_bool_str_enum),
		cmocka_unit_test(test_dec_duration),
		cmocka_unit_test(test_dec_map_unknown_keys),
		cmocka_unit_test(test_dec_lists_and_maps),
		cmocka_unit_test(test_describe_and_paths),
		cmocka_unit_test(test_load_file_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
