/* cmd_state.c -- `gpubroker state migrate --to URL`: the configured
 * SQLite state copied into an empty PostgreSQL database (gb_store_copy),
 * so that several daemons can share it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "drivers.h"
#include "output.h"
#include "store.h"

static const char *to_target;

static const gb_flag *state_flags(void)
{
	static const gb_flag f[] = {
		{"to", 0, "URL", "the empty PostgreSQL database to copy into "
		 "(no password in the URL)", &to_target, NULL, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

/* The pool locks (<state>.locks/<pool>, engine.c) of a process that is
 * converging a pool of this state: each is taken here without waiting
 * and kept until the copy is done, so none starts meanwhile.  0, or 1
 * after printing which one another process holds, or which cannot be
 * checked. */
typedef struct held_locks {
	int *fd;
	size_t n;
} held_locks;

static void locks_release(held_locks *h)
{
	for (size_t i = 0; i < h->n; i++)
		close(h->fd[i]); /* releases the flock */
	free(h->fd);
	h->fd = NULL;
	h->n = 0;
}

static int locks_take(gb_cli *cli, const char *state, held_locks *h)
{
	char *dir = gb_xasprintf("%s.locks", state);
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;
	if (!d) {
		int en = errno;
		free(dir);
		if (en == ENOENT)
			return 0; /* no pool was ever converged */
		gb_cli_err(cli, "cannot check whether a gpubroker process is "
		           "using %s: %s.locks: %s", state, state, strerror(en));
		return 1;
	}
	while (!rc && (e = readdir(d))) {
		char *path;
		int fd;
		if (e->d_name[0] == '.')
			continue;
		path = gb_xasprintf("%s/%s", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			gb_cli_err(cli, "cannot check whether a gpubroker process "
			           "is using %s: %s: %s", state, path,
			           strerror(errno));
			rc = 1;
		} else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			if (errno == EWOULDBLOCK)
				gb_cli_err(cli, "a gpubroker process is using %s (pool "
				           "%s is locked): stop the daemon first "
				           "(and any apply, scale or destroy), then "
				           "retry", state, e->d_name);
			else
				gb_cli_err(cli, "cannot check whether a gpubroker "
				           "process is using %s: flock %s: %s",
				           state, path, strerror(errno));
			close(fd);
			rc = 1;
		} else {
			h->fd = gb_xrealloc(h->fd, (h->n + 1) * sizeof(int));
			h->fd[h->n++] = fd;
		}
		free(path);
	}
	closedir(d);
	free(dir);
	if (rc)
		locks_release(h);
	return rc;
}

/* The target with the password of the config's state_password (a
 * source: env:NAME or file:PATH) when it is set, else libpq's own
 * (PGPASSWORD, PGPASSFILE). */
static int open_target(gb_cli *cli, gb_store **out)
{
	char pw[1024], err[1024];
	const char *src = cli->cfg.state_password;
	int rc;
	*out = NULL;
	if (src && gb_secret_lookup(src, pw, sizeof(pw)) < 0) {
		gb_cli_err(cli, "state_password: %s gives no password (unset, "
		           "empty or unreadable): set it, or remove "
		           "state_password to use PGPASSWORD / PGPASSFILE", src);
		return -1;
	}
	rc = gb_store_open_auth(to_target, src ? pw : NULL, out, err,
	                        sizeof(err));
	memset(pw, 0, sizeof(pw));
	if (rc != 0)
		gb_cli_err(cli, "%s", err);
	return rc;
}

/* "table rows\n" lines as {"table": rows}. */
static json_t *report_json(const char *report)
{
	json_t *o = json_object();
	char *copy = gb_xstrdup(report), *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(l, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		json_object_set_new(o, l, json_integer(strtoll(sp + 1, NULL, 10)));
	}
	free(copy);
	return o;
}

