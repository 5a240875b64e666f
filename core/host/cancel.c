/* cancel.c -- the stop flag and per-thread deadlines of driver calls. */
#include "cancel.h"

#include <stddef.h>

#include "util.h"

/* longest uninterrupted nap of a cancellable sleep */
#define SLICE_MS 50

static volatile sig_atomic_t *g_stop; /* __atomic access only */
static _Thread_local int64_t t_deadline;

void gb_cancel_set_stop(volatile sig_atomic_t *flag)
{
	__atomic_store_n(&g_stop, flag, __ATOMIC_SEQ_CST);
}

void gb_cancel_clear_stop(volatile sig_atomic_t *flag)
{
	volatile sig_atomic_t *expect = flag;
	__atomic_compare_exchange_n(&g_stop, &expect, NULL, 0, __ATOMIC_SEQ_CST,
	                            __ATOMIC_SEQ_CST);
}

int64_t gb_cancel_deadline(int64_t mono_ms)
{
	int64_t old = t_deadline;
	t_deadline = mono_ms;
	return old;
}

int gb_cancelled(void)
{
	volatile sig_atomic_t *s = __atomic_load_n(&g_stop, __ATOMIC_SEQ_CST);
	if (s && *s)
		return 1;
	return t_deadline > 0 && gb_mono_ms() >= t_deadline;
}

int gb_cancel_sleep_ms(int64_t ms)
{
	int64_t end = gb_mono_ms() + ms;
	for (;;) {
		int64_t left = end - gb_mono_ms();
		if (gb_cancelled())
			return 1;
		if (left <= 0)
			return 0;
		gb_sleep_ms(left < SLICE_MS ? left : SLICE_MS);
	}
}
