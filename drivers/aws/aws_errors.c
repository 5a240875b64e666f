/* aws_errors.c -- see aws_errors.h. */
#include "aws_errors.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aws_util.h"
#include "aws_xml.h"
#include "drvc_util.h"

typedef struct code_class {
	const char *code;
	gb_err_class cls;
} code_class;

static const code_class codes[] = {
	/* no capacity right now: try another zone, type or capacity */
	{"InsufficientInstanceCapacity", GB_ERR_CAPACITY},
	{"InsufficientHostCapacity", GB_ERR_CAPACITY},
	{"InsufficientReservedInstanceCapacity", GB_ERR_CAPACITY},
	{"InsufficientCapacity", GB_ERR_CAPACITY},
	{"UnfulfillableCapacity", GB_ERR_CAPACITY},
	{"Unsupported", GB_ERR_CAPACITY}, /* type not offered in that AZ */
	{"SpotMaxPriceTooLow", GB_ERR_CAPACITY}, /* fall back to on-demand */
	{"InsufficientFreeAddressesInSubnet", GB_ERR_CAPACITY},
	/* account limits */
	{"InstanceLimitExceeded", GB_ERR_QUOTA},
	{"VcpuLimitExceeded", GB_ERR_QUOTA},
	{"MaxSpotInstanceCountExceeded", GB_ERR_QUOTA},
	{"VolumeLimitExceeded", GB_ERR_QUOTA},
	/* rate limits */
	{"RequestLimitExceeded", GB_ERR_THROTTLED},
	{"Throttling", GB_ERR_THROTTLED},
	{"ThrottlingException", GB_ERR_THROTTLED},
	/* credentials and permissions */
	{"AuthFailure", GB_ERR_AUTH},
	{"UnauthorizedOperation", GB_ERR_AUTH},
	{"SignatureDoesNotMatch", GB_ERR_AUTH},
	{"InvalidClientTokenId", GB_ERR_AUTH},
	{"IncompleteSignature", GB_ERR_AUTH},
	{"MissingAuthenticationToken", GB_ERR_AUTH},
	{"RequestExpired", GB_ERR_AUTH},
	{"OptInRequired", GB_ERR_AUTH},
	{"ExpiredToken", GB_ERR_AUTH},
	{"Blocked", GB_ERR_AUTH},
	{"AccessDenied", GB_ERR_AUTH},
	/* idempotency and state clashes */
	{"IdempotentParameterMismatch", GB_ERR_CONFLICT},
	{"IncorrectInstanceState", GB_ERR_CONFLICT},
	/* only the instance itself is "not found"; a missing AMI, subnet,
	 * group or key pair is a configuration error (INVALID) */
	{"InvalidInstanceID.NotFound", GB_ERR_NOT_FOUND},
	/* the service had a problem: retry */
	{"InternalError", GB_ERR_TRANSIENT},
	{"InternalFailure", GB_ERR_TRANSIENT},
	{"Unavailable", GB_ERR_TRANSIENT},
	{"ServiceUnavailable", GB_ERR_TRANSIENT},
};

gb_err_class aws_error_class(const char *code, long status)
{
	if (code && *code) {
		if (strncmp(code, "Client.", 7) == 0 ||
		    strncmp(code, "Server.", 7) == 0)
			code += 7;
		for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
			if (strcmp(codes[i].code, code) == 0)
				return codes[i].cls;
	}
	if (status == 503 || status == 429)
		return GB_ERR_THROTTLED;
	if (status >= 500 || status == 0)
		return GB_ERR_TRANSIENT;
	if (status == 401 || status == 403)
		return GB_ERR_AUTH;
	return GB_ERR_INVALID;
}

static void copy_text(char *dst, size_t cap, const char *s)
{
	size_t n = 0;
	if (!s) {
		dst[0] = '\0';
		return;
	}
	while (isspace((unsigned char)*s))
		s++;
	while (*s && n + 1 < cap)
		dst[n++] = *s++;
	while (n && isspace((unsigned char)dst[n - 1]))
		n--;
	dst[n] = '\0';
}

int aws_parse_error(const char *body, size_t len, aws_ec2_error *out)
{
	char xerr[160];
	aws_xml_doc *d;
	const aws_xml_node *root, *e;
	memset(out, 0, sizeof(*out));
	if (!body || len == 0)
		return -1;
	d = aws_xml_parse(body, len, xerr, sizeof(xerr));
	if (!d)
		return -1;
	root = aws_xml_root(d);
	/* <Response><Errors><Error>; tolerate <ErrorResponse><Error> too */
	e = aws_xml_path(root, "Errors/Error");
	if (!e)
		e = aws_xml_child(root, "Error");
	if (!e || !aws_xml_text(e, "Code") || !*aws_xml_text(e, "Code")) {
		aws_xml_free(d);
		return -1;
	}
	copy_text(out->code, sizeof(out->code), aws_xml_text(e, "Code"));
	copy_text(out->message, sizeof(out->message),
	          aws_xml_text(e, "Message"));
	copy_text(out->request_id, sizeof(out->request_id),
	          aws_xml_text(root, "RequestID")
	                  ? aws_xml_text(root, "RequestID")
	                  : aws_xml_text(root, "RequestId"));
	aws_xml_free(d);
	return 0;
}

