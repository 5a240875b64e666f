/* fuzz_aws_xml.c -- libFuzzer target for the AWS driver's XML reader and
 * every EC2 answer parser built on it (RunInstances, DescribeInstances,
 * TerminateInstances, DescribeInstanceTypes, DescribeSpotPriceHistory,
 * error documents, the classifier, the NotFound id extractor and the
 * message scrubber).  Besides "no crash, no leak, no hang" it checks:
 *   - the whole document and the same bytes fed in two pieces (split at
 *     a point the input chooses) give the same verdict (libexpat's
 *     incremental reader, as a streamed body feeds it);
 *   - a valid document has named nodes no deeper than the bound;
 *   - a failed parse leaves a message; a classified error never keeps a
 *     scrubbed value.
 * Seeds: tests/fuzz/corpus/fuzz_aws_xml/ (real-shaped EC2 answers). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../drivers/aws/aws_ec2.h"
#include "../../drivers/aws/aws_errors.h"
#include "../../drivers/aws/aws_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inst_cb(void *ud, const gb_instance *in)
{
	size_t *n = ud;
	if (!in->id || !*in->id || !in->zone || !in->region)
		abort();
	for (size_t i = 0; i < in->ntags; i++)
		if (!in->tags[i].key || !in->tags[i].value)
			abort();
	return ++*n > 10000;
}

static int type_cb(void *ud, const aws_type_info *t)
{
	if (!t->type || t->gpu_count < 0 || t->vcpus < 0)
		abort();
	++*(size_t *)ud;
	return 0;
}

static int spot_cb(void *ud, const aws_spot_price *p)
{
	if (!p->type || !p->zone || !(p->price >= 0))
		abort();
	++*(size_t *)ud;
	return 0;
}

static void walk(const aws_xml_node *n, int depth)
{
	if (depth > AWS_XML_MAX_DEPTH || !n->name[0] || !n->text)
		abort();
	for (const aws_xml_node *c = n->child; c; c = c->next)
		walk(c, depth + 1);
}

static void check_err(const gb_error *e)
{
	if (e->message[sizeof(e->message) - 1] != '\0' ||
	    e->code[sizeof(e->code) - 1] != '\0' || !e->message[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a NUL-terminated copy: the host always hands NUL-terminated
	 * bodies, and a NUL inside must still be refused cleanly */
	char *body = malloc(size + 1);
	char err[200];
	aws_xml_doc *d, *d2;
	aws_xml_reader *r;
	size_t cut;
	gb_error e;
	size_t n = 0;
	char *next = NULL;
	static const char *const roots[] = {"RunInstancesResponse",
	                                    "DescribeInstancesResponse"};

	if (!body)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';

	/* the tree, whole and in two pieces */
	d = aws_xml_parse(body, size, err, sizeof(err));
	if (!d && !err[0])
		abort();
	cut = size ? (size_t)data[0] % (size + 1) : 0;
	r = aws_xml_begin();
	if (aws_xml_feed(r, body, cut, err, sizeof(err)) == 0)
		(void)aws_xml_feed(r, body + cut, size - cut, err, sizeof(err));
	d2 = aws_xml_end(r, err, sizeof(err));
	if (!d != !d2)
		abort();
	if (d) {
		walk(aws_xml_root(d), 1);
		if (strcmp(aws_xml_root(d)->name, aws_xml_root(d2)->name) != 0)
			abort();
	}
	aws_xml_free(d);
	aws_xml_free(d2);

	/* every answer parser */
	for (size_t i = 0; i < 2; i++) {
		memset(&e, 0, sizeof(e));
		n = 0;
		if (aws_ec2_parse_instances(body, size, roots[i], "us-east-1",
		                            inst_cb, &n, &next, &e) < 0)
			check_err(&e);
		free(next);
		next = NULL;
	}
	memset(&e, 0, sizeof(e));
	if (aws_ec2_parse_terminate(body, size, &e) < 0)
		check_err(&e);
	memset(&e, 0, sizeof(e));
	if (aws_ec2_parse_types(body, size, type_cb, &n, &next, &e) < 0)
		check_err(&e);
	free(next);
	next = NULL;
	memset(&e, 0, sizeof(e));
	if (aws_ec2_parse_spot(body, size, spot_cb, &n, &next, &e) < 0)
		check_err(&e);
	free(next);

	/* errors: parse, classify with a scrub list, extract ids */
	{
		aws_ec2_error ee;
		gb_http_resp resp;
		const char *scrub[] = {"SECRETVALUE", "sig0123456789abcdef"};
		static const long statuses[] = {400, 401, 403, 429, 500, 503};
		const char *ids[] = {"i-0123", "i-abcdef0123456789"};
		unsigned char gone[2] = {0, 0};
		(void)aws_parse_error(body, size, &ee);
		memset(&resp, 0, sizeof(resp));
		resp.status = statuses[size % 6];
		resp.body = body;
		resp.body_len = size;
		memset(&e, 0, sizeof(e));
		if (aws_classify_answer("RunInstances", "us-east-1", "https://x/",
		                        &resp, scrub, 2, &e) == GB_ERR_NONE)
			abort();
		check_err(&e);
		if (strstr(e.message, scrub[0]) || strstr(e.message, scrub[1]) ||
		    strstr(e.code, scrub[0]) || strstr(e.code, scrub[1]))
			abort();
		(void)aws_ec2_missing_ids(e.message, ids, 2, gone);
	}
	free(body);
	return 0;
}
