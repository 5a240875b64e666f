/* fuzz_scan.c -- libFuzzer target for the driver SDK's streaming JSON
 * scanner (drivers/common/drvc_scan.c, on yajl) and the list pages read
 * with it (Azure's VM list, GCE's aggregated list, Lambda's instances).
 * Besides "no crash, no leak, no hang" it checks:
 *   - the whole body and the same bytes fed in two pieces (split at a
 *     point the input chooses) and byte by byte give the same elements,
 *     values, tops and verdict;
 *   - every value and key handed out is a NUL-terminated string, every
 *     kv array has its terminating zero entry;
 *   - a refused body leaves a message.
 * Seeds: tests/fuzz/corpus/fuzz_scan/ (ARM and GCE answers). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../drivers/azure/azure.h"
#include "../../drivers/gcp/gcp.h"
#include "../../drivers/lambda/lambda.h"
#include "drvc_enc.h"
#include "drvc_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const members[] = {
	"name", "tags.*", "properties.instanceView.statuses[].code",
	"nics[0].id", "a[1].b[].c", "x", "labels.*",
};
static const char *const tops[] = { "nextLink", "value", "nextPageToken" };
static const drvc_scan_spec specs[] = {
	{ "value[]", members, 7, tops, 3, 0, "fuzz" },
	{ "items.*.instances[]", members, 7, tops, 3, 0, "fuzz" },
	{ "", members, 7, NULL, 0, 0, "fuzz" },
};

static int elem_cb(void *ud, const drvc_scan_elem *e)
{
	drvc_buf *out = ud;
	drvc_buf_addf(out, "<%s|", drvc_scan_elem_key(e));
	for (size_t i = 0; i < 7; i++) {
		size_t n;
		const gb_kv *kv = drvc_scan_kv(e, i, &n);
		const char *s = drvc_scan_str(e, i);
		drvc_buf_addf(out, "%c", drvc_scan_kind(e, i) ? drvc_scan_kind(e, i)
		                                               : '0');
		if (s)
			drvc_buf_addf(out, "%zu:%s", strlen(s), s);
		if (kv && kv[n].key)
			abort();
		for (size_t k = 0; k < n; k++)
			drvc_buf_addf(out, "[%s=%s]", kv[k].key, kv[k].value);
	}
	drvc_buf_adds(out, ">");
	return out->len > (1u << 20); /* stop a runaway */
}

/* Scans body with spec fed in the given pieces; the elements, tops and
 * verdict as one string (the caller frees). */
static char *scan(const drvc_scan_spec *sp, const char *body, size_t size,
                  size_t cut, int bytewise)
{
	drvc_buf out = DRVC_BUF_INIT;
	gb_error err;
	drvc_scan *s = drvc_scan_new(sp, elem_cb, &out);
	int rc = 0;
	char *r;
	if (!s)
		abort();
	memset(&err, 0, sizeof(err));
	if (bytewise) {
		for (size_t i = 0; i < size && rc == 0; i++)
			rc = drvc_scan_feed(s, body + i, 1, &err);
	} else {
		rc = drvc_scan_feed(s, body, cut, &err);
		if (rc == 0)
			rc = drvc_scan_feed(s, body + cut, size - cut, &err);
	}
	if (rc == 0)
		rc = drvc_scan_end(s, &err);
	if (rc < 0 && !err.message[0])
		abort();
	drvc_buf_addf(&out, "rc=%d", rc < 0 ? -1 : rc);
	for (size_t i = 0; i < sp->ntops; i++) {
		const char *t = drvc_scan_top(s, i);
		drvc_buf_addf(&out, "|%c%s", drvc_scan_top_kind(s, i) + '0',
		              t ? t : "");
	}
	drvc_scan_free(s);
	r = drvc_buf_take(&out);
	if (!r)
		abort();
	return r;
}

static int az_cb(void *ud, azure_vm *vm)
{
	(void)ud;
	if (!vm->name[0] || !vm->power || (vm->ntags && !vm->tags))
		abort();
	return 0;
}

static int gce_cb(void *ud, gcp_inst *in)
{
	(void)ud;
	if (!in->name[0] || !in->zone || !in->type || !in->status)
		abort();
	return 0;
}

static int lambda_cb(void *ud, const lambda_inst *in)
{
	(void)ud;
	if (!in->id || !in->id[0])
		abort();
	for (size_t i = 0; i < in->ntags; i++)
		if (!in->tags[i].key || !in->tags[i].value)
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *body = (const char *)data;
	size_t cut = size ? data[0] % (size + 1) : 0;
	gb_error err;
	char *next = NULL;

	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		char *whole = scan(&specs[k], body, size, size, 0);
		char *two = scan(&specs[k], body, size, cut, 0);
		char *bytes = size <= 4096 ? scan(&specs[k], body, size, 0, 1)
		                           : NULL;
		if (strcmp(whole, two) != 0 || (bytes && strcmp(whole, bytes)))
			abort();
		free(whole);
		free(two);
		free(bytes);
	}
	memset(&err, 0, sizeof(err));
	if (azure_parse_vm_page(body, size, az_cb, NULL, &next, &err) < 0 &&
	    !err.message[0])
		abort();
	free(next);
	next = NULL;
	memset(&err, 0, sizeof(err));
	if (gcp_parse_agg_page(body, size, gce_cb, NULL, &next, &err) < 0 &&
	    !err.message[0])
		abort();
	free(next);
	memset(&err, 0, sizeof(err));
	if (lambda_parse_list(body, size, lambda_cb, NULL, &err) < 0 &&
	    !err.message[0])
		abort();
	return 0;
}
