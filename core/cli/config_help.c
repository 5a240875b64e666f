/* config_help.c -- the broker config's reference, from the config
 * parser's key table (gb_config_keys, core/model/config.c): `gpubroker
 * help config` and the man page's CONFIGURATION section.  docs/config.md
 * is made from the help by scripts/config_md.sh (make docs-config). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

static const char intro[] =
	"The broker config is a YAML file given with -c FILE (without one,\n"
	"gpubroker runs on the defaults below); 'gpubroker validate -f FILE'\n"
	"checks it with file:line:col errors.  ${VAR} and ${VAR:-default}\n"
	"are expanded from the environment; relative paths are taken from the\n"
	"file's folder.  Secrets are never written inline: credentials and\n"
	"state_password are sources, env:VARIABLE or file:/path.  The daemon\n"
	"re-reads the file on SIGHUP.  Example: examples/broker.yaml,\n"
	"examples/cloudsim-broker.yaml.";

/* "daemon.lease", "drivers[].name", "broker_id" into buf. */
static const char *full_key(const gb_config_key *k, char *buf, size_t cap)
{
	if (k->section[0])
		snprintf(buf, cap, "%s.%s", k->section, k->key);
	else
		snprintf(buf, cap, "%s", k->key);
	return buf;
}

/* text wrapped to width, every line indented by indent. */
static void wrapped(FILE *f, const char *text, int indent, int width)
{
	int col = 0;
	while (*text) {
		int len = (int)strcspn(text, " ");
		if (col && col + 1 + len > width) {
			fputc('\n', f);
			col = 0;
		}
		if (!col)
			fprintf(f, "%*s", indent, "");
		else
			fputc(' ', f), col++;
		fwrite(text, 1, (size_t)len, f);
		col += len;
		text += len;
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

void gb_cli_config_help(FILE *f)
{
	size_t n;
	const gb_config_key *k = gb_config_keys(&n);
	fprintf(f, "usage: gpubroker help config\n\nthe broker config: every "
	           "key, its type, default and what it does\n\n%s\n\n"
	           "keys (KEY (TYPE; default: DEFAULT), then what it does):\n",
	        intro);
	for (size_t i = 0; i < n; i++) {
		char key[80];
		fprintf(f, "  %s (%s; default: %s)\n",
		        full_key(&k[i], key, sizeof(key)), k[i].type,
		        k[i].def[0] ? k[i].def : "-");
		wrapped(f, k[i].meaning, 6, 73);
	}
}

void gb_cli_config_man(FILE *f, void (*text)(FILE *, const char *))
{
	size_t n;
	const gb_config_key *k = gb_config_keys(&n);
	fputs(".SH CONFIGURATION\n", f);
	text(f, intro);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		char key[80];
		fputs(".TP\n\\fB", f);
		text(f, full_key(&k[i], key, sizeof(key)));
		fputs("\\fR (", f);
		text(f, k[i].type);
		fputs("; default: ", f);
		text(f, k[i].def[0] ? k[i].def : "-");
		fputs(")\n", f);
		text(f, k[i].meaning);
		fputc('\n', f);
	}
}
