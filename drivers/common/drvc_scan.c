/* drvc_scan.c -- see drvc_scan.h: member paths over yajl's callbacks. */
#include "drvc_scan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "drvc_enc.h"
#include "drvc_http.h"
#include "drvc_mem.h"
#include "drvc_util.h"

#define MAX_SEGS 16
#define ELEM_BIT (1ull << 63)

enum { SEG_KEY, SEG_ANY_KEY, SEG_ANY_IDX, SEG_IDX };

typedef struct seg {
	int kind;
	const char *name; /* SEG_KEY: borrowed from the spec */
	size_t len;
	size_t idx;       /* SEG_IDX */
} seg;

typedef struct cpath {
	seg s[MAX_SEGS];
	int n;
	int last_any;     /* the last "*" or "[]" segment, -1 when none */
	int multi;        /* may match many values in one element */
} cpath;

typedef struct frame {
	int is_array;
	size_t index;     /* the next element's index (arrays) */
	uint64_t mask;    /* paths matched up to this container */
	uint64_t vmask;   /* maps: paths matched by the current key */
	drvc_buf key;     /* the current key when a "*" matched it */
	int is_elem;      /* this object is an element */
} frame;

typedef struct entry {
	int path;
	char type;         /* DRVC_SCAN_STRING ... */
	size_t koff, voff; /* offsets in vals (koff == SIZE_MAX: no key) */
} entry;

struct drvc_scan_elem {
	drvc_scan *s;
};

struct drvc_scan {
	const drvc_scan_spec *spec;
	drvc_scan_cb cb;
	void *ud;
	cpath paths[DRVC_SCAN_MAX_MEMBERS]; /* members, then tops */
	size_t npaths;
	cpath elem;
	yajl_handle h;
	frame frames[DRVC_SCAN_MAX_DEPTH];
	int depth;          /* frames in use */
	int in_elem;        /* depth of the element's frame, -1 outside */
	int seen_root;
	size_t fed;
	drvc_buf vals;      /* the current element's values and keys */
	entry *ents;
	size_t nents, capents;
	uint64_t seen;      /* members with a value in this element */
	drvc_buf ekey;      /* the key an element path's "*" matched */
	gb_kv *kv[DRVC_SCAN_MAX_MEMBERS];
	size_t capkv[DRVC_SCAN_MAX_MEMBERS];
	drvc_buf tvals;     /* tops' values */
	size_t toff[DRVC_SCAN_MAX_MEMBERS]; /* SIZE_MAX: absent */
	char ttype[DRVC_SCAN_MAX_MEMBERS];
	int stopped, failed;
	char why[160];      /* our own failure, when failed */
	const char *code;
};

static int compile(const char *p, cpath *out)
{
	memset(out, 0, sizeof(*out));
	out->last_any = -1;
	while (*p) {
		seg *sg;
		if (out->n >= MAX_SEGS)
			return -1;
		sg = &out->s[out->n];
		if (*p == '[') {
			if (p[1] == ']') {
				sg->kind = SEG_ANY_IDX;
				out->last_any = out->n;
				p += 2;
			} else {
				char *end;
				unsigned long v = strtoul(p + 1, &end, 10);
				if (end == p + 1 || *end != ']')
					return -1;
				sg->kind = SEG_IDX;
				sg->idx = v;
				p = end + 1;
			}
		} else {
			size_t n = strcspn(p, ".[");
			if (n == 0)
				return -1;
			if (n == 1 && *p == '*') {
				sg->kind = SEG_ANY_KEY;
			} else {
				sg->kind = SEG_KEY;
				sg->name = p;
				sg->len = n;
			}
			p += n;
		}
		if (sg->kind == SEG_ANY_KEY)
			out->last_any = out->n;
		out->n++;
		if (*p == '.') {
			p++;
			if (!*p || *p == '.')
				return -1;
		}
	}
	return 0;
}

static int seg_key_ok(const seg *sg, const char *k, size_t n)
{
	return sg->kind == SEG_ANY_KEY ||
	       (sg->kind == SEG_KEY && sg->len == n && memcmp(sg->name, k, n) == 0);
}

static int seg_idx_ok(const seg *sg, size_t i)
{
	return sg->kind == SEG_ANY_IDX || (sg->kind == SEG_IDX && sg->idx == i);
}

