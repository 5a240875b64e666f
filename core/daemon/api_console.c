/* api_console.c -- the web console's files (GET / and GET /console/NAME),
 * the API's description (GET /v1/openapi.json, no token)
 * and GET /v1/whoami, what the console shows of the signed-in token.
 *
 * The console is static HTML, CSS and JavaScript installed with the
 * daemon (<data dir>/console: <prefix>/share/gpubroker/console, or the
 * build tree's share/ when run from it; GPUBROKER_DATA_DIR moves both).
 * Its files are public: what a person may see or do is decided by the
 * API, with the bearer token the console sends, never by the page.
 *
 * A file is named by one path segment of letters, digits, '.', '_' and
 * '-' that starts with a letter or digit, with a known extension: so no
 * request can name a directory, a hidden file or anything outside the
 * console's folder (no '/', no "..", no %-escape), and anything else
 * under /console/ is 404.  Every answer carries a strict
 * Content-Security-Policy (only this origin; no inline script or style)
 * and nosniff, with the Content-Type of its extension. */
#include "api.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

#define CONSOLE_PREFIX "/console/"
#define CONSOLE_NAME_MAX 64
#define CONSOLE_FILE_MAX (4u << 20)

const char gb_api_console_csp[] =
	"default-src 'self'; script-src 'self'; style-src 'self'; "
	"img-src 'self'; connect-src 'self'; font-src 'self'; "
	"object-src 'none'; base-uri 'none'; form-action 'self'; "
	"frame-ancestors 'none'";

static const struct {
	const char *ext;
	const char *type;
} types[] = {
	{".html", "text/html; charset=utf-8"},
	{".css", "text/css; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".json", "application/json"},
	{".svg", "image/svg+xml"},
	{".png", "image/png"},
	{".ico", "image/x-icon"},
	{".txt", "text/plain; charset=utf-8"},
};

/* The Content-Type of a console file's name, or NULL: not served. */
static const char *content_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (!dot)
		return NULL;
	for (size_t i = 0; i < GB_ARRAY_LEN(types); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return NULL;
}

/* 1 when name is a file name the console may have (see the top). */
static int name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > CONSOLE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return 0;
	}
	return strstr(name, "..") == NULL;
}

static void not_found(gb_api_req *r)
{
	gb_api_error(r, 404, "NotFound",
	             "no console file %s (the console is at /)", r->path);
}

int gb_api_console(gb_api_req *r)
{
	const char *name;
	const char *type;
	char *path, *data;
	size_t len;
	if (strcmp(r->path, "/") == 0 || strcmp(r->path, CONSOLE_PREFIX) == 0)
		name = "index.html";
	else if (strncmp(r->path, CONSOLE_PREFIX, strlen(CONSOLE_PREFIX)) == 0)
		name = r->path + strlen(CONSOLE_PREFIX);
	else
		return 0;
	r->console = 1;
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0) {
		gb_api_error(r, 405, "MethodNotAllowed",
		             "%s is not allowed on %s: the console's files are "
		             "read with GET", r->method, r->path);
		return 1;
	}
	if (!name_ok(name) || !(type = content_type(name))) {
		not_found(r);
		return 1;
	}
	path = gb_xasprintf("%s/console/%s", gb_data_dir(), name);
	if (gb_read_file(path, CONSOLE_FILE_MAX, &data, &len) != 0) {
		if (errno == ENOENT && strcmp(name, "index.html") == 0)
			gb_api_error(r, 404, "NotFound",
			             "the web console is not installed: %s is "
			             "missing (make install puts it in "
			             "<prefix>/share/gpubroker/console; "
			             "GPUBROKER_DATA_DIR points elsewhere)", path);
		else
			not_found(r);
		free(path);
		return 1;
	}
	free(path);
	r->text = data;
	r->text_len = len;
	r->content_type = type;
	r->status = 200;
	return 1;
}

void gb_api_whoami(gb_api_req *r)
{
	r->resp = json_pack("{s:s, s:s, s:o}", "name", r->actor, "role",
	                    gb_role_name(r->role), "team",
	                    r->team ? json_string(r->team) : json_null());
	if (r->ci_labels) /* a CI job's exchanged token */
		json_object_set(r->resp, "labels", r->ci_labels);
	r->status = 200;
}

void gb_api_openapi(gb_api_req *r)
{
	r->text = gb_xmalloc(gb_openapi_json_len + 1);
	memcpy(r->text, gb_openapi_json, gb_openapi_json_len + 1);
	r->text_len = gb_openapi_json_len;
	r->content_type = "application/json";
	r->status = 200;
}
