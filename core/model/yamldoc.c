/* yamldoc.c -- libyaml events to located nodes, with limits and ${VAR}. */
#include "yamldoc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define DEF_MAX_BYTES (1u << 20)
#define DEF_MAX_DEPTH 32
#define DEF_MAX_NODES 100000
#define DEF_MAX_SCALAR (256u << 10)

typedef struct loader {
	const char *file;
	const gb_yaml_opts *o;
	size_t max_bytes, max_nodes, max_scalar;
	int max_depth;
	size_t nodes;
	gb_diags *d;
	int errors;
	int fatal; /* stop building the tree */
	const char *buf;
	size_t len;
} loader;

static void lerr(loader *L, int line, int col, const char *fmt, ...)
	GB_PRINTF(4, 5);

static void lerr(loader *L, int line, int col, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	gb_diag_add(L->d, L->file, line, col, "", "%s", msg);
	free(msg);
	L->errors++;
}

/* s for a message: at most 40 characters (then "..."), control
 * characters shown as '?' so input cannot drive the terminal. */
static const char *shown(const char *s, char *buf, size_t cap)
{
	size_t o = 0, chars = 0;
	while (*s) {
		unsigned char ch = (unsigned char)*s;
		size_t len = ch < 0x80 ? 1 : ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;
		if (++chars > 40 || o + len + 4 > cap) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (len == 1) {
			buf[o++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
			s++;
			continue;
		}
		for (size_t k = 0; k < len && *s; k++)
			buf[o++] = *s++;
	}
	buf[o] = '\0';
	return buf;
}

static void node_free(gb_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->items[i]);
		if (n->keys)
			node_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->str);
	free(n);
}

void gb_ydocs_free(gb_ydocs *docs)
{
	for (size_t i = 0; i < docs->n; i++)
		node_free(docs->docs[i]);
	free(docs->docs);
	docs->docs = NULL;
	docs->n = 0;
}

static const char *env_lookup(loader *L, const char *name)
{
	if (L->o && L->o->getenv_fn)
		return L->o->getenv_fn(L->o->getenv_ud, name);
	return getenv(name);
}

