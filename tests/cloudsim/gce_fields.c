/*
 * gce_fields.c -- the `fields` system parameter (partial responses) of
 * Google APIs, for Compute Engine's instances.list, aggregatedList and get.
 *
 * Syntax (https://cloud.google.com/compute/docs/api/how-tos/performance
 * #partial-response): a comma-separated list of selections; `a/b` selects
 * b inside a; `a(b,c)` selects b and c inside a (sub-selections nest);
 * `*` selects every member (the scopes of an aggregatedList's `items`
 * map, for one).  A selection applied to an array applies
 * to each of its elements.  A member that is not there is simply absent
 * from the answer.  Malformed selections (empty names, unbalanced
 * parentheses, stray characters) are refused with 400.
 */
#include <stdlib.h>
#include <string.h>

#include "gce.h"

typedef struct fnode {
	char *name;          /* member name or "*" */
	int whole;           /* selected entirely (no sub-selection) */
	struct fnode *kids;
	size_t nkids;
} fnode;

static void fnode_free(fnode *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		fnode_free(&n->kids[i]);
	free(n->kids);
	free(n->name);
}

/* The child of `n` named name[0..len), added when missing. Borrowed. */
static fnode *child(fnode *n, const char *name, size_t len)
{
	for (size_t i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i].name) == len &&
		    memcmp(n->kids[i].name, name, len) == 0)
			return &n->kids[i];
	n->kids = gb_xrealloc(n->kids, (n->nkids + 1) * sizeof(fnode));
	memset(&n->kids[n->nkids], 0, sizeof(fnode));
	n->kids[n->nkids].name = gb_xstrndup(name, len);
	return &n->kids[n->nkids++];
}

static int name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '*';
}

static int parse_list(const char **p, fnode *into, int depth);

/* One selection: name ('/' name)* ['(' list ')'], merged into `into`. */
static int parse_sel(const char **p, fnode *into, int depth)
{
	fnode *n = into;
	for (;;) {
		const char *s = *p;
		while (name_char(**p))
			(*p)++;
		if (*p == s)
			return -1;
		if (memchr(s, '*', (size_t)(*p - s)) && *p - s != 1)
			return -1; /* '*' stands alone */
		n = child(n, s, (size_t)(*p - s));
		if (**p != '/')
			break;
		(*p)++;
	}
	if (**p == '(') {
		(*p)++;
		if (parse_list(p, n, depth + 1) != 0 || **p != ')')
			return -1;
		(*p)++;
		return 0;
	}
	n->whole = 1;
	return 0;
}

static int parse_list(const char **p, fnode *into, int depth)
{
	if (depth > 16)
		return -1;
	for (;;) {
		if (parse_sel(p, into, depth) != 0)
			return -1;
		if (**p != ',')
			return 0;
		(*p)++;
	}
}

static json_t *select_in(const json_t *v, const fnode *n);

/* v selected by the member node k (whole, or its sub-selection); new
 * reference or NULL when nothing of it is selected. */
static json_t *pick(const json_t *v, const fnode *k)
{
	if (k->whole)
		return json_incref((json_t *)v);
	return select_in(v, k);
}

/* The members of object/array v that n's children select; NULL when v is
 * a scalar (a sub-selection of a scalar selects nothing). */
static json_t *select_in(const json_t *v, const fnode *n)
{
	json_t *out, *x;
	if (json_is_array(v)) {
		size_t i;
		const json_t *e;
		out = json_array();
		json_array_foreach(v, i, e) {
			if ((x = select_in(e, n)))
				json_array_append_new(out, x);
		}
		return out;
	}
	if (!json_is_object(v))
		return NULL;
	out = json_object();
	for (size_t i = 0; i < n->nkids; i++) {
		const fnode *k = &n->kids[i];
		if (strcmp(k->name, "*") == 0) {
			const char *key;
			const json_t *m;
			json_object_foreach((json_t *)v, key, m) {
				if (!(x = pick(m, k)))
					continue;
				if (json_is_object(x) && json_object_size(x) == 0)
					json_decref(x);
				else
					json_object_set_new(out, key, x);
			}
			continue;
		}
		x = json_object_get(v, k->name);
		if (x && (x = pick(x, k))) {
			if (json_is_object(x) && json_object_size(x) == 0 &&
			    !k->whole)
				json_decref(x);
			else
				json_object_set_new(out, k->name, x);
		}
	}
	return out;
}

void gce_reply(gce_ctx *c, json_t *obj)
{
	const char *f = sim_req_qarg(c->req, "fields");
	const char *p = f;
	fnode root;
	json_t *sel;

	if (!f || !*f) {
		sim_resp_json(c->resp, 200, obj);
		return;
	}
	memset(&root, 0, sizeof(root));
	if (parse_list(&p, &root, 0) != 0 || *p) {
		fnode_free(&root);
		json_decref(obj);
		gce_error(c, 400, "invalidParameter", "global",
		          "Invalid field selection %s", f);
		return;
	}
	sel = select_in(obj, &root);
	fnode_free(&root);
	json_decref(obj);
	sim_resp_json(c->resp, 200, sel ? sel : json_object());
}
