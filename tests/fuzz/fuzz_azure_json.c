/* fuzz_azure_json.c -- libFuzzer target for the Azure driver's response
 * parsers: the token answer, the Azure-AsyncOperation status, a VM, a VM
 * list page, a NIC, a Retail Prices page, ARM error bodies through the
 * classifier (the first input line doubles as a response header, so
 * Retry-After parsing is fuzzed too), and the RFC 3339 / HTTP-date
 * readers.  Besides "no crash, no leak, no hang" it checks that parsed
 * values are sane: names non-NULL, states in range, prices positive,
 * codes and messages printable one-liners.
 * Seeds: tests/fuzz/corpus/fuzz_azure_json/ (real-shaped ARM answers). */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../drivers/azure/azure.h"
#include "drvc_http.h"
#include "drvc_json.h"

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

static int vm_cb(void *ud, azure_vm *vm)
{
	const char *reason;
	gb_instance_state st;
	if (!vm->name || !vm->location || !vm->zone || !vm->size ||
	    !vm->priority || !vm->prov_state || !vm->power || !vm->nic_id)
		abort();
	st = azure_vm_state(vm, &reason);
	if (st > GB_INST_UNKNOWN)
		abort();
	for (size_t i = 0; i < vm->ntags; i++)
		if (!vm->tags[i].key || !vm->tags[i].value)
			abort();
	return ++*(size_t *)ud > 100000;
}

static void price_cb(void *ud, const azure_price_row *row)
{
	if (!row->sku || !row->region || !(row->price > 0))
		abort();
	++*(size_t *)ud;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char st[32], code[96], msg[512], *next = NULL, *tok = NULL;
	int64_t exp;
	size_t n = 0;
	gb_error err;
	json_t *root;

	if (azure_parse_token(buf, size, &tok, &exp, &err) == 0 &&
	    (!tok || !*tok || strchr(tok, '\n')))
		abort();
	free(tok);
	if (azure_parse_op(buf, size, st, sizeof(st), code, sizeof(code), msg,
	                   sizeof(msg)) == 0) {
		printable(st);
		printable(code);
		printable(msg);
	}
	if (azure_parse_vm_page(buf, size, vm_cb, &n, &next, &err) < 0)
		printable(err.message);
	free(next);
	next = NULL;
	if (azure_parse_price_page(buf, size, price_cb, &n, &next, &err) < 0)
		printable(err.message);
	free(next);

	root = json_loadb(buf, size, 0, NULL);
	if (root) {
		azure_vm vm;
		char *priv = NULL, *pub = NULL;
		azure_vm_parse(root, &vm);
		vm_cb(&n, &vm);
		azure_vm_free(&vm);
		azure_parse_nic(root, &priv, &pub);
		free(priv);
		free(pub);
		azure_error_fields(root, code, sizeof(code), msg, sizeof(msg));
		printable(code);
		printable(msg);
		json_decref(root);
	}

	/* The classifier, with the first line as a response header. */
	{
		gb_host host;
		azure_ctx c;
		azure_what w;
		const char *nl = memchr(buf, '\n', size);
		size_t hl = nl ? (size_t)(nl - buf) : 0;
		char *hdr = strndup(buf, hl);
		char *body = malloc(size + 1);
		char *hv[1];
		gb_http_resp r;
		int expired;
		if (!hdr || !body)
			abort();
		memcpy(body, buf, size);
		body[size] = '\0';
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
		r.body = body;
		r.body_len = size;
		r.headers = hv;
		r.nheaders = 1;
		memset(&err, 0, sizeof(err));
		if (azure_classify(&w, &r, &err, &expired) != GB_ERR_NONE) {
			printable(err.message);
			if (err.retry_after_ms < 0 ||
			    err.retry_after_ms > DRVC_MAX_RETRY_AFTER_MS)
				abort();
		}
		drvc_rfc3339(hdr);
		drvc_http_date(hdr);
		free(hdr);
		free(body);
	}
	return 0;
}