static int valid_var_name(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

/* Expands ${VAR} / ${VAR:-default} / $${ in s.  Returns a new string, or
 * NULL after reporting an error. */
static char *expand(loader *L, const char *s, size_t len, int line, int col)
{
	gb_buf b = GB_BUF_INIT;
	size_t i = 0;
	int bad = 0;
	while (i < len) {
		if (s[i] == '$' && i + 2 < len && s[i + 1] == '$' &&
		    s[i + 2] == '{') {
			gb_buf_puts(&b, "${");
			i += 3;
			continue;
		}
		if (s[i] == '$' && i + 1 < len && s[i + 1] == '{') {
			const char *start = s + i + 2;
			const char *end = memchr(start, '}', len - (i + 2));
			const char *dflt = NULL;
			size_t namelen, dlen = 0;
			char *name;
			const char *val;
			if (!end) {
				lerr(L, line, col,
				     "unterminated ${ in \"%.*s\": write ${NAME} "
				     "or $${ for a literal ${",
				     (int)(len > 60 ? 60 : len), s);
				bad = 1;
				break;
			}
			namelen = (size_t)(end - start);
			for (size_t k = 0; k + 1 < namelen; k++) {
				if (start[k] == ':' && start[k + 1] == '-') {
					dflt = start + k + 2;
					dlen = namelen - k - 2;
					namelen = k;
					break;
				}
			}
			if (!valid_var_name(start, namelen)) {
				lerr(L, line, col,
				     "\"${%.*s}\" is not a valid variable "
				     "reference: names are letters, digits and "
				     "_ (e.g. ${CI_JOB_ID} or ${TEAM:-research})",
				     (int)(end - start), start);
				bad = 1;
				i = (size_t)(end - s) + 1;
				continue;
			}
			name = gb_xstrndup(start, namelen);
			val = env_lookup(L, name);
			/* as in sh: the default also replaces an empty
			 * value */
			if (val && (*val || !dflt))
				gb_buf_puts(&b, val);
			else if (dflt)
				gb_buf_append(&b, dflt, dlen);
			else {
				lerr(L, line, col,
				     "environment variable %s is not set: set "
				     "it, or give a default with ${%s:-value}",
				     name, name);
				bad = 1;
			}
			free(name);
			i = (size_t)(end - s) + 1;
			continue;
		}
		gb_buf_putc(&b, s[i]);
		i++;
	}
	if (bad) {
		gb_buf_free(&b);
		return NULL;
	}
	if (!b.data)
		return gb_xstrdup("");
	return gb_buf_take(&b);
}

static gb_ynode *new_node(loader *L, gb_ykind kind, const yaml_mark_t *m)
{
	gb_ynode *n;
	if (++L->nodes > L->max_nodes) {
		if (!L->fatal)
			lerr(L, (int)m->line + 1, (int)m->column + 1,
			     "document has more than %zu nodes; refusing to "
			     "load it", L->max_nodes);
		L->fatal = 1;
		return NULL;
	}
	n = gb_xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	return n;
}

static void child_add(gb_ynode *parent, gb_ynode *key, gb_ynode *val)
{
	/* grow geometrically: a sequence of 60,000 items must not cost
	 * 60,000 copies of itself */
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? parent->cap * 2 : 4;
		parent->items = gb_xrealloc(parent->items,
		                            parent->cap * sizeof(gb_ynode *));
		if (parent->kind == GB_Y_MAP)
			parent->keys = gb_xrealloc(parent->keys,
			                           parent->cap * sizeof(gb_ynode *));
	}
	if (parent->kind == GB_Y_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = val;
}

/* Describes a libyaml problem in words a user can act on. */

/* 1 when the line starting at buf[off] holds "${" (an environment
 * reference). */
static int dollar_brace_on_line(const loader *L, size_t off)
{
	for (; off + 1 < L->len && L->buf[off] != '\n'; off++)
		if (L->buf[off] == '$' && L->buf[off + 1] == '{')
			return 1;
	return 0;
}

static void report_parser_error(loader *L, yaml_parser_t *p)
{
	int line = (int)p->problem_mark.line + 1;
	int col = (int)p->problem_mark.column + 1;
	const char *problem = p->problem ? p->problem : "malformed YAML";
	size_t off = 0, ls;
	/* libyaml's marks count characters; find the problem's line by
	 * bytes, then a tab in its indentation or at the problem column */
	for (size_t l = 0; l < p->problem_mark.line && off < L->len; off++)
		if (L->buf[off] == '\n')
			l++;
	ls = off;
	for (; off < L->len && (L->buf[off] == ' ' || L->buf[off] == '\t');
	     off++) {
		if (L->buf[off] == '\t') {
			lerr(L, line, (int)(off - ls) + 1,
			     "tab character: YAML indentation must use spaces, "
			     "not tabs");
			return;
		}
	}
	off = ls;
	for (size_t c = 0; c < p->problem_mark.column && off < L->len; off++)
		if (((unsigned char)L->buf[off] & 0xC0) != 0x80)
			c++;
	while (off < L->len && ((unsigned char)L->buf[off] & 0xC0) == 0x80)
		off++;
	if (off < L->len && L->buf[off] == '\t') {
		lerr(L, line, col,
		     "tab character: YAML indentation must use spaces, not "
		     "tabs");
		return;
	}
	if (p->context && strstr(p->context, "flow") &&
	    dollar_brace_on_line(L, ls))
		/* the braces of ${VAR} end a flow map/list: say the fix */
		lerr(L, line, col, "invalid YAML: %s %s (line %d); a ${VAR} "
		     "inside {...} or [...] needs quotes: {key: \"${VAR}\"}",
		     problem, p->context, (int)p->context_mark.line + 1);
	else if (p->context)
		lerr(L, line, col, "invalid YAML: %s %s (line %d)", problem,
		     p->context, (int)p->context_mark.line + 1);
	else
		lerr(L, line, col, "invalid YAML: %s", problem);
}

typedef struct frame {
	gb_ynode *node;
	gb_ynode *pending_key; /* maps: key waiting for its value */
	/* Maps with many keys: open-addressing index (slot = key index + 1)
	 * so duplicate-key checks stay linear on hostile input. */
	size_t *htab;
	size_t hcap;
} frame;

#define HTAB_MIN_KEYS 16

static size_t str_hash(const char *s)
{
	size_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void htab_insert(frame *f, size_t idx)
{
	size_t mask = f->hcap - 1;
	size_t h = str_hash(f->node->keys[idx]->str) & mask;
	while (f->htab[h])
		h = (h + 1) & mask;
	f->htab[h] = idx + 1;
}

static void htab_rebuild(frame *f)
{
	size_t cap = 64;
	while (cap < f->node->n * 4)
		cap *= 2;
	free(f->htab);
	f->htab = gb_xcalloc(cap, sizeof(*f->htab));
	f->hcap = cap;
	for (size_t i = 0; i < f->node->n; i++)
		htab_insert(f, i);
}

/* The earlier key of f's mapping equal to key, or NULL. */
static const gb_ynode *key_find(frame *f, const char *key)
{
	gb_ynode *m = f->node;
	size_t mask, h;
	if (m->n < HTAB_MIN_KEYS) {
		for (size_t i = 0; i < m->n; i++)
			if (strcmp(m->keys[i]->str, key) == 0)
				return m->keys[i];
		return NULL;
	}
	if (!f->htab)
		htab_rebuild(f);
	mask = f->hcap - 1;
	for (h = str_hash(key) & mask; f->htab[h]; h = (h + 1) & mask)
		if (strcmp(m->keys[f->htab[h] - 1]->str, key) == 0)
			return m->keys[f->htab[h] - 1];
	return NULL;
}

/* Keeps the index in step after a pair was appended to f's mapping. */
static void key_added(frame *f)
{
	if (!f->htab)
		return;
	if (f->node->n * 2 >= f->hcap)
		htab_rebuild(f);
	else
		htab_insert(f, f->node->n - 1);
}

static void frame_clear(frame *f)
{
	free(f->htab);
	f->htab = NULL;
	f->hcap = 0;
}

int gb_yaml_load(const char *file, const char *buf, size_t len,
                 const gb_yaml_opts *opts, gb_ydocs *out, gb_diags *d)
{
	loader L;
	yaml_parser_t p;
	yaml_event_t ev;
	frame *stack = NULL;
	int depth = 0, done = 0;
	gb_ynode *root = NULL;

	memset(&L, 0, sizeof(L));
	L.file = file;
	L.o = opts;
	L.d = d;
	L.buf = buf;
	L.len = len;
	L.max_bytes = opts && opts->max_bytes ? opts->max_bytes : DEF_MAX_BYTES;
	L.max_depth = opts && opts->max_depth ? opts->max_depth : DEF_MAX_DEPTH;
	L.max_nodes = opts && opts->max_nodes ? opts->max_nodes : DEF_MAX_NODES;
	L.max_scalar =
		opts && opts->max_scalar ? opts->max_scalar : DEF_MAX_SCALAR;
	out->docs = NULL;
	out->n = 0;

	if (len > L.max_bytes) {
		lerr(&L, 0, 0,
		     "file is %zu bytes, larger than the limit of %zu bytes",
		     len, L.max_bytes);
		return -1;
	}
	if (memchr(buf, '\0', len)) {
		const char *z = memchr(buf, '\0', len);
		size_t off = (size_t)(z - buf);
		int line = 1, col = 1;
		for (size_t i = 0; i < off; i++) {
			if (buf[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		lerr(&L, line, col,
		     "file contains a NUL byte: this is binary data, not a "
		     "YAML text file");
		return -1;
	}
	if (gb_utf8_check(buf, len) != len) {
		size_t bad = gb_utf8_check(buf, len);
		int line = 1, col = 1;
		for (size_t i = 0; i < bad; i++) {
			if (buf[i] == '\n') {
				line++;
				col = 1;
			} else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
				col++;
			}
		}
		lerr(&L, line, col,
		     "file is not valid UTF-8 (byte 0x%02x at offset %zu): "
		     "save it as UTF-8 text", (unsigned char)buf[bad], bad);
		return -1;
	}

	if (!yaml_parser_initialize(&p)) {
		lerr(&L, 0, 0, "cannot initialise the YAML parser");
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	stack = gb_xcalloc((size_t)L.max_depth + 2, sizeof(*stack));

	memset(&ev, 0, sizeof(ev));
	while (!done) {
		gb_ynode *n = NULL;
		int line, col;
		if (!yaml_parser_parse(&p, &ev)) {
			report_parser_error(&L, &p);
			break;
		}
		line = (int)ev.start_mark.line + 1;
		col = (int)ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			root = NULL;
			break;
		case YAML_DOCUMENT_END_EVENT:
			if (root && root->kind == GB_Y_SCALAR && root->is_null) {
				/* "---" with nothing under it */
				node_free(root);
				root = NULL;
			}
			out->docs = gb_xrealloc(out->docs,
			                        (out->n + 1) * sizeof(gb_ynode *));
			out->docs[out->n++] = root;
			root = NULL;
			break;
		case YAML_ALIAS_EVENT:
			lerr(&L, line, col,
			     "YAML aliases (*%s) are not allowed: write the "
			     "value out in full",
			     (const char *)ev.data.alias.anchor);
			L.fatal = 1;
			done = 1;
			break;
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;
			size_t vl = ev.data.scalar.length;
			if (vl > L.max_scalar) {
				lerr(&L, line, col,
				     "value is %zu bytes, larger than the limit "
				     "of %zu bytes", vl, L.max_scalar);
				L.fatal = 1;
				done = 1;
				break;
			}
			n = new_node(&L, GB_Y_SCALAR, &ev.start_mark);
			if (!n) {
				done = 1;
				break;
			}
			n->quoted = ev.data.scalar.style !=
			            YAML_PLAIN_SCALAR_STYLE;
			if (memchr(v, '\0', vl)) {
				/* "\0" in a double-quoted string: C strings
				 * would silently cut the value short. */
				lerr(&L, line, col,
				     "value contains a NUL character (\\0), "
				     "which is not allowed");
				n->invalid = 1;
			}
			if (!n->quoted &&
			    (vl == 0 || strcmp(v, "~") == 0 ||
			     strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
			     strcmp(v, "NULL") == 0))
				n->is_null = 1;
			if (L.o && L.o->expand_env && memchr(v, '$', vl)) {
				n->str = expand(&L, v, vl, line, col);
				if (!n->str) {
					n->str = gb_xstrdup("");
					n->invalid = 1;
				}
			} else {
				n->str = gb_xstrndup(v, vl);
			}
			n->len = strlen(n->str);
			break;
		}
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth >= L.max_depth) {
				lerr(&L, line, col,
				     "nesting deeper than %d levels; refusing "
				     "to load it", L.max_depth);
				L.fatal = 1;
				done = 1;
				break;
			}
			n = new_node(&L,
			             ev.type == YAML_SEQUENCE_START_EVENT
			                     ? GB_Y_SEQ
			                     : GB_Y_MAP,
			             &ev.start_mark);
			if (!n) {
				done = 1;
				break;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			if (depth > 0) {
				frame *f = &stack[--depth];
				if (f->pending_key) { /* cannot happen */
					node_free(f->pending_key);
					f->pending_key = NULL;
				}
				frame_clear(f);
				n = f->node; /* attach below as a finished node */
				f->node = NULL;
				goto attach;
			}
			break;
		default:
			break;
		}
		if (n && (n->kind == GB_Y_SEQ || n->kind == GB_Y_MAP)) {
			stack[depth].node = n;
			stack[depth].pending_key = NULL;
			stack[depth].htab = NULL;
			stack[depth].hcap = 0;
			depth++;
			n = NULL;
		}
	attach:
		if (n) {
			if (depth == 0) {
				node_free(root);
				root = n;
			} else {
				frame *f = &stack[depth - 1];
				gb_ynode *parent = f->node;
				if (parent->kind == GB_Y_SEQ) {
					child_add(parent, NULL, n);
				} else if (!f->pending_key) {
					if (n->kind != GB_Y_SCALAR) {
						lerr(&L, n->line, n->col,
						     "mapping keys must be plain "
						     "strings, not %s",
						     n->kind == GB_Y_MAP
						             ? "mappings"
						             : "lists");
						node_free(n);
						/* placeholder key keeps pairing */
						n = gb_xcalloc(1, sizeof(*n));
						n->str = gb_xstrdup("?");
						n->line = line;
						n->col = col;
						n->invalid = 1;
					} else {
						const gb_ynode *first =
							key_find(f, n->str);
						char t[80];
						if (first)
							lerr(&L, n->line, n->col,
							     "duplicate key \"%s\" "
							     "(first at line %d); "
							     "remove one",
							     shown(n->str, t,
							           sizeof(t)),
							     first->line);
					}
					f->pending_key = n;
				} else {
					child_add(parent, f->pending_key, n);
					f->pending_key = NULL;
					key_added(f);
				}
			}
		}
		yaml_event_delete(&ev);
	}
	/* On early exit, free unfinished frames. */
	while (depth > 0) {
		frame *f = &stack[--depth];
		node_free(f->pending_key);
		node_free(f->node);
		frame_clear(f);
	}
	node_free(root);
	free(stack);
	yaml_parser_delete(&p);
	return L.errors ? -1 : 0;
}

int gb_yaml_load_file(const char *path, const gb_yaml_opts *opts,
                      gb_ydocs *out, gb_diags *d)
{
	char *buf;
	size_t len;
	size_t max = opts && opts->max_bytes ? opts->max_bytes : DEF_MAX_BYTES;
	int rc;
	out->docs = NULL;
	out->n = 0;
	if (gb_read_file(path, max, &buf, &len) != 0) {
		if (errno == EFBIG)
			gb_diag_add(d, path, 0, 0, "",
			            "file is larger than the limit of %zu bytes",
			            max);
		else
			gb_diag_add(d, path, 0, 0, "", "cannot read: %s",
			            strerror(errno));
		return -1;
	}
	rc = gb_yaml_load(path, buf, len, opts, out, d);
	free(buf);
	return rc;
}

const gb_ynode *gb_ymap_get(const gb_ynode *map, const char *key)
{
	if (!map || map->kind != GB_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->str, key) == 0)
			return map->items[i];
	return NULL;
}

static int looks_number(const char *s)
{
	double v;
	return gb_parse_double(s, &v) == 0;
}

const char *gb_ydescribe(const gb_ynode *n, char *buf, size_t cap)
{
	char t[80];
	if (!n)
		snprintf(buf, cap, "nothing");
	else if (n->kind == GB_Y_MAP)
		snprintf(buf, cap, "a mapping");
	else if (n->kind == GB_Y_SEQ)
		snprintf(buf, cap, "a list");
	else if (n->is_null)
		snprintf(buf, cap, "an empty value");
	else if (!n->quoted && looks_number(n->str))
		snprintf(buf, cap, "the number %s", shown(n->str, t, sizeof(t)));
	else if (!n->quoted &&
	         (strcmp(n->str, "true") == 0 || strcmp(n->str, "false") == 0))
		snprintf(buf, cap, "the boolean %s", n->str);
	else
		snprintf(buf, cap, "the string \"%s\"",
		         shown(n->str, t, sizeof(t)));
	return buf;
}

char *gb_ypath_key(const char *parent, const char *key)
{
	if (!parent || !*parent)
		return gb_xstrdup(key);
	return gb_xasprintf("%s.%s", parent, key);
}

char *gb_ypath_idx(const char *parent, size_t idx)
{
	return gb_xasprintf("%s[%zu]", parent ? parent : "", idx);
}

void gb_ydec_err(gb_ydec *c, const gb_ynode *n, const char *path,
                 const char *fmt, ...)
{
	va_list ap;
	char *msg;
	va_start(ap, fmt);
	msg = gb_xvasprintf(fmt, ap);
	va_end(ap);
	gb_diag_add(c->d, c->file, n ? n->line : 0, n ? n->col : 0, path, "%s",
	            msg);
	free(msg);
}

int gb_ydec_map(gb_ydec *c, const gb_ynode *n, const char *path,
                const char *const *allowed)
{
	char what[128];
	int rc = 0;
	if (n && n->invalid)
		return -1;
	if (!n || n->kind != GB_Y_MAP) {
		gb_ydec_err(c, n, path, "expected a mapping (key: value), found %s",
		            gb_ydescribe(n, what, sizeof(what)));
		return -1;
	}
	if (!allowed)
		return 0;
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i]->str;
		char t[80];
		int ok = 0;
		if (n->keys[i]->invalid) {
			rc = -1;
			continue;
		}
		for (size_t j = 0; allowed[j]; j++)
			if (strcmp(allowed[j], k) == 0)
				ok = 1;
		if (!ok) {
			const char *near = gb_nearest(k, allowed);
			char *kp = gb_ypath_key(path, shown(k, t, sizeof(t)));
			gb_buf list = GB_BUF_INIT;
			for (size_t j = 0; allowed[j]; j++) {
				if (j)
					gb_buf_puts(&list, ", ");
				gb_buf_puts(&list, allowed[j]);
			}
			if (near)
				gb_ydec_err(c, n->keys[i], kp,
				            "unknown key \"%s\"; did you mean "
				            "\"%s\"?", shown(k, t, sizeof(t)), near);
			else
				gb_ydec_err(c, n->keys[i], kp,
				            "unknown key \"%s\"; valid keys here: %s",
				            shown(k, t, sizeof(t)), gb_buf_str(&list));
			gb_buf_free(&list);
			free(kp);
			rc = -1;
		}
	}
	return rc;
}

