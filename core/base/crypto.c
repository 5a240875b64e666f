/* crypto.c -- hashing, constant-time comparison, randomness (OpenSSL). */
#include "util.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void gb_sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL);
	to_hex(md, mdlen, out);
}

int gb_ct_streq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* Compare digests so the time does not depend on where they differ
	 * nor (beyond hashing) on the lengths. */
	char ha[65], hb[65];
	gb_sha256_hex(a, la, ha);
	gb_sha256_hex(b, lb, hb);
	return CRYPTO_memcmp(ha, hb, 64) == 0;
}

int gb_random_hex(char *out, size_t nbytes)
{
	unsigned char buf[64];
	if (nbytes > sizeof(buf) || RAND_bytes(buf, (int)nbytes) != 1)
		return -1;
	to_hex(buf, nbytes, out);
	return 0;
}
