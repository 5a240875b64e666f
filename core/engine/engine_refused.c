/* engine_refused.c -- permanent refusals: a cloud that refused a pool's
 * spec for good (an AUTH or INVALID error: no SSH key for Azure, an image
 * the cloud does not know, missing permissions), remembered per pool and
 * spec so the placement walk skips that cloud's candidates instead of
 * asking it again on every pass.  Another cloud may not need what the
 * spec lacks, so only the refusing cloud is skipped.
 *
 * The memory is this process's (the daemon's engine lives as long as the
 * daemon): an entry holds until the spec changes (another spec text:
 * another key) or GB_REFUSED_RETRY_MS passed since the refusal; a
 * pool's note (gb_store_pool_set_note, with the same retry time) keeps a
 * pool that nothing can place from walking at all until then, across
 * restarts too. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

struct gb_cloud_refusal {
	char *pool;
	char key[65];          /* sha256 of the spec's canonical JSON */
	char *cloud;
	gb_err_class cls;
	char code[96];
	char *words;           /* "azure refused the request (invalid,
	                          SshKeyRequired): ..." (redacted) */
	int64_t until_ms;      /* unix ms: skipped until then */
	struct gb_cloud_refusal *next;
};

void gb_engine__spec_key(const gb_pool_spec *spec, char out[65])
{
	char *js = gb_pool_spec_to_json(spec);
	gb_sha256_hex(js, strlen(js), out);
	free(js);
}

static void refusal_free(struct gb_cloud_refusal *r)
{
	free(r->pool);
	free(r->cloud);
	free(r->words);
	free(r);
}

/* The entry of (pool, cloud), under refused_mu; NULL when none. */
static struct gb_cloud_refusal **find(gb_engine *e, const char *pool,
                                const char *cloud)
{
	for (struct gb_cloud_refusal **pp = &e->refused; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->pool, pool) == 0 &&
		    strcmp((*pp)->cloud, cloud) == 0)
			return pp;
	return NULL;
}

int gb_engine__refuse(gb_engine *e, const char *pool, const char *key,
                      const char *cloud, const gb_error *err,
                      int64_t *until_ms, char **words)
{
	struct gb_cloud_refusal **pp, *r;
	int64_t now = gb_now_ms();
	char *raw = gb_xasprintf("%s refused the request (%s%s%s): %s", cloud,
	                         gb_err_class_name(err->cls),
	                         err->code[0] ? ", " : "", err->code,
	                         err->message[0] ? err->message
	                                         : "no reason given");
	char *w = gb_redact(raw);
	int same;
	free(raw);
	pthread_mutex_lock(&e->refused_mu);
	pp = find(e, pool, cloud);
	r = pp ? *pp : NULL;
	same = r && strcmp(r->key, key) == 0 && r->cls == err->cls &&
	       strcmp(r->code, err->code) == 0;
	if (!r) {
		r = gb_xcalloc(1, sizeof(*r));
		r->pool = gb_xstrdup(pool);
		r->cloud = gb_xstrdup(cloud);
		r->next = e->refused;
		e->refused = r;
	}
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->cls = err->cls;
	snprintf(r->code, sizeof(r->code), "%s", err->code);
	free(r->words);
	r->words = w;
	r->until_ms = now + GB_REFUSED_RETRY_MS;
	*until_ms = r->until_ms;
	*words = gb_xstrdup(w);
	pthread_mutex_unlock(&e->refused_mu);
	return same;
}

int gb_engine__refused(gb_engine *e, const char *pool, const char *key,
                       const char *cloud, int64_t *until_ms, char **words)
{
	struct gb_cloud_refusal **pp;
	int yes = 0;
	pthread_mutex_lock(&e->refused_mu);
	pp = find(e, pool, cloud);
	if (pp && strcmp((*pp)->key, key) == 0 &&
	    (*pp)->until_ms > gb_now_ms()) {
		yes = 1;
		*until_ms = (*pp)->until_ms;
		*words = gb_xstrdup((*pp)->words);
	}
	pthread_mutex_unlock(&e->refused_mu);
	return yes;
}

void gb_engine__forget_refusals(gb_engine *e, const char *pool)
{
	struct gb_cloud_refusal **pp;
	pthread_mutex_lock(&e->refused_mu);
	pp = &e->refused;
	while (*pp) {
		struct gb_cloud_refusal *r = *pp;
		if (!pool || strcmp(r->pool, pool) == 0) {
			*pp = r->next;
			refusal_free(r);
		} else {
			pp = &r->next;
		}
	}
	pthread_mutex_unlock(&e->refused_mu);
}

int gb_engine__note_refused(const char *note)
{
	return note && strncmp(note, GB_NOTE_REFUSED,
	                       strlen(GB_NOTE_REFUSED)) == 0;
}
