/* commands.c -- every command gpubroker knows, in help order.  Each lives
 * in its own cmd_*.c file. */
#include "commands.h"

#include <string.h>

const gb_cmd *const gb_commands[] = {
	&gb_cmd_validate,
	&gb_cmd_plan,
	&gb_cmd_apply,
	&gb_cmd_status,
	&gb_cmd_scale,
	&gb_cmd_destroy,
	&gb_cmd_events,
	&gb_cmd_cost,
	&gb_cmd_usage,
	&gb_cmd_queue,
	&gb_cmd_gc,
	&gb_cmd_serve,
	&gb_cmd_audit,
	&gb_cmd_token,
	&gb_cmd_state,
	&gb_cmd_offers,
	&gb_cmd_drivers,
	&gb_cmd_nodes,
	&gb_cmd_policy,
	&gb_cmd_completion,
	&gb_cmd_version,
	&gb_cmd_help,
	NULL,
};

/* Each command's subcommands, as its usage line names them. */
static const struct {
	const gb_cmd *cmd;
	const char *words;
} subcommands[] = {
	{&gb_cmd_state, "migrate"},
	{&gb_cmd_policy, "test check"},
	{&gb_cmd_drivers, "test"},
	{&gb_cmd_nodes, "probe clear sites"},
	{&gb_cmd_offers, "refresh"},
	{&gb_cmd_completion, "bash zsh fish"},
};

const char *gb_cli_subcommands(const gb_cmd *cmd)
{
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (subcommands[i].cmd == cmd)
			return subcommands[i].words;
	return NULL;
}
