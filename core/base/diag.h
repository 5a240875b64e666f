/*
 * diag.h -- user-facing diagnostics for input files: every message names
 * file:line:col, the key path (pool.gpu.count) and what was expected and
 * found.  A gb_diags collects every error of a file, not only the first.
 */
#ifndef GB_DIAG_H
#define GB_DIAG_H

#include <stdio.h>

#include "util.h"

typedef struct gb_diag {
	char *file; /* owned; may be "" */
	int line;   /* 1-based, 0 if unknown */
	int col;    /* 1-based, 0 if unknown */
	char *path; /* owned key path, e.g. "pool.gpu.count"; may be "" */
	char *msg;  /* owned */
} gb_diag;

typedef struct gb_diags {
	gb_diag *v;
	size_t n;
	size_t dropped; /* errors beyond GB_DIAGS_MAX, counted only */
} gb_diags;

#define GB_DIAGS_INIT {NULL, 0, 0}
#define GB_DIAGS_MAX 200

void gb_diag_add(gb_diags *d, const char *file, int line, int col,
                 const char *path, const char *fmt, ...) GB_PRINTF(6, 7);
/* "file:line:col: error: path: msg" per line (plus a count of dropped). */
/* Stable sort of d->v[from..n) by line then column, so a file's errors
 * read top to bottom whichever stage found them. */
void gb_diags_sort(gb_diags *d, size_t from);
void gb_diags_print(const gb_diags *d, FILE *f);
/* The same text as one string; caller frees. */
char *gb_diags_str(const gb_diags *d);
void gb_diags_free(gb_diags *d);

#endif
