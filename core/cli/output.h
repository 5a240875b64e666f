/*
 * output.h -- render results as a table, JSON or YAML.  Commands build a
 * jansson value and a column list; the -o flag decides the form.
 */
#ifndef GB_OUTPUT_H
#define GB_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "cli.h"

typedef struct gb_column {
	const char *header; /* printed upper-case */
	const char *key;    /* field of each row object; dotted for nested */
	int right;          /* right-align (numbers) */
} gb_column;

/* Print a JSON array of objects as an aligned table (columns NULL-header
 * terminated).  Strings print as-is, numbers with %g, money (keys with
 * price/per_hour/cost/usd) and hours in fixed point with one precision
 * per column (money: 4 decimals when a cell is below $1, else 2; hours:
 * 3 when a cell is below 0.1, else 2), null as "-". */
void gb_out_table(FILE *f, json_t *rows, const gb_column *cols);
/* Pretty JSON followed by a newline. */
void gb_out_json(FILE *f, json_t *v);
/* Block YAML. */
int gb_out_yaml(FILE *f, json_t *v);
/* json / yaml of v, or the table of rows (rows may equal v). */
void gb_out_render(const gb_cli *cli, FILE *f, json_t *v, json_t *rows,
                   const gb_column *cols);

#endif
