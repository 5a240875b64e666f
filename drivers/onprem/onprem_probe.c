/* onprem_probe.c -- running gpuprobe on nodes, storing its reports in
 * <state_dir>/probe/<node>.json and turning the last report into a health
 * verdict and per-GPU figures. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "onprem.h"

const char *onprem_hstate_name(onprem_hstate s)
{
	switch (s) {
	case ONPREM_H_HEALTHY:
		return "healthy";
	case ONPREM_H_UNHEALTHY:
		return "unhealthy";
	case ONPREM_H_UNREACHABLE:
		return "unreachable";
	default:
		return "unprobed";
	}
}

void onprem_health_free(onprem_health *h)
{
	onprem_strv_free(&h->failures);
}

static char *probe_file(const onprem_ctx *c, const char *node)
{
	return drvc_xasprintf("%s/%s.json", c->probe_dir, node);
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : -1;
}

static void fig_min(double *acc, double v)
{
	if (v < 0 || !isfinite(v))
		return;
	if (*acc < 0 || v < *acc)
		*acc = v;
}

static void failf(onprem_health *h, const char *fmt, ...) GB_PRINTF(2, 3);

static void failf(onprem_health *h, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	onprem_strv_push(&h->failures, buf);
}

/* Evaluate a stored probe document. */
static void evaluate(const onprem_ctx *c, const onprem_node *n,
                     const json_t *doc, onprem_health *h)
{
	const json_t *gpus = json_object_get(doc, "gpus");
	const json_t *exit_j = json_object_get(doc, "exit_code");
	const json_t *reach = json_object_get(doc, "reachable");
	const char *derr = json_string_value(json_object_get(doc, "driver_error"));
	const char *perr_s = json_string_value(json_object_get(doc, "error"));
	int exit_code = json_is_integer(exit_j) ? (int)json_integer_value(exit_j)
	                                        : -1;
	int bad_gpu = 0, mixed = 0;
	int64_t mem_min = -1;
	h->probed_at = json_is_integer(json_object_get(doc, "probed_at"))
	                       ? json_integer_value(json_object_get(doc, "probed_at"))
	                       : 0;
	h->age_s = onprem_now(c) - h->probed_at;
	if (h->age_s < 0)
		h->age_s = 0;
	h->stale = h->age_s > c->probe_max_age_s;
	if (json_is_false(reach)) {
		h->state = ONPREM_H_UNREACHABLE;
		failf(h, "%s", derr ? derr : "the node could not be reached");
		return;
	}
	if (json_is_array(gpus)) {
		size_t i;
		const json_t *g;
		json_array_foreach(gpus, i, g) {
			const json_t *health = json_object_get(g, "health");
			const char *name = json_string_value(json_object_get(g, "name"));
			const json_t *mm = json_object_get(g, "memory_total_mib");
			const char *mig = json_string_value(json_object_get(g, "mig_mode"));
			int64_t mib = json_is_integer(mm) ? json_integer_value(mm) : 0;
			const onprem_gpu_model *m = onprem_gpu_from_device(name, mib);
			if (h->ngpus == 0)
				h->model = m;
			else if (m != h->model)
				mixed = 1; /* no single model to sell */
			h->ngpus++;
			if (mib > 0 && (mem_min < 0 || mib < mem_min))
				mem_min = mib;
			if (mig && !strcmp(mig, "enabled"))
				h->mig_mode = 1;
			fig_min(&h->fp32_tflops, jnum(g, "fp32_tflops"));
			fig_min(&h->fp16_tflops, jnum(g, "fp16_tflops"));
			fig_min(&h->bf16_tflops, jnum(g, "bf16_tflops"));
			fig_min(&h->d2d_gbps, jnum(g, "d2d_gbps"));
			fig_min(&h->h2d_gbps, jnum(g, "h2d_gbps"));
			fig_min(&h->d2h_gbps, jnum(g, "d2h_gbps"));
			if (json_is_false(json_object_get(health, "healthy"))) {
				const json_t *fl = json_object_get(health, "failures");
				size_t k;
				const json_t *f;
				int any = 0;
				bad_gpu = 1;
				json_array_foreach(fl, k, f) {
					if (json_is_string(f)) {
						failf(h, "GPU %zu (%s): %s", i,
						      name ? name : "?",
						      json_string_value(f));
						any = 1;
					}
				}
				if (!any)
					failf(h, "GPU %zu (%s): unhealthy", i,
					      name ? name : "?");
			}
		}
	}
	if (mixed)
		h->model = NULL;
	/* A known model is sold by its nominal memory, as the cloud
	 * catalogs are: an H100 80GB reports 81,079 MiB (79 GiB) usable,
	 * and a pool asking memory_gb: 80 must still take it.  The
	 * measured size decides only for a GPU the table does not know. */
	if (h->model)
		h->memory_gb = h->model->memory_gb;
	else if (mem_min > 0)
		h->memory_gb = (int)((mem_min + 512) / 1024);
	if (derr) {
		failf(h, "%s", derr);
	} else if (exit_code == 3 ||
	           (json_is_integer(gpus) && json_integer_value(gpus) == 0)) {
		failf(h, "no usable GPU: %s", perr_s ? perr_s : "the probe found "
		      "no GPU");
	} else if (exit_code != 0 && exit_code != 1) {
		failf(h, "the probe failed (exit %d)%s%s", exit_code,
		      perr_s ? ": " : "", perr_s ? perr_s : "");
	} else if (exit_code == 1 && !bad_gpu) {
		failf(h, "the probe reports the node unhealthy");
	} else if (json_is_false(json_object_get(doc, "healthy")) && !bad_gpu) {
		failf(h, "the probe reports the node unhealthy");
	}
	if (!h->failures.n && n->has_gpus && h->ngpus < n->gpu_count)
		failf(h, "the probe found %d GPU%s, the inventory declares %d",
		      h->ngpus, h->ngpus == 1 ? "" : "s", n->gpu_count);
	if (!h->failures.n && h->ngpus == 0)
		failf(h, "no usable GPU: the probe reported no GPUs");
	h->state = h->failures.n ? ONPREM_H_UNHEALTHY : ONPREM_H_HEALTHY;
}