int gb_ydec_str(gb_ydec *c, const gb_ynode *n, const char *path, char **out)
{
	char what[128];
	if (n && n->invalid)
		return -1;
	if (!n || n->kind != GB_Y_SCALAR || n->is_null) {
		gb_ydec_err(c, n, path, "expected a string, found %s",
		            gb_ydescribe(n, what, sizeof(what)));
		return -1;
	}
	*out = gb_xstrdup(n->str);
	return 0;
}

int gb_ydec_int(gb_ydec *c, const gb_ynode *n, const char *path,
                int64_t min, int64_t max, int64_t *out)
{
	char what[128];
	int64_t v;
	if (n && n->invalid)
		return -1;
	if (!n || n->kind != GB_Y_SCALAR || n->is_null ||
	    gb_parse_int64(n->str, &v) != 0) {
		const char *hint = "";
		int digits = 0;
		if (n && n->kind == GB_Y_SCALAR && !n->is_null) {
			/* all digits (but perhaps too big to parse) */
			size_t i = (n->str[0] == '-' || n->str[0] == '+');
			digits = n->str[i] != '\0';
			for (; n->str[i]; i++)
				if (!isdigit((unsigned char)n->str[i]))
					digits = 0;
		}
		if (n && n->kind == GB_Y_SCALAR && n->quoted &&
		    gb_parse_int64(n->str, &v) == 0)
			hint = " (remove the quotes)";
		else if (digits)
			hint = " (the number is too large)";
		else if (n && n->kind == GB_Y_SCALAR && !n->is_null &&
		         !n->quoted && looks_number(n->str))
			hint = " (a whole number is needed)";
		gb_ydec_err(c, n, path,
		            "expected an integer from %lld to %lld, found %s%s",
		            (long long)min, (long long)max,
		            gb_ydescribe(n, what, sizeof(what)), hint);
		return -1;
	}
	if (n->quoted) {
		gb_ydec_err(c, n, path,
		            "expected an integer, found the string \"%s\" "
		            "(remove the quotes)", n->str);
		return -1;
	}
	if (v < min || v > max) {
		gb_ydec_err(c, n, path,
		            "expected an integer from %lld to %lld, found %lld",
		            (long long)min, (long long)max, (long long)v);
		return -1;
	}
	*out = v;
	return 0;
}

