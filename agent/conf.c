/* conf.c -- gpubroker-agent's config file: "key = value" lines. */
#include "agent.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
	char *e;
	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int set_str(char *dst, size_t cap, const char *v)
{
	if (strlen(v) >= cap)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

int gba_conf_load(const char *file, gba_conf *c, char *err, size_t cap)
{
	FILE *f;
	char line[1024];
	int ln = 0;
	memset(c, 0, sizeof(*c));
	c->interval_s = 15;
	snprintf(c->nvml_library, sizeof(c->nvml_library), "libnvidia-ml.so.1");
	snprintf(c->credential_file, sizeof(c->credential_file),
	         "/var/lib/gpubroker-agent/credential");
	if (!(f = fopen(file, "r"))) {
		snprintf(err, cap, "%s: cannot read the config: %s", file,
		         strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *k = trim(line), *eq, *v;
		int bad = 0;
		ln++;
		if (!*k || *k == '#')
			continue;
		if (!(eq = strchr(k, '='))) {
			snprintf(err, cap, "%s:%d: expected key = value", file, ln);
			fclose(f);
			return -1;
		}
		*eq = '\0';
		k = trim(k);
		v = trim(eq + 1);
		if (strcmp(k, "broker_url") == 0)
			bad = set_str(c->broker_url, sizeof(c->broker_url), v);
		else if (strcmp(k, "instance") == 0)
			bad = set_str(c->instance, sizeof(c->instance), v);
		else if (strcmp(k, "bootstrap_token") == 0)
			bad = set_str(c->bootstrap_token,
			              sizeof(c->bootstrap_token), v);
		else if (strcmp(k, "credential_file") == 0)
			bad = set_str(c->credential_file,
			              sizeof(c->credential_file), v);
		else if (strcmp(k, "nvml_library") == 0)
			bad = set_str(c->nvml_library, sizeof(c->nvml_library), v);
		else if (strcmp(k, "ca_file") == 0)
			bad = set_str(c->ca_file, sizeof(c->ca_file), v);
		else if (strcmp(k, "ready_command") == 0)
			bad = set_str(c->ready_command, sizeof(c->ready_command),
			              v);
		else if (strcmp(k, "metadata") == 0)
			bad = (strcmp(v, "ec2") != 0 && strcmp(v, "gce") != 0 &&
			       strcmp(v, "azure") != 0 && strcmp(v, "none") != 0) ||
			      set_str(c->metadata, sizeof(c->metadata), v);
		else if (strcmp(k, "metadata_url") == 0)
			bad = set_str(c->metadata_url, sizeof(c->metadata_url), v);
		else if (strcmp(k, "interval") == 0) {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end == 's')
				end++;
			bad = *end || n < 1 || n > 3600;
			c->interval_s = (int)n;
		} else {
			snprintf(err, cap, "%s:%d: unknown key %s (see "
			         "gpubroker-agent(8))", file, ln, k);
			fclose(f);
			return -1;
		}
		if (bad) {
			snprintf(err, cap, "%s:%d: bad value for %s (too long, "
			         "interval not 1..3600 seconds, or metadata not "
			         "ec2, gce, azure or none)", file, ln, k);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	if (!*c->broker_url || !*c->instance) {
		snprintf(err, cap, "%s: broker_url and instance are required",
		         file);
		return -1;
	}
	return 0;
}
