/*
 * gcp_keys.c -- the service-account key cloudsim trusts.  At start it
 * generates an RSA-2048 key (or loads credentials.gcp.key_file) and
 * writes <workdir>/gcp-key.json in Google's service-account format with
 * token_uri pointing at this cloudsim, so GOOGLE_APPLICATION_CREDENTIALS
 * is all a client needs.  `cloudsim gcp-keygen FILE` writes such a file
 * for use as a fixed test key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "sim.h"

/* PKCS#8 PEM of the private key; caller frees. */
static char *pem_of(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;
	if (!b || !PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL)) {
		BIO_free(b);
		return NULL;
	}
	n = BIO_get_mem_data(b, &data);
	out = gb_xstrndup(data, (size_t)n);
	BIO_free(b);
	return out;
}

static char *key_json(EVP_PKEY *k, const char *kid, const char *project,
                      const char *email, const char *token_uri)
{
	char *pem = pem_of(k);
	char cid[32], *s;
	char h[65];
	json_t *o;
	if (!pem)
		return NULL;
	gb_sha256_hex(email, strlen(email), h);
	/* a 21-digit numeric client id derived from the email */
	snprintf(cid, sizeof(cid), "1%020llu",
	         (unsigned long long)strtoull(h + 48, NULL, 16) %
	                 10000000000000000000ull);
	o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "type",
	              "service_account", "project_id", project,
	              "private_key_id", kid, "private_key", pem,
	              "client_email", email, "client_id", cid, "auth_uri",
	              "https://accounts.google.com/o/oauth2/auth", "token_uri",
	              token_uri, "auth_provider_x509_cert_url",
	              "https://www.googleapis.com/oauth2/v1/certs",
	              "client_x509_cert_url",
	              "https://www.googleapis.com/robot/v1/metadata/x509/"
	              "cloudsim",
	              "universe_domain", "googleapis.com");
	OPENSSL_cleanse(pem, strlen(pem));
	free(pem);
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

static int write_secret_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t n = strlen(text), off = 0;
	if (fd < 0)
		return -1;
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (write(fd, "\n", 1) != 1) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static EVP_PKEY *load_key_file(const char *path, char **kid, char **email,
                               gb_diags *d)
{
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je);
	const char *pem;
	BIO *b;
	EVP_PKEY *k = NULL;
	if (!o) {
		gb_diag_add(d, path, je.line, je.column, "",
		            "cannot read the GCP key file: %s", je.text);
		return NULL;
	}
	pem = json_string_value(json_object_get(o, "private_key"));
	if (!pem) {
		gb_diag_add(d, path, 0, 0, "private_key",
		            "the key file has no private_key");
		json_decref(o);
		return NULL;
	}
	b = BIO_new_mem_buf(pem, -1);
	if (b)
		k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	if (!k || EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA) {
		gb_diag_add(d, path, 0, 0, "private_key",
		            "private_key is not an RSA private key in PEM");
		EVP_PKEY_free(k);
		json_decref(o);
		return NULL;
	}
	if (json_string_value(json_object_get(o, "private_key_id")))
		*kid = gb_xstrdup(json_string_value(
			json_object_get(o, "private_key_id")));
	if (json_string_value(json_object_get(o, "client_email")))
		*email = gb_xstrdup(json_string_value(
			json_object_get(o, "client_email")));
	json_decref(o);
	return k;
}

int sim_gcp_key_setup(const char *workdir, gb_diags *d)
{
	EVP_PKEY *k;
	char *kid = NULL, *email = NULL, *json;
	if (sim_g.sc.gcp_key_file) {
		k = load_key_file(sim_g.sc.gcp_key_file, &kid, &email, d);
		if (!k)
			return -1;
		if (email) {
			free(sim_g.sc.gcp_email);
			sim_g.sc.gcp_email = email;
		}
	} else {
		k = EVP_RSA_gen(2048);
		if (!k) {
			gb_diag_add(d, "", 0, 0, "", "RSA key generation failed");
			return -1;
		}
	}
	if (!kid) {
		kid = gb_xmalloc(41);
		sim_hex_id(kid, 40);
	}
	json = key_json(k, kid, sim_g.sc.gcp_project, sim_g.sc.gcp_email,
	                sim_g.url[4]);
	sim_g.gcp_key_path = gb_xasprintf("%s/gcp-key.json", workdir);
	if (!json || write_secret_file(sim_g.gcp_key_path, json) != 0) {
		gb_diag_add(d, sim_g.gcp_key_path, 0, 0, "",
		            "cannot write the GCP key file: %s", strerror(errno));
		free(json);
		free(kid);
		EVP_PKEY_free(k);
		return -1;
	}
	sim_g.gcp_key_json = json;
	sim_g.gcp_key_id = kid;
	sim_g.gcp_pub = k;
	return 0;
}

void sim_gcp_key_free(void)
{
	if (sim_g.gcp_key_json)
		OPENSSL_cleanse(sim_g.gcp_key_json, strlen(sim_g.gcp_key_json));
	free(sim_g.gcp_key_json);
	free(sim_g.gcp_key_id);
	free(sim_g.gcp_key_path);
	EVP_PKEY_free(sim_g.gcp_pub);
	sim_g.gcp_key_json = sim_g.gcp_key_id = sim_g.gcp_key_path = NULL;
	sim_g.gcp_pub = NULL;
}

int sim_gcp_keygen_main(int argc, char **argv)
{
	const char *file = NULL, *uri = "http://127.0.0.1/token";
	const char *email = "cloudsim@gpubroker-sim.iam.gserviceaccount.com";
	const char *project = "gpubroker-sim";
	EVP_PKEY *k;
	char kid[41], *json;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--token-uri") == 0 && i + 1 < argc)
			uri = argv[++i];
		else if (strcmp(argv[i], "--client-email") == 0 && i + 1 < argc)
			email = argv[++i];
		else if (strcmp(argv[i], "--project") == 0 && i + 1 < argc)
			project = argv[++i];
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else {
			fprintf(stderr, "cloudsim gcp-keygen: unknown argument "
			        "\"%s\"\n", argv[i]);
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr, "usage: cloudsim gcp-keygen FILE [--token-uri "
		        "URL] [--client-email EMAIL] [--project ID]\n");
		return 2;
	}
	k = EVP_RSA_gen(2048);
	if (!k) {
		fprintf(stderr, "cloudsim gcp-keygen: RSA key generation "
		        "failed\n");
		return 1;
	}
	sim_hex_id(kid, 40);
	json = key_json(k, kid, project, email, uri);
	EVP_PKEY_free(k);
	if (!json || write_secret_file(file, json) != 0) {
		fprintf(stderr, "cloudsim gcp-keygen: cannot write %s: %s\n",
		        file, strerror(errno));
		free(json);
		return 1;
	}
	OPENSSL_cleanse(json, strlen(json));
	free(json);
	printf("%s\n", file);
	return 0;
}