int gb_ydec_num(gb_ydec *c, const gb_ynode *n, const char *path,
                double min, double max, double *out)
{
	char what[128];
	double v;
	if (n && n->invalid)
		return -1;
	if (!n || n->kind != GB_Y_SCALAR || n->is_null || n->quoted ||
	    gb_parse_double(n->str, &v) != 0 || !isfinite(v)) {
		gb_ydec_err(c, n, path, "expected a number from %g to %g, found %s%s",
		            min, max, gb_ydescribe(n, what, sizeof(what)),
		            n && n->quoted && looks_number(n->str)
		                    ? " (remove the quotes)"
		                    : "");
		return -1;
	}
	if (v < min || v > max) {
		gb_ydec_err(c, n, path, "expected a number from %g to %g, found %s",
		            min, max, n->str);
		return -1;
	}
	*out = v;
	return 0;
}

int gb_ydec_bool(gb_ydec *c, const gb_ynode *n, const char *path, int *out)
{
	char what[128];
	if (n && n->invalid)
		return -1;
	if (n && n->kind == GB_Y_SCALAR && !n->quoted) {
		if (strcmp(n->str, "true") == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(n->str, "false") == 0) {
			*out = 0;
			return 0;
		}
	}
	gb_ydec_err(c, n, path, "expected true or false, found %s",
	            gb_ydescribe(n, what, sizeof(what)));
	return -1;
}

