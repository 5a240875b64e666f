/* driver_guard.c -- a driver that crashes, calls exit() or hangs while it
 * loads is named on stderr, and the process does not look like a clean
 * stop (see driver_int.h). */
#include "driver_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Alternate signal stacks: enough for the handlers below (they only
 * format a line on the stack) and for a sanitizer's own, if it runs. */
#define GUARD_STACK (64 * 1024)

static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
static const int stop_sigs[] = {SIGTERM, SIGINT};

/* Everything below except g_active is written only under guard_mu, by
 * the loading thread, before g_active is set (release); the handlers
 * read g_active (acquire) and then the rest. */
static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;
static int g_active;
static int g_phase;
static char g_name[128];
static char g_path[1024];
static struct sigaction g_old_crash[GB_ARRAY_LEN(crash_sigs)];
static struct sigaction g_old_stop[GB_ARRAY_LEN(stop_sigs)];
static int g_stop_set[GB_ARRAY_LEN(stop_sigs)];
static sigset_t g_old_mask;
static stack_t g_old_stack;
static int g_stack_set;
static char g_stack[GUARD_STACK] __attribute__((aligned(16)));

/* ---- async-signal-safe formatting: no stdio, no malloc ---- */

static size_t put(char *buf, size_t n, size_t cap, const char *s)
{
	while (*s && n + 1 < cap)
		buf[n++] = *s++;
	return n;
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGABRT: return "SIGABRT";
	case SIGTERM: return "SIGTERM";
	case SIGINT: return "SIGINT";
	default: return "a signal";
	}
}

static const char *phase_word(void)
{
	return g_phase == GB_DRV_PHASE_INIT ? "initialising" : "loading";
}

static void say(const char *line, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, line, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		line += w;
		n -= (size_t)w;
	}
}

/* Back to the default action, then raise: sig is blocked while its
 * handler runs, so it is delivered -- and ends the process, its status
 * showing the signal -- as the handler returns.  (A fault would also
 * fault again on return, but a raise()d SIGSEGV or an abort() would
 * not.) */
static void die_by(int sig)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void on_crash(int sig)
{
	char line[1400];
	size_t n = 0;
	int saved = errno;
	if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE)) {
		n = put(line, n, sizeof(line), "gpubroker: driver ");
		n = put(line, n, sizeof(line), g_name);
		n = put(line, n, sizeof(line), " (");
		n = put(line, n, sizeof(line), g_path);
		n = put(line, n, sizeof(line), ") crashed with ");
		n = put(line, n, sizeof(line), sig_name(sig));
		n = put(line, n, sizeof(line), " while ");
		n = put(line, n, sizeof(line), phase_word());
		n = put(line, n, sizeof(line), "; remove it from the config "
		        "(drivers:) or fix it\n");
		say(line, n);
	}
	die_by(sig);
	errno = saved;
}

/* SIGTERM/SIGINT while a driver loads.  It may hang (an init that never
 * returns, a constructor stuck on the network), and the caller may be
 * `serve`, which blocks these signals for its sigwait loop: without this
 * the process could not be stopped short of SIGKILL.  Nothing of
 * gpubroker's is running yet, so there is nothing to shut down
 * gracefully: say which driver was loading and end by the signal.
 * Not exit(): it is not async-signal-safe, another thread may be inside
 * the driver holding stdio or malloc locks that exit()'s flushing would
 * wait for forever, and it would run the driver's destructors under its
 * own running init. */
static void on_stop(int sig)
{
	char line[1400];
	size_t n = 0;
	int saved = errno;
	if (__atomic_load_n(&g_active, __ATOMIC_ACQUIRE)) {
		n = put(line, n, sizeof(line), "gpubroker: stopped by ");
		n = put(line, n, sizeof(line), sig_name(sig));
		n = put(line, n, sizeof(line), " while driver ");
		n = put(line, n, sizeof(line), g_name);
		n = put(line, n, sizeof(line), " (");
		n = put(line, n, sizeof(line), g_path);
		n = put(line, n, sizeof(line), ") was ");
		n = put(line, n, sizeof(line), phase_word());
		n = put(line, n, sizeof(line), "\n");
		say(line, n);
	}
	die_by(sig);
	errno = saved;
}

/* exit() while a driver loads: a constructor or init calling exit(0)
 * would otherwise end gpubroker with status 0, as if all went well.
 * _exit() from an atexit handler is allowed, and is what we want: the
 * other handlers and destructors must not run under a half-loaded
 * driver (see on_stop). */
