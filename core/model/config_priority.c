/* config_priority.c -- the broker config's priority classes
 * (priorities:) and the teams' fair-share weights (issue 35). */
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

static void add(gb_config *cfg, const char *name, int value)
{
	cfg->priorities = gb_xrealloc(cfg->priorities,
	        (cfg->npriorities + 1) * sizeof(*cfg->priorities));
	cfg->priorities[cfg->npriorities].name = gb_xstrdup(name);
	cfg->priorities[cfg->npriorities].value = value;
	cfg->npriorities++;
}

void gb_config__default_priorities(gb_config *cfg)
{
	gb_config__free_priorities(cfg);
	add(cfg, "production", 1000);
	add(cfg, "batch", 100);
	add(cfg, "dev", 10);
}

void gb_config__free_priorities(gb_config *cfg)
{
	for (size_t i = 0; i < cfg->npriorities; i++)
		free(cfg->priorities[i].name);
	free(cfg->priorities);
	cfg->priorities = NULL;
	cfg->npriorities = 0;
}

/* priorities: {NAME: VALUE, ...}; replaces the defaults. */
void gb_config__dec_priorities(gb_ydec *c, const gb_ynode *n,
                               gb_config *cfg)
{
	char kp[160], d[64];
	if (n->invalid)
		return;
	if (n->kind != GB_Y_MAP || n->n == 0) {
		gb_ydec_err(c, n, "priorities", "expected a map of class names "
		            "to values, found %s (e.g. priorities: {production: "
		            "1000, batch: 100, dev: 10})",
		            gb_ydescribe(n, d, sizeof(d)));
		return;
	}
	gb_config__free_priorities(cfg);
	for (size_t i = 0; i < n->n; i++) {
		const char *name = n->keys[i]->str;
		int64_t x;
		snprintf(kp, sizeof(kp), "priorities.%.100s", name);
		if (!gb_config__valid_name(name)) {
			gb_ydec_err(c, n->keys[i], kp, "invalid class name: use "
			            "1 to 63 lowercase letters, digits, '_', '.' "
			            "and '-', starting with a letter");
			continue;
		}
		if (gb_ydec_int(c, n->items[i], kp, 0, 1000000, &x) != 0)
			continue;
		add(cfg, name, (int)x);
	}
	if (cfg->npriorities == 0)
		gb_config__default_priorities(cfg);
}

double gb_config_team_share(const gb_config *c, const char *name)
{
	const gb_team_cfg *t = gb_config_team(c, name);
	return t && t->share > 0 ? t->share : 1.0;
}

const gb_priority_cfg *gb_config_priority(const gb_config *c,
                                          const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < c->npriorities; i++)
		if (strcmp(c->priorities[i].name, name) == 0)
			return &c->priorities[i];
	return NULL;
}

const gb_priority_cfg *gb_config_priority_default(const gb_config *c,
                                                  const char *purpose)
{
	const char *name = "batch";
	const gb_priority_cfg *low = NULL;
	if (purpose && strcmp(purpose, "inference") == 0)
		name = "production";
	else if (purpose && strcmp(purpose, "dev") == 0)
		name = "dev";
	const gb_priority_cfg *p = gb_config_priority(c, name);
	if (p)
		return p;
	for (size_t i = 0; i < c->npriorities; i++)
		if (!low || c->priorities[i].value < low->value)
			low = &c->priorities[i];
	return low;
}

const char *const *gb_config_priority_names(const gb_config *c,
                                            const char **out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < c->npriorities && n + 1 < cap; i++)
		out[n++] = c->priorities[i].name;
	out[n] = NULL;
	return out;
}