int gb_ydec_duration(gb_ydec *c, const gb_ynode *n, const char *path,
                     int64_t *out)
{
	char what[128];
	if (n && n->invalid)
		return -1;
	if (!n || n->kind != GB_Y_SCALAR || n->is_null ||
	    gb_parse_duration(n->str, out) != 0) {
		const char *hint = "";
		if (n && n->kind == GB_Y_SCALAR && !n->is_null) {
			size_t l = strlen(n->str);
			if (n->str[0] == '-')
				hint = " (durations cannot be negative)";
			else if (strchr(n->str, ' '))
				hint = " (write it without spaces, e.g. 6h)";
			else if (l > 1 && isdigit((unsigned char)n->str[0]) &&
			         isdigit((unsigned char)n->str[l - 1]) &&
			         strpbrk(n->str, "smhdw"))
				hint = " (give every number a unit, e.g. "
				       "1h30m)";
			else if (strchr(n->str, '.'))
				hint = " (use whole numbers, e.g. 90m "
				       "instead of 1.5h)";
		}
		gb_ydec_err(c, n, path,
		            "expected a duration such as 90s, 30m, 6h, 2d or "
		            "1h30m (at most 100 years), found %s%s",
		            gb_ydescribe(n, what, sizeof(what)), hint);
		return -1;
	}
	return 0;
}

