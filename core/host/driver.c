/* driver.c -- dlopen'ing drivers, validating descriptors, host tables. */
#include "drivers.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cancel.h"
#include "driver_int.h"
#include "log.h"
#include "paths.h"
#include "spec.h"


/* How long init may take unless the driver's init_timeout_ms says. */
#define GB_DRV_INIT_TIMEOUT_MS 30000

/* dlopen, the entry and the descriptor checks, under the loading guard
 * (driver_int.h): a constructor, the entry or a wild descriptor pointer
 * that crashes is named on stderr. */
static int open_guarded(const char *real, const char *path,
                        const char *expect_name, gb_drv **out, char *err,
                        size_t cap)
{
	void *dl;
	gb_driver_entry_fn entry;
	const gb_driver *d;
	gb_drv *drv;
	const char *missing = NULL;

	/* real is absolute (gb_drv_check_perms): dlopen does not search the
	 * library path for it; path is the name the user gave */
	dlerror();
	dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		const char *e = dlerror();
		snprintf(err, cap, "%s: cannot load: %s", path,
		         e ? e : "unknown dlopen error");
		return -1;
	}
	*(void **)(&entry) = dlsym(dl, GB_DRIVER_ENTRY_NAME);
	if (!entry) {
		snprintf(err, cap,
		         "%s: not a gpubroker driver: it does not export %s()",
		         path, GB_DRIVER_ENTRY_NAME);
		goto refuse;
	}
	d = entry(GB_DRIVER_ABI_MAJOR);
	if (!d) {
		snprintf(err, cap,
		         "%s: the driver refused this host (ABI major %d): "
		         "rebuild it against this gpubroker's gpubroker-driver.pc",
		         path, GB_DRIVER_ABI_MAJOR);
		goto refuse;
	}
	if (d->abi_major != GB_DRIVER_ABI_MAJOR) {
		snprintf(err, cap,
		         "%s: driver ABI major %u does not match the host's %d: "
		         "rebuild the driver against gpubroker-driver.pc",
		         path, d->abi_major, GB_DRIVER_ABI_MAJOR);
		goto refuse;
	}
	if (d->struct_size < GB_DRIVER_MIN_SIZE) {
		snprintf(err, cap,
		         "%s: driver descriptor is %u bytes, shorter than the "
		         "%zu bytes of ABI %d.0: the driver is corrupt or built "
		         "against a broken header",
		         path, d->struct_size, (size_t)GB_DRIVER_MIN_SIZE,
		         GB_DRIVER_ABI_MAJOR);
		goto refuse;
	}
	if (!d->name || !*d->name) {
		snprintf(err, cap, "%s: driver descriptor has no name", path);
		goto refuse;
	}
	if (expect_name && strcmp(expect_name, d->name) != 0) {
		snprintf(err, cap,
		         "%s: configured as driver '%s' but the file is driver "
		         "'%s'", path, expect_name, d->name);
		goto refuse;
	}
	if (!d->init)
		missing = "init";
	else if (!d->fini)
		missing = "fini";
	else if (!d->list_offers)
		missing = "list_offers";
	else if (!d->create)
		missing = "create";
	else if (!d->describe)
		missing = "describe";
	else if (!d->terminate)
		missing = "terminate";
	if (missing) {
		snprintf(err, cap,
		         "%s: driver '%s' has no %s() method, which is mandatory",
		         path, d->name, missing);
		goto refuse;
	}
	drv = gb_xcalloc(1, sizeof(*drv));
	drv->name = gb_xstrdup(expect_name ? expect_name : d->name);
	drv->path = gb_xstrdup(path);
	drv->dl = dl;
	drv->d = d;
	snprintf(drv->status, sizeof(drv->status), "loaded");
	*out = drv;
	return 0;
refuse:
	if (!getenv("GB_NO_DLCLOSE"))
		dlclose(dl);
	return -1;
}

int gb_drv_open(const char *path, const char *expect_name, gb_drv **out,
                char *err, size_t cap)
{
	char name[128];
	int rc;

	*out = NULL;
	if (expect_name) {
		snprintf(name, sizeof(name), "%s", expect_name);
	} else {
		/* unnamed (tests): the file's name without ".so" */
		const char *base = strrchr(path, '/');
		size_t n;
		base = base ? base + 1 : path;
		n = strlen(base);
		if (n > 3 && strcmp(base + n - 3, ".so") == 0)
			n -= 3;
		snprintf(name, sizeof(name), "%.*s", (int)n, base);
	}
	gb_drv_guard_enter(name, path, GB_DRV_PHASE_LOADING);
	/* flushed before dlopen: if the process dies in there, the last
	 * line says which driver */
	gb_log(GB_LOG_INFO, "drivers", "loading driver %s from %s", name, path);
	rc = gb_drv_check_elf(path, err, cap);
	if (rc == 0) {
		/* the checked file, symlinks resolved, is the one loaded */
		char *real = NULL;
		rc = gb_drv_check_perms(path, &real, err, cap);
		if (rc == 0)
			rc = open_guarded(real, path, expect_name, out, err, cap);
		free(real);
	}
	gb_drv_guard_leave();
	return rc;
}

