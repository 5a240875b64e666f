/*
 * lambda_keys.c -- the Lambda account's SSH keys: GET/POST /ssh-keys and
 * DELETE /ssh-keys/{id}.  The scenario's credentials.lambda.ssh_keys are
 * registered at start and again on every reset (other keys dropped).
 * Keys are placeholders: cloudsim never connects to anything.
 */
#include <stdlib.h>
#include <string.h>

#include "lambda.h"

typedef struct lam_key {
	char id[33];
	char *name;
	char *public_key;
} lam_key;

/* Under sim_g.mu. */
static lam_key *keys;
static size_t nkeys;

#define MAX_KEYS 1000

static void key_add(const char *name, const char *pub)
{
	lam_key *k;
	keys = gb_xrealloc(keys, (nkeys + 1) * sizeof(*keys));
	k = &keys[nkeys++];
	sim_hex_id(k->id, 32);
	k->name = gb_xstrdup(name);
	k->public_key = gb_xstrdup(pub);
}

static char *placeholder_pub(const char *name)
{
	char hex[33];
	sim_hex_id(hex, 32);
	return gb_xasprintf("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI%s %s", hex,
	                    name);
}

void sim_lambda_keys_free(void)
{
	for (size_t i = 0; i < nkeys; i++) {
		free(keys[i].name);
		free(keys[i].public_key);
	}
	free(keys);
	keys = NULL;
	nkeys = 0;
}

void sim_lambda_keys_reset(void)
{
	sim_lambda_keys_free();
	for (size_t i = 0; i < sim_g.sc.lambda_ssh_keys.n; i++) {
		char *pub = placeholder_pub(sim_g.sc.lambda_ssh_keys.v[i]);
		key_add(sim_g.sc.lambda_ssh_keys.v[i], pub);
		free(pub);
	}
}

int lam_key_exists(const char *name)
{
	for (size_t i = 0; i < nkeys; i++)
		if (strcmp(keys[i].name, name) == 0)
			return 1;
	return 0;
}

static json_t *key_json(const lam_key *k)
{
	return json_pack("{s:s,s:s,s:s}", "id", k->id, "name", k->name,
	                 "public_key", k->public_key);
}

void lam_keys_list(lam_ctx *c)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < nkeys; i++)
		json_array_append_new(arr, key_json(&keys[i]));
	sim_resp_json(c->resp, 200, json_pack("{s:o}", "data", arr));
}

void lam_keys_add(lam_ctx *c)
{
	static const char *const allowed[] = {"name", "public_key", NULL};
	json_t *body = lam_body_object(c), *data;
	const char *name, *pub = NULL;
	char *gen = NULL;
	if (!body)
		return;
	if (!lam_only_keys(c, body, "the SSH key", allowed))
		goto out;
	name = json_string_value(json_object_get(body, "name"));
	if (!name || !*name || strlen(name) > 64) {
		lam_bad(c, "Invalid request data: \"name\" must be a string of "
		        "1 to 64 characters.");
		goto out;
	}
	if (json_object_get(body, "public_key")) {
		pub = json_string_value(json_object_get(body, "public_key"));
		if (!pub || strlen(pub) > 4096 ||
		    (strncmp(pub, "ssh-", 4) != 0 &&
		     strncmp(pub, "ecdsa-sha2-", 11) != 0)) {
			lam_bad(c, "Invalid request data: \"public_key\" must be "
			        "an OpenSSH public key (\"ssh-ed25519 AAAA...\") "
			        "of at most 4096 characters.");
			goto out;
		}
	}
	if (lam_key_exists(name)) {
		lam_error(c, 400, "global/duplicate",
		          "Choose another name, or delete the existing key "
		          "first.", "An SSH key named '%s' already exists.",
		          name);
		goto out;
	}
	if (nkeys >= MAX_KEYS) {
		lam_error(c, 400, "global/quota-exceeded",
		          "Delete keys you no longer use.",
		          "Quota exceeded: at most %d SSH keys.", MAX_KEYS);
		goto out;
	}
	if (!pub)
		pub = gen = placeholder_pub(name);
	key_add(name, pub);
	data = key_json(&keys[nkeys - 1]);
	if (gen)
		json_object_set_new(data, "private_key",
		                    json_string("-----BEGIN OPENSSH PRIVATE KEY-----\n"
		                                "cloudsim placeholder, not a key\n"
		                                "-----END OPENSSH PRIVATE KEY-----\n"));
	sim_resp_json(c->resp, 200, json_pack("{s:o}", "data", data));
out:
	free(gen);
	json_decref(body);
}

/* 1 when a live (not terminated) Lambda instance was launched with the
 * key called name. */
static int key_in_use(const char *name, int64_t now)
{
	size_t n = 0;
	sim_inst **v = sim_inst_list(SIM_LAMBDA, &n);
	int used = 0;
	for (size_t i = 0; i < n && !used; i++)
		used = v[i]->key_name && strcmp(v[i]->key_name, name) == 0 &&
		       sim_inst_phase(v[i], now) != SIM_PH_GONE;
	free(v);
	return used;
}

void lam_keys_delete(lam_ctx *c)
{
	for (size_t i = 0; i < nkeys; i++) {
		if (strcmp(keys[i].id, c->id) != 0)
			continue;
		if (key_in_use(keys[i].name, c->now)) {
			lam_error(c, 400, "ssh-keys/key-in-use",
			          "Terminate the instances that use it first.",
			          "SSH key '%s' is in use by an instance.",
			          keys[i].name);
			return;
		}
		free(keys[i].name);
		free(keys[i].public_key);
		memmove(&keys[i], &keys[i + 1],
		        (nkeys - i - 1) * sizeof(*keys));
		nkeys--;
		sim_resp_json(c->resp, 200, json_object());
		return;
	}
	lam_error(c, 404, "global/object-does-not-exist", NULL,
	          "Specified SSH key '%s' does not exist.", c->id);
}