void onprem_health_get(const onprem_ctx *c, const onprem_node *n,
                       onprem_health *h)
{
	char *path = probe_file(c, n->name);
	json_error_t je;
	json_t *doc;
	memset(h, 0, sizeof(*h));
	h->fp32_tflops = h->fp16_tflops = h->bf16_tflops = -1;
	h->d2d_gbps = h->h2d_gbps = h->d2h_gbps = -1;
	doc = json_load_file(path, 0, &je);
	if (!doc) {
		struct stat st;
		if (stat(path, &st) == 0) {
			h->state = ONPREM_H_UNHEALTHY;
			h->probed_at = (int64_t)st.st_mtime;
			h->age_s = onprem_now(c) - h->probed_at;
			failf(h, "the stored probe result %s is unreadable: %s",
			      path, je.text);
		}
		free(path);
		onprem_mark_apply(c, n, h);
		return;
	}
	free(path);
	evaluate(c, n, doc, h);
	json_decref(doc);
	onprem_mark_apply(c, n, h);
}

int onprem_node_gpus(const onprem_node *n, const onprem_health *h,
                     const onprem_gpu_model **model, int *count,
                     int *memory_gb)
{
	if (n->has_gpus) {
		*model = n->gpu;
		*count = n->gpu_count;
		*memory_gb = n->gpu_memory_gb;
		return 0;
	}
	if (h && h->state == ONPREM_H_HEALTHY && h->ngpus > 0 && h->model) {
		*model = h->model;
		*count = h->ngpus;
		*memory_gb = h->memory_gb > 0 ? h->memory_gb : h->model->memory_gb;
		return 0;
	}
	return -1;
}

const char *onprem_node_shape(const onprem_node *n, const onprem_health *h,
                              char *buf, size_t cap)
{
	const onprem_gpu_model *m;
	int count, mem;
	if (n->shape) {
		snprintf(buf, cap, "%s", n->shape);
		return buf;
	}
	if (onprem_node_gpus(n, h, &m, &count, &mem) != 0) {
		if (cap)
			buf[0] = '\0';
		return buf;
	}
	snprintf(buf, cap, "%dx%s", count, m->name);
	return buf;
}

static const char *age_text(int64_t s, char *buf, size_t cap)
{
	if (s < 120)
		snprintf(buf, cap, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, cap, "%lldm", (long long)(s / 60));
	else if (s < 172800)
		snprintf(buf, cap, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, cap, "%lldd", (long long)(s / 86400));
	return buf;
}