static int run_migrate(gb_cli *cli)
{
	const char *state;
	struct stat sb;
	held_locks locks = { NULL, 0 };
	gb_store *from = NULL, *to = NULL;
	char err[1024], *report = NULL;
	int rc = GB_EXIT_FAIL, copied, serving = -1;

	if (cli->args.n > 1)
		return gb_cli_usage(cli, "unexpected argument \"%s\"",
		                    cli->args.v[1]);
	if (!to_target || !*to_target)
		return gb_cli_usage(cli, "state migrate needs --to URL (the "
		                         "PostgreSQL database to copy into)");
	/* never echo the URL given: it may carry a password */
	if (!gb_store_is_url(to_target))
		return gb_cli_usage(cli, "--to must be a postgresql:// or "
		                         "postgres:// URL");
	if (cli->server)
		return gb_cli_usage(cli, "state migrate copies the local state "
		                         "file: run it on the daemon's host, "
		                         "without --server");
	if (gb_cli_config(cli))
		return GB_EXIT_FAIL;
	state = cli->cfg.state_path;
	if (gb_store_is_url(state)) {
		gb_cli_err(cli, "the configured state is already a PostgreSQL "
		           "database: state migrate copies a SQLite state file "
		           "(set --state FILE); between PostgreSQL servers use "
		           "pg_dump");
		return GB_EXIT_FAIL;
	}
	if (stat(state, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		gb_cli_err(cli, "no state file at %s: nothing to migrate (set "
		           "--state, GPUBROKER_STATE or the config's state)",
		           state);
		return GB_EXIT_FAIL;
	}
	/* no daemon serves from it until the copy is done */
	if (gb_store_serve_exclusive(state, &serving, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "%s", err);
		return GB_EXIT_FAIL;
	}
	if (locks_take(cli, state, &locks) != 0) {
		close(serving);
		return GB_EXIT_FAIL;
	}
	if (gb_store_open(state, &from, err, sizeof(err)) != 0) {
		gb_cli_err(cli, "%s", err);
		goto out;
	}
	if (open_target(cli, &to) != 0)
		goto out;
	copied = gb_store_copy(from, to, &report);
	if (copied != 0) {
		gb_cli_err(cli, "%s", gb_store_errmsg(to));
		goto out;
	}
	if (cli->out == GB_OUT_TABLE) {
		fputs(report, stdout);
		printf("migrated %s to %s (verified: row counts equal)\n", state,
		       gb_store_path(to));
	} else {
		json_t *v = json_pack("{s:s, s:s, s:o, s:b}", "source", state,
		                      "target", gb_store_path(to), "rows",
		                      report_json(report), "verified", 1);
		gb_out_render(cli, stdout, v, NULL, NULL);
		json_decref(v);
	}
	rc = GB_EXIT_OK;
out:
	free(report);
	gb_store_close(to);
	gb_store_close(from);
	locks_release(&locks);
	close(serving);
	return rc;
}

static int run_state(gb_cli *cli)
{
	if (cli->args.n == 0)
		return gb_cli_usage(cli, "expected a subcommand: migrate");
	if (strcmp(cli->args.v[0], "migrate") == 0)
		return run_migrate(cli);
	return gb_cli_usage(cli, "unknown subcommand \"%s\" (use migrate)",
	                    cli->args.v[0]);
}

const gb_cmd gb_cmd_state = {
	"state", "move the state database (migrate to PostgreSQL)",
	"migrate --to URL",
	"  state migrate --to postgresql://USER@HOST:PORT/DB\n"
	"      copies the configured SQLite state (--state, GPUBROKER_STATE or\n"
	"      the config's state) into an empty PostgreSQL database: pools,\n"
	"      instances, the journal (intents), events, audit, decisions,\n"
	"      offers and failover cooldowns, ids kept, in one transaction;\n"
	"      then counts the rows of each table on both sides and fails on\n"
	"      any difference.  The source file is left as it was.\n"
	"\n"
	"Run it while no daemon (and no apply, scale or destroy) uses the\n"
	"state: a daemon serving from it (idle or not; each holds a lock on\n"
	"<state>.serving while it runs) or a pool lock held by another process\n"
	"is refused, no daemon starts on the state while it copies, and the\n"
	"source is held in a write transaction while it is read.  A source\n"
	"whose tables are not tables (a view) or hold over 100,000,000 rows is\n"
	"refused.  A target that holds\n"
	"any pool, instance, intent, event or audit row is refused.  The\n"
	"password never goes in the URL: the config's state_password (env:NAME\n"
	"or file:PATH), else PGPASSWORD or PGPASSFILE (~/.pgpass).  Afterwards\n"
	"set the config's state (or GPUBROKER_STATE) to the URL.",
	state_flags, run_state,
};
