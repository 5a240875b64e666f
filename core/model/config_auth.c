/* config_auth.c -- the broker config's auth: section (config.h):
 * auth.oidc, the trust rules of the OIDC token exchange. */
#include "config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(c, n, path, ...) gb_ydec_err((c), (n), (path), __VA_ARGS__)

/* an exchanged token never is an admin: a CI job acts for one team */
static const char *const oidc_roles[] = {"viewer", "operator", NULL};
/* checked by the verifier itself, never by a rule */
static const char *const reserved_claims[] = {"iss", "aud", "exp", "nbf",
                                              "iat", "jti", NULL};

/* "127.0.0.1", "127.x.y.z", "[::1]" or "localhost", up to the port or
 * path. */
static int loopback_host(const char *h, size_t n)
{
	if ((n == 9 && strncmp(h, "localhost", 9) == 0) ||
	    (n == 5 && strncmp(h, "[::1]", 5) == 0))
		return 1;
	if (n < 7 || strncmp(h, "127.", 4) != 0)
		return 0;
	for (size_t i = 4; i < n; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || h[i] == '.'))
			return 0;
	return 1;
}

int gb_oidc_url_ok(const char *url)
{
	const char *h, *e;
	for (const char *q = url; *q; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return 0;
	if (strncmp(url, "https://", 8) == 0)
		return url[8] != '\0' && url[8] != '/';
	if (strncmp(url, "http://", 7) != 0)
		return 0;
	h = url + 7;
	if (*h == '[')
		e = strchr(h, ']') ? strchr(h, ']') + 1 : h;
	else
		e = h + strcspn(h, ":/?#");
	if (*e && *e != ':' && *e != '/')
		return 0;
	return loopback_host(h, (size_t)(e - h));
}

static int in_list(const char *s, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}

static void dec_url(gb_ydec *c, const gb_ynode *v, const char *kp,
                    const char *what, char **out)
{
	char *s;
	if (gb_ydec_str(c, v, kp, &s) != 0)
		return;
	if (!gb_oidc_url_ok(s)) {
		ERR(c, v, kp, "%s must be an https:// URL (http:// only for a "
		    "test issuer on 127.0.0.1, [::1] or localhost)", what);
		free(s);
		return;
	}
	*out = s;
}

static void dec_claims(gb_ydec *c, const gb_ynode *v, const char *kp,
                       gb_oidc_rule *r)
{
	if (gb_ydec_strmap(c, v, kp, &r->claims) != 0)
		return;
	if (!r->claims.n)
		ERR(c, v, kp, "a rule needs at least one claim to match (e.g. "
		    "repository: org/repo): without one it would trust every "
		    "job the issuer signs for");
	for (size_t i = 0; i < r->claims.n; i++) {
		char ckp[280];
		snprintf(ckp, sizeof(ckp), "%.192s.%.64s", kp,
		         r->claims.keys[i]);
		if (in_list(r->claims.keys[i], reserved_claims))
			ERR(c, v->keys[i], ckp, "\"%s\" is checked by the broker "
			    "itself (issuer, audience, times, replay); match "
			    "claims such as repository, ref or environment",
			    r->claims.keys[i]);
		else if (!r->claims.vals[i][0])
			ERR(c, v->items[i], ckp, "the value to match is empty");
	}
}

static void dec_rule(gb_ydec *c, const gb_ynode *n, const char *path,
                     gb_config *cfg)
{
	gb_oidc_rule r;
	const gb_ynode *v;
	char kp[192];
	int64_t x;
	int role = -1;
	memset(&r, 0, sizeof(r));
	r.max_ttl_s = 3600;
	if (gb_ydec_map(c, n, path, GB_CONFIG_KEYS("auth.oidc[]")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	snprintf(kp, sizeof(kp), "%s.issuer", path);
	if (!(v = gb_ymap_get(n, "issuer")))
		ERR(c, n, kp, "required key \"issuer\" is missing (e.g. "
		    "https://token.actions.githubusercontent.com)");
	else
		dec_url(c, v, kp, "the issuer", &r.issuer);
	snprintf(kp, sizeof(kp), "%s.audience", path);
	if (!(v = gb_ymap_get(n, "audience")))
		ERR(c, n, kp, "required key \"audience\" is missing: the aud "
		    "the CI job asks its ID token for (e.g. gpubroker)");
	else if (gb_ydec_str(c, v, kp, &r.audience) == 0 && !r.audience[0])
		ERR(c, v, kp, "the audience is empty");
	snprintf(kp, sizeof(kp), "%s.jwks_url", path);
	if ((v = gb_ymap_get(n, "jwks_url")))
		dec_url(c, v, kp, "jwks_url", &r.jwks_url);
	snprintf(kp, sizeof(kp), "%s.claims", path);
	if (!(v = gb_ymap_get(n, "claims")))
		ERR(c, n, kp, "required key \"claims\" is missing: which jobs "
		    "the rule trusts (e.g. {repository: org/repo, ref: "
		    "refs/heads/main})");
	else
		dec_claims(c, v, kp, &r);
	snprintf(kp, sizeof(kp), "%s.role", path);
	if (!(v = gb_ymap_get(n, "role")))
		ERR(c, n, kp, "required key \"role\" is missing (viewer or "
		    "operator)");
	else if (gb_ydec_enum(c, v, kp, oidc_roles, &role) == 0)
		r.role = (gb_role)role;
	snprintf(kp, sizeof(kp), "%s.team", path);
	if (!(v = gb_ymap_get(n, "team"))) {
		ERR(c, n, kp, "required key \"team\" is missing: the team the "
		    "exchanged token acts for");
	} else if (gb_ydec_str(c, v, kp, &r.team) == 0) {
		if (!gb_config__valid_name(r.team))
			ERR(c, v, kp, "invalid team name: use lowercase letters, "
			    "digits, '_', '.' and '-', starting with a letter");
		else if (cfg->nteams && !gb_config_team(cfg, r.team))
			ERR(c, v, kp, "team \"%s\" is not listed under teams:; "
			    "add it there or use a listed team", r.team);
	}
	snprintf(kp, sizeof(kp), "%s.max_ttl", path);
	if ((v = gb_ymap_get(n, "max_ttl")) &&
	    gb_ydec_duration(c, v, kp, &x) == 0) {
		if (x < 60 || x > 86400)
			ERR(c, v, kp, "must be from 1m to 24h (the exchanged "
			    "token also ends with the ID token)");
		else
			r.max_ttl_s = x;
	}
	cfg->oidc = gb_xrealloc(cfg->oidc, (cfg->noidc + 1) * sizeof(*cfg->oidc));
	cfg->oidc[cfg->noidc++] = r;
}

void gb_config__dec_auth(gb_ydec *c, const gb_ynode *n, gb_config *cfg)
{
	const gb_ynode *v;
	char d[128], ip[64];
	if (gb_ydec_map(c, n, "auth", GB_CONFIG_KEYS("auth")) != 0 &&
	    (!n || n->kind != GB_Y_MAP))
		return;
	if (!(v = gb_ymap_get(n, "oidc")) || v->invalid)
		return;
	if (v->kind != GB_Y_SEQ) {
		ERR(c, v, "auth.oidc", "expected a list of trust rules (each "
		    "starting with \"- \"), found %s",
		    gb_ydescribe(v, d, sizeof(d)));
		return;
	}
	for (size_t i = 0; i < v->n; i++) {
		snprintf(ip, sizeof(ip), "auth.oidc[%zu]", i);
		dec_rule(c, v->items[i], ip, cfg);
	}
}

void gb_config__free_auth(gb_config *cfg)
{
	for (size_t i = 0; i < cfg->noidc; i++) {
		gb_oidc_rule *r = &cfg->oidc[i];
		free(r->issuer);
		free(r->audience);
		free(r->jwks_url);
		gb_kvs_free(&r->claims);
		free(r->team);
	}
	free(cfg->oidc);
	cfg->oidc = NULL;
	cfg->noidc = 0;
}