/* ---- the host table ---- */

static void host_log(void *ctx, gb_log_level lvl, const char *fmt, ...)
{
	gb_drv *drv = ctx;
	va_list ap;
	char *msg;
	const char *text;
	size_t n = strlen(drv->name);
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	/* The log line names the driver already: a message that starts with
	 * "NAME: " itself would read "aws: aws: ..." */
	text = msg;
	if (strncmp(text, drv->name, n) == 0 && text[n] == ':' &&
	    text[n + 1] == ' ')
		text += n + 2;
	gb_log(lvl, drv->name, "%s", text);
	free(msg);
}

static int host_http(void *ctx, const gb_http_req *req, gb_http_resp *resp,
                     gb_error *err)
{
	gb_drv *drv = ctx;
	return gb_http_do(drv->http, req, resp, err);
}

static void host_http_free(void *ctx, gb_http_resp *resp)
{
	(void)ctx;
	gb_http_resp_free(resp);
}

static int64_t host_now(void *ctx)
{
	(void)ctx;
	return gb_now_ms();
}

static int64_t host_mono(void *ctx)
{
	(void)ctx;
	return gb_mono_ms();
}

static void host_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	gb_cancel_sleep_ms(ms);
}

static int host_cancelled(void *ctx)
{
	(void)ctx;
	return gb_cancelled();
}

static void *host_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void host_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

static const char *host_option(void *ctx, const char *key)
{
	gb_drv *drv = ctx;
	return gb_kvs_get(&drv->options, key);
}

int gb_secret_lookup(const char *source, char *buf, size_t cap)
{
	const char *v = NULL;
	char *filebuf = NULL;
	size_t len;
	if (!source || !*source || cap == 0)
		return -1;
	if (strncmp(source, "env:", 4) == 0) {
		v = getenv(source + 4);
	} else if (strncmp(source, "file:", 5) == 0) {
		if (gb_read_file(source + 5, 1 << 20, &filebuf, &len) != 0)
			return -1;
		while (len && (filebuf[len - 1] == '\n' || filebuf[len - 1] == '\r'))
			filebuf[--len] = '\0';
		v = filebuf;
	} else {
		v = getenv(source);
	}
	if (!v || !*v) {
		free(filebuf);
		return -1;
	}
	len = strlen(v);
	if (len >= cap) {
		/* never a truncated secret: nothing is copied */
		buf[0] = '\0';
		free(filebuf);
		return -2;
	}
	memcpy(buf, v, len + 1);
	gb_redact_register(buf);
	free(filebuf);
	return (int)len;
}

static int host_secret(void *ctx, const char *source, char *buf, size_t cap)
{
	(void)ctx;
	return gb_secret_lookup(source, buf, cap);
}

static void host_redact(void *ctx, const char *value)
{
	(void)ctx;
	gb_redact_register(value);
}

/* The token buckets of the driver's HTTP client: the driver's documented
 * defaults (descriptor minor 2), then the config's rate.<class> options;
 * "0" or "off" drops a bucket. */
static void transport_rates(const gb_drv *drv, gb_kvs *out)
{
	gb_kvs all = {0};
	if (GB_DRV_HAS(drv, default_rates))
		for (const char *const *p = drv->d->default_rates; p[0] && p[1];
		     p += 2)
			gb_kvs_set(&all, p[0], p[1]);
	for (size_t i = 0; i < drv->options.n; i++)
		if (strncmp(drv->options.keys[i], "rate.", 5) == 0)
			gb_kvs_set(&all, drv->options.keys[i] + 5,
			           drv->options.vals[i]);
	for (size_t i = 0; i < all.n; i++)
		if (strcmp(all.vals[i], "0") != 0 &&
		    strcmp(all.vals[i], "off") != 0)
			gb_kvs_set(out, all.keys[i], all.vals[i]);
	gb_kvs_free(&all);
}

/* Options the host reads itself, or fills in for every driver. */
static int host_key(const char *key)
{
	static const char *const keys[] = {
		"data_dir", "bin_dir", "state_dir", "broker_id", "inventory",
		"ca_file", "ca_path", "http_attempts", "http_timeout_ms",
		"max_in_flight", "backoff_base_ms", "backoff_cap_ms",
		"init_timeout_ms", "allow_insecure_http", NULL};
	if (strncmp(key, "rate.", 5) == 0)
		return 1;
	for (size_t i = 0; keys[i]; i++)
		if (strcmp(keys[i], key) == 0)
			return 1;
	return 0;
}

