/* onprem_transport.c -- running a command on a node: the system ssh
 * client (BatchMode, our own known_hosts) or /bin/sh for local nodes,
 * started with posix_spawn (no local shell ever sees node names or
 * addresses), with captured output, stdin data and a timeout that kills
 * the whole process group. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "onprem.h"

extern char **environ;

#define OUT_CAP ((size_t)16 << 20)
#define ERR_KEEP 8192

char *onprem_shquote(const char *s)
{
	drvc_buf b = DRVC_BUF_INIT;
	drvc_buf_adds(&b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			drvc_buf_adds(&b, "'\\''");
		else
			drvc_buf_add(&b, s, 1);
	}
	drvc_buf_adds(&b, "'");
	return drvc_buf_take(&b);
}

char *onprem_with_env(const char *cmd, const char *const *kv)
{
	drvc_buf b = DRVC_BUF_INIT;
	int any = 0;
	for (size_t i = 0; kv && kv[i] && kv[i + 1]; i += 2) {
		char *q = onprem_shquote(kv[i + 1]);
		drvc_buf_addf(&b, "%s%s=%s", any ? " " : "export ", kv[i], q);
		free(q);
		any = 1;
	}
	if (any)
		drvc_buf_adds(&b, "; ");
	drvc_buf_adds(&b, cmd);
	return drvc_buf_take(&b);
}

void onprem_tail(char *dst, size_t cap, const char *s, size_t max)
{
	size_t n, o = 0;
	int space = 0;
	if (!cap)
		return;
	dst[0] = '\0';
	if (!s)
		return;
	n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
	             s[n - 1] == '\t'))
		n--;
	if (n > max)
		s += n - max, n = max;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
			if (o && !space)
				dst[o++] = ' ';
			space = 1;
			continue;
		}
		space = 0;
		dst[o++] = (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
	}
	dst[o] = '\0';
}

static void push(char ***v, size_t *n, const char *s)
{
	*v = drvc_xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = drvc_xstrdup(s);
	(*v)[*n] = NULL;
}

char **onprem_argv(const onprem_ctx *c, const onprem_node *n,
                   const char *cmd)
{
	char **v = NULL;
	size_t k = 0;
	char buf[64];
	char *t;
	if (n->transport == ONPREM_LOCAL) {
		push(&v, &k, "/bin/sh");
		push(&v, &k, "-c");
		push(&v, &k, cmd);
		return v;
	}
	push(&v, &k, c->ssh_bin);
	/* ssh takes the first value it is given for an option: the
	 * inventory's options come first so they can override ours. */
	for (size_t i = 0; i < n->ssh_options.n; i++) {
		push(&v, &k, "-o");
		push(&v, &k, n->ssh_options.v[i]);
	}
	push(&v, &k, "-o");
	push(&v, &k, "BatchMode=yes");
	push(&v, &k, "-o");
	push(&v, &k, "StrictHostKeyChecking=accept-new");
	push(&v, &k, "-o");
	t = drvc_xasprintf("UserKnownHostsFile=%s", c->known_hosts);
	push(&v, &k, t);
	free(t);
	push(&v, &k, "-o");
	snprintf(buf, sizeof(buf), "ConnectTimeout=%d",
	         c->ssh_connect_timeout_s);
	push(&v, &k, buf);
	push(&v, &k, "-o");
	push(&v, &k, "LogLevel=ERROR");
	push(&v, &k, "-p");
	snprintf(buf, sizeof(buf), "%d", n->ssh_port);
	push(&v, &k, buf);
	if (n->ssh_key) {
		push(&v, &k, "-i");
		push(&v, &k, n->ssh_key);
		push(&v, &k, "-o");
		push(&v, &k, "IdentitiesOnly=yes");
	}
	if (n->ssh_user) {
		push(&v, &k, "-l");
		push(&v, &k, n->ssh_user);
	}
	push(&v, &k, "--");
	push(&v, &k, n->address);
	push(&v, &k, cmd);
	return v;
}

void onprem_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

