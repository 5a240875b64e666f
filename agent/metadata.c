/* metadata.c -- the instance's own id from its provider's metadata
 * service (EC2 IMDSv2 with a session token, GCE with Metadata-Flavor:
 * Google, Azure IMDS with Metadata: true), sent at registration so that
 * the broker checks the token came from the instance it was minted for. */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fetch(const gba_conf *c, const char *method, const char *url,
                 const char *const *hd, char *out, size_t cap)
{
	char *resp = NULL;
	long st = gba_http(c, method, url, hd, NULL, &resp);
	if (st != 200 || !resp || !*resp || strlen(resp) >= cap) {
		snprintf(out, cap, "%s %s: HTTP %ld", method, url, st);
		free(resp);
		return -1;
	}
	snprintf(out, cap, "%s", resp);
	out[strcspn(out, "\r\n")] = '\0';
	free(resp);
	return 0;
}

int gba_metadata_id(const gba_conf *c, char *out, size_t cap)
{
	char url[700], tok[256], hdr[300];
	const char *base = c->metadata_url;
	if (!*c->metadata || strcmp(c->metadata, "none") == 0)
		return 1;
	if (strcmp(c->metadata, "ec2") == 0) {
		const char *put[] = {"X-aws-ec2-metadata-token-ttl-seconds: 60",
		                     NULL};
		const char *get[] = {hdr, NULL};
		if (!*base)
			base = "http://169.254.169.254";
		snprintf(url, sizeof(url), "%s/latest/api/token", base);
		if (fetch(c, "PUT", url, put, tok, sizeof(tok)) != 0) {
			snprintf(out, cap, "IMDSv2 session token: %s", tok);
			return -1;
		}
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", tok);
		snprintf(url, sizeof(url), "%s/latest/meta-data/instance-id",
		         base);
		return fetch(c, "GET", url, get, out, cap);
	}
	if (strcmp(c->metadata, "gce") == 0) {
		const char *get[] = {"Metadata-Flavor: Google", NULL};
		if (!*base)
			base = "http://metadata.google.internal";
		snprintf(url, sizeof(url), "%s/computeMetadata/v1/instance/name",
		         base);
		return fetch(c, "GET", url, get, out, cap);
	}
	{
		const char *get[] = {"Metadata: true", NULL};
		if (!*base)
			base = "http://169.254.169.254";
		snprintf(url, sizeof(url), "%s/metadata/instance/compute/name"
		         "?api-version=2021-02-01&format=text", base);
		return fetch(c, "GET", url, get, out, cap);
	}
}
