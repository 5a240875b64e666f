/* pool_output.h -- how pools, instances and plans-of-change are printed,
 * the same in local and --server mode. */
#ifndef GB_POOL_OUTPUT_H
#define GB_POOL_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "cli.h"

/* Terraform-like summary of a gb_engine_diff JSON. */
void gb_print_diff(FILE *f, json_t *diff);
/* Pools (array of pool JSON): -o json/yaml as is; table: one row per
 * pool, and with instances=1 each pool's instances with addresses. */
void gb_print_pools(const gb_cli *cli, json_t *pools, int instances);

/* Prints a placement decision ({time, plan}: the plan of the pool's
 * last apply) in a few lines: when, the first choice, the first
 * candidates. */
void gb_print_decision(json_t *dec);

#endif
