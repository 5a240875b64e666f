/*
 * server.c -- the five HTTP listeners (aws, azure, gcp, control, lambda), all on
 * 127.0.0.1, one libmicrohttpd daemon each with a thread per connection
 * so injected latency never serialises concurrent clients.
 *
 * Each request is captured as received -- raw request target (from the
 * URI log callback, before MHD unescapes anything), headers in order and
 * the body (capped at limits.max_body_bytes) -- then handed to the
 * provider module, which fills a sim_resp.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "sim.h"

enum { L_AWS, L_AZURE, L_GCP, L_CONTROL, L_LAMBDA, L_N };

static struct MHD_Daemon *daemons[L_N];

typedef void (*handler_fn)(sim_req *, sim_resp *);
static const handler_fn handlers[L_N] = {
	sim_ec2_handle, sim_azure_handle, sim_gcp_handle, sim_control_handle,
	sim_lambda_handle,
};
static const char *const lnames[L_N] = {"aws", "azure", "gcp", "control",
                                        "lambda"};

void sim_log(const char *fmt, ...)
{
	va_list ap;
	if (!sim_g.verbose)
		return;
	va_start(ap, fmt);
	fputs("cloudsim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

typedef struct ctx {
	sim_req req;
	int started;
	int bad_query;
} ctx;

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	ctx *x = gb_xcalloc(1, sizeof(*x));
	const char *q;
	(void)cls;
	(void)c;
	x->req.raw_uri = gb_xstrdup(uri ? uri : "/");
	q = strchr(x->req.raw_uri, '?');
	if (q) {
		x->req.path = gb_xstrndup(x->req.raw_uri,
		                          (size_t)(q - x->req.raw_uri));
		x->req.query = gb_xstrdup(q + 1);
	} else {
		x->req.path = gb_xstrdup(x->req.raw_uri);
		x->req.query = gb_xstrdup("");
	}
	return x;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	ctx *x = *con_cls;
	(void)cls;
	(void)c;
	(void)toe;
	if (x) {
		sim_req_free(&x->req);
		free(x);
	}
	*con_cls = NULL;
}

static enum MHD_Result collect_hdr(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
	sim_req *r = cls;
	(void)kind;
	if (r->nhdrs >= 256)
		return MHD_NO;
	r->hdrs = gb_xrealloc(r->hdrs, (r->nhdrs + 1) * sizeof(sim_hdr));
	r->hdrs[r->nhdrs].name = gb_xstrdup(key ? key : "");
	r->hdrs[r->nhdrs].value = gb_xstrdup(value ? value : "");
	r->nhdrs++;
	return MHD_YES;
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, sim_resp *resp)
{
	struct MHD_Response *mr;
	enum MHD_Result rc;
	mr = MHD_create_response_from_buffer(resp->body.len,
	                                     resp->body.data ? resp->body.data
	                                                     : (char *)"",
	                                     MHD_RESPMEM_MUST_COPY);
	if (!mr)
		return MHD_NO;
	if (resp->content_type)
		MHD_add_response_header(mr, "Content-Type", resp->content_type);
	for (size_t i = 0; i < resp->headers.n; i++)
		MHD_add_response_header(mr, resp->headers.keys[i],
		                        resp->headers.vals[i]);
	rc = MHD_queue_response(conn, (unsigned)resp->status, mr);
	MHD_destroy_response(mr);
	return rc;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
                                 const char *url, const char *method,
                                 const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls)
{
	int kind = (int)(intptr_t)cls;
	ctx *x = *con_cls;
	sim_resp resp;
	enum MHD_Result rc;
	(void)url;
	(void)version;
	if (!x) /* no URI log call: cannot happen, refuse */
		return MHD_NO;
	if (!x->started) {
		x->started = 1;
		x->req.method = gb_xstrdup(method);
		MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_hdr,
		                          &x->req);
		if (sim_parse_form(x->req.query, strlen(x->req.query), 1,
		                   &x->req.qargs) != 0)
			x->bad_query = 1;
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		if (!x->req.body_too_large &&
		    (int64_t)(x->req.body_len + n) <= sim_g.sc.max_body) {
			x->req.body = gb_xrealloc(x->req.body,
			                          x->req.body_len + n + 1);
			memcpy(x->req.body + x->req.body_len, upload, n);
			x->req.body_len += n;
			x->req.body[x->req.body_len] = '\0';
		} else {
			x->req.body_too_large = 1;
			free(x->req.body);
			x->req.body = NULL;
			x->req.body_len = 0;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (!x->req.body)
		x->req.body = gb_xstrdup("");
	if (x->bad_query) {
		/* undecodable query: handlers answer with their error shape */
		gb_kvs_free(&x->req.qargs);
		x->req.bad_query = 1;
	}
	sim_uuid(x->req.request_id);
	sim_resp_init(&resp);
	handlers[kind](&x->req, &resp);
	sim_log("%s %s %s -> %d (%s)", lnames[kind], method, x->req.raw_uri,
	        resp.status, x->req.op ? x->req.op : "-");
	rc = send_resp(conn, &resp);
	sim_resp_free(&resp);
	return rc;
}

static struct MHD_Daemon *start_one(int kind, int port, int *bound)
{
	struct sockaddr_in sa;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			MHD_USE_POLL,
		(uint16_t)port, NULL, NULL, access_cb, (void *)(intptr_t)kind,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4000,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)300,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)(1024 * 1024),
		MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
		MHD_OPTION_END);
	if (!d)
		return NULL;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*bound = info ? (int)info->port : port;
	return d;
}

int sim_server_start(int base_port)
{
	for (int k = 0; k < L_N; k++) {
		int port = base_port ? base_port + k : 0;
		daemons[k] = start_one(k, port, &sim_g.port[k]);
		if (!daemons[k]) {
			fprintf(stderr,
			        "cloudsim: cannot listen on 127.0.0.1:%d for "
			        "%s (port in use? try --port 0)\n", port,
			        lnames[k]);
			sim_server_stop();
			return -1;
		}
	}
	return 0;
}

void sim_server_stop(void)
{
	for (int k = 0; k < L_N; k++) {
		if (daemons[k])
			MHD_stop_daemon(daemons[k]);
		daemons[k] = NULL;
	}
}