static int fail(drvc_scan *s, const char *code, const char *why)
{
	s->failed = 1;
	s->code = code;
	snprintf(s->why, sizeof(s->why), "%s", why);
	return 0; /* yajl: cancel */
}

/* The mask of the value about to start at seg index d (inside frame d-1's
 * container); for arrays the index advances. */
static uint64_t value_mask(drvc_scan *s)
{
	frame *f;
	uint64_t m, out = 0;
	int d = s->depth - 1;
	size_t idx;
	if (d < 0)
		return 0;
	f = &s->frames[d];
	if (!f->is_array)
		return f->vmask;
	idx = f->index++;
	m = f->mask;
	for (size_t i = 0; i < s->npaths && m; i++) {
		uint64_t b = 1ull << i;
		if ((m & b) && s->paths[i].n > d &&
		    seg_idx_ok(&s->paths[i].s[d], idx))
			out |= b;
	}
	if ((m & ELEM_BIT) && s->elem.n > d && seg_idx_ok(&s->elem.s[d], idx))
		out |= ELEM_BIT;
	return out;
}

static void add_entry(drvc_scan *s, int path, char type, size_t koff,
                      size_t voff)
{
	if (s->nents == s->capents) {
		s->capents = s->capents ? s->capents * 2 : 16;
		s->ents = drvc_xrealloc(s->ents, s->capents * sizeof(*s->ents));
	}
	s->ents[s->nents].path = path;
	s->ents[s->nents].type = type;
	s->ents[s->nents].koff = koff;
	s->ents[s->nents].voff = voff;
	s->nents++;
}

static size_t add_str(drvc_buf *b, const char *v, size_t n)
{
	size_t off = b->len;
	drvc_buf_add(b, v, n);
	drvc_buf_add(b, "", 1);
	return off;
}

/* Keeps value v (n bytes) for the paths of mask m that end at segment
 * count d. */
static int capture(drvc_scan *s, uint64_t m, int d, char type, const char *v,
                   size_t n)
{
	for (size_t i = 0; i < s->npaths && m; i++) {
		const cpath *p = &s->paths[i];
		if (!(m & (1ull << i)) || p->n != d)
			continue;
		if (i < s->spec->nmembers) {
			size_t koff = SIZE_MAX, voff;
			if (s->in_elem < 0)
				continue;
			/* one value for a single member: its first */
			if (!p->multi && (s->seen & (1ull << i)))
				continue;
			s->seen |= 1ull << i;
			if (p->last_any >= 0 &&
			    p->s[p->last_any].kind == SEG_ANY_KEY) {
				const drvc_buf *kb =
					&s->frames[p->last_any].key;
				koff = add_str(&s->vals, kb->data ? kb->data : "",
				               kb->len);
			} else if (p->last_any >= 0) {
				char ix[24];
				int w = snprintf(ix, sizeof(ix), "%zu",
				                 s->frames[p->last_any].index - 1);
				koff = add_str(&s->vals, ix, (size_t)w);
			}
			voff = add_str(&s->vals, v, n);
			add_entry(s, (int)i, type, koff, voff);
		} else {
			size_t t = i - s->spec->nmembers;
			if (s->toff[t] == SIZE_MAX) {
				s->toff[t] = add_str(&s->tvals, v, n);
				s->ttype[t] = type;
			}
		}
	}
	if (s->vals.oom || s->tvals.oom)
		return fail(s, "ResponseTooLarge", "out of memory");
	return 1;
}

/* A scalar (text v, n bytes) at the current position. */
static int scalar(drvc_scan *s, char type, const char *v, size_t n)
{
	uint64_t m;
	if (!s->seen_root)
		return fail(s, "MalformedResponse", "expected a JSON object");
	m = value_mask(s);
	return m ? capture(s, m, s->depth, type, v, n) : 1;
}

static int on_null(void *ud)
{
	drvc_scan *s = ud;
	if (!s->seen_root)
		return fail(s, "MalformedResponse", "expected a JSON object");
	(void)value_mask(s);
	return 1;
}

static int on_bool(void *ud, int v)
{
	return scalar(ud, v ? DRVC_SCAN_TRUE : DRVC_SCAN_FALSE,
	              v ? "true" : "false", v ? 4 : 5);
}