static void on_exit_while_loading(void)
{
	char line[1400];
	size_t n = 0;
	if (!__atomic_load_n(&g_active, __ATOMIC_ACQUIRE))
		return;
	n = put(line, n, sizeof(line), "gpubroker: driver ");
	n = put(line, n, sizeof(line), g_name);
	n = put(line, n, sizeof(line), " (");
	n = put(line, n, sizeof(line), g_path);
	n = put(line, n, sizeof(line), ") called exit() while ");
	n = put(line, n, sizeof(line), phase_word());
	n = put(line, n, sizeof(line), "; refusing to report success\n");
	say(line, n);
	_exit(1);
}

static void register_atexit(void)
{
	if (atexit(on_exit_while_loading) != 0)
		abort(); /* only fails without memory */
}

static void copy_field(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void gb_drv_guard_enter(const char *name, const char *path,
                        gb_drv_phase phase)
{
	struct sigaction sa;
	sigset_t stop;
	stack_t ss;

	pthread_mutex_lock(&guard_mu);
	pthread_once(&atexit_once, register_atexit);
	copy_field(g_name, sizeof(g_name), name);
	copy_field(g_path, sizeof(g_path), path);
	g_phase = (int)phase;
	__atomic_store_n(&g_active, 1, __ATOMIC_RELEASE);

	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = g_stack;
	ss.ss_size = sizeof(g_stack);
	g_stack_set = sigaltstack(&ss, &g_old_stack) == 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK;
	/* one line at a time: no other guarded signal in the middle */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < GB_ARRAY_LEN(crash_sigs); i++)
		sigaddset(&sa.sa_mask, crash_sigs[i]);
	for (size_t i = 0; i < GB_ARRAY_LEN(stop_sigs); i++)
		sigaddset(&sa.sa_mask, stop_sigs[i]);
	for (size_t i = 0; i < GB_ARRAY_LEN(crash_sigs); i++)
		sigaction(crash_sigs[i], &sa, &g_old_crash[i]);

	sa.sa_handler = on_stop;
	sigemptyset(&stop);
	for (size_t i = 0; i < GB_ARRAY_LEN(stop_sigs); i++) {
		g_stop_set[i] = 0;
		/* an ignored SIGINT (a background job) stays ignored */
		if (sigaction(stop_sigs[i], NULL, &g_old_stop[i]) != 0 ||
		    g_old_stop[i].sa_handler == SIG_IGN)
			continue;
		if (sigaction(stop_sigs[i], &sa, NULL) == 0) {
			g_stop_set[i] = 1;
			sigaddset(&stop, stop_sigs[i]);
		}
	}
	/* `serve` blocks them in every thread for its sigwait loop; this
	 * thread takes them while the driver loads (threads that run driver
	 * code, like init's, keep them blocked) */
	pthread_sigmask(SIG_UNBLOCK, &stop, &g_old_mask);
}

void gb_drv_guard_leave(void)
{
	sigset_t stop;
	sigemptyset(&stop);
	for (size_t i = 0; i < GB_ARRAY_LEN(stop_sigs); i++)
		sigaddset(&stop, stop_sigs[i]);
	/* blocked while the old actions come back; one that arrives now
	 * stays pending for the old mask and action (serve's sigwait) */
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	for (size_t i = 0; i < GB_ARRAY_LEN(stop_sigs); i++)
		if (g_stop_set[i])
			sigaction(stop_sigs[i], &g_old_stop[i], NULL);
	for (size_t i = 0; i < GB_ARRAY_LEN(crash_sigs); i++)
		sigaction(crash_sigs[i], &g_old_crash[i], NULL);
	pthread_sigmask(SIG_SETMASK, &g_old_mask, NULL);
	if (g_stack_set)
		sigaltstack(&g_old_stack, NULL);
	__atomic_store_n(&g_active, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&guard_mu);
}

/* What gb_drv_guard_thread_begin hands back: the stack it installed and
 * the one it replaced (a sanitizer's, say), restored at the end. */
typedef struct thread_stack {
	stack_t old;
	int set;
	char mem[GUARD_STACK] __attribute__((aligned(16)));
} thread_stack;

void *gb_drv_guard_thread_begin(void)
{
	stack_t ss;
	thread_stack *ts = gb_xcalloc(1, sizeof(*ts));
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = ts->mem;
	ss.ss_size = sizeof(ts->mem);
	ts->set = sigaltstack(&ss, &ts->old) == 0;
	return ts;
}

void gb_drv_guard_thread_end(void *stack)
{
	thread_stack *ts = stack;
	if (!ts)
		return;
	if (ts->set && sigaltstack(&ts->old, NULL) != 0) {
		/* the old one cannot come back: at least stop using ours */
		stack_t off;
		memset(&off, 0, sizeof(off));
		off.ss_flags = SS_DISABLE;
		sigaltstack(&off, NULL);
	}
	free(ts);
}
