/*
 * cli.h -- the command line: a table of commands, a small flag parser that
 * knows the common flags, and helpers every command uses.
 *
 * Exit codes (documented in `gpubroker help` and README):
 *   0  success
 *   1  invalid input or a failed operation
 *   2  usage error (unknown command or flag, missing argument)
 *   3  timed out waiting (apply/scale --wait --timeout)
 *   4  lost the daemon: a wait through --server (apply/scale --wait,
 *      destroy) could not reach it again before its timeout
 * (the table gb_cli_exit_codes prints them)
 */
#ifndef GB_CLI_H
#define GB_CLI_H

#include "config.h"
#include "util.h"

#define GB_EXIT_OK 0
#define GB_EXIT_FAIL 1
#define GB_EXIT_USAGE 2
#define GB_EXIT_TIMEOUT 3
#define GB_EXIT_UNREACHABLE 4

typedef enum gb_outfmt { GB_OUT_TABLE = 0, GB_OUT_JSON, GB_OUT_YAML } gb_outfmt;

/* A command-specific flag.  Exactly one of the out pointers is set. */
typedef struct gb_flag {
	const char *name;   /* long name without "--" */
	char shortname;     /* 0 = none */
	const char *arg;    /* metavar for flags taking a value, NULL = boolean */
	const char *help;
	const char **str;   /* last value */
	int *boolean;       /* set to 1 when present */
	gb_strv *multi;     /* every value, repeatable */
} gb_flag;

typedef struct gb_cli {
	const char *prog;
	const char *command;
	/* common flags */
	const char *config_path;
	const char *state_path;
	gb_outfmt out;
	int quiet;
	int verbose;
	const char *server;  /* --server / GPUBROKER_SERVER */
	/* the flag ("-c/--config" or "--state", static) that made a
	 * GPUBROKER_SERVER from the environment unused, or NULL */
	const char *env_server_ignored;
	const char *token;   /* --token / GPUBROKER_TOKEN */
	const char *oidc_token_file; /* --oidc-token-file (remote_oidc.c) */
	const char *oidc_audience;   /* --oidc-audience / GPUBROKER_OIDC_AUDIENCE */
	/* positional arguments after flag parsing */
	gb_strv args;
	/* the loaded config (gb_cli_config) */
	gb_config cfg;
	int cfg_loaded;
	/* set by a command that takes a missing pool calmly (destroy
	 * --ignore-not-found): "no pool named X" (a daemon's HTTP 404) is
	 * not printed; the backend op returns 1 instead */
	int quiet_not_found;
} gb_cli;

typedef struct gb_cmd {
	const char *name;
	const char *summary;
	const char *usage;   /* after "gpubroker NAME " */
	const char *details; /* longer help, may be NULL */
	const gb_flag *(*flags)(void); /* NULL-name terminated, may be NULL */
	int (*run)(gb_cli *cli);
} gb_cmd;

typedef struct gb_exit_code {
	int code;
	const char *help;
} gb_exit_code;

/* Parse argv for cmd: common flags and cmd's flags anywhere, the rest
 * positional.  Returns 0, or GB_EXIT_USAGE after printing why. */
int gb_cli_parse(gb_cli *cli, const gb_cmd *cmd, int argc, char **argv);
/* Loads --config (or defaults) once; prints errors; 0 or GB_EXIT_FAIL. */
int gb_cli_config(gb_cli *cli);
/* Prints "gpubroker CMD: message" to stderr. */
void gb_cli_err(const gb_cli *cli, const char *fmt, ...) GB_PRINTF(2, 3);
/* Usage error: prints the message and the command's usage line; returns
 * GB_EXIT_USAGE. */
int gb_cli_usage(const gb_cli *cli, const char *fmt, ...) GB_PRINTF(2, 3);
/* Asks QUESTION on stderr and reads a line from stdin: 1 only for
 * "yes" (as Terraform does), 0 for anything else or end of input.  Callers
 * ask only when stdin and stderr are terminals. */
int gb_cli_confirm(const gb_cli *cli, const char *question);
/* Informational line to stderr unless -q. */
void gb_cli_info(const gb_cli *cli, const char *fmt, ...) GB_PRINTF(2, 3);
void gb_cli_free(gb_cli *cli);

const gb_cmd *gb_cli_find(const char *name);
/* The flags every command takes, NULL-name terminated (static). */
const gb_flag *gb_cli_common_flags(void);
/* Every exit code with its meaning, ended by help == NULL (static). */
const gb_exit_code *gb_cli_exit_codes(void);
/* The manual page (roff, man(7)) made from the same tables and texts as
 * `gpubroker help` and `help COMMAND`. */
void gb_cli_man(FILE *f);
void gb_cli_help_all(FILE *f);
int gb_cli_help_cmd(FILE *f, const char *name);
int gb_cli_main(int argc, char **argv);

/* Command implementations (cmd_*.c). */
#define GB_DECLARE_CMD(n) extern const gb_cmd gb_cmd_##n
/* The table of the fields policies see, after `help policy`'s details
 * (cmd_policy.c). */
void gb_cmd_policy_fields_help(FILE *f);
/* config_help.c: the broker config's reference (`gpubroker help config`)
 * and the man page's CONFIGURATION section (text writes roff text). */
void gb_cli_config_help(FILE *f);
void gb_cli_config_man(FILE *f, void (*text)(FILE *, const char *));
GB_DECLARE_CMD(version);
GB_DECLARE_CMD(help);
GB_DECLARE_CMD(drivers);
GB_DECLARE_CMD(nodes);
GB_DECLARE_CMD(offers);
GB_DECLARE_CMD(plan);
GB_DECLARE_CMD(apply);
GB_DECLARE_CMD(destroy);
GB_DECLARE_CMD(scale);
GB_DECLARE_CMD(status);
GB_DECLARE_CMD(events);
GB_DECLARE_CMD(cost);
GB_DECLARE_CMD(usage);
GB_DECLARE_CMD(queue);
GB_DECLARE_CMD(gc);
GB_DECLARE_CMD(serve);
GB_DECLARE_CMD(audit);
GB_DECLARE_CMD(validate);
GB_DECLARE_CMD(policy);
GB_DECLARE_CMD(state);
GB_DECLARE_CMD(completion);
GB_DECLARE_CMD(token);

#endif