/* Is key in the driver's list ("KEY.*" covers KEY and KEY.<anything>)? */
static int driver_key(const char *const *list, const char *key)
{
	for (; *list; list++) {
		size_t n = strlen(*list);
		if (n > 2 && strcmp(*list + n - 2, ".*") == 0) {
			if (strncmp(key, *list, n - 2) == 0 &&
			    (key[n - 2] == '\0' || (key[n - 2] == '.' && key[n - 1])))
				return 1;
		} else if (strcmp(*list, key) == 0) {
			return 1;
		}
	}
	return 0;
}

/* Warns about configured options the driver does not read (a typo would
 * otherwise be ignored in silence).  Returns how many. */
static int warn_unknown_options(const gb_drv *drv)
{
	int n = 0;
	if (!GB_DRV_HAS(drv, options))
		return 0;
	for (size_t i = 0; i < drv->options.n; i++) {
		const char *k = drv->options.keys[i];
		gb_strv known = {0};
		char *list;
		if (host_key(k) || driver_key(drv->d->options, k))
			continue;
		for (const char *const *p = drv->d->options; *p; p++)
			gb_strv_push(&known, *p);
		list = gb_strv_join(&known, ", ");
		gb_log(GB_LOG_WARN, drv->name,
		       "option %s is not one driver '%s' reads, so it is ignored "
		       "(a typo?). Its options: %s; the host's: rate.<class>, "
		       "ca_file, ca_path, http_attempts, http_timeout_ms, "
		       "max_in_flight, backoff_base_ms, backoff_cap_ms, "
		       "init_timeout_ms, allow_insecure_http", k,
		       drv->name, list);
		free(list);
		gb_strv_free(&known);
		n++;
	}
	return n;
}

/* A whole-number transport option in [lo, hi]; *out = 0 (the transport's
 * default) when unset.  0, or -1 with err naming the driver and option. */
static int transport_int(const gb_drv *drv, const char *key, int64_t lo,
                         int64_t hi, int64_t *out, char *err, size_t cap)
{
	const char *v = gb_kvs_get(&drv->options, key);
	*out = 0;
	if (!v || !*v)
		return 0;
	if (gb_parse_int64(v, out) != 0 || *out < lo || *out > hi) {
		snprintf(err, cap, "driver '%s': option %s: expected a whole "
		         "number from %lld to %lld, found \"%s\"", drv->name, key,
		         (long long)lo, (long long)hi, v);
		*out = 0;
		return -1;
	}
	return 0;
}

/* ---- init, in a thread of its own, with a deadline ----
 *
 * An init that never returns (an endpoint that does not answer, a lock
 * it waits for forever) must not hang the loader: init runs in its own
 * thread and the loader waits for it until the driver's init_timeout_ms.
 * A thread cannot be cancelled safely in the middle of someone else's
 * code, so past the deadline it is abandoned: detached, left running,
 * and the driver refused.  Until it returns, that thread owns what init
 * may still use -- the gb_drv with its host table, options and HTTP
 * client, and the loaded library: gb_drv_close of an abandoned driver
 * whose init has not returned hands the gb_drv to the thread, which
 * frees it once init returns.  An init that returns late with success
 * gets its fini from the same thread (nothing else ever sees that ctx);
 * one that never returns keeps its memory and thread until the process
 * ends. */
struct gb_drv_init_job {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	gb_drv *drv;
	int64_t timeout_ms;
	int done;      /* init returned (and, when abandoned, fini did) */
	int abandoned; /* the loader stopped waiting */
	int orphaned;  /* gb_drv_close came first: the thread frees drv */
	int rc;        /* the rest: init's results, when not abandoned */
	void *ctx;
	gb_error e;
};

/* abandoned init threads still running (atomic) */
static size_t abandoned_running;

size_t gb_drv_abandoned_inits(void)
{
	return __atomic_load_n(&abandoned_running, __ATOMIC_ACQUIRE);
}

