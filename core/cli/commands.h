/* commands.h -- the table of every CLI command (commands.c). */
#ifndef GB_COMMANDS_H
#define GB_COMMANDS_H

#include "cli.h"

/* NULL-terminated, in the order `gpubroker help` lists them. */
extern const gb_cmd *const gb_commands[];
/* The words a command takes as its first argument ("refresh" of offers),
 * space-separated, for completion; NULL when it takes none of its own
 * (help takes the command names). */
const char *gb_cli_subcommands(const gb_cmd *cmd);

#endif