int gb_ydec_strlist(gb_ydec *c, const gb_ynode *n, const char *path,
                    gb_strv *out)
{
	char what[128];
	int rc = 0;
	if (n && n->invalid)
		return -1;
	if (n && n->kind == GB_Y_SCALAR && !n->is_null) {
		gb_strv_push(out, n->str);
		return 0;
	}
	if (!n || n->kind != GB_Y_SEQ) {
		gb_ydec_err(c, n, path, "expected a list of strings, found %s",
		            gb_ydescribe(n, what, sizeof(what)));
		return -1;
	}
	for (size_t i = 0; i < n->n; i++) {
		const gb_ynode *it = n->items[i];
		if (it->invalid) {
			rc = -1;
			continue;
		}
		if (it->kind != GB_Y_SCALAR || it->is_null) {
			char *ip = gb_ypath_idx(path, i);
			gb_ydec_err(c, it, ip, "expected a string, found %s",
			            gb_ydescribe(it, what, sizeof(what)));
			free(ip);
			rc = -1;
			continue;
		}
		gb_strv_push(out, it->str);
	}
	return rc;
}

int gb_ydec_strmap(gb_ydec *c, const gb_ynode *n, const char *path,
                   gb_kvs *out)
{
	char what[128];
	int rc = 0;
	if (gb_ydec_map(c, n, path, NULL) != 0)
		return -1;
	for (size_t i = 0; i < n->n; i++) {
		const gb_ynode *v = n->items[i];
		if (v->invalid || n->keys[i]->invalid) {
			rc = -1;
			continue;
		}
		if (v->kind != GB_Y_SCALAR || v->is_null) {
			char t[80];
			char *kp = gb_ypath_key(path, shown(n->keys[i]->str, t,
			                                    sizeof(t)));
			gb_ydec_err(c, v, kp, "expected a string value, found %s",
			            gb_ydescribe(v, what, sizeof(what)));
			free(kp);
			rc = -1;
			continue;
		}
		gb_kvs_set(out, n->keys[i]->str, v->str);
	}
	return rc;
}

int gb_ydec_enum(gb_ydec *c, const gb_ynode *n, const char *path,
                 const char *const *values, int *out)
{
	char what[128];
	gb_buf list = GB_BUF_INIT;
	const char *near = NULL;
	if (n && n->invalid)
		return -1;
	if (n && n->kind == GB_Y_SCALAR && !n->is_null) {
		for (int i = 0; values[i]; i++) {
			if (strcmp(values[i], n->str) == 0) {
				*out = i;
				return 0;
			}
		}
		near = gb_nearest(n->str, values);
	}
	for (size_t j = 0; values[j]; j++) {
		if (j)
			gb_buf_puts(&list, values[j + 1] ? ", " : " or ");
		gb_buf_puts(&list, values[j]);
	}
	if (near)
		gb_ydec_err(c, n, path, "expected %s, found %s; did you mean \"%s\"?",
		            gb_buf_str(&list), gb_ydescribe(n, what, sizeof(what)),
		            near);
	else
		gb_ydec_err(c, n, path, "expected %s, found %s", gb_buf_str(&list),
		            gb_ydescribe(n, what, sizeof(what)));
	gb_buf_free(&list);
	return -1;
}