static void job_free(struct gb_drv_init_job *j)
{
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

/* Everything but fini (done by whoever owns a ready ctx). */
static void drv_free(gb_drv *drv)
{
	if (drv->dl && !getenv("GB_NO_DLCLOSE"))
		dlclose(drv->dl);
	gb_http_client_free(drv->http);
	gb_kvs_free(&drv->options);
	free(drv->name);
	free(drv->path);
	if (drv->job)
		job_free(drv->job);
	free(drv);
}

static void *init_main(void *arg)
{
	struct gb_drv_init_job *j = arg;
	gb_drv *drv = j->drv;
	void *stack = gb_drv_guard_thread_begin();
	void *ctx = NULL;
	gb_error e;
	int rc, orphaned;

	memset(&e, 0, sizeof(e));
	/* host->cancelled says when the loader stops waiting */
	gb_cancel_deadline(gb_mono_ms() + j->timeout_ms);
	rc = drv->d->init(&drv->host, &ctx, &e);
	gb_cancel_deadline(0);
	pthread_mutex_lock(&j->mu);
	if (!j->abandoned) {
		j->rc = rc;
		j->ctx = ctx;
		j->e = e;
		j->done = 1;
		pthread_cond_signal(&j->cv);
		pthread_mutex_unlock(&j->mu);
		gb_drv_guard_thread_end(stack);
		return NULL; /* the loader joins */
	}
	pthread_mutex_unlock(&j->mu);
	/* Too late: the driver was refused and nobody will ever use ctx.
	 * drv stays valid: gb_drv_close leaves it to us until done. */
	gb_log(GB_LOG_WARN, "drivers", "driver '%s': init returned (%s) after "
	       "its %lld ms deadline; the driver stays unused until gpubroker "
	       "restarts", drv->name, rc == 0 ? "success: calling its fini"
	       : "failure", (long long)j->timeout_ms);
	if (rc == 0)
		drv->d->fini(ctx);
	gb_drv_guard_thread_end(stack);
	pthread_mutex_lock(&j->mu);
	j->done = 1;
	orphaned = j->orphaned;
	pthread_mutex_unlock(&j->mu);
	if (orphaned)
		drv_free(drv); /* and j with it */
	/* last: nothing of drv or j is touched after this */
	__atomic_sub_fetch(&abandoned_running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Runs drv's init in its own thread and waits up to timeout_ms.  0, or
 * -1 with err (init's own failure, or the deadline). */
static void answer_out(void *ud, const char *json)
{
	json_t **doc = ud;
	json_decref(*doc);
	*doc = json_loads(json, 0, NULL);
}

/* The "credentials" verb (driver.h) after a successful init: a driver
 * that found none says where it looked, and that becomes its status.  A
 * driver that refuses the verb (needs no credentials, or is older) stays
 * "ready". */
static void ask_credentials(gb_drv *drv)
{
	json_t *doc = NULL, *found;
	gb_error e;
	drv->credentials = -1;
	if (!GB_DRV_HAS(drv, command))
		return;
	memset(&e, 0, sizeof(e));
	if (drv->d->command(drv->ctx, "credentials", 0, NULL, answer_out, &doc,
	                    &e) != 0 ||
	    !json_is_boolean(found = json_object_get(doc, "found"))) {
		json_decref(doc);
		return;
	}
	drv->credentials = json_is_true(found);
	if (!drv->credentials) {
		const char *where = json_string_value(json_object_get(doc,
		                                                      "looked_in"));
		/* the driver's own text: redacted like its log lines */
		char *safe = gb_redact(where && *where ? where : "nowhere said");
		snprintf(drv->status, sizeof(drv->status),
		         "no credentials found (looked in %s)", safe);
		free(safe);
	}
	json_decref(doc);
}

/* The "requirements" verb (driver.h): what every create needs from a
 * spec.  A driver that refuses it needs nothing. */
static void ask_requirements(gb_drv *drv)
{
	json_t *doc = NULL;
	const char *why;
	gb_error e;
	drv->ssh_key_why[0] = '\0';
	if (!GB_DRV_HAS(drv, command))
		return;
	memset(&e, 0, sizeof(e));
	if (drv->d->command(drv->ctx, "requirements", 0, NULL, answer_out,
	                    &doc, &e) == 0 &&
	    (why = json_string_value(json_object_get(doc, "ssh_key")))) {
		char *safe = gb_redact(*why ? why : "the driver says so");
		snprintf(drv->ssh_key_why, sizeof(drv->ssh_key_why), "%s", safe);
		free(safe);
	}
	json_decref(doc);
}

static int run_init(gb_drv *drv, int64_t timeout_ms, char *err, size_t cap)
{
	struct gb_drv_init_job *j = gb_xcalloc(1, sizeof(*j));
	pthread_condattr_t ca;
	sigset_t block, old;
	struct timespec dl;
	int rc;

	pthread_mutex_init(&j->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	j->drv = drv;
	j->timeout_ms = timeout_ms;
	/* The thread starts with the stop signals blocked, so they reach
	 * this thread and the guard's handler, even while init hangs. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(&j->thread, NULL, init_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, cap, "driver '%s': cannot start a thread for its "
		         "init: %s: the system is short of memory or threads",
		         drv->name, strerror(rc));
		job_free(j);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += (time_t)(timeout_ms / 1000);
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&j->mu);
	while (!j->done &&
	       pthread_cond_timedwait(&j->cv, &j->mu, &dl) != ETIMEDOUT)
		;
	if (!j->done) {
		j->abandoned = 1;
		__atomic_add_fetch(&abandoned_running, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&j->mu);
		pthread_detach(j->thread);
		drv->job = j;
		snprintf(err, cap, "driver '%s': init did not return within "
		         "%lld ms; it is left running in the background and the "
		         "driver is not used: check what its init waits for (its "
		         "endpoint, credentials, the network) or raise the "
		         "driver's init_timeout_ms option", drv->name,
		         (long long)timeout_ms);
		return -1;
	}
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->thread, NULL);
	rc = j->rc;
	if (rc != 0) {
		char *msg = gb_redact(j->e.message);
		snprintf(err, cap, "driver '%s' failed to initialise: %s%s%s%s",
		         drv->name, msg, j->e.code[0] ? " (" : "", j->e.code,
		         j->e.code[0] ? ")" : "");
		free(msg);
	} else {
		drv->ctx = j->ctx;
	}
	job_free(j);
	return rc == 0 ? 0 : -1;
}

int gb_drv_init(gb_drv *drv, const gb_kvs *options, char *err, size_t cap)
{
	gb_http_opts ho;
	gb_kvs rates = {0};
	int64_t n, timeout_ms;
	int rc = -1;

	if (drv->job) {
		snprintf(err, cap, "driver '%s': its earlier init was abandoned; "
		         "restart gpubroker to load it again", drv->name);
		return -1;
	}
	gb_kvs_free(&drv->options);
	for (size_t i = 0; options && i < options->n; i++)
		gb_kvs_set(&drv->options, options->keys[i], options->vals[i]);
	if (!gb_kvs_get(&drv->options, "data_dir"))
		gb_kvs_set(&drv->options, "data_dir", gb_data_dir());
	if (!gb_kvs_get(&drv->options, "bin_dir"))
		gb_kvs_set(&drv->options, "bin_dir", gb_bin_dir());

	/* from here on the driver's memory is read (default_rates,
	 * options) and its code runs */
	gb_drv_guard_enter(drv->name, drv->path, GB_DRV_PHASE_INIT);
	gb_log(GB_LOG_INFO, "drivers", "initialising driver %s", drv->name);

	/* Transport options: "rate.<class>" = "CAP/REFILL", "ca_file",
	 * "ca_path", "http_attempts", "http_timeout_ms", "max_in_flight". */
	memset(&ho, 0, sizeof(ho));
	ho.name = drv->name;
	transport_rates(drv, &rates);
	ho.rates = &rates;
	ho.ca_file = gb_kvs_get(&drv->options, "ca_file");
	ho.ca_path = gb_kvs_get(&drv->options, "ca_path");
	{
		const char *v = gb_kvs_get(&drv->options, "allow_insecure_http");
		if (v && strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
			snprintf(err, cap, "driver '%s': option "
			         "allow_insecure_http: expected true or false, "
			         "found \"%s\"", drv->name, v);
			goto bad_option;
		}
		ho.allow_insecure_http = v && strcmp(v, "true") == 0;
	}
	if (transport_int(drv, "http_attempts", 1, 99, &n, err, cap) != 0)
		goto bad_option;
	ho.max_attempts = (int)n;
	if (transport_int(drv, "http_timeout_ms", 1, 3600000, &n, err, cap) != 0)
		goto bad_option;
	ho.timeout_ms = (unsigned)n;
	if (transport_int(drv, "max_in_flight", 1, 9999, &n, err, cap) != 0)
		goto bad_option;
	ho.max_in_flight = (int)n;
	if (transport_int(drv, "backoff_base_ms", 1, 600000, &n, err, cap) != 0)
		goto bad_option;
	ho.backoff_base_ms = n;
	if (transport_int(drv, "backoff_cap_ms", 1, 3600000, &n, err, cap) != 0)
		goto bad_option;
	ho.backoff_cap_ms = n;
	/* not a transport option, but read the same way */
	if (transport_int(drv, "init_timeout_ms", 1, 3600000, &timeout_ms, err,
	                  cap) != 0)
		goto bad_option;
	if (timeout_ms == 0)
		timeout_ms = GB_DRV_INIT_TIMEOUT_MS;
	for (size_t i = 0; i < drv->options.n; i++) {
		double rc_cap, rc_refill;
		const char *k = drv->options.keys[i], *val = drv->options.vals[i];
		if (strncmp(k, "rate.", 5) != 0 || !k[5] || strcmp(val, "0") == 0 ||
		    strcmp(val, "off") == 0 ||
		    gb_http_parse_rate(val, &rc_cap, &rc_refill) == 0)
			continue;
		snprintf(err, cap, "driver '%s': option %s: expected "
		         "CAPACITY/REFILL_PER_SECOND (e.g. 5/2), or 0 or off to "
		         "drop the bucket, found \"%s\"", drv->name, k, val);
		goto bad_option;
	}
	drv->http = gb_http_client_new(&ho);
	gb_kvs_free(&rates);

	memset(&drv->host, 0, sizeof(drv->host));
	drv->host.abi_major = GB_DRIVER_ABI_MAJOR;
	drv->host.abi_minor = GB_DRIVER_ABI_MINOR;
	drv->host.struct_size = sizeof(gb_host);
	drv->host.ctx = drv;
	drv->host.log = host_log;
	drv->host.http = host_http;
	drv->host.http_free = host_http_free;
	drv->host.now_ms = host_now;
	drv->host.mono_ms = host_mono;
	drv->host.sleep_ms = host_sleep;
	drv->host.cancelled = host_cancelled;
	drv->host.alloc = host_alloc;
	drv->host.free = host_free;
	drv->host.option = host_option;
	drv->host.secret = host_secret;
	drv->host.redact = host_redact;

	warn_unknown_options(drv);
	drv->ctx = NULL;
	if (run_init(drv, timeout_ms, err, cap) != 0) {
		snprintf(drv->status, sizeof(drv->status), "%s", err);
		drv->ctx = NULL;
		goto out;
	}
	drv->ready = 1;
	snprintf(drv->status, sizeof(drv->status), "ready");
	ask_credentials(drv);
	ask_requirements(drv);
	rc = 0;
	goto out;
bad_option:
	gb_kvs_free(&rates);
	snprintf(drv->status, sizeof(drv->status), "%s", err);
out:
	gb_drv_guard_leave();
	return rc;
}

void gb_drv_close(gb_drv *drv)
{
	if (!drv)
		return;
	if (drv->job) {
		struct gb_drv_init_job *j = drv->job;
		int running;
		pthread_mutex_lock(&j->mu);
		running = !j->done;
		if (running)
			j->orphaned = 1;
		pthread_mutex_unlock(&j->mu);
		if (running)
			return; /* its init thread frees it (see above) */
	}
	if (drv->ready && drv->d->fini)
		drv->d->fini(drv->ctx);
	drv_free(drv);
}

static void add_failed(gb_drivers *ds, const char *name, const char *path,
                       const char *why)
{
	gb_drv *drv = gb_xcalloc(1, sizeof(*drv));
	drv->name = gb_xstrdup(name);
	drv->path = gb_xstrdup(path);
	snprintf(drv->status, sizeof(drv->status), "%s", why);
	ds->v = gb_xrealloc(ds->v, (ds->n + 1) * sizeof(*ds->v));
	ds->v[ds->n++] = drv;
}

/* Options every driver gets unless its config sets them: a private state
 * directory next to the state database, and (for every driver that
 * probes nodes, GB_DRV_CAP_PROBE) the inventory path from the top-level
 * config. */
static void default_options(const gb_config *cfg, const gb_drv *drv,
                            gb_kvs *opts)
{
	const char *name = drv->name;
	if (!cfg)
		return;
	/* (a PostgreSQL state has no folder: the driver's own default) */
	if (!gb_kvs_get(opts, "state_dir") && cfg->state_path &&
	    !gb_config_state_is_url(cfg->state_path)) {
		const char *slash = strrchr(cfg->state_path, '/');
		char *dir = slash ? gb_xstrndup(cfg->state_path,
		                                (size_t)(slash - cfg->state_path))
		                  : gb_xstrdup(".");
		char *sd = gb_xasprintf("%s/drivers/%s", dir, name);
		gb_kvs_set(opts, "state_dir", sd);
		free(sd);
		free(dir);
	}
	if (!gb_kvs_get(opts, "broker_id") && cfg->broker_id)
		gb_kvs_set(opts, "broker_id", cfg->broker_id);
	if ((drv->d->caps & GB_DRV_CAP_PROBE) && cfg->onprem_inventory &&
	    !gb_kvs_get(opts, "inventory"))
		gb_kvs_set(opts, "inventory", cfg->onprem_inventory);
}

static void load_one(gb_drivers *ds, const gb_config *cfg, const char *name,
                     const char *path_opt, const gb_kvs *cfg_options)
{
	char err[600];
	gb_kvs options = {0};
	char *path = path_opt ? gb_xstrdup(path_opt)
	                      : gb_xasprintf("%s/%s.so", gb_driver_dir(), name);
	gb_drv *drv;
	if (gb_drv_open(path, name, &drv, err, sizeof(err)) != 0) {
		gb_log(GB_LOG_INFO, "drivers", "%s", err);
		add_failed(ds, name, path, err);
		free(path);
		return;
	}
	for (size_t i = 0; cfg_options && i < cfg_options->n; i++)
		gb_kvs_set(&options, cfg_options->keys[i], cfg_options->vals[i]);
	default_options(cfg, drv, &options);
	if (gb_drv_init(drv, &options, err, sizeof(err)) != 0)
		gb_log(GB_LOG_INFO, "drivers", "%s", err);
	gb_kvs_free(&options);
	ds->v = gb_xrealloc(ds->v, (ds->n + 1) * sizeof(*ds->v));
	ds->v[ds->n++] = drv;
	free(path);
}

size_t gb_drivers_load(gb_drivers *out, const gb_config *cfg)
{
	size_t ready = 0;
	out->v = NULL;
	out->n = 0;
	if (cfg && cfg->ndrivers) {
		for (size_t i = 0; i < cfg->ndrivers; i++)
			load_one(out, cfg, cfg->drivers[i].name,
			         cfg->drivers[i].path, &cfg->drivers[i].options);
	} else {
		/* no drivers: section: every driver installed */
		const char *names[GB_MAX_CLOUDS];
		gb_config_clouds(cfg, names, GB_ARRAY_LEN(names));
		for (size_t i = 0; names[i]; i++)
			load_one(out, cfg, names[i], NULL, NULL);
	}
	for (size_t i = 0; i < out->n; i++)
		ready += out->v[i]->ready;
	return ready;
}

size_t gb_drivers_names(const gb_drivers *ds, const char **out, size_t cap)
{
	size_t n = 0;
	if (!cap)
		return 0;
	for (size_t i = 0; i < ds->n && n + 1 < cap; i++)
		out[n++] = ds->v[i]->name;
	out[n] = NULL;
	return n;
}

gb_drv *gb_drivers_find(const gb_drivers *ds, const char *name)
{
	for (size_t i = 0; i < ds->n; i++)
		if (strcmp(ds->v[i]->name, name) == 0)
			return ds->v[i];
	return NULL;
}

void gb_drivers_free(gb_drivers *ds)
{
	for (size_t i = 0; i < ds->n; i++)
		gb_drv_close(ds->v[i]);
	free(ds->v);
	ds->v = NULL;
	ds->n = 0;
}

typedef struct offers_ctx {
	gb_catalog *cat;
	const char *cloud;
	uint32_t drv_minor;   /* the driver's abi_minor: fields it emits */
	size_t added;
	size_t malformed;     /* skipped */
	char first_bad[160];  /* the first skipped one, for the warning */
	gb_strv unknown;      /* GPU models that are not canonical names */
	gb_strv unknown_type; /* an offer of each, for the warning */
} offers_ctx;

static int offer_cb(void *ud, const gb_offer *o)
{
	offers_ctx *oc = ud;
	const char *canon;
	gb_offer c;
	if (!o->instance_type || !*o->instance_type || !o->gpu_model ||
	    !o->region || !*o->region || !(o->price_per_hour > 0) ||
	    o->gpu_count <= 0) {
		if (!oc->malformed++)
			snprintf(oc->first_bad, sizeof(oc->first_bad),
			         "%s in %s", o->instance_type ? o->instance_type
			                                       : "(no type)",
			         o->region && *o->region ? o->region
			                                 : "(no region)");
		return 0; /* not placeable: named in a warning */
	}
	canon = gb_gpu_canonical(o->gpu_model);
	if (!canon) {
		/* kept (offers shows it) but no spec can ask for it */
		if (!gb_strv_contains(&oc->unknown, o->gpu_model)) {
			gb_strv_push(&oc->unknown, o->gpu_model);
			gb_strv_push(&oc->unknown_type, o->instance_type);
		}
		canon = o->gpu_model;
	}
	/* the fields of minor 0 to 5; `available` only from a driver that
	 * has it (an older one's gb_offer ends before it) */
	memset(&c, 0, sizeof(c));
	memcpy(&c, o, offsetof(gb_offer, available));
	if (oc->drv_minor >= 6 && o->available > 0)
		c.available = o->available;
	c.gpu_model = canon; /* an alias ("H100-SXM") as its canonical name */
	gb_catalog_add(oc->cat, oc->cloud, &c);
	oc->added++;
	return 0;
}

/* The warnings of one driver's listing, into problems (or the log). */
static void offer_problems(const offers_ctx *oc, gb_strv *problems)
{
	gb_strv lines = {0};
	if (oc->malformed)
		gb_strv_push_take(&lines, gb_xasprintf(
			"%s: %zu offer%s skipped as malformed (first: %s): an "
			"offer needs an instance type, a region, gpu_count >= 1 "
			"and a price above 0", oc->cloud, oc->malformed,
			oc->malformed == 1 ? "" : "s", oc->first_bad));
	for (size_t i = 0; i < oc->unknown.n; i++) {
		char known[512];
		size_t k = 0;
		known[0] = '\0';
		for (size_t m = 0; m < gb_gpu_model_count(); m++) {
			int w = snprintf(known + k, sizeof(known) - k, "%s%s",
			                 m ? ", " : "", gb_gpu_model_at(m));
			if (w < 0 || (size_t)w >= sizeof(known) - k)
				break;
			k += (size_t)w;
		}
		gb_strv_push_take(&lines, gb_xasprintf(
			"%s: offer %s has GPU model \"%s\", which is not a "
			"canonical name, so no spec can ask for it: the driver "
			"should name it one of %s", oc->cloud,
			oc->unknown_type.v[i], oc->unknown.v[i], known));
	}
	for (size_t i = 0; i < lines.n; i++) {
		gb_log(GB_LOG_WARN, "drivers", "%s", lines.v[i]);
		if (problems)
			gb_strv_push(problems, lines.v[i]);
	}
	gb_strv_free(&lines);
}

size_t gb_drivers_offers(gb_drivers *ds, gb_catalog *cat, gb_strv *problems)
{
	size_t total = 0;
	for (size_t i = 0; i < ds->n; i++) {
		gb_drv *drv = ds->v[i];
		offers_ctx oc;
		gb_error e;
		if (!drv->ready)
			continue;
		memset(&oc, 0, sizeof(oc));
		oc.cat = cat;
		oc.cloud = drv->name;
		oc.drv_minor = drv->d->abi_minor;
		memset(&e, 0, sizeof(e));
		if (drv->d->list_offers(drv->ctx, offer_cb, &oc, &e) != 0) {
			char *msg = gb_redact(e.message);
			char *line = gb_xasprintf("%s: list_offers failed: %s",
			                          drv->name, msg);
			gb_log(GB_LOG_WARN, "drivers", "%s", line);
			if (problems)
				gb_strv_push_take(problems, line);
			else
				free(line);
			free(msg);
		}
		offer_problems(&oc, problems);
		gb_strv_free(&oc.unknown);
		gb_strv_free(&oc.unknown_type);
		total += oc.added;
	}
	return total;
}

/* ------------------------------------------------------------ report */

static json_t *caps_json(uint64_t caps)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{GB_DRV_CAP_SPOT, "spot"},
		{GB_DRV_CAP_BATCH_CREATE, "batch-create"},
		{GB_DRV_CAP_QUOTA, "quota"},
		{GB_DRV_CAP_PRICE_REFRESH, "price-refresh"},
		{GB_DRV_CAP_PROBE, "probe"},
		{GB_DRV_CAP_ZONES, "zones"},
		{GB_DRV_CAP_DESCRIBE_ALL_REGIONS, "describe-all-regions"},
		{GB_DRV_CAP_BATCH_TERMINATE, "batch-terminate"},
		{GB_DRV_CAP_ATOMIC_CREATE, "atomic-create"},
	};
	json_t *a = json_array();
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
		if (caps & names[i].bit)
			json_array_append_new(a, json_string(names[i].name));
	return a;
}

int64_t gb_drv_billing_minimum_s(const gb_drv *drv)
{
	if (!drv || !drv->d || drv->d->abi_minor < 5 ||
	    drv->d->struct_size < offsetof(gb_driver, billing_minimum_s) +
	                              sizeof(drv->d->billing_minimum_s))
		return 0;
	return drv->d->billing_minimum_s > 0 ? drv->d->billing_minimum_s : 0;
}

json_t *gb_drivers_json(const gb_drivers *ds)
{
	json_t *rows = json_array();
	for (size_t i = 0; i < ds->n; i++) {
		gb_drv *d = ds->v[i];
		json_t *r = json_object();
		char abi[32] = "-";
		if (d->d)
			snprintf(abi, sizeof(abi), "%u.%u", d->d->abi_major,
			         d->d->abi_minor);
		json_object_set_new(r, "name", json_string(d->name));
		json_object_set_new(r, "version",
		                    d->d ? json_string(d->d->version ? d->d->version : "")
		                         : json_null());
		json_object_set_new(r, "abi", json_string(abi));
		json_object_set_new(r, "capabilities",
		                    d->d ? caps_json(d->d->caps) : json_array());
		json_object_set_new(r, "billing_minimum_s",
		                    json_integer(gb_drv_billing_minimum_s(d)));
		json_object_set_new(r, "status", json_string(d->status));
		json_object_set_new(r, "ready", json_boolean(d->ready));
		if (d->ready && d->credentials >= 0)
			json_object_set_new(r, "credentials",
			                    json_boolean(d->credentials));
		json_object_set_new(r, "path", json_string(d->path));
		json_array_append_new(rows, r);
	}
	return rows;
}
