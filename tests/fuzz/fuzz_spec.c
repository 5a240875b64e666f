/* fuzz_spec.c -- libFuzzer target for the pool spec parser (YAML and the
 * API's JSON form).  Besides "no crash, no leak, no hang" it checks two
 * properties on every input:
 *   - a failed load reports at least one error and returns no pools;
 *   - a valid spec survives spec -> JSON -> spec -> JSON unchanged.
 * Build and run: `make fuzz` (see tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A fixed environment, so ${VAR} paths are exercised deterministically:
 * one-letter names are unset, E* are empty, L* are long, others short. */
static const char *fuzz_env(void *ud, const char *name)
{
	(void)ud;
	if (name[1] == '\0')
		return NULL;
	if (name[0] == 'E')
		return "";
	if (name[0] == 'L')
		return "a-rather-long-value-that-makes-names-too-long-for-clouds";
	return "x1";
}

static void check_roundtrip(const gb_pool_spec *p)
{
	gb_spec_opts o = {.getenv_fn = fuzz_env};
	gb_spec_set again;
	gb_diags d = GB_DIAGS_INIT;
	gb_pool_spec copy;
	char *j1 = gb_pool_spec_to_json(p), *j2, *j3;
	if (gb_spec_load_json("rt.json", j1, strlen(j1), &o, &again, &d) != 0 ||
	    again.n != 1) {
		char *s = gb_diags_str(&d);
		fprintf(stderr, "round trip failed for %s:\n%s", j1, s);
		abort();
	}
	j2 = gb_pool_spec_to_json(&again.pools[0]);
	if (strcmp(j1, j2) != 0 ||
	    strcmp(p->source_hash, again.pools[0].source_hash) != 0) {
		fprintf(stderr, "round trip changed the spec:\n%s\n%s\n", j1, j2);
		abort();
	}
	gb_pool_spec_copy(&copy, p);
	j3 = gb_pool_spec_to_json(&copy);
	if (strcmp(j1, j3) != 0)
		abort();
	gb_pool_spec_free(&copy);
	free(j1);
	free(j2);
	free(j3);
	gb_spec_set_free(&again);
	gb_diags_free(&d);
}

static void one(int json, const uint8_t *data, size_t size)
{
	gb_spec_opts o = {.getenv_fn = fuzz_env};
	gb_spec_set set;
	gb_diags d = GB_DIAGS_INIT;
	int rc = json ? gb_spec_load_json("fuzz.json", (const char *)data, size,
	                                  &o, &set, &d)
	              : gb_spec_load_buf("fuzz.yaml", (const char *)data, size,
	                                 &o, &set, &d);
	char *msgs;
	if (rc == 0) {
		if (set.n == 0 || d.n != 0)
			abort();
		for (size_t i = 0; i < set.n; i++)
			check_roundtrip(&set.pools[i]);
		gb_spec_set_free(&set);
	} else if (set.n != 0 || set.pools || d.n + d.dropped == 0) {
		abort();
	}
	msgs = gb_diags_str(&d);
	free(msgs);
	gb_diags_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(0, data, size);
	if (size > 0 && (data[0] == '{' || data[0] == '['))
		one(1, data, size);
	return 0;
}
