/* cli.c -- flag parsing, dispatch and help for the command line. */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "log.h"

/* Common flags, accepted by every command. */
static const gb_flag common_flags[] = {
	{"config", 'c', "FILE", "broker config (default: built-in defaults); given, the command runs locally with it even if GPUBROKER_SERVER is set (flags win over the environment, which wins over the config; --server wins over -c)", NULL, NULL, NULL},
	{"state", 0, "FILE|URL", "state database: a SQLite file, or postgresql://USER@HOST:PORT/DB (no password: PGPASSWORD, ~/.pgpass or the config's state_password) shared by replicas (or GPUBROKER_STATE; default: from config, else $XDG_STATE_HOME/gpubroker/state.db); given, it wins over a GPUBROKER_SERVER in the environment", NULL, NULL, NULL},
	{"output", 'o', "FORMAT", "table | json | yaml (default table)", NULL, NULL, NULL},
	{"quiet", 'q', NULL, "print only results and errors", NULL, NULL, NULL},
	{"verbose", 'v', NULL, "log more (repeat for debug)", NULL, NULL, NULL},
	{"server", 0, "URL", "talk to a gpubroker daemon (or GPUBROKER_SERVER; "
	                     "https is verified against the system CAs or "
	                     "GPUBROKER_CA_FILE; plain http only to "
	                     "127.0.0.1, ::1 or localhost unless "
	                     "GPUBROKER_ALLOW_INSECURE_HTTP=1)",
	 NULL, NULL, NULL},
	{"token", 0, "TOKEN", "bearer token for --server (or GPUBROKER_TOKEN)", NULL, NULL, NULL},
	{"oidc-token-file", 0, "FILE", "sign in to --server with the CI job's OIDC ID token in FILE (or the token in GPUBROKER_OIDC_TOKEN; on GitHub Actions with id-token: write, asked of the runner): exchanged for a short-lived broker token, no stored secret", NULL, NULL, NULL},
	{"oidc-audience", 0, "AUD", "the audience to ask GitHub Actions' ID token for (or GPUBROKER_OIDC_AUDIENCE; default gpubroker): the broker's auth.oidc rule names it", NULL, NULL, NULL},
	{"help", 'h', NULL, "show help for the command", NULL, NULL, NULL},
	{NULL, 0, NULL, NULL, NULL, NULL, NULL},
};

const gb_flag *gb_cli_common_flags(void)
{
	return common_flags;
}

/* The exit codes, as `gpubroker help`, the man page and README list
 * them. */
static const gb_exit_code exit_codes[] = {
	{GB_EXIT_OK, "success"},
	{GB_EXIT_FAIL, "invalid input or a failed operation"},
	{GB_EXIT_USAGE, "usage error (unknown command or flag, missing argument)"},
	{GB_EXIT_TIMEOUT, "timed out waiting (apply --wait --timeout, scale --wait --timeout)"},
	{GB_EXIT_UNREACHABLE, "lost the daemon: a wait through --server (apply --wait, scale --wait, destroy) could not reach it again before its timeout"},
	{130, "interrupted by SIGINT (Ctrl-C) during apply, scale --wait or destroy: what is left running is printed (a daemon goes on with it)"},
	{143, "stopped by SIGTERM (a cancelled CI job), as 130"},
	{-1, NULL},
};

const gb_exit_code *gb_cli_exit_codes(void)
{
	return exit_codes;
}

