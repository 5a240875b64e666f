/* metrics_team.c -- what of /metrics a token of one team reads (README,
 * 'The daemon', "Who may read what"): the per-team series of its own
 * team only.  A line with a team="..." label of another team, and a line
 * naming a pool without saying its team (none since issue 36: /metrics
 * names no pool; kept as a guard), is left out; the daemon's own series
 * (requests, connections, driver calls, instances by cloud) stay. */
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* 1 when the sample line is for the caller's team to read. */
static int line_for(const char *line, size_t n, const char *team)
{
	const char *t, *end = line + n;
	size_t tl = strlen(team);
	if (line[0] == '#')
		return 1;
	for (t = line; t + 6 <= end; t++)
		if (memcmp(t, "team=\"", 6) == 0 && (t == line || t[-1] == '{' ||
		                                     t[-1] == ','))
			return (size_t)(end - (t + 6)) > tl &&
			       memcmp(t + 6, team, tl) == 0 && t[6 + tl] == '"';
	for (t = line; t + 6 <= end; t++)
		if (memcmp(t, "pool=\"", 6) == 0 && (t == line || t[-1] == '{' ||
		                                     t[-1] == ','))
			return 0;
	return 1;
}

char *gb_metrics_for_team(char *text, const char *team)
{
	gb_buf b = GB_BUF_INIT;
	const char *p = text;
	if (!text || !team)
		return text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (line_for(p, n, team))
			gb_buf_append(&b, p, n);
		p += n;
	}
	free(text);
	return gb_buf_take(&b);
}
