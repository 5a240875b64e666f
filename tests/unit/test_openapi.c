/* test_openapi.c -- the API's description (docs/openapi.json, as built
 * into the daemon) against the daemon's route table (core/daemon/api.c):
 * every route is an operation of the description with the roles the
 * route lets in, and every /v1 operation of the description is a route.
 * A route added without its description, or described and never routed,
 * fails here; tests/integration/openapi.sh checks the answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <jansson.h>

#include "api.h"

static json_t *load_doc(void)
{
	json_error_t je;
	json_t *doc = json_loadb((const char *)gb_openapi_json,
	                         gb_openapi_json_len, 0, &je);
	if (!doc)
		fail_msg("docs/openapi.json does not parse: line %d: %s", je.line,
		         je.text);
	return doc;
}

/* The roles x-gpubroker-roles must list for a least role. */
static const char *roles_for(const char *least)
{
	return strcmp(least, "public") == 0     ? "public"
	       : strcmp(least, "viewer") == 0   ? "viewer,operator,admin"
	       : strcmp(least, "operator") == 0 ? "operator,admin"
	                                        : "admin";
}

static void lower(char *dst, const char *src, size_t cap)
{
	size_t i;
	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32
		                                                : src[i]);
	dst[i] = '\0';
}

static void every_route_is_described(void **state)
{
	json_t *doc = load_doc(), *paths = json_object_get(doc, "paths");
	const char *method, *least;
	char path[160], m[16];
	size_t i, n = 0;
	(void)state;
	for (i = 0; gb_api_route_at(i, &method, path, sizeof(path), &least) == 0;
	     i++, n++) {
		json_t *op, *roles, *sec, *v;
		char got[128] = "";
		size_t k;
		lower(m, method, sizeof(m));
		op = json_object_get(json_object_get(paths, path), m);
		if (!op)
			fail_msg("route %s %s is not in docs/openapi.json: describe "
			         "it there (paths, with x-gpubroker-roles)",
			         method, path);
		roles = json_object_get(op, "x-gpubroker-roles");
		if (!json_is_array(roles))
			fail_msg("%s %s: no x-gpubroker-roles list", method, path);
		json_array_foreach(roles, k, v)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
			         k ? "," : "", json_string_value(v) ? json_string_value(v)
			                                            : "?");
		if (strcmp(got, roles_for(least)) != 0)
			fail_msg("%s %s: x-gpubroker-roles is [%s]; the route lets "
			         "in [%s]", method, path, got, roles_for(least));
		/* no token: security [] exactly; else the document's bearer */
		sec = json_object_get(op, "security");
		if (strcmp(least, "public") == 0 ? !json_is_array(sec) ||
		                                       json_array_size(sec) != 0
		                                 : sec != NULL)
			fail_msg("%s %s: its security does not say that it %s a "
			         "token", method, path,
			         strcmp(least, "public") == 0 ? "needs no" : "needs");
		if (strcmp(least, "public") != 0 &&
		    !json_object_get(json_object_get(op, "responses"), "401"))
			fail_msg("%s %s: the 401 answer is not described", method,
			         path);
	}
	assert_true(n >= 20);
	json_decref(doc);
}

static int is_route(const char *want_m, const char *want_p)
{
	const char *method, *least;
	char path[160];
	for (size_t i = 0;
	     gb_api_route_at(i, &method, path, sizeof(path), &least) == 0; i++)
		if (strcasecmp(method, want_m) == 0 && strcmp(path, want_p) == 0)
			return 1;
	return 0;
}

static void every_operation_is_routed(void **state)
{
	json_t *doc = load_doc(), *item, *op;
	const char *path, *m;
	size_t n = 0;
	(void)state;
	json_object_foreach(json_object_get(doc, "paths"), path, item) {
		if (strncmp(path, "/v1/", 4) != 0)
			fail_msg("docs/openapi.json describes %s, outside /v1", path);
		json_object_foreach(item, m, op) {
			if (strcmp(m, "parameters") == 0 || strcmp(m, "summary") == 0 ||
			    strcmp(m, "description") == 0)
				continue;
			if (!is_route(m, path))
				fail_msg("docs/openapi.json describes %s %s, which the "
				         "daemon does not route (core/daemon/api.c)", m,
				         path);
			n++;
		}
	}
	assert_true(n >= 20);
	json_decref(doc);
}

static void the_document_is_openapi_3_1(void **state)
{
	json_t *doc = load_doc();
	(void)state;
	assert_string_equal(json_string_value(json_object_get(doc, "openapi")),
	                    "3.1.0");
	assert_non_null(json_object_get(json_object_get(json_object_get(
		json_object_get(doc, "components"), "securitySchemes"), "bearer"),
		"scheme"));
	assert_non_null(json_object_get(json_object_get(json_object_get(doc,
		"components"), "schemas"), "Error"));
	/* the description's version is the program's */
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc,
	                    "info"), "version")), GB_VERSION);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_route_is_described),
		cmocka_unit_test(every_operation_is_routed),
		cmocka_unit_test(the_document_is_openapi_3_1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