static int on_number(void *ud, const char *v, size_t n)
{
	return scalar(ud, DRVC_SCAN_NUMBER, v, n);
}

static int on_string(void *ud, const unsigned char *v, size_t n)
{
	return scalar(ud, DRVC_SCAN_STRING, (const char *)v, n);
}

static int push(drvc_scan *s, int is_array)
{
	uint64_t m;
	frame *f;
	int d = s->depth;
	if (!s->seen_root) {
		if (is_array)
			return fail(s, "MalformedResponse",
			            "expected a JSON object");
		s->seen_root = 1;
		m = ELEM_BIT;
		for (size_t i = 0; i < s->npaths; i++)
			m |= 1ull << i;
	} else {
		m = value_mask(s);
	}
	if (d >= DRVC_SCAN_MAX_DEPTH)
		return fail(s, "MalformedResponse",
		            "nested deeper than the scanner's limit");
	f = &s->frames[d];
	f->is_array = is_array;
	f->index = 0;
	f->vmask = 0;
	f->key.len = 0;
	f->is_elem = 0;
	if ((m & ELEM_BIT) && s->elem.n == d && !is_array && s->in_elem < 0) {
		s->in_elem = d; /* this object is an element: it starts here */
		s->vals.len = 0;
		s->nents = 0;
		s->seen = 0;
	}
	/* paths ending here name a container as a whole: "{" or "[" */
	if (d > 0 && !capture(s, m, d, is_array ? DRVC_SCAN_ARRAY : DRVC_SCAN_OBJECT,
	                      is_array ? "[" : "{", 1))
		return 0;
	for (size_t i = 0; i < s->npaths; i++)
		if (s->paths[i].n <= d)
			m &= ~(1ull << i);
	if ((m & ELEM_BIT) && s->elem.n == d) {
		m &= ~ELEM_BIT;
		f->is_elem = s->in_elem == d;
	}
	f->mask = m;
	s->depth++;
	return 1;
}

static int on_start_map(void *ud)
{
	return push(ud, 0);
}

static int on_start_array(void *ud)
{
	return push(ud, 1);
}

static int on_key(void *ud, const unsigned char *k, size_t n)
{
	drvc_scan *s = ud;
	frame *f = &s->frames[s->depth - 1];
	int d = s->depth - 1;
	uint64_t m = f->mask, out = 0;
	int any = 0;
	for (size_t i = 0; i < s->npaths && m; i++) {
		uint64_t b = 1ull << i;
		if ((m & b) && seg_key_ok(&s->paths[i].s[d], (const char *)k, n)) {
			out |= b;
			any |= s->paths[i].s[d].kind == SEG_ANY_KEY;
		}
	}
	if ((m & ELEM_BIT) && seg_key_ok(&s->elem.s[d], (const char *)k, n)) {
		out |= ELEM_BIT;
		if (s->elem.s[d].kind == SEG_ANY_KEY) {
			s->ekey.len = 0;
			drvc_buf_add(&s->ekey, k, n);
			drvc_buf_add(&s->ekey, "", 1);
			s->ekey.len = n;
		}
	}
	f->vmask = out;
	if (any) {
		f->key.len = 0;
		drvc_buf_add(&f->key, k, n);
		drvc_buf_add(&f->key, "", 1);
		f->key.len = n;
	}
	if (f->key.oom || s->ekey.oom)
		return fail(s, "ResponseTooLarge", "out of memory");
	return 1;
}

static int pop(drvc_scan *s)
{
	frame *f = &s->frames[--s->depth];
	if (f->is_elem) {
		drvc_scan_elem e = { s };
		s->in_elem = -1;
		if (s->cb(s->ud, &e)) {
			s->stopped = 1;
			return 0;
		}
	}
	return 1;
}

static int on_end_map(void *ud)
{
	return pop(ud);
}

static int on_end_array(void *ud)
{
	return pop(ud);
}

static const yajl_callbacks callbacks = {
	on_null, on_bool, NULL, NULL, on_number, on_string,
	on_start_map, on_key, on_end_map, on_start_array, on_end_array,
};

