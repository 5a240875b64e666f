/* api_limits.c -- what the API counts per client address (open
 * connections, refusals written to the audit) and per token (on-demand
 * reconciles).  See api.h.
 *
 * Addresses live in a chained hash table.  An address stays in it while
 * it has connections open or a refusal budget that has not refilled yet
 * (a client that reconnects for every request must not get a fresh
 * budget each time), and is dropped after that.  The table holds at most
 * MAX_CLIENTS addresses; past that, new addresses share one entry (so
 * many addresses at once are limited together, never unlimited).
 *
 * Budgets are token buckets: `per_minute` requests at once, refilled at
 * per_minute / 60 a second. */
#include "api.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 4096
#define MAX_CLIENTS 65536
#define KEY_LEN 17 /* family byte + up to 16 address bytes */
/* budgets kept (tokens, instances) before the idle ones are dropped */
#define MAX_BUDGETS 1024

struct gb_api_client {
	unsigned char key[KEY_LEN];
	uint64_t conns;
	double tokens;        /* refusal budget left; < 0 = never used (full) */
	int64_t refill_ms;    /* when tokens was last brought up to date */
	uint64_t dropped;     /* refusals not written since the last one */
	gb_api_client *next;
};

typedef struct token_budget {
	char *who;
	double tokens;
	int64_t refill_ms;
	struct token_budget *next;
} token_budget;

struct gb_api_limits {
	pthread_mutex_t mu;
	gb_api_client *tab[NBUCKETS];
	gb_api_client overflow;
	size_t nclients;
	token_budget *tokens;
	size_t ntokens;       /* budgets in `tokens` */
	gb_api_limit_stats st;
};

gb_api_limits *gb_api_limits_new(void)
{
	gb_api_limits *l = gb_xcalloc(1, sizeof(*l));
	pthread_mutex_init(&l->mu, NULL);
	l->overflow.tokens = -1;
	memset(l->overflow.key, 0xff, KEY_LEN);
	return l;
}

void gb_api_limits_free(gb_api_limits *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < NBUCKETS; i++)
		while (l->tab[i]) {
			gb_api_client *c = l->tab[i];
			l->tab[i] = c->next;
			free(c);
		}
	while (l->tokens) {
		token_budget *t = l->tokens;
		l->tokens = t->next;
		free(t->who);
		free(t);
	}
	pthread_mutex_destroy(&l->mu);
	free(l);
}

/* The table's key for an address: IPv4-mapped IPv6 counts as IPv4. */
static void make_key(const struct sockaddr *sa, unsigned char key[KEY_LEN])
{
	memset(key, 0, KEY_LEN);
	if (!sa)
		return;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		key[0] = 4;
		memcpy(key + 1, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			key[0] = 4;
			memcpy(key + 1, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			key[0] = 6;
			memcpy(key + 1, in6->sin6_addr.s6_addr, 16);
		}
	} else {
		key[0] = (unsigned char)sa->sa_family;
	}
}

static size_t hash_key(const unsigned char key[KEY_LEN])
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < KEY_LEN; i++) {
		h ^= key[i];
		h *= 1099511628211ULL;
	}
	return (size_t)(h % NBUCKETS);
}

/* Brings c's refusal budget up to date (caller holds mu). */
static void refill(double *tokens, int64_t *at, int per_minute, int64_t now)
{
	if (*tokens < 0 || *tokens > per_minute) {
		*tokens = per_minute;
	} else if (now > *at) {
		*tokens += (double)(now - *at) * per_minute / 60000.0;
		if (*tokens > per_minute)
			*tokens = per_minute;
	}
	*at = now;
}

/* Whether the entry carries nothing worth keeping (caller holds mu): no
 * connection, nothing dropped, and a budget full again (a minute at the
 * most after its last use). */
static int removable(const gb_api_client *c, int64_t now)
{
	return c->conns == 0 && c->dropped == 0 &&
	       (c->tokens < 0 || now - c->refill_ms >= 60000);
}

/* Drops every removable entry (caller holds mu). */
static void sweep(gb_api_limits *l, int64_t now)
{
	for (size_t i = 0; i < NBUCKETS; i++)
		for (gb_api_client **pp = &l->tab[i]; *pp;) {
			gb_api_client *c = *pp;
			if (removable(c, now)) {
				*pp = c->next;
				free(c);
				l->nclients--;
			} else {
				pp = &c->next;
			}
		}
}

/* The entry of an address, created when create is set (caller holds
 * mu); the shared overflow entry when the table is full. */