const char *aws_resp_header(const gb_http_resp *resp, const char *name,
                            size_t *len)
{
	size_t n = strlen(name);
	for (size_t i = 0; resp && i < resp->nheaders; i++) {
		const char *h = resp->headers[i];
		if (h && strncasecmp(h, name, n) == 0 && h[n] == ':') {
			const char *v = h + n + 1;
			size_t l;
			while (*v == ' ' || *v == '\t')
				v++;
			l = strlen(v);
			while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' ||
			             v[l - 1] == ' '))
				l--;
			if (len)
				*len = l;
			return v;
		}
	}
	return NULL;
}

void aws_scrub(char *s, size_t cap, const char *const *scrub, size_t nscrub)
{
	static const char red[] = "[redacted]";
	char *tmp;
	if (!s || cap == 0)
		return;
	tmp = aws_xmalloc(cap);
	for (size_t k = 0; k < nscrub; k++) {
		const char *v = scrub[k];
		size_t vl = v ? strlen(v) : 0, o = 0, n;
		const char *p = s;
		if (vl < 4) /* too short to be a secret, too common to scrub */
			continue;
		while (*p && o + 1 < cap) {
			if (strncmp(p, v, vl) == 0) {
				for (size_t r = 0; red[r] && o + 1 < cap; r++)
					tmp[o++] = red[r];
				p += vl;
			} else {
				tmp[o++] = *p++;
			}
		}
		tmp[o] = '\0';
		/* a secret cut short by truncation at the very end */
		n = o;
		for (size_t m = vl - 1 < n ? vl - 1 : n; m >= 4; m--)
			if (memcmp(tmp + n - m, v, m) == 0) {
				size_t at = n - m;
				snprintf(tmp + at, cap - at, "%s", red);
				break;
			}
		memcpy(s, tmp, strlen(tmp) + 1);
	}
	free(tmp);
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

/* First printable bytes of a non-EC2 body, for the message. */
static void snippet(const char *body, size_t len, char *out, size_t cap)
{
	size_t n = 0;
	int sp = 0;
	for (size_t i = 0; body && i < len && n + 1 < cap; i++) {
		unsigned char c = (unsigned char)body[i];
		if (c < 0x20 || c == 0x7f) {
			sp = 1;
			continue;
		}
		if (sp && n)
			out[n++] = ' ';
		sp = 0;
		if (n + 1 < cap)
			out[n++] = (char)c;
	}
	out[n] = '\0';
}

gb_err_class aws_classify_answer(const char *action, const char *region,
                                 const char *endpoint,
                                 const gb_http_resp *resp,
                                 const char *const *scrub, size_t nscrub,
                                 gb_error *err)
{
	aws_ec2_error e;
	gb_err_class cls;
	const char *ra;
	size_t ral = 0;

	if (resp->status >= 200 && resp->status < 300)
		return GB_ERR_NONE;
	if (aws_parse_error(resp->body, resp->body_len, &e) == 0) {
		cls = aws_error_class(e.code, resp->status);
		drvc_err(err, cls, (int)resp->status, e.code,
		         "EC2 %s in %s: %s: %s (HTTP %ld%s%s)", action, region,
		         e.code, e.message[0] ? e.message : "(no message)",
		         resp->status, e.request_id[0] ? ", request " : "",
		         e.request_id);
	} else {
		const char *ct = aws_resp_header(resp, "Content-Type", NULL);
		char snip[160];
		snippet(resp->body, resp->body_len, snip, sizeof(snip));
		cls = aws_error_class(NULL, resp->status);
		drvc_err(err, cls, (int)resp->status,
		         resp->status >= 500 ? "HTTP5xx" : "HTTPError",
		         "EC2 %s in %s (%s): HTTP %ld without an EC2 error "
		         "document (content-type %.80s): %s", action, region,
		         endpoint, resp->status, ct ? ct : "none",
		         snip[0] ? snip : "(empty body)");
	}
	ra = aws_resp_header(resp, "Retry-After", &ral);
	if (ra && ral > 0 && ral < 8) {
		char b[8];
		char *end;
		long s;
		memcpy(b, ra, ral);
		b[ral] = '\0';
		s = strtol(b, &end, 10);
		if (*end == '\0' && s >= 0 && s <= 3600)
			err->retry_after_ms = (int64_t)s * 1000;
	}
	aws_scrub(err->message, sizeof(err->message), scrub, nscrub);
	aws_scrub(err->code, sizeof(err->code), scrub, nscrub);
	return cls;
}
