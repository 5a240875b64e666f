/* diag.c -- collecting and printing located diagnostics. */
#include "diag.h"

#include <stdlib.h>

void gb_diag_add(gb_diags *d, const char *file, int line, int col,
                 const char *path, const char *fmt, ...)
{
	va_list ap;
	gb_diag *g;
	if (d->n >= GB_DIAGS_MAX) {
		d->dropped++;
		return;
	}
	d->v = gb_xrealloc(d->v, (d->n + 1) * sizeof(*d->v));
	g = &d->v[d->n++];
	g->file = gb_xstrdup(file ? file : "");
	g->line = line;
	g->col = col;
	g->path = gb_xstrdup(path ? path : "");
	va_start(ap, fmt);
	g->msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
}

static void diag_format(gb_buf *b, const gb_diag *g)
{
	if (*g->file)
		gb_buf_printf(b, "%s:", g->file);
	if (g->line)
		gb_buf_printf(b, "%d:%d:", g->line, g->col);
	gb_buf_puts(b, " error: ");
	if (*g->path)
		gb_buf_printf(b, "%s: ", g->path);
	gb_buf_puts(b, g->msg);
}

char *gb_diags_str(const gb_diags *d)
{
	gb_buf b = GB_BUF_INIT;
	for (size_t i = 0; i < d->n; i++) {
		diag_format(&b, &d->v[i]);
		gb_buf_putc(&b, '\n');
	}
	if (d->dropped)
		gb_buf_printf(&b, "... and %zu more errors\n", d->dropped);
	return gb_buf_take(&b);
}

void gb_diags_print(const gb_diags *d, FILE *f)
{
	char *s = gb_diags_str(d);
	fputs(s, f);
	free(s);
}

void gb_diags_free(gb_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].path);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->dropped = 0;
}

void gb_diags_sort(gb_diags *d, size_t from)
{
	for (size_t i = from + 1; i < d->n; i++) {
		gb_diag g = d->v[i];
		size_t j = i;
		while (j > from && (d->v[j - 1].line > g.line ||
		                    (d->v[j - 1].line == g.line &&
		                     d->v[j - 1].col > g.col))) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = g;
	}
}