drvc_scan *drvc_scan_new(const drvc_scan_spec *spec, drvc_scan_cb cb,
                         void *ud)
{
	drvc_scan *s;
	size_t n = spec->nmembers + spec->ntops;
	if (n > DRVC_SCAN_MAX_MEMBERS || !spec->element || !cb)
		return NULL;
	s = drvc_xcalloc(1, sizeof(*s));
	s->spec = spec;
	s->cb = cb;
	s->ud = ud;
	s->in_elem = -1;
	if (compile(spec->element, &s->elem) != 0)
		goto bad;
	for (size_t i = 0; i < spec->nmembers; i++) {
		cpath rel;
		cpath *p = &s->paths[i];
		if (compile(spec->members[i], &rel) != 0 ||
		    s->elem.n + rel.n > MAX_SEGS || rel.n == 0)
			goto bad;
		*p = s->elem;
		memcpy(p->s + p->n, rel.s, (size_t)rel.n * sizeof(seg));
		/* the key comes from the member's own wildcards only */
		p->last_any = rel.last_any >= 0 ? p->n + rel.last_any : -1;
		for (int k = 0; k < rel.n; k++)
			p->multi |= rel.s[k].kind == SEG_ANY_KEY ||
			            rel.s[k].kind == SEG_ANY_IDX;
		p->n += rel.n;
	}
	for (size_t i = 0; i < spec->ntops; i++) {
		if (compile(spec->tops[i], &s->paths[spec->nmembers + i]) != 0 ||
		    s->paths[spec->nmembers + i].n == 0)
			goto bad;
		s->toff[i] = SIZE_MAX;
	}
	s->npaths = n;
	s->h = yajl_alloc(&callbacks, NULL, s);
	if (!s->h)
		abort(); /* allocation failure (HACKING.md) */
	return s;
bad:
	free(s);
	return NULL;
}

void drvc_scan_free(drvc_scan *s)
{
	if (!s)
		return;
	if (s->h)
		yajl_free(s->h);
	for (int i = 0; i < DRVC_SCAN_MAX_DEPTH; i++)
		drvc_buf_free(&s->frames[i].key);
	for (size_t i = 0; i < DRVC_SCAN_MAX_MEMBERS; i++)
		free(s->kv[i]);
	drvc_buf_free(&s->vals);
	drvc_buf_free(&s->tvals);
	drvc_buf_free(&s->ekey);
	free(s->ents);
	free(s);
}

/* After yajl refused: the error in err; -1 (or 1 when the callback
 * stopped). */
static int refused(drvc_scan *s, yajl_status st, gb_error *err)
{
	const char *what = s->spec->what ? s->spec->what : "JSON answer";
	if (s->stopped)
		return 1;
	if (!s->failed) {
		unsigned char *m = yajl_get_error(s->h, 0, NULL, 0);
		char clean[128];
		drvc_clean_text(clean, sizeof(clean), m ? (const char *)m : "?",
		                sizeof(clean) - 1);
		clean[strcspn(clean, "\n")] = '\0';
		if (m)
			yajl_free_error(s->h, m);
		s->failed = 1;
		s->code = "MalformedResponse";
		snprintf(s->why, sizeof(s->why), "%s", clean);
	}
	(void)st;
	drvc_err(err, GB_ERR_INVALID, 0, s->code,
	         "%s: not valid JSON near byte %zu: %s", what, s->fed, s->why);
	return -1;
}

int drvc_scan_feed(drvc_scan *s, const char *data, size_t len,
                   gb_error *err)
{
	yajl_status st;
	if (s->stopped)
		return 1;
	if (s->failed)
		return refused(s, yajl_status_error, err);
	if (s->spec->max_bytes && len > s->spec->max_bytes - s->fed) {
		drvc_err(err, GB_ERR_INVALID, 0, "ResponseTooLarge",
		         "%s: the body is more than the %zu bytes accepted",
		         s->spec->what ? s->spec->what : "JSON answer",
		         s->spec->max_bytes);
		s->failed = 1;
		s->code = "ResponseTooLarge";
		snprintf(s->why, sizeof(s->why), "too large");
		return -1;
	}
	st = yajl_parse(s->h, (const unsigned char *)data, len);
	s->fed += len;
	if (st != yajl_status_ok)
		return refused(s, st, err);
	return 0;
}

