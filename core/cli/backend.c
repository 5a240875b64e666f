/* backend.c -- picks the local or the remote backend (backend.h). */
#include "backend.h"

static volatile sig_atomic_t stop_flag;

/* the signal's number: both are non-zero */
static void on_signal(int sig)
{
	stop_flag = sig;
}

void gb_backend_catch_signals(gb_backend *b)
{
	b->stop = &stop_flag;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

int gb_backend_open(gb_cli *cli, unsigned needs, gb_backend **out)
{
	*out = NULL;
	if (cli->server)
		return gb_remote_backend_open(cli, needs, out);
	return gb_local_backend_open(cli, needs, out);
}

void gb_backend_close(gb_backend *b)
{
	if (b)
		b->ops->close(b);
}

int gb_backend_stopped(const gb_backend *b)
{
	return b->stop && *b->stop;
}

int gb_backend_stop_status(const gb_backend *b)
{
	return gb_backend_stopped(b) ? 128 + (int)*b->stop : GB_EXIT_FAIL;
}
