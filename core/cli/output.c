/* output.c -- tables, JSON and YAML for command results. */
#include "output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static json_t *get_path(json_t *obj, const char *key)
{
	char buf[128];
	const char *dot;
	json_t *cur = obj;
	while (cur && (dot = strchr(key, '.'))) {
		size_t n = (size_t)(dot - key);
		if (n >= sizeof(buf))
			return NULL;
		memcpy(buf, key, n);
		buf[n] = '\0';
		cur = json_object_get(cur, buf);
		key = dot + 1;
	}
	return cur ? json_object_get(cur, key) : NULL;
}

/* Table cells longer than this are cut with "..." (-o json has all). */
#define GB_CELL_MAX 72

static int is_money(const char *key)
{
	return strstr(key, "price") || strstr(key, "per_hour") ||
	       strstr(key, "cost") || strstr(key, "usd") ||
	       strstr(key, "spent") || strstr(key, "projected") ||
	       strcmp(key, "budget") == 0;
}

/* The decimals a real of column `key` gets on its own: money 4 below
 * $1 (0.0840) else 2, hours 3 below 0.1 (0.008 = 29 s) else 2; -1 for
 * other columns. */
static int own_digits(const char *key, double d)
{
	if (is_money(key))
		return d != 0 && d < 1 && d > -1 ? 4 : 2;
	if (strstr(key, "hours"))
		return d != 0 && d < 0.1 && d > -0.1 ? 3 : 2;
	return -1;
}

/* One precision per column (the most any of its cells needs), so a
 * column never shows 0.10 beside 0.084, or 0.9791 beside 2.31. */
static int column_digits(json_t *rows, const char *key)
{
	int most = -1;
	size_t i;
	json_t *row;
	json_array_foreach(rows, i, row) {
		json_t *v = get_path(row, key);
		int d;
		if (!json_is_real(v))
			continue;
		d = own_digits(key, json_real_value(v));
		if (d > most)
			most = d;
	}
	return most;
}

/* digits >= 0: the column's precision for money and hours (else each
 * cell's own). */
static char *cell_text(json_t *v, const char *key, int digits)
{
	if (!v || json_is_null(v))
		return gb_xstrdup("-");
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t n = strlen(s);
		if (n > GB_CELL_MAX) {
			size_t cut = GB_CELL_MAX - 3;
			while (cut && ((unsigned char)s[cut] & 0xC0) == 0x80)
				cut--; /* do not split a UTF-8 sequence */
			return gb_xasprintf("%.*s...", (int)cut, s);
		}
		return gb_xstrdup(s);
	}
	if (json_is_integer(v))
		return gb_xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v)) {
		/* shares as percentages: 54%, never 0.538683 */
		if (strstr(key, "fraction") || strstr(key, "share") ||
		    strstr(key, "util"))
			return gb_xasprintf("%.0f%%", json_real_value(v) * 100);
		double d = json_real_value(v);
		int own = own_digits(key, d);
		if (own >= 0)
			/* 0.008 hours (29 s) or 2.50: never 0.00797083 */
			return gb_xasprintf("%.*f", digits >= 0 ? digits : own, d);
		if (strcmp(key, "score") == 0)
			return gb_xasprintf("%.3f", json_real_value(v));
		return gb_xasprintf("%g", json_real_value(v));
	}
	if (json_is_boolean(v))
		return gb_xstrdup(json_is_true(v) ? "yes" : "no");
	if (json_is_array(v)) {
		gb_buf b = GB_BUF_INIT;
		size_t i;
		json_t *it;
		json_array_foreach(v, i, it) {
			char *s = cell_text(it, key, -1);
			if (i)
				gb_buf_putc(&b, ',');
			gb_buf_puts(&b, s);
			free(s);
		}
		return gb_buf_take(&b);
	}
	return json_dumps(v, JSON_COMPACT);
}

/* Display width of UTF-8 text (counting code points). */
static size_t text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

