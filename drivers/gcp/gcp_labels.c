/* gcp_labels.c -- GCE naming rules, applied deterministically:
 *   labels: keys and values lowercase [a-z0-9_-], <= 63 chars, keys start
 *           with a letter: upper case is lowered, any other character
 *           becomes '_', a key not starting with a letter gets "x"
 *           prepended, then both are cut at 63;
 *   instance names: RFC 1035, [a-z]([-a-z0-9]*[a-z0-9])?, <= 63: lowered,
 *           others become '-'; must start with a letter;
 *   requestId: a UUID from SHA-256("gpubroker-create\n<token>\n<index>")
 *           with the version-4 and variant bits set (never all zero). */
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "drvc_util.h"
#include "gcp.h"

static char label_char(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return (char)(ch - 'A' + 'a');
	if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
	    ch == '_')
		return ch;
	return '_';
}

void gcp_label_value(const char *in, char out[64])
{
	size_t o = 0;
	for (size_t i = 0; in && in[i] && o < 63; i++)
		out[o++] = label_char(in[i]);
	out[o] = '\0';
}

void gcp_label_key(const char *in, char out[64])
{
	size_t o = 0;
	if (!in || (!(in[0] >= 'a' && in[0] <= 'z') &&
	            !(in[0] >= 'A' && in[0] <= 'Z')))
		out[o++] = 'x';
	for (size_t i = 0; in && in[i] && o < 63; i++)
		out[o++] = label_char(in[i]);
	out[o] = '\0';
}

int gcp_instance_name(const char *prefix, unsigned index, char out[64],
                      gb_error *err)
{
	char raw[200];
	size_t n;
	int len = snprintf(raw, sizeof(raw), "%s-%u", prefix, index);
	if (len < 0 || (size_t)len >= sizeof(raw) || len > 63) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidResourceName",
		         "GCE instance name '%.80s-%u' is longer than 63 "
		         "characters (it is the pool's name prefix plus an index)",
		         prefix, index);
		return -1;
	}
	n = (size_t)len;
	for (size_t i = 0; i < n; i++) {
		char ch = raw[i];
		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
			ch = '-';
		out[i] = ch;
	}
	out[n] = '\0';
	if (!(out[0] >= 'a' && out[0] <= 'z')) {
		drvc_err(err, GB_ERR_INVALID, 0, "InvalidResourceName",
		         "GCE instance name '%s' must start with a letter (it is "
		         "the pool's name prefix plus an index)", out);
		return -1;
	}
	return 0;
}

static void uuid_format(unsigned char b[16], char out[37])
{
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, 37,
	         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	         "%02x%02x%02x%02x%02x%02x",
	         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
	         b[10], b[11], b[12], b[13], b[14], b[15]);
}

void gcp_request_id(const char *token, const char *const *names, size_t n,
                    char out[37])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	drvc_buf b = DRVC_BUF_INIT;
	char *in;
	/* not the per-instance insert's "gpubroker-create" input, so a
	 * requestId never matches one an older driver sent */
	drvc_buf_addf(&b, "gpubroker-bulk\n%s", token ? token : "");
	for (size_t i = 0; i < n; i++)
		drvc_buf_addf(&b, "\n%s", names[i]);
	in = drvc_buf_take(&b);
	if (!in)
		abort();
	EVP_Digest(in, strlen(in), md, &mdlen, EVP_sha256(), NULL);
	free(in);
	uuid_format(md, out);
}

void gcp_random_uuid(char out[37])
{
	unsigned char b[16];
	if (RAND_bytes(b, sizeof(b)) != 1)
		abort();
	uuid_format(b, out);
}

int gcp_zone_in_region(const char *zone, const char *region)
{
	size_t n;
	if (!region || !*region)
		return 1;
	n = strlen(region);
	return zone && strncmp(zone, region, n) == 0 && zone[n] == '-' &&
	       zone[n + 1] && !strchr(zone + n + 1, '-');
}
