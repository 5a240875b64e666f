/* main.c -- the gpubroker executable. */
#include "cli.h"

int main(int argc, char **argv)
{
	return gb_cli_main(argc, argv);
}
