/* lambda_http.c -- one Lambda Cloud API exchange: the API key as a
 * bearer token (API.md, "Authentication"), JSON headers, the Lambda
 * classifier.  The key is registered for redaction at init; it is never
 * put into a message. */
#include <stdlib.h>
#include <string.h>

#include "drvc_http.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "lambda.h"

int lambda_api(lambda_ctx *c, const char *method, const char *path,
               const char *body, const char *rate_class, int once,
               const char *what, gb_http_resp *resp, gb_error *err)
{
	const gb_host *h = c->host;
	lambda_what w = {c, what};
	const char *hdrs[3];
	gb_http_req req;
	char *url;
	int rc;

	memset(resp, 0, sizeof(*resp));
	if (lambda_require(c, err) != 0)
		return -1;
	hdrs[0] = c->auth_line;
	hdrs[1] = "Accept: application/json";
	hdrs[2] = "Content-Type: application/json";
	url = drvc_xasprintf("%s%s", c->endpoint, path);
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = hdrs;
	req.nheaders = body ? 3 : 2;
	req.body = body;
	req.body_len = body ? strlen(body) : 0;
	req.rate_class = rate_class;
	req.max_attempts = once ? 1 : 0;
	req.classify = lambda_classify;
	req.classify_ud = &w;
	rc = h->http(h->ctx, &req, resp, err);
	free(url);
	if (rc != 0) {
		if (err->cls == GB_ERR_NONE)
			err->cls = GB_ERR_TRANSIENT;
		drvc_scrub(err->message, sizeof(err->message), c->key);
	}
	return rc;
}

int lambda_get_data(lambda_ctx *c, const char *path, const char *what,
                    json_t **root, json_t **data, gb_error *err)
{
	gb_http_resp resp;
	int rc = lambda_api(c, "GET", path, NULL, LAMBDA_RATE_API, 0, what, &resp,
	                    err);
	char label[160];
	*data = NULL;
	snprintf(label, sizeof(label), "Lambda %s", what);
	rc = drvc_json_answer(c->host, rc, &resp, DRVC_MAX_BODY, label, root,
	                      err);
	if (rc == 0) /* NOT_FOUND */
		return -1;
	if (rc < 0)
		return -1;
	*data = json_object_get(*root, "data");
	if (!*data) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "MalformedResponse",
		         "%s: the answer has no \"data\" member", label);
		json_decref(*root);
		*root = NULL;
		return -1;
	}
	return 0;
}
