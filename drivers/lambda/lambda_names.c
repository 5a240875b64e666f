/* lambda_names.c -- Lambda has no idempotency token, so an instance's
 * name carries what recovery needs (README.md, "Names"):
 *
 *   gb.<pool>.<broker>.<token>      when it fits in 64 characters and no
 *                                   part holds '.', '~', a blank, a
 *                                   control or a non-ASCII byte: every
 *                                   part can be read back;
 *   gb~<pool'>~<h>                  otherwise: pool' is the pool cut at 24
 *                                   characters (others than [a-z0-9-]
 *                                   become '-'), h the first 24 hex digits
 *                                   of SHA-256("<pool>\n<broker>\n<token>").
 *
 * Both are deterministic: the same (pool, broker, token) always gives the
 * same name, which a replayed create looks up before it launches.
 * SSH keys: "gpubroker-<16 hex of SHA-256 of '<type> <base64>'>". */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvc_enc.h"
#include "drvc_mem.h"
#include "lambda.h"

#define HASHED_POOL 24
#define HASHED_HEX 24

static int part_ok(const char *s)
{
	if (!s || !*s)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '.' || *p == '~')
			return 0;
	return 1;
}

static void sha256_hex(const char *in, size_t n, char *hex, size_t digits)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char full[2 * EVP_MAX_MD_SIZE + 1];
	if (EVP_Digest(in, n, md, &mdlen, EVP_sha256(), NULL) != 1)
		abort();
	drvc_hex(md, mdlen, full);
	memcpy(hex, full, digits);
	hex[digits] = '\0';
}

void lambda_name_encode(const char *pool, const char *broker,
                        const char *token, char out[LAMBDA_NAME_MAX + 1])
{
	char buf[512], hex[HASHED_HEX + 1], cut[HASHED_POOL + 1];
	size_t o = 0;
	int n;

	pool = pool ? pool : "";
	broker = broker ? broker : "";
	token = token ? token : "";
	if (part_ok(pool) && part_ok(broker) && part_ok(token) &&
	    strlen(pool) + strlen(broker) + strlen(token) + 5 <=
	            LAMBDA_NAME_MAX) {
		snprintf(out, LAMBDA_NAME_MAX + 1, "gb.%s.%s.%s", pool, broker,
		         token);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%s\n%s\n%s", pool, broker, token);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		/* longer than any valid pool/broker/token: hash it whole */
		char *s = drvc_xasprintf("%s\n%s\n%s", pool, broker, token);
		sha256_hex(s, strlen(s), hex, HASHED_HEX);
		free(s);
	} else {
		sha256_hex(buf, (size_t)n, hex, HASHED_HEX);
	}
	for (size_t i = 0; pool[i] && o < HASHED_POOL; i++) {
		char ch = pool[i];
		cut[o++] = ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		            ch == '-') ? ch : '-';
	}
	cut[o] = '\0';
	snprintf(out, LAMBDA_NAME_MAX + 1, "gb~%s~%s", cut, hex);
}

int lambda_name_decode(const char *name, char *pool, char *broker,
                       char *token)
{
	const char *p1, *p2, *p3;
	size_t n;
	if (!name || strncmp(name, "gb.", 3) != 0 ||
	    strlen(name) > LAMBDA_NAME_MAX)
		return 0;
	p1 = name + 3;
	p2 = strchr(p1, '.');
	if (!p2)
		return 0;
	p3 = strchr(p2 + 1, '.');
	if (!p3 || strchr(p3 + 1, '.'))
		return 0;
	if (p2 == p1 || p3 == p2 + 1 || !p3[1])
		return 0;
	n = (size_t)(p2 - p1);
	memcpy(pool, p1, n);
	pool[n] = '\0';
	n = (size_t)(p3 - p2 - 1);
	memcpy(broker, p2 + 1, n);
	broker[n] = '\0';
	snprintf(token, LAMBDA_NAME_MAX + 1, "%s", p3 + 1);
	return part_ok(pool) && part_ok(broker) && part_ok(token);
}

int lambda_name_ours(const char *name)
{
	return name && (strncmp(name, "gb.", 3) == 0 ||
	                strncmp(name, "gb~", 3) == 0);
}

size_t lambda_key_ident(const char *pubkey, const char **start)
{
	const char *s = pubkey ? pubkey : "", *b;
	while (*s == ' ' || *s == '\t')
		s++;
	b = s;
	while (*s && *s != ' ' && *s != '\t')
		s++;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
		s++;
	*start = b;
	return (size_t)(s - b);
}

void lambda_ssh_key_name(const char *pubkey, char out[32])
{
	/* the key's type and base64 blob: a different comment is the same
	 * key */
	char hex[17];
	const char *b;
	size_t n = lambda_key_ident(pubkey, &b);
	sha256_hex(b, n, hex, 16);
	snprintf(out, 32, "gpubroker-%s", hex);
}