static gb_api_client *lookup(gb_api_limits *l, const struct sockaddr *sa,
                             int create)
{
	unsigned char key[KEY_LEN];
	size_t h;
	gb_api_client *c;
	make_key(sa, key);
	h = hash_key(key);
	for (c = l->tab[h]; c; c = c->next)
		if (memcmp(c->key, key, KEY_LEN) == 0)
			return c;
	if (!create)
		return NULL;
	if (l->nclients >= MAX_CLIENTS) {
		sweep(l, gb_mono_ms());
		if (l->nclients >= MAX_CLIENTS)
			return &l->overflow;
	}
	c = gb_xcalloc(1, sizeof(*c));
	memcpy(c->key, key, KEY_LEN);
	c->tokens = -1;
	c->next = l->tab[h];
	l->tab[h] = c;
	l->nclients++;
	return c;
}

int gb_api_conn_check(gb_api_limits *l, const struct sockaddr *sa,
                      int max_total, int max_per_client)
{
	int why = 0;
	gb_api_client *c;
	pthread_mutex_lock(&l->mu);
	if (max_total > 0 && l->st.open >= (uint64_t)max_total) {
		why = 1;
		l->st.refused_total++;
	} else if (max_per_client > 0 && (c = lookup(l, sa, 0)) != NULL &&
	           c->conns >= (uint64_t)max_per_client) {
		why = 2;
		l->st.refused_client++;
	}
	pthread_mutex_unlock(&l->mu);
	return why;
}

gb_api_client *gb_api_conn_opened(gb_api_limits *l, const struct sockaddr *sa)
{
	gb_api_client *c;
	pthread_mutex_lock(&l->mu);
	c = lookup(l, sa, 1);
	c->conns++;
	l->st.open++;
	l->st.opened++;
	pthread_mutex_unlock(&l->mu);
	return c;
}

void gb_api_conn_closed(gb_api_limits *l, gb_api_client *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&l->mu);
	if (c->conns)
		c->conns--;
	if (l->st.open)
		l->st.open--;
	/* forget idle addresses now and then, not at every close */
	if (c->conns == 0 && l->nclients > NBUCKETS)
		sweep(l, gb_mono_ms());
	pthread_mutex_unlock(&l->mu);
}

int gb_api_refusal_admit(gb_api_limits *l, const struct sockaddr *sa,
                         int per_minute, uint64_t *dropped)
{
	gb_api_client *c;
	int ok;
	*dropped = 0;
	if (per_minute <= 0)
		return 1;
	pthread_mutex_lock(&l->mu);
	c = lookup(l, sa, 1);
	refill(&c->tokens, &c->refill_ms, per_minute, gb_mono_ms());
	ok = c->tokens >= 1;
	if (ok) {
		c->tokens -= 1;
		*dropped = c->dropped;
		c->dropped = 0;
	} else {
		c->dropped++;
		l->st.refusals_dropped++;
	}
	pthread_mutex_unlock(&l->mu);
	return ok;
}

/* Drops the budgets a minute past their last use (full again: nothing
 * worth keeping), but not `keep` (caller holds mu). */
static void sweep_budgets(gb_api_limits *l, const token_budget *keep)
{
	int64_t now = gb_mono_ms();
	for (token_budget **pp = &l->tokens; *pp;) {
		token_budget *t = *pp;
		if (t != keep && now - t->refill_ms >= 60000) {
			*pp = t->next;
			free(t->who);
			free(t);
			l->ntokens--;
		} else {
			pp = &t->next;
		}
	}
}

int gb_api_token_admit(gb_api_limits *l, const char *who, int per_minute,
                       int *retry_after_s)
{
	return gb_api_token_take(l, who, per_minute, 1, retry_after_s);
}

int gb_api_token_take(gb_api_limits *l, const char *who, int per_minute,
                      int n, int *retry_after_s)
{
	token_budget *t;
	int ok;
	*retry_after_s = 0;
	if (per_minute <= 0)
		return 1;
	if (n < 1)
		n = 1;
	pthread_mutex_lock(&l->mu);
	for (t = l->tokens; t; t = t->next)
		if (strcmp(t->who, who) == 0)
			break;
	if (t) {
		l->ntokens--; /* counted again below */
	} else {
		t = gb_xcalloc(1, sizeof(*t));
		t->who = gb_xstrdup(who);
		t->tokens = -1;
		t->next = l->tokens;
		l->tokens = t;
	}
	refill(&t->tokens, &t->refill_ms, per_minute, gb_mono_ms());
	if (++l->ntokens > MAX_BUDGETS)
		sweep_budgets(l, t);
	ok = t->tokens >= n;
	if (ok) {
		t->tokens -= n;
	} else {
		/* seconds until n whole requests are back, rounded up */
		double wait = (n - t->tokens) * 60.0 / per_minute;
		*retry_after_s = (int)wait + 1;
		l->st.token_limited++;
	}
	pthread_mutex_unlock(&l->mu);
	return ok;
}

void gb_api_limits_stats(gb_api_limits *l, gb_api_limit_stats *out)
{
	pthread_mutex_lock(&l->mu);
	*out = l->st;
	out->clients = l->nclients;
	pthread_mutex_unlock(&l->mu);
}
