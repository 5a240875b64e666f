/* cmd_misc.c -- `version` and `help`. */
#include <jansson.h>
#include <string.h>

#include "cli.h"
#include "output.h"

static int run_version(gb_cli *cli)
{
	json_t *v = json_pack("{s:s, s:i, s:i}", "version", GB_VERSION,
	                      "driver_abi_major", GB_DRIVER_ABI_MAJOR,
	                      "driver_abi_minor", GB_DRIVER_ABI_MINOR);
	if (cli->out == GB_OUT_TABLE)
		printf("gpubroker %s (driver ABI %d.%d)\n", GB_VERSION,
		       GB_DRIVER_ABI_MAJOR, GB_DRIVER_ABI_MINOR);
	else
		gb_out_render(cli, stdout, v, NULL, NULL);
	json_decref(v);
	return GB_EXIT_OK;
}

const gb_cmd gb_cmd_version = {
	"version", "print the version and driver ABI", "", NULL, NULL,
	run_version,
};

static int h_man;

static const gb_flag *help_flags(void)
{
	static const gb_flag f[] = {
		{"man", 0, NULL, "print the manual page (roff) made from every "
		 "command's help; 'make' writes it to "
		 "build/share/man/man1/gpubroker.1", NULL, &h_man, NULL},
		{NULL, 0, NULL, NULL, NULL, NULL, NULL},
	};
	return f;
}

static int run_help(gb_cli *cli)
{
	if (h_man) {
		if (cli->args.n)
			return gb_cli_usage(cli, "--man prints the whole manual; "
			                         "give no command name");
		gb_cli_man(stdout);
		return GB_EXIT_OK;
	}
	if (cli->args.n == 0) {
		gb_cli_help_all(stdout);
		return GB_EXIT_OK;
	}
	if (cli->args.n > 1)
		return gb_cli_usage(cli, "expected at most one command name");
	return gb_cli_help_cmd(stdout, cli->args.v[0]);
}

const gb_cmd gb_cmd_help = {
	"help", "show help for gpubroker or one command", "[COMMAND] | config | --man",
	"  help COMMAND   one command's help\n"
	"  help config    the broker config's reference: every key, its type,\n"
	"                 default and what it does (also docs/config.md)\n"
	"  help --man     the manual page", help_flags, run_help,
};
