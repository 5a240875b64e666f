/* commands.h -- the table of every CLI command (commands.c). */
#ifndef GB_COMMANDS_H
#define GB_COMMANDS_H

#include "cli.h"

/* NULL-terminated, in the order `gpubroker help` lists them. */
extern const gb_cmd *const gb_commands[];

#endif
