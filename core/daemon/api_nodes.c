/* api_nodes.c -- the on-prem inventory over HTTP: GET /v1/nodes,
 * GET /v1/sites, POST /v1/probe {"nodes": [NAME...]} (admin: it runs
 * the probe on the nodes; the catalog then carries the new figures),
 * POST /v1/nodes/NODE/clear (admin: the node's failure is forgotten). */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "nodes.h"

static void answer(gb_api_req *r, const char *key, const char *verb,
                   int argc, const char *const *argv)
{
	json_t *doc;
	char err[1024];
	if (gb_nodes_command(&r->d->app.rt.drivers, verb, argc, argv, &doc, err,
	                     sizeof(err)) != 0) {
		gb_api_error(r, gb_nodes_driver(&r->d->app.rt.drivers) ? 502 : 404,
		             "NodesUnavailable", "%s", err);
		return;
	}
	r->resp = json_pack("{s:o}", key, doc);
	r->status = 200;
}

void gb_api_nodes(gb_api_req *r)
{
	answer(r, "nodes", "nodes", 0, NULL);
}

void gb_api_sites(gb_api_req *r)
{
	answer(r, "sites", "sites", 0, NULL);
}

void gb_api_probe(gb_api_req *r)
{
	json_t *j, *names, *v;
	const char **argv;
	size_t i, n;
	j = r->body.len ? gb_api_body_json(r) : json_object();
	if (!j)
		return;
	names = json_object_get(j, "nodes");
	if (names && !json_is_array(names)) {
		json_decref(j);
		gb_api_error(r, 400, "BadRequest", "\"nodes\" is a list of node "
		                                   "names (empty or absent: all)");
		return;
	}
	n = json_array_size(names);
	argv = gb_xcalloc(n + 1, sizeof(*argv));
	json_array_foreach(names, i, v) {
		if (!json_is_string(v)) {
			free(argv);
			json_decref(j);
			gb_api_error(r, 400, "BadRequest", "nodes[%zu] is not a "
			                                   "string", i);
			return;
		}
		argv[i] = json_string_value(v);
	}
	snprintf(r->target, sizeof(r->target), "%s",
	         n ? argv[0] : "all nodes");
	answer(r, "nodes", "probe", (int)n, argv);
	free(argv);
	json_decref(j);
	if (r->status != 200)
		return;
	gb_api_reload_offers(r); /* the new figures, at once */
	snprintf(r->detail, sizeof(r->detail), "%zu node(s) probed", n);
}

void gb_api_node_clear(gb_api_req *r, const char *name)
{
	const char *argv[1];
	if (!gb_api_is_admin(r))
		return;
	argv[0] = name;
	snprintf(r->target, sizeof(r->target), "%s", name);
	answer(r, "nodes", "clear", 1, argv);
	if (r->status != 200)
		return;
	gb_api_reload_offers(r); /* the node is offered again, at once */
	snprintf(r->detail, sizeof(r->detail), "node %s cleared", name);
}