int drvc_scan_end(drvc_scan *s, gb_error *err)
{
	yajl_status st;
	if (s->stopped)
		return 1;
	if (s->failed)
		return refused(s, yajl_status_error, err);
	if (s->fed == 0) {
		drvc_err(err, GB_ERR_TRANSIENT, 0, "EmptyResponse",
		         "%s: the body is empty",
		         s->spec->what ? s->spec->what : "JSON answer");
		return -1;
	}
	st = yajl_complete_parse(s->h);
	if (st != yajl_status_ok)
		return refused(s, st, err);
	return 0;
}

int drvc_scan_run(drvc_scan *s, const char *body, size_t len, gb_error *err)
{
	int rc = len ? drvc_scan_feed(s, body, len, err) : 0;
	return rc == 0 ? drvc_scan_end(s, err) : rc;
}

int drvc_scan_buf(const drvc_scan_spec *spec, const char *body, size_t len,
                  drvc_scan_cb cb, void *ud, gb_error *err)
{
	drvc_scan *s = drvc_scan_new(spec, cb, ud);
	int rc;
	if (!s) {
		drvc_err(err, GB_ERR_INTERNAL, 0, "BadScanSpec",
		         "%s: the driver's member paths are malformed",
		         spec->what ? spec->what : "JSON answer");
		return -1;
	}
	rc = drvc_scan_run(s, body, len, err);
	drvc_scan_free(s);
	return rc;
}

/* The first value of member i, or NULL. */
static const entry *first(const drvc_scan_elem *e, size_t i)
{
	const drvc_scan *s = e->s;
	for (size_t k = 0; k < s->nents; k++)
		if (s->ents[k].path == (int)i)
			return &s->ents[k];
	return NULL;
}

char drvc_scan_kind(const drvc_scan_elem *e, size_t i)
{
	const entry *en = first(e, i);
	return en ? en->type : 0;
}

const char *drvc_scan_str(const drvc_scan_elem *e, size_t i)
{
	const entry *en = first(e, i);
	return en && en->type == DRVC_SCAN_STRING ? e->s->vals.data + en->voff
	                                          : NULL;
}

const char *drvc_scan_num(const drvc_scan_elem *e, size_t i)
{
	const entry *en = first(e, i);
	return en && (en->type == DRVC_SCAN_STRING ||
	              en->type == DRVC_SCAN_NUMBER)
	               ? e->s->vals.data + en->voff
	               : NULL;
}

int drvc_scan_true(const drvc_scan_elem *e, size_t i)
{
	return drvc_scan_kind(e, i) == DRVC_SCAN_TRUE;
}

const gb_kv *drvc_scan_kv(const drvc_scan_elem *e, size_t i, size_t *n)
{
	drvc_scan *s = e->s;
	size_t c = 0;
	*n = 0;
	if (i >= s->spec->nmembers)
		return NULL;
	for (size_t k = 0; k < s->nents; k++)
		c += s->ents[k].path == (int)i &&
		     s->ents[k].type == DRVC_SCAN_STRING;
	if (!c)
		return NULL;
	if (s->capkv[i] < c + 1) {
		s->capkv[i] = (c + 1) * 2;
		s->kv[i] = drvc_xrealloc(s->kv[i], s->capkv[i] * sizeof(gb_kv));
	}
	c = 0;
	for (size_t k = 0; k < s->nents; k++) {
		const entry *en = &s->ents[k];
		if (en->path != (int)i || en->type != DRVC_SCAN_STRING)
			continue;
		s->kv[i][c].key = en->koff == SIZE_MAX ? ""
		                                       : s->vals.data + en->koff;
		s->kv[i][c].value = s->vals.data + en->voff;
		c++;
	}
	memset(&s->kv[i][c], 0, sizeof(gb_kv));
	*n = c;
	return s->kv[i];
}

const char *drvc_scan_elem_key(const drvc_scan_elem *e)
{
	return e->s->ekey.data ? e->s->ekey.data : "";
}

const char *drvc_scan_top(const drvc_scan *s, size_t i)
{
	if (i >= s->spec->ntops || s->toff[i] == SIZE_MAX ||
	    s->ttype[i] != DRVC_SCAN_STRING)
		return NULL;
	return s->tvals.data + s->toff[i];
}

char drvc_scan_top_kind(const drvc_scan *s, size_t i)
{
	if (i >= s->spec->ntops || s->toff[i] == SIZE_MAX)
		return 0;
	return s->ttype[i];
}
