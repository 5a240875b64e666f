/*
 * yamldoc.h -- YAML (libyaml) to a small node tree that remembers where
 * every node came from, with abuse limits, and typed decoders that report
 * located errors ("file:3:9: error: pool.gpu.count: expected an integer
 * from 1 to 64, found the string \"eight\"").
 *
 * Used by every input file of gpubroker: pool specs, the broker config,
 * the on-prem inventory and cloudsim scenarios.
 */
#ifndef GB_YAMLDOC_H
#define GB_YAMLDOC_H

#include <stdint.h>

#include "diag.h"

typedef enum gb_ykind { GB_Y_SCALAR, GB_Y_SEQ, GB_Y_MAP } gb_ykind;

typedef struct gb_ynode gb_ynode;
struct gb_ynode {
	gb_ykind kind;
	int line, col;    /* 1-based position of the node's start */
	/* scalars */
	char *str;        /* text after ${VAR} expansion; "" for empty */
	size_t len;
	int quoted;       /* written quoted or as a block scalar */
	int is_null;      /* plain "", "~", "null" */
	int invalid;      /* an error was already reported for this node
	                     (e.g. an unset ${VAR}); decoders fail on it
	                     silently so one mistake gives one message */
	/* sequences: items[0..n); mappings: keys[i] -> items[i] */
	size_t n;
	gb_ynode **items;
	gb_ynode **keys;  /* mappings only; keys are scalars */
	size_t cap;       /* allocated length of items (and keys) */
};

typedef struct gb_yaml_opts {
	size_t max_bytes;   /* whole input; 0 = 1 MiB */
	int max_depth;      /* nesting; 0 = 32 */
	size_t max_nodes;   /* 0 = 100000 */
	size_t max_scalar;  /* bytes of one scalar; 0 = 256 KiB */
	int expand_env;     /* expand ${VAR} and ${VAR:-default}; $${ is a
	                       literal ${ */
	/* Environment lookup for expansion; NULL = getenv. */
	const char *(*getenv_fn)(void *ud, const char *name);
	void *getenv_ud;
} gb_yaml_opts;

typedef struct gb_ydocs {
	gb_ynode **docs; /* one root per '---' document; NULL for empty docs */
	size_t n;
} gb_ydocs;

/* Parse buf (not necessarily NUL-terminated).  `file` names the input in
 * messages.  Returns 0 when there were no errors.  On error returns -1
 * with every error found in d; *out may hold partial documents and must
 * still be freed with gb_ydocs_free. */
int gb_yaml_load(const char *file, const char *buf, size_t len,
                 const gb_yaml_opts *opts, gb_ydocs *out, gb_diags *d);
/* The same from a file (refuses files larger than max_bytes). */
int gb_yaml_load_file(const char *path, const gb_yaml_opts *opts,
                      gb_ydocs *out, gb_diags *d);
void gb_ydocs_free(gb_ydocs *docs);

/* Borrowed value for key in a mapping, NULL when absent or not a map. */
const gb_ynode *gb_ymap_get(const gb_ynode *map, const char *key);

/* "a mapping", "a list", "null", "the string \"abc\"", "the number 5"...
 * written into buf (>= 96 bytes). */
const char *gb_ydescribe(const gb_ynode *n, char *buf, size_t cap);

/* Decoding context: errors go into d, located in file. */
typedef struct gb_ydec {
	const char *file;
	gb_diags *d;
} gb_ydec;

/* "parent.key" / "parent[3]"; caller frees. */
char *gb_ypath_key(const char *parent, const char *key);
char *gb_ypath_idx(const char *parent, size_t idx);

/* Each returns 0 on success, -1 after adding a diagnostic. */
/* Checks n is a mapping whose keys are all in `allowed` (NULL-terminated);
 * unknown keys get "did you mean" hints.  Keys are checked even when the
 * node is valid so all errors are reported. */
int gb_ydec_map(gb_ydec *c, const gb_ynode *n, const char *path,
                const char *const *allowed);
/* Any non-null scalar as text; *out owned by caller. */
int gb_ydec_str(gb_ydec *c, const gb_ynode *n, const char *path, char **out);
int gb_ydec_int(gb_ydec *c, const gb_ynode *n, const char *path,
                int64_t min, int64_t max, int64_t *out);
int gb_ydec_num(gb_ydec *c, const gb_ynode *n, const char *path,
                double min, double max, double *out);
int gb_ydec_bool(gb_ydec *c, const gb_ynode *n, const char *path, int *out);
int gb_ydec_duration(gb_ydec *c, const gb_ynode *n, const char *path,
                     int64_t *out);
/* A list of scalars, or a single scalar taken as a list of one. */
int gb_ydec_strlist(gb_ydec *c, const gb_ynode *n, const char *path,
                    gb_strv *out);
/* A mapping of scalar keys to scalar values. */
int gb_ydec_strmap(gb_ydec *c, const gb_ynode *n, const char *path,
                   gb_kvs *out);
/* One of `values` (NULL-terminated); *out is its index. */
int gb_ydec_enum(gb_ydec *c, const gb_ynode *n, const char *path,
                 const char *const *values, int *out);
/* Adds a diagnostic located at n. */
void gb_ydec_err(gb_ydec *c, const gb_ynode *n, const char *path,
                 const char *fmt, ...) GB_PRINTF(4, 5);

#endif