void gb_out_table(FILE *f, json_t *rows, const gb_column *cols)
{
	size_t ncols = 0, nrows = json_array_size(rows);
	size_t *width;
	int *digits;
	char **cells;
	for (; cols[ncols].header; ncols++)
		;
	width = gb_xcalloc(ncols, sizeof(*width));
	cells = gb_xcalloc((nrows ? nrows : 1) * ncols, sizeof(char *));
	digits = gb_xcalloc(ncols, sizeof(*digits));
	for (size_t c = 0; c < ncols; c++) {
		width[c] = strlen(cols[c].header);
		digits[c] = column_digits(rows, cols[c].key);
	}
	for (size_t r = 0; r < nrows; r++) {
		json_t *row = json_array_get(rows, r);
		for (size_t c = 0; c < ncols; c++) {
			char *t = cell_text(get_path(row, cols[c].key),
			                    cols[c].key, digits[c]);
			size_t w = text_width(t);
			cells[r * ncols + c] = t;
			if (w > width[c])
				width[c] = w;
		}
	}
	for (size_t c = 0; c < ncols; c++) {
		const char *h = cols[c].header;
		size_t pad = width[c] - strlen(h);
		if (cols[c].right)
			fprintf(f, "%*s", (int)pad, "");
		for (const char *p = h; *p; p++)
			fputc(toupper((unsigned char)*p), f);
		if (c + 1 < ncols)
			fprintf(f, "%*s  ", cols[c].right ? 0 : (int)pad, "");
	}
	fputc('\n', f);
	for (size_t r = 0; r < nrows; r++) {
		for (size_t c = 0; c < ncols; c++) {
			const char *t = cells[r * ncols + c];
			size_t pad = width[c] - text_width(t);
			if (cols[c].right)
				fprintf(f, "%*s%s", (int)pad, "", t);
			else if (c + 1 < ncols)
				fprintf(f, "%s%*s", t, (int)pad, "");
			else
				fputs(t, f);
			if (c + 1 < ncols)
				fputs("  ", f);
			free(cells[r * ncols + c]);
		}
		fputc('\n', f);
	}
	free(cells);
	free(width);
	free(digits);
}

void gb_out_json(FILE *f, json_t *v)
{
	json_dumpf(v, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	fputc('\n', f);
}

static int yaml_write_cb(void *data, unsigned char *buf, size_t size)
{
	return fwrite(buf, 1, size, (FILE *)data) == size;
}

static int emit_scalar(yaml_emitter_t *e, const char *s, int plain_ok)
{
	yaml_event_t ev;
	/* a quoted scalar is implicitly a string (quoted_implicit 1):
	 * without a tag libyaml refuses one that may not be plain */
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s,
	                             (int)strlen(s), plain_ok, 1,
	                             plain_ok ? YAML_ANY_SCALAR_STYLE
	                                      : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	return yaml_emitter_emit(e, &ev);
}

static int emit_value(yaml_emitter_t *e, json_t *v)
{
	yaml_event_t ev;
	char buf[64];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *it;
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		                                    YAML_BLOCK_MAPPING_STYLE);
		if (!yaml_emitter_emit(e, &ev))
			return 0;
		json_object_foreach(v, k, it) {
			if (!emit_scalar(e, k, 1) || !emit_value(e, it))
				return 0;
		}
		yaml_mapping_end_event_initialize(&ev);
		return yaml_emitter_emit(e, &ev);
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *it;
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		                                     YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(e, &ev))
			return 0;
		json_array_foreach(v, i, it) {
			if (!emit_value(e, it))
				return 0;
		}
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(e, &ev);
	}
	case JSON_STRING: {
		/* Quote strings that would read back as another type. */
		const char *s = json_string_value(v);
		double d;
		int plain = *s && gb_parse_double(s, &d) != 0 &&
		            strcmp(s, "true") && strcmp(s, "false") &&
		            strcmp(s, "null") && strcmp(s, "~") &&
		            strcmp(s, "yes") && strcmp(s, "no");
		return emit_scalar(e, s, plain);
	}
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%lld",
		         (long long)json_integer_value(v));
		return emit_scalar(e, buf, 1);
	case JSON_REAL:
		snprintf(buf, sizeof(buf), "%.10g", json_real_value(v));
		return emit_scalar(e, buf, 1);
	case JSON_TRUE:
		return emit_scalar(e, "true", 1);
	case JSON_FALSE:
		return emit_scalar(e, "false", 1);
	case JSON_NULL:
		return emit_scalar(e, "null", 1);
	}
	return 0;
}

int gb_out_yaml(FILE *f, json_t *v)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	int ok;
	if (!yaml_emitter_initialize(&e))
		return -1;
	yaml_emitter_set_output(&e, yaml_write_cb, f);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, 120);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = yaml_emitter_emit(&e, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&e, &ev);
	ok = ok && emit_value(&e, v);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&e, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&e, &ev);
	ok = ok && yaml_emitter_flush(&e);
	if (!ok)
		fprintf(stderr, "gpubroker: cannot write the YAML output: %s "
		        "(use -o json)\n",
		        e.problem ? e.problem : "write error");
	yaml_emitter_delete(&e);
	return ok ? 0 : -1;
}

void gb_out_render(const gb_cli *cli, FILE *f, json_t *v, json_t *rows,
                   const gb_column *cols)
{
	switch (cli->out) {
	case GB_OUT_JSON:
		gb_out_json(f, v);
		break;
	case GB_OUT_YAML:
		gb_out_yaml(f, v);
		break;
	case GB_OUT_TABLE:
		if (cols)
			gb_out_table(f, rows ? rows : v, cols);
		else
			gb_out_yaml(f, v);
		break;
	}
}
