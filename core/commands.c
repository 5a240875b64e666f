/* commands.c -- every command gpubroker knows, in help order.  Each lives
 * in its own cmd_*.c file. */
#include "commands.h"

const gb_cmd *const gb_commands[] = {
	&gb_cmd_validate,
	&gb_cmd_offers,
	&gb_cmd_drivers,
	&gb_cmd_version,
	&gb_cmd_help,
	NULL,
};