void onprem_runres_free(onprem_runres *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
	r->out_len = 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct capture {
	char *out;
	size_t out_len, out_cap;
	char *err;
	size_t err_len, err_cap;
} capture;

static void cap_out(capture *k, const char *p, size_t n)
{
	if (k->out_len + n > OUT_CAP)
		n = OUT_CAP - k->out_len;
	if (!n)
		return;
	if (k->out_len + n + 1 > k->out_cap) {
		k->out_cap = (k->out_len + n + 1) * 2;
		k->out = drvc_xrealloc(k->out, k->out_cap);
	}
	memcpy(k->out + k->out_len, p, n);
	k->out_len += n;
	k->out[k->out_len] = '\0';
}

static void cap_err(capture *k, const char *p, size_t n)
{
	if (n > ERR_KEEP) {
		p += n - ERR_KEEP;
		n = ERR_KEEP;
	}
	if (k->err_len + n > 2 * ERR_KEEP) {
		size_t drop = k->err_len + n - ERR_KEEP;
		if (drop > k->err_len)
			drop = k->err_len;
		memmove(k->err, k->err + drop, k->err_len - drop);
		k->err_len -= drop;
	}
	if (k->err_len + n + 1 > k->err_cap) {
		k->err_cap = 2 * ERR_KEEP + 1;
		k->err = drvc_xrealloc(k->err, k->err_cap);
	}
	memcpy(k->err + k->err_len, p, n);
	k->err_len += n;
	k->err[k->err_len] = '\0';
}

/* Read what is available on fd; returns 0 at EOF or error, 1 otherwise. */
static int drain(int fd, capture *k, int is_err)
{
	char buf[16384];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r > 0) {
			if (is_err)
				cap_err(k, buf, (size_t)r);
			else
				cap_out(k, buf, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		return 0;
	}
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Commands on nodes (a local node's setup, teardown and probe; ssh
 * itself) get this environment, not gpubroker's: that one holds cloud
 * credentials, PGPASSWORD and the like.  What a hook needs of gpubroker
 * (GPUBROKER_POOL, ...) is exported in the command line itself. */
static const char *const env_keep[] = {
	"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
	"USER", "LOGNAME", "TMPDIR", "SSH_AUTH_SOCK", NULL,
};

/* The allowed part of environ (borrowed strings; free the array). */
static char **clean_env(void)
{
	size_t n = 0, k = 0;
	char **v;
	int path = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	v = drvc_xcalloc(n + 2, sizeof(*v));
	for (char **e = environ; e && *e; e++)
		for (size_t i = 0; env_keep[i]; i++) {
			size_t l = strlen(env_keep[i]);
			if (strncmp(*e, env_keep[i], l) == 0 && (*e)[l] == '=') {
				v[k++] = *e;
				path |= i == 0;
				break;
			}
		}
	if (!path)
		v[k++] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	v[k] = NULL;
	return v;
}

int onprem_run(const onprem_ctx *c, const onprem_node *n, const char *cmd,
               const void *in, size_t in_len, int timeout_s,
               onprem_runres *res)
{
	char **argv = onprem_argv(c, n, cmd), **envp;
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perrp[2] = {-1, -1};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, defs, pipeset, oldmask;
	pid_t pid = -1;
	int rc, status = 0, exited = 0, sigpipe_pending = 0;
	size_t in_off = 0;
	int64_t deadline;
	capture k = {NULL, 0, 0, NULL, 0, 0};

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
	    pipe2(perrp, O_CLOEXEC)) {
		snprintf(res->what, sizeof(res->what), "cannot create pipes: %s",
		         strerror(errno));
		res->unreachable = 1;
		close_fd(&pin[0]), close_fd(&pin[1]), close_fd(&pout[0]);
		close_fd(&pout[1]), close_fd(&perrp[0]), close_fd(&perrp[1]);
		onprem_argv_free(argv);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
	posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
	posix_spawn_file_actions_adddup2(&fa, perrp[1], 2);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&defs);
	sigaddset(&defs, SIGPIPE);
	sigaddset(&defs, SIGINT);
	sigaddset(&defs, SIGTERM);
	sigaddset(&defs, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &defs);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	                                  POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETSIGDEF);
	envp = clean_env();
	rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
	free(envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close_fd(&pin[0]);
	close_fd(&pout[1]);
	close_fd(&perrp[1]);
	if (rc != 0) {
		snprintf(res->what, sizeof(res->what), "cannot run %s: %s",
		         argv[0], strerror(rc));
		res->unreachable = 1;
		close_fd(&pin[1]), close_fd(&pout[0]), close_fd(&perrp[0]);
		onprem_argv_free(argv);
		return -1;
	}
	onprem_argv_free(argv);
	set_nonblock(pin[1]);
	set_nonblock(pout[0]);
	set_nonblock(perrp[0]);
	if (!in || in_len == 0)
		close_fd(&pin[1]);

	/* Writing to a child that has gone away must not kill us: block
	 * SIGPIPE in this thread and swallow one we caused. */
	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	{
		sigset_t pend;
		sigpending(&pend);
		sigpipe_pending = sigismember(&pend, SIGPIPE);
	}
	pthread_sigmask(SIG_BLOCK, &pipeset, &oldmask);

	deadline = mono_ms() + (int64_t)(timeout_s > 0 ? timeout_s : 600) * 1000;
	while (!exited) {
		struct pollfd pf[3];
		int np = 0, wait_ms;
		int64_t left = deadline - mono_ms();
		pid_t w;
		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			res->timed_out = 1;
			snprintf(res->what, sizeof(res->what),
			         "timed out after %d s", timeout_s);
			break;
		}
		wait_ms = left < 50 ? (int)left : 50;
		if (pout[0] >= 0)
			pf[np++] = (struct pollfd){pout[0], POLLIN, 0};
		if (perrp[0] >= 0)
			pf[np++] = (struct pollfd){perrp[0], POLLIN, 0};
		if (pin[1] >= 0)
			pf[np++] = (struct pollfd){pin[1], POLLOUT, 0};
		if (poll(pf, (nfds_t)np, wait_ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < np; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == pout[0] && !drain(pout[0], &k, 0))
				close_fd(&pout[0]);
			else if (pf[i].fd == perrp[0] && !drain(perrp[0], &k, 1))
				close_fd(&perrp[0]);
			else if (pf[i].fd == pin[1]) {
				ssize_t wr;
				if (pf[i].revents & (POLLERR | POLLHUP)) {
					close_fd(&pin[1]);
					continue;
				}
				wr = write(pin[1], (const char *)in + in_off,
				           in_len - in_off);
				if (wr > 0)
					in_off += (size_t)wr;
				else if (wr < 0 && errno != EAGAIN &&
				         errno != EINTR)
					close_fd(&pin[1]);
				if (in_off >= in_len)
					close_fd(&pin[1]);
			}
		}
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			exited = 1;
	}
	/* What the child wrote before exiting (descendants that keep the
	 * pipes open are not waited for). */
	if (pout[0] >= 0)
		drain(pout[0], &k, 0);
	if (perrp[0] >= 0)
		drain(perrp[0], &k, 1);
	close_fd(&pin[1]);
	close_fd(&pout[0]);
	close_fd(&perrp[0]);
	if (!sigpipe_pending) {
		struct timespec zero = {0, 0};
		sigset_t pend;
		sigpending(&pend);
		if (sigismember(&pend, SIGPIPE))
			sigtimedwait(&pipeset, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);

	res->out = k.out ? k.out : drvc_xstrdup("");
	res->out_len = k.out_len;
	res->err = k.err ? k.err : drvc_xstrdup("");
	if (res->timed_out)
		return -1;
	if (WIFEXITED(status))
		res->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		res->exit_code = 128 + WTERMSIG(status);
	if (n->transport == ONPREM_SSH && res->exit_code == 255 &&
	    (strstr(res->err, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
	     strstr(res->err, "Host key verification failed"))) {
		/* reached, and refused: not a network failure to retry */
		char host[300];
		if (n->ssh_port == 22)
			snprintf(host, sizeof(host), "%s", n->address);
		else
			snprintf(host, sizeof(host), "[%s]:%d", n->address,
			         n->ssh_port);
		res->host_key = 1;
		snprintf(res->what, sizeof(res->what), "ssh to %s:%d refused: "
		         "the node's SSH host key is not the one pinned in %s "
		         "(the node was reinstalled, or someone is in between); "
		         "check the new key, then re-pin it: ssh-keygen -R '%s' "
		         "-f %s (the next connection pins the key it finds)",
		         n->address, n->ssh_port, c->known_hosts, host,
		         c->known_hosts);
		return -1;
	}
	if (n->transport == ONPREM_SSH && res->exit_code == 255) {
		char tail[200];
		onprem_tail(tail, sizeof(tail), res->err, 180);
		res->unreachable = 1;
		snprintf(res->what, sizeof(res->what), "ssh to %s:%d failed: %s",
		         n->address, n->ssh_port, *tail ? tail : "exit 255");
		return -1;
	}
	return 0;
}
