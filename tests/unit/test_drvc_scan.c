/* test_drvc_scan.c -- the driver SDK's streaming JSON scanner
 * (drivers/common/drvc_scan.c): elements and their members by path
 * ("value[]", "items.*.instances[]", "" for the document), "*" keys as
 * key/value pairs, "[]" and "[N]" inside an element, tops read after the
 * end, the same answer when fed in any pieces, stopping from the
 * callback, malformed and oversized input and bad specs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "drvc_scan.h"

typedef struct seen {
	char out[4096];
	int n, stop_at;
} seen;

static const char *const az_members[] = {
	"name", "tags.*", "properties.instanceView.statuses[].code",
	"properties.hardwareProfile.vmSize", "nics[0].id", "spot",
};
static const char *const az_tops[] = { "nextLink" };

static int az_cb(void *ud, const drvc_scan_elem *e)
{
	seen *s = ud;
	size_t n, m;
	const gb_kv *tags = drvc_scan_kv(e, 1, &n);
	const gb_kv *codes = drvc_scan_kv(e, 2, &m);
	char *o = s->out + strlen(s->out);
	size_t cap = sizeof(s->out) - strlen(s->out);
	int w = snprintf(o, cap, "[%s %s %s %d",
	                 drvc_scan_str(e, 0) ? drvc_scan_str(e, 0) : "(null)",
	                 drvc_scan_str(e, 3) ? drvc_scan_str(e, 3) : "-",
	                 drvc_scan_str(e, 4) ? drvc_scan_str(e, 4) : "-",
	                 drvc_scan_true(e, 5));
	for (size_t i = 0; i < n; i++)
		w += snprintf(o + w, cap - (size_t)w, " %s=%s", tags[i].key,
		              tags[i].value);
	for (size_t i = 0; i < m; i++)
		w += snprintf(o + w, cap - (size_t)w, " c:%s", codes[i].value);
	snprintf(o + w, cap - (size_t)w, "]");
	return ++s->n == s->stop_at;
}

static const char az_page[] =
	"{\"value\":[{\"name\":\"vm-1\",\"tags\":{\"pool\":\"a\",\"n\":3,"
	"\"z\":null},\"properties\":{\"hardwareProfile\":{\"vmSize\":"
	"\"Standard_NC\"},\"instanceView\":{\"statuses\":[{\"code\":"
	"\"ProvisioningState/succeeded\"},{\"code\":\"PowerState/running\"}]}},"
	"\"nics\":[{\"id\":\"n0\"},{\"id\":\"n1\"}],\"spot\":true,"
	"\"other\":{\"name\":\"no\",\"deep\":[[1,2],{\"x\":\"y\"}]}},"
	"{\"name\":\"vm-\\u00e9\\n\",\"tags\":{},\"name2\":1,\"spot\":false},"
	"{\"tags\":{\"k\":\"v\"}}],"
	"\"nextLink\":\"https://x/?a=1&b=2\",\"value2\":[{\"name\":\"no\"}]}";

static const char az_want[] =
	"[vm-1 Standard_NC n0 1 pool=a c:ProvisioningState/succeeded "
	"c:PowerState/running][vm-\xc3\xa9\n - - 0][(null) - - 0 k=v]";

static drvc_scan_spec az_spec(void)
{
	drvc_scan_spec sp = { "value[]", az_members, 6, az_tops, 1, 0,
	                      "Azure VM list" };
	return sp;
}

static void test_elements_and_tops(void **state)
{
	drvc_scan_spec sp = az_spec();
	seen s;
	gb_error err;
	drvc_scan *sc;
	(void)state;
	memset(&s, 0, sizeof(s));
	sc = drvc_scan_new(&sp, az_cb, &s);
	assert_non_null(sc);
	assert_int_equal(drvc_scan_feed(sc, az_page, sizeof(az_page) - 1,
	                                &err), 0);
	assert_int_equal(drvc_scan_end(sc, &err), 0);
	assert_string_equal(s.out, az_want);
	assert_string_equal(drvc_scan_top(sc, 0), "https://x/?a=1&b=2");
	assert_null(drvc_scan_top(sc, 1));
	drvc_scan_free(sc);

	/* every split point, and byte by byte: the same answer */
	for (size_t cut = 0; cut < sizeof(az_page); cut++) {
		memset(&s, 0, sizeof(s));
		sc = drvc_scan_new(&sp, az_cb, &s);
		assert_int_equal(drvc_scan_feed(sc, az_page, cut, &err), 0);
		assert_int_equal(drvc_scan_feed(sc, az_page + cut,
		                                sizeof(az_page) - 1 - cut, &err),
		                 0);
		assert_int_equal(drvc_scan_end(sc, &err), 0);
		assert_string_equal(s.out, az_want);
		drvc_scan_free(sc);
	}
	memset(&s, 0, sizeof(s));
	sc = drvc_scan_new(&sp, az_cb, &s);
	for (size_t i = 0; i < sizeof(az_page) - 1; i++)
		assert_int_equal(drvc_scan_feed(sc, az_page + i, 1, &err), 0);
	assert_int_equal(drvc_scan_end(sc, &err), 0);
	assert_string_equal(s.out, az_want);
	drvc_scan_free(sc);
}