int onprem_node_usable(const onprem_ctx *c, const onprem_node *n,
                       const onprem_health *h, char *why, size_t cap)
{
	char a[32], b[32];
	const onprem_gpu_model *m;
	int count, mem;
	if (cap)
		why[0] = '\0';
	switch (h->state) {
	case ONPREM_H_UNREACHABLE:
	case ONPREM_H_UNHEALTHY:
		snprintf(why, cap, "%s: %s (once fixed: 'gpubroker nodes probe "
		         "%s', or 'gpubroker nodes clear %s')",
		         h->state == ONPREM_H_UNREACHABLE ? "unreachable"
		                                          : "unhealthy",
		         h->failures.n ? h->failures.v[0] : "?", n->name,
		         n->name);
		return 0;
	case ONPREM_H_HEALTHY:
		if (onprem_node_gpus(n, h, &m, &count, &mem) != 0) {
			snprintf(why, cap, "the probe could not name the GPU "
			         "model: declare gpus in the inventory");
			return 0;
		}
		if (!h->stale || (n->has_gpus && !c->require_probe))
			return 1;
		snprintf(why, cap, "the last probe is %s old (probe_max_age "
		         "%s): run 'gpubroker nodes probe %s'",
		         age_text(h->age_s, a, sizeof(a)),
		         age_text(c->probe_max_age_s, b, sizeof(b)), n->name);
		return 0;
	default:
		if (!n->has_gpus) {
			snprintf(why, cap, "GPUs unknown: declare gpus in the "
			         "inventory or run 'gpubroker nodes probe %s'",
			         n->name);
			return 0;
		}
		if (c->require_probe) {
			snprintf(why, cap, "never probed (require_probe is set): "
			         "run 'gpubroker nodes probe %s'", n->name);
			return 0;
		}
		return 1;
	}
}

/* ---------------------------------------------------------------- store */

int onprem_probe_store(const onprem_ctx *c, const char *node, json_t *doc)
{
	char *tmp = drvc_xasprintf("%s/.probe-XXXXXX", c->probe_dir);
	char *dst = probe_file(c, node);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	int fd = mkstemp(tmp), rc = -1;
	if (fd >= 0 && text) {
		size_t len = strlen(text), off = 0;
		while (off < len) {
			ssize_t w = write(fd, text + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		if (off == len && write(fd, "\n", 1) == 1 && fchmod(fd, 0644) == 0 &&
		    close(fd) == 0) {
			fd = -1;
			rc = rename(tmp, dst) == 0 ? 0 : -1;
		}
	}
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		onprem_log(c, GB_LOG_ERROR, "cannot store the probe result of %s "
		           "in %s: %s", node, dst, strerror(errno));
		unlink(tmp);
	}
	free(text);
	free(tmp);
	free(dst);
	return rc;
}

/* ---------------------------------------------------------------- run */

static int file_sha256(const char *path, char hex[65], unsigned char **data,
                       size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char md[32];
	unsigned int mdlen = 0;
	struct stat st;
	size_t n;
	if (!f)
		return -1;
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)1 << 30) {
		fclose(f);
		return -1;
	}
	*data = drvc_xmalloc((size_t)st.st_size + 1);
	n = fread(*data, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size ||
	    !EVP_Digest(*data, n, md, &mdlen, EVP_sha256(), NULL)) {
		free(*data);
		*data = NULL;
		return -1;
	}
	drvc_hex(md, 32, hex);
	*len = n;
	return 0;
}

/* Make sure the node has the probe at c->probe_remote (same sha256 as the
 * local file).  0, or -1 with the reason in why (*unreachable set when
 * the node could not be reached). */
static int ensure_remote_probe(const onprem_ctx *c, const onprem_node *n,
                               char *why, size_t cap, int *unreachable)
{
	char hex[65], tail[300];
	unsigned char *data = NULL;
	size_t len = 0;
	char *q = onprem_shquote(c->probe_remote), *cmd;
	onprem_runres r;
	int rc;
	if (file_sha256(c->probe_path, hex, &data, &len) != 0) {
		snprintf(why, cap, "cannot read the probe %s", c->probe_path);
		free(q);
		return -1;
	}
	cmd = drvc_xasprintf("sha256sum -- %s 2>/dev/null || true", q);
	rc = onprem_run(c, n, cmd, NULL, 0, 60, &r);
	free(cmd);
	if (rc != 0) {
		snprintf(why, cap, "%s", r.what);
		*unreachable = r.unreachable || r.timed_out;
		onprem_runres_free(&r);
		free(q);
		free(data);
		return -1;
	}
	if (r.out_len >= 64 && strncmp(r.out, hex, 64) == 0) {
		onprem_runres_free(&r);
		free(q);
		free(data);
		return 0;
	}
	onprem_runres_free(&r);
	onprem_log(c, GB_LOG_INFO, "copying the probe to %s:%s (%zu bytes)",
	           n->name, c->probe_remote, len);
	cmd = drvc_xasprintf("umask 077; case %s in */*) mkdir -p \"$(dirname "
	                     "%s)\" ;; esac && cat > %s.tmp && chmod 700 %s.tmp "
	                     "&& mv -f %s.tmp %s", q, q, q, q, q, q);
	rc = onprem_run(c, n, cmd, data, len, 300, &r);
	free(cmd);
	free(data);
	free(q);
	if (rc != 0) {
		snprintf(why, cap, "copying the probe failed: %s", r.what);
		*unreachable = r.unreachable || r.timed_out;
		onprem_runres_free(&r);
		return -1;
	}
	if (r.exit_code != 0) {
		onprem_tail(tail, sizeof(tail), r.err, 240);
		snprintf(why, cap, "copying the probe to %s failed (exit %d): %s",
		         c->probe_remote, r.exit_code, tail);
		onprem_runres_free(&r);
		return -1;
	}
	onprem_runres_free(&r);
	return 0;
}

