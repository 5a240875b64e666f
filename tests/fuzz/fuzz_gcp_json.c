/* fuzz_gcp_json.c -- libFuzzer target for the GCP driver's response
 * parsers: the token answer, an Operation, an Instance, an
 * aggregatedList page, a billing-catalog SKU page, Google error bodies
 * through the classifier (the first input line doubles as a response
 * header), the machine-type splitter and the label/name mappers.  Besides
 * "no crash, no leak, no hang" it checks: parsed names non-NULL, states in
 * range, prices positive, mapped labels within GCE's rules, codes and
 * messages printable one-liners.
 * Seeds: tests/fuzz/corpus/fuzz_gcp_json/ (real-shaped GCE answers). */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../drivers/gcp/gcp.h"
#include "drvc_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t now_ms(void *ctx)
{
	(void)ctx;
	return 1700000000000LL;
}

static void printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			abort();
}

static void label_ok(const char *s, int key)
{
	size_t n = strlen(s);
	if (n > 63 || (key && (n == 0 || s[0] < 'a' || s[0] > 'z')))
		abort();
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '-' || s[i] == '_'))
			abort();
}

static int inst_cb(void *ud, gcp_inst *in)
{
	const char *reason;
	if (!in->name || !in->zone || !in->type || !in->status)
		abort();
	if (gcp_inst_state(in, &reason) > GB_INST_UNKNOWN)
		abort();
	for (size_t i = 0; i < in->nlabels; i++)
		if (!in->labels[i].key || !in->labels[i].value)
			abort();
	return ++*(size_t *)ud > 100000;
}

static void sku_cb(void *ud, const gcp_sku *k)
{
	if (!k->description || !k->usage || !(k->price > 0) ||
	    !json_is_array(k->regions))
		abort();
	++*(size_t *)ud;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char name[128], st[32], code[96], msg[512], *next = NULL, *tok = NULL;
	char *s = malloc(size + 1);
	int64_t exp;
	long hs;
	size_t n = 0;
	gb_error err;
	json_t *root;

	if (!s)
		abort();
	memcpy(s, buf, size);
	s[size] = '\0';
	if (gcp_parse_token(buf, size, &tok, &exp, &err) == 0 &&
	    (!tok || !*tok || strchr(tok, '\n')))
		abort();
	free(tok);
	if (gcp_parse_op(buf, size, name, sizeof(name), st, sizeof(st), code,
	                 sizeof(code), msg, sizeof(msg), &hs) == 0) {
		printable(name);
		printable(st);
		printable(code);
		printable(msg);
		gcp_op_class(code, hs);
	}
	if (gcp_parse_agg_page(buf, size, inst_cb, &n, &next, &err) < 0)
		printable(err.message);
	free(next);
	next = NULL;
	if (gcp_parse_sku_page(buf, size, sku_cb, &n, &next, &err) < 0)
		printable(err.message);
	free(next);

	root = json_loadb(buf, size, 0, NULL);
	if (root) {
		gcp_inst in;
		gcp_inst_parse(root, &in);
		inst_cb(&n, &in);
		gcp_inst_free(&in);
		gcp_error_fields(root, code, sizeof(code), msg, sizeof(msg));
		printable(code);
		printable(msg);
		json_decref(root);
	}

	/* Type splitter, label and name mappers on the raw text. */
	{
		gcp_type t;
		char out[64];
		if (gcp_parse_type(s, &t, &err) == 0 &&
		    (!t.machine[0] || (t.accel[0] && t.accel_count < 1)))
			abort();
		gcp_label_key(s, out);
		label_ok(out, 1);
		gcp_label_value(s, out);
		label_ok(out, 0);
		if (gcp_instance_name(s, 7, out, &err) == 0) {
			if (out[0] < 'a' || out[0] > 'z' || strlen(out) > 63)
				abort();
		}
	}

	/* The classifier, with the first line as a response header. */
	{
		gb_host host;
		gcp_ctx c;
		gcp_what w;
		const char *nl = memchr(buf, '\n', size);
		char *hdr = strndup(buf, nl ? (size_t)(nl - buf) : 0);
		char *hv[1];
		gb_http_resp r;
		int expired;
		if (!hdr)
			abort();
		hv[0] = hdr;
		memset(&host, 0, sizeof(host));
		host.now_ms = now_ms;
		memset(&c, 0, sizeof(c));
		c.host = &host;
		w.c = &c;
		w.what = "fuzz";
		memset(&r, 0, sizeof(r));
		r.status = size ? 200 + (long)(data[0] % 4) * 100 + data[size - 1] % 30
		                : 500;
		r.body = s;
		r.body_len = size;
		r.headers = hv;
		r.nheaders = 1;
		memset(&err, 0, sizeof(err));
		if (gcp_classify(&w, &r, &err, &expired) != GB_ERR_NONE) {
			printable(err.message);
			if (err.retry_after_ms < 0 ||
			    err.retry_after_ms > DRVC_MAX_RETRY_AFTER_MS)
				abort();
		}
		free(hdr);
	}
	free(s);
	return 0;
}