void gb_cli_err(const gb_cli *cli, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s", cli->prog ? cli->prog : "gpubroker");
	if (cli->command)
		fprintf(stderr, " %s", cli->command);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void gb_cli_info(const gb_cli *cli, const char *fmt, ...)
{
	va_list ap;
	if (cli->quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int gb_cli_usage(const gb_cli *cli, const char *fmt, ...)
{
	va_list ap;
	const gb_cmd *cmd = cli->command ? gb_cli_find(cli->command) : NULL;
	fprintf(stderr, "gpubroker%s%s: ", cli->command ? " " : "",
	        cli->command ? cli->command : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cmd)
		fprintf(stderr, "usage: gpubroker %s %s\n"
		                "Run 'gpubroker help %s' for details.\n",
		        cmd->name, cmd->usage, cmd->name);
	else
		fprintf(stderr, "Run 'gpubroker help' for the commands.\n");
	return GB_EXIT_USAGE;
}

static int set_output(gb_cli *cli, const char *v)
{
	if (strcmp(v, "table") == 0)
		cli->out = GB_OUT_TABLE;
	else if (strcmp(v, "json") == 0)
		cli->out = GB_OUT_JSON;
	else if (strcmp(v, "yaml") == 0)
		cli->out = GB_OUT_YAML;
	else
		return gb_cli_usage(cli,
		                    "-o: unknown output format \"%s\" (use "
		                    "table, json or yaml)", v);
	return 0;
}

static int apply_common(gb_cli *cli, const char *name, const char *val)
{
	if (strcmp(name, "config") == 0)
		cli->config_path = val;
	else if (strcmp(name, "state") == 0)
		cli->state_path = val;
	else if (strcmp(name, "output") == 0)
		return set_output(cli, val);
	else if (strcmp(name, "quiet") == 0)
		cli->quiet = 1;
	else if (strcmp(name, "verbose") == 0)
		cli->verbose++;
	else if (strcmp(name, "server") == 0)
		cli->server = val;
	else if (strcmp(name, "token") == 0)
		cli->token = val;
	else if (strcmp(name, "oidc-token-file") == 0)
		cli->oidc_token_file = val;
	else if (strcmp(name, "oidc-audience") == 0)
		cli->oidc_audience = val;
	return 0;
}

static int set_flag(const gb_flag *f, const char *val)
{
	if (f->boolean)
		*f->boolean = 1;
	else if (f->str)
		*f->str = val;
	else if (f->multi)
		gb_strv_push(f->multi, val);
	return 0;
}

int gb_cli_parse(gb_cli *cli, const gb_cmd *cmd, int argc, char **argv)
{
	const gb_flag *flags = cmd->flags ? cmd->flags() : NULL;
	int only_pos = 0;
	const char *env, *env_server = NULL;

	if ((env = getenv("GPUBROKER_SERVER")) && *env)
		cli->server = env_server = env;
	if ((env = getenv("GPUBROKER_TOKEN")) && *env)
		cli->token = env;
	if ((env = getenv("GPUBROKER_OIDC_AUDIENCE")) && *env)
		cli->oidc_audience = env;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *name = NULL, *inl = NULL;
		char shortname = 0;
		char namebuf[64];
		int matched = 0;
		if (only_pos || a[0] != '-' || strcmp(a, "-") == 0) {
			gb_strv_push(&cli->args, a);
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			if (n >= sizeof(namebuf))
				n = sizeof(namebuf) - 1;
			memcpy(namebuf, a + 2, n);
			namebuf[n] = '\0';
			name = namebuf;
			inl = eq ? eq + 1 : NULL;
		} else {
			shortname = a[1];
			if (a[2])
				inl = a + 2;
		}
		/* common flags */
		for (size_t k = 0; k < GB_ARRAY_LEN(common_flags) - 1 && !matched;
		     k++) {
			const char *val = NULL;
			if (!(name ? strcmp(name, common_flags[k].name) == 0
			           : shortname == common_flags[k].shortname &&
			                     shortname))
				continue;
			matched = 1;
			if (strcmp(common_flags[k].name, "help") == 0) {
				gb_cli_help_cmd(stdout, cmd->name);
				return -1; /* handled: exit 0 */
			}
			if (common_flags[k].arg) {
				val = inl;
				if (!val) {
					if (i + 1 >= argc)
						return gb_cli_usage(
							cli, "%s%s needs a %s",
							name ? "--" : "-",
							name ? name : (char[]){shortname, 0},
							common_flags[k].arg);
					val = argv[++i];
				}
			} else if (inl && name) {
				return gb_cli_usage(cli, "--%s takes no value",
				                    name);
			} else if (inl && !name) {
				/* -qv style bundles: only booleans */
				for (const char *p = a + 1; *p; p++) {
					if (*p == 'q')
						cli->quiet = 1;
					else if (*p == 'v')
						cli->verbose++;
					else
						return gb_cli_usage(
							cli, "unknown flag -%c in %s",
							*p, a);
				}
				break;
			}
			if (apply_common(cli, common_flags[k].name, val))
				return GB_EXIT_USAGE;
		}
		for (size_t k = 0; flags && flags[k].name && !matched; k++) {
			const char *val = NULL;
			if (!(name ? strcmp(name, flags[k].name) == 0
			           : shortname == flags[k].shortname &&
			                     shortname))
				continue;
			matched = 1;
			if (flags[k].arg) {
				val = inl;
				if (!val) {
					if (i + 1 >= argc)
						return gb_cli_usage(
							cli, "%s%s needs a %s",
							name ? "--" : "-",
							name ? name : (char[]){shortname, 0},
							flags[k].arg);
					val = argv[++i];
				}
			} else if (inl) {
				return gb_cli_usage(cli, "%s takes no value", a);
			}
			set_flag(&flags[k], val);
		}
		if (!matched) {
			const char *cands[64];
			size_t nc = 0;
			const char *near = NULL;
			if (name) {
				for (size_t k = 0; k < GB_ARRAY_LEN(common_flags) - 1;
				     k++)
					cands[nc++] = common_flags[k].name;
				for (size_t k = 0;
				     flags && flags[k].name && nc < 63; k++)
					cands[nc++] = flags[k].name;
				cands[nc] = NULL;
				near = gb_nearest(name, cands);
			}
			if (near)
				return gb_cli_usage(cli,
				                    "unknown flag %s; did you mean "
				                    "--%s?", a, near);
			return gb_cli_usage(cli, "unknown flag %s", a);
		}
	}
	/* explicit flags win over the environment: -c/--config and --state
	 * name a local broker, so a GPUBROKER_SERVER from the environment is
	 * not used (an explicit --server still wins over -c, whose config
	 * then only serves what reads it remotely, e.g. validate) */
	if ((cli->state_path || cli->config_path) && cli->server &&
	    cli->server == env_server) {
		cli->server = NULL;
		cli->env_server_ignored = cli->state_path ? "--state"
		                                          : "-c/--config";
	} else if (cli->state_path && cli->server)
		return gb_cli_usage(cli, "--state is local state and --server a "
		                         "daemon's: give one");
	return 0;
}

int gb_cli_config(gb_cli *cli)
{
	gb_diags d = GB_DIAGS_INIT;
	if (cli->cfg_loaded)
		return 0;
	if (gb_config_load(cli->config_path, &cli->cfg, &d) != 0) {
		gb_diags_print(&d, stderr);
		gb_diags_free(&d);
		return GB_EXIT_FAIL;
	}
	gb_diags_free(&d);
	/* --state, then GPUBROKER_STATE, then the config's state: */
	if (cli->state_path || (getenv("GPUBROKER_STATE") &&
	                        *getenv("GPUBROKER_STATE"))) {
		free(cli->cfg.state_path);
		cli->cfg.state_path = gb_xstrdup(cli->state_path
		                                         ? cli->state_path
		                                         : getenv("GPUBROKER_STATE"));
	}
	cli->cfg_loaded = 1;
	return 0;
}

void gb_cli_free(gb_cli *cli)
{
	gb_strv_free(&cli->args);
	if (cli->cfg_loaded)
		gb_config_free(&cli->cfg);
}

const gb_cmd *gb_cli_find(const char *name)
{
	for (size_t i = 0; gb_commands[i]; i++)
		if (strcmp(gb_commands[i]->name, name) == 0)
			return gb_commands[i];
	return NULL;
}

void gb_cli_help_all(FILE *f)
{
	fprintf(f,
	        "gpubroker %s -- multi-cloud GPU provisioning broker\n\n"
	        "usage: gpubroker COMMAND [flags] [args]\n\ncommands:\n",
	        GB_VERSION);
	for (size_t i = 0; gb_commands[i]; i++)
		fprintf(f, "  %-12s %s\n", gb_commands[i]->name,
		        gb_commands[i]->summary);
	fprintf(f, "\ncommon flags (every command):\n");
	for (size_t k = 0; k < GB_ARRAY_LEN(common_flags) - 1; k++) {
		char left[48];
		snprintf(left, sizeof(left), "%s%c%s--%s%s%s",
		         common_flags[k].shortname ? "-" : "",
		         common_flags[k].shortname ? common_flags[k].shortname
		                                   : ' ',
		         common_flags[k].shortname ? ", " : "  ",
		         common_flags[k].name, common_flags[k].arg ? " " : "",
		         common_flags[k].arg ? common_flags[k].arg : "");
		fprintf(f, "  %-24s %s\n", left + (common_flags[k].shortname ? 0 : 1),
		        common_flags[k].help);
	}
	fprintf(f, "\nexit codes:\n");
	for (size_t k = 0; exit_codes[k].help; k++)
		fprintf(f, "  %d  %s\n", exit_codes[k].code, exit_codes[k].help);
	fprintf(f, "\nRun 'gpubroker help COMMAND' for a command's flags.\n");
}

int gb_cli_help_cmd(FILE *f, const char *name)
{
	const gb_cmd *cmd = gb_cli_find(name);
	const gb_flag *flags;
	if (!cmd && strcmp(name, "config") == 0) {
		gb_cli_config_help(f);
		return GB_EXIT_OK;
	}
	if (!cmd) {
		fprintf(stderr, "gpubroker help: no command \"%s\"\n", name);
		return GB_EXIT_USAGE;
	}
	fprintf(f, "usage: gpubroker %s %s\n\n%s\n", cmd->name, cmd->usage,
	        cmd->summary);
	if (cmd->details)
		fprintf(f, "\n%s\n", cmd->details);
	if (cmd == &gb_cmd_policy)
		gb_cmd_policy_fields_help(f);
	flags = cmd->flags ? cmd->flags() : NULL;
	if (flags && flags[0].name) {
		fprintf(f, "\nflags:\n");
		for (size_t k = 0; flags[k].name; k++) {
			char left[64];
			if (flags[k].shortname)
				snprintf(left, sizeof(left), "-%c, --%s%s%s",
				         flags[k].shortname, flags[k].name,
				         flags[k].arg ? " " : "",
				         flags[k].arg ? flags[k].arg : "");
			else
				snprintf(left, sizeof(left), "    --%s%s%s",
				         flags[k].name, flags[k].arg ? " " : "",
				         flags[k].arg ? flags[k].arg : "");
			fprintf(f, "  %-28s %s\n", left, flags[k].help);
		}
	}
	fprintf(f, "\nCommon flags: -c/--config, --state, -o/--output, -q, -v, "
	           "--server, --token (see 'gpubroker help').\n");
	return GB_EXIT_OK;
}

/* s as roff text: backslashes and hyphens escaped, a line starting with
 * '.' or '\'' kept as text. */
static void roff_text(FILE *f, const char *s)
{
	int bol = 1;
	for (; s && *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = *s == '\n';
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* One .TP paragraph per flag. */
static void man_flags(FILE *f, const gb_flag *flags)
{
	for (size_t k = 0; flags && flags[k].name; k++) {
		fputs(".TP\n", f);
		if (flags[k].shortname)
			fprintf(f, "\\fB\\-%c\\fR, ", flags[k].shortname);
		fputs("\\fB\\-\\-", f);
		roff_text(f, flags[k].name);
		fputs("\\fR", f);
		if (flags[k].arg) {
			fputs(" \\fI", f);
			roff_text(f, flags[k].arg);
			fputs("\\fR", f);
		}
		fputc('\n', f);
		roff_text(f, flags[k].help);
		fputc('\n', f);
	}
}

void gb_cli_man(FILE *f)
{
	fprintf(f, ".\\\" gpubroker(1), written by 'gpubroker help --man' from "
	           "the help texts\n"
	           ".TH GPUBROKER 1 \"\" \"gpubroker %s\" \"User Commands\"\n"
	           ".SH NAME\n"
	           "gpubroker \\- multi\\-cloud GPU provisioning broker\n"
	           ".SH SYNOPSIS\n"
	           ".B gpubroker\n"
	           ".I COMMAND\n"
	           "[flags] [args]\n"
	           ".SH DESCRIPTION\n"
	           "Commands (\\fBgpubroker help\\fR lists them, "
	           "\\fBgpubroker help\\fR \\fICOMMAND\\fR shows one):\n",
	        GB_VERSION);
	for (size_t i = 0; gb_commands[i]; i++) {
		fputs(".TP\n\\fB", f);
		roff_text(f, gb_commands[i]->name);
		fputs("\\fR\n", f);
		roff_text(f, gb_commands[i]->summary);
		fputc('\n', f);
	}
	fputs(".SH COMMANDS\n", f);
	for (size_t i = 0; gb_commands[i]; i++) {
		const gb_cmd *cmd = gb_commands[i];
		fputs(".SS \"gpubroker ", f);
		roff_text(f, cmd->name);
		fputs("\"\n.nf\n\\fBgpubroker ", f);
		roff_text(f, cmd->name);
		fputs("\\fR ", f);
		roff_text(f, cmd->usage);
		fputs("\n.fi\n.PP\n", f);
		roff_text(f, cmd->summary);
		fputs(".\n", f);
		if (cmd->details) {
			fputs(".PP\n.nf\n", f);
			roff_text(f, cmd->details);
			fputs("\n.fi\n", f);
		}
		man_flags(f, cmd->flags ? cmd->flags() : NULL);
	}
	fputs(".SH COMMON FLAGS\nEvery command takes these, before or after "
	      "its name.\n", f);
	man_flags(f, common_flags);
	gb_cli_config_man(f, roff_text);
	fputs(".SH EXIT STATUS\n", f);
	for (size_t k = 0; exit_codes[k].help; k++) {
		fprintf(f, ".TP\n%d\n", exit_codes[k].code);
		roff_text(f, exit_codes[k].help);
		fputc('\n', f);
	}
	fputs(".SH SEE ALSO\nThe README of gpubroker, docs/json.md for the "
	      "JSON that \\fB\\-o json\\fR prints, and docs/config.md for "
	      "the broker config.\n", f);
}

int gb_cli_main(int argc, char **argv)
{
	gb_cli cli;
	const gb_cmd *cmd;
	int rc;
	memset(&cli, 0, sizeof(cli));
	cli.prog = "gpubroker";
	if (argc < 2) {
		gb_cli_help_all(stderr);
		return GB_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		gb_cli_help_all(stdout);
		return GB_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0)
		argv[1] = (char *)"version";
	/* Common flags may come before the command ("gpubroker -c F status"):
	 * move them after it. */
	if (argv[1][0] == '-' && argc > 2) {
		int i = 1;
		while (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--")) {
			int takes = 0;
			const char *a = argv[i];
			for (size_t k = 0; k < GB_ARRAY_LEN(common_flags) - 1; k++) {
				int hit = a[1] == '-'
				                  ? strcmp(a + 2, common_flags[k].name) == 0
				                  : a[1] == common_flags[k].shortname &&
				                            a[2] == '\0';
				if (hit)
					takes = common_flags[k].arg != NULL;
			}
			i += takes ? 2 : 1;
		}
		if (i < argc && argv[i][0] != '-') {
			char *cmdname = argv[i];
			memmove(&argv[2], &argv[1], (size_t)(i - 1) * sizeof(char *));
			argv[1] = cmdname;
		}
	}
	cmd = gb_cli_find(argv[1]);
	if (!cmd) {
		const char *names[64];
		size_t n = 0;
		const char *near;
		for (size_t i = 0; gb_commands[i] && n < 63; i++)
			names[n++] = gb_commands[i]->name;
		names[n] = NULL;
		near = gb_nearest(argv[1], names);
		if (near)
			fprintf(stderr,
			        "gpubroker: unknown command \"%s\"; did you mean "
			        "\"%s\"?\n", argv[1], near);
		else
			fprintf(stderr,
			        "gpubroker: unknown command \"%s\"; run "
			        "'gpubroker help' for the list\n", argv[1]);
		return GB_EXIT_USAGE;
	}
	cli.command = cmd->name;
	rc = gb_cli_parse(&cli, cmd, argc - 2, argv + 2);
	if (rc == -1) {
		gb_cli_free(&cli);
		return GB_EXIT_OK;
	}
	/* -v: info, -vv: debug (driver HTTP exchanges). */
	if (cli.verbose)
		gb_log_set_level(cli.verbose >= 2 ? GB_LOG_DEBUG : GB_LOG_INFO);
	if (rc == 0)
		rc = cmd->run(&cli);
	gb_cli_free(&cli);
	return rc;
}