static void test_stop(void **state)
{
	drvc_scan_spec sp = az_spec();
	seen s;
	gb_error err;
	(void)state;
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	assert_int_equal(drvc_scan_buf(&sp, az_page, sizeof(az_page) - 1,
	                               az_cb, &s, &err), 1);
	assert_int_equal(s.n, 1);
}

static const char *const gce_members[] = {
	"name", "labels.*", "networkInterfaces[0].accessConfigs[0].natIP",
};
static const char *const gce_tops[] = { "nextPageToken" };

static int gce_cb(void *ud, const drvc_scan_elem *e)
{
	seen *s = ud;
	size_t n;
	const gb_kv *l = drvc_scan_kv(e, 1, &n);
	size_t len = strlen(s->out);
	snprintf(s->out + len, sizeof(s->out) - len, "[%s %s %s %zu%s%s]",
	         drvc_scan_elem_key(e), drvc_scan_str(e, 0),
	         drvc_scan_str(e, 2) ? drvc_scan_str(e, 2) : "-", n,
	         n ? " " : "", n ? l[0].value : "");
	s->n++;
	return 0;
}

static void test_wildcard_element(void **state)
{
	static const char page[] =
		"{\"items\":{\"zones/a\":{\"instances\":[{\"name\":\"i1\","
		"\"labels\":{\"p\":\"x\"},\"networkInterfaces\":[{"
		"\"accessConfigs\":[{\"natIP\":\"1.2.3.4\"}]}]}]},"
		"\"zones/b\":{\"warning\":{\"code\":\"NO_RESULTS_ON_PAGE\"}},"
		"\"zones/c\":{\"instances\":[{\"name\":\"i2\"},{\"name\":\"i3\","
		"\"networkInterfaces\":[{},{\"accessConfigs\":[{\"natIP\":"
		"\"9\"}]}]}]}},\"nextPageToken\":\"tok\"}";
	drvc_scan_spec sp = { "items.*.instances[]", gce_members, 3, gce_tops,
	                      1, 0, "GCE list" };
	drvc_scan *sc;
	seen s;
	gb_error err;
	(void)state;
	memset(&s, 0, sizeof(s));
	sc = drvc_scan_new(&sp, gce_cb, &s);
	assert_int_equal(drvc_scan_feed(sc, page, sizeof(page) - 1, &err), 0);
	assert_int_equal(drvc_scan_end(sc, &err), 0);
	assert_string_equal(s.out, "[zones/a i1 1.2.3.4 1 x][zones/c i2 - 0]"
	                           "[zones/c i3 - 0]");
	assert_string_equal(drvc_scan_top(sc, 0), "tok");
	drvc_scan_free(sc);
}

static void test_document_element(void **state)
{
	static const char doc[] = "{\"name\":\"one\",\"labels\":{\"a\":\"b\"}}";
	drvc_scan_spec sp = { "", gce_members, 3, NULL, 0, 0, "GCE VM" };
	seen s;
	gb_error err;
	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(drvc_scan_buf(&sp, doc, sizeof(doc) - 1, gce_cb, &s,
	                               &err), 0);
	assert_string_equal(s.out, "[ one - 1 b]");
}

static const char *const kind_members[] = { "s", "n", "t", "f", "o", "a",
	                                     "z", "ns" };