void onprem_run_err(const onprem_ctx *c, const onprem_node *n,
                    gb_error *err, const onprem_runres *r, const char *what)
{
	drvc_err(err, r->host_key ? GB_ERR_AUTH : GB_ERR_TRANSIENT, 0,
	         r->host_key ? "HostKeyChanged"
	                     : r->unreachable ? "Unreachable" : "Timeout",
	         "%s on node %s: %s", what, n->name, r->what);
	if (r->host_key) {
		/* unhealthy until re-pinned and probed again: not offered,
		 * not leased, and `nodes` says why */
		json_t *doc = json_object();
		json_object_set_new(doc, "driver_error", json_string(r->what));
		json_object_set_new(doc, "reachable", json_true());
		json_object_set_new(doc, "node", json_string(n->name));
		json_object_set_new(doc, "probed_at",
		                    json_integer(onprem_now(c)));
		onprem_probe_store(c, n->name, doc);
		json_decref(doc);
	}
}

json_t *onprem_probe_node(const onprem_ctx *c, const onprem_node *n)
{
	json_t *doc = NULL;
	char why[700] = "", tail[400] = "";
	int unreachable = 0;
	const char *args = c->probe_full ? "--compact" : "--quick --compact";
	char *q, *cmd;
	onprem_runres r;
	int rc;

	if (n->transport == ONPREM_SSH &&
	    ensure_remote_probe(c, n, why, sizeof(why), &unreachable) != 0) {
		doc = json_object();
		json_object_set_new(doc, "driver_error", json_string(why));
		json_object_set_new(doc, "reachable", json_boolean(!unreachable));
		goto store;
	}
	q = onprem_shquote(n->transport == ONPREM_SSH ? c->probe_remote
	                                              : c->probe_path);
	/* A relative remote path runs from the login directory. */
	cmd = drvc_xasprintf("%s%s %s", n->transport == ONPREM_SSH &&
	                     c->probe_remote[0] != '/' ? "./" : "", q, args);
	free(q);
	rc = onprem_run(c, n, cmd, NULL, 0, c->probe_timeout_s, &r);
	free(cmd);
	if (rc != 0) {
		doc = json_object();
		json_object_set_new(doc, "driver_error", json_string(r.what));
		json_object_set_new(doc, "reachable",
		                    json_boolean(!(r.unreachable || r.timed_out)));
		onprem_runres_free(&r);
		goto store;
	}
	{
		json_error_t je;
		doc = json_loadb(r.out, r.out_len, 0, &je);
		if (doc && !json_is_object(doc)) {
			json_decref(doc);
			doc = NULL;
		}
		if (!doc) {
			onprem_tail(tail, sizeof(tail), *r.err ? r.err : r.out, 300);
			doc = json_object();
			json_object_set_new(doc, "driver_error", json_string(
				r.exit_code == 127
				        ? "the probe could not be started (exit 127: "
				          "not found)"
				        : "the probe's output is not a JSON object"));
			if (*tail)
				json_object_set_new(doc, "stderr_tail",
				                    json_string(tail));
		} else if (*r.err) {
			onprem_tail(tail, sizeof(tail), r.err, 300);
			json_object_set_new(doc, "stderr_tail", json_string(tail));
		}
		json_object_set_new(doc, "exit_code", json_integer(r.exit_code));
		json_object_set_new(doc, "reachable", json_true());
		if (json_object_get(doc, "driver_error") && *tail) {
			char msg[600];
			snprintf(msg, sizeof(msg), "%s (exit %d): %s",
			         json_string_value(json_object_get(doc,
			                                           "driver_error")),
			         r.exit_code, tail);
			json_object_set_new(doc, "driver_error", json_string(msg));
		}
		onprem_runres_free(&r);
	}
store:
	json_object_set_new(doc, "node", json_string(n->name));
	json_object_set_new(doc, "probed_at", json_integer(onprem_now(c)));
	if (onprem_probe_store(c, n->name, doc) == 0) {
		/* a healthy probe clears a mark the driver set */
		onprem_health h;
		memset(&h, 0, sizeof(h));
		evaluate(c, n, doc, &h);
		if (h.state == ONPREM_H_HEALTHY)
			onprem_mark_remove(c, n->name);
		onprem_health_free(&h);
	}
	return doc;
}
