/* workers.c -- a fork/join helper over pthreads. */
#include "workers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util.h"

typedef struct pf {
	atomic_size_t next;
	size_t n;
	void (*fn)(void *ud, size_t i);
	void *ud;
} pf;

static void *pf_worker(void *arg)
{
	pf *p = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&p->next, 1);
		if (i >= p->n)
			break;
		p->fn(p->ud, i);
	}
	return NULL;
}

void gb_parallel_for(size_t n, int threads, void (*fn)(void *ud, size_t i),
                     void *ud)
{
	pf p;
	pthread_t *t;
	char *started;
	size_t nt;
	if (n == 0)
		return;
	atomic_init(&p.next, 0);
	p.n = n;
	p.fn = fn;
	p.ud = ud;
	nt = threads > 1 ? (size_t)threads : 1;
	if (nt > n)
		nt = n;
	t = gb_xcalloc(nt, sizeof(*t));
	started = gb_xcalloc(nt, 1);
	/* nt - 1 helpers; this thread works too.  If a thread cannot be
	 * created, the remaining ones (at least this one) do the work. */
	for (size_t k = 1; k < nt; k++)
		started[k] = pthread_create(&t[k], NULL, pf_worker, &p) == 0;
	pf_worker(&p);
	for (size_t k = 1; k < nt; k++)
		if (started[k])
			pthread_join(t[k], NULL);
	free(started);
	free(t);
}