static int kind_cb(void *ud, const drvc_scan_elem *e)
{
	char *out = ud;
	for (size_t i = 0; i < 8; i++) {
		char k = drvc_scan_kind(e, i);
		out[i] = k ? k : '0';
	}
	assert_string_equal(drvc_scan_str(e, 0), "x");
	assert_null(drvc_scan_str(e, 1)); /* a number is not a string */
	assert_string_equal(drvc_scan_num(e, 1), "-1.5e3");
	assert_string_equal(drvc_scan_num(e, 7), "42");
	assert_null(drvc_scan_num(e, 2));
	assert_true(drvc_scan_true(e, 2));
	assert_false(drvc_scan_true(e, 3));
	return 0;
}

static void test_kinds(void **state)
{
	static const char doc[] =
		"{\"s\":\"x\",\"n\":-1.5e3,\"t\":true,\"f\":false,"
		"\"o\":{\"s\":\"no\"},\"a\":[1],\"z\":null,\"ns\":\"42\"}";
	static const char *const tops[] = { "o", "n", "s" };
	drvc_scan_spec sp = { "", kind_members, 8, NULL, 0, 0, "kinds" };
	drvc_scan_spec tp = { "nothing[]", kind_members, 1, tops, 3, 0, "t" };
	char out[9] = { 0 };
	gb_error err;
	drvc_scan *sc;
	(void)state;
	assert_int_equal(drvc_scan_buf(&sp, doc, sizeof(doc) - 1, kind_cb,
	                               out, &err), 0);
	assert_string_equal(out, "sntf{[0s");
	sc = drvc_scan_new(&tp, kind_cb, out);
	assert_int_equal(drvc_scan_feed(sc, doc, sizeof(doc) - 1, &err), 0);
	assert_int_equal(drvc_scan_end(sc, &err), 0);
	assert_int_equal(drvc_scan_top_kind(sc, 0), DRVC_SCAN_OBJECT);
	assert_null(drvc_scan_top(sc, 0));
	assert_null(drvc_scan_top(sc, 1));
	assert_int_equal(drvc_scan_top_kind(sc, 1), DRVC_SCAN_NUMBER);
	assert_string_equal(drvc_scan_top(sc, 2), "x");
	drvc_scan_free(sc);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"", " ", "[]", "\"x\"", "1", "{", "{\"value\":[}", "{}{}",
		"{\"a\":1,}", "{\"a\":\"\xff\"}", "{\"value\":[{\"name\":tru}]}",
		"{} x",
	};
	drvc_scan_spec sp = az_spec();
	seen s;
	gb_error err;
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0, sizeof(s));
		memset(&err, 0, sizeof(err));
		if (drvc_scan_buf(&sp, bad[i], strlen(bad[i]), az_cb, &s,
		                  &err) != -1)
			fail_msg("accepted %zu: %s", i, bad[i]);
		assert_true(err.message[0] != '\0');
		assert_non_null(strstr(err.message, "Azure VM list"));
	}
	/* the size limit */
	sp.max_bytes = 10;
	memset(&s, 0, sizeof(s));
	assert_int_equal(drvc_scan_buf(&sp, az_page, sizeof(az_page) - 1,
	                               az_cb, &s, &err), -1);
	assert_string_equal(err.code, "ResponseTooLarge");
	/* deeper than the scanner's limit */
	{
		char deep[2 * DRVC_SCAN_MAX_DEPTH + 8];
		size_t n = 0;
		sp.max_bytes = 0;
		for (int i = 0; i <= DRVC_SCAN_MAX_DEPTH; i++)
			deep[n++] = i ? '[' : '{';
		deep[n] = '\0';
		assert_int_equal(drvc_scan_buf(&sp, deep, n, az_cb, &s, &err),
		                 -1);
	}
	/* bad specs */
	{
		static const char *const badm[] = { "a..b" };
		static const char *const badm2[] = { "a[x]" };
		drvc_scan_spec b1 = { "value[]", badm, 1, NULL, 0, 0, "x" };
		drvc_scan_spec b2 = { "value[]", badm2, 1, NULL, 0, 0, "x" };
		assert_null(drvc_scan_new(&b1, az_cb, &s));
		assert_null(drvc_scan_new(&b2, az_cb, &s));
		assert_int_equal(drvc_scan_buf(&b1, "{}", 2, az_cb, &s, &err),
		                 -1);
		assert_string_equal(err.code, "BadScanSpec");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elements_and_tops),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_wildcard_element),
		cmocka_unit_test(test_document_element),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
