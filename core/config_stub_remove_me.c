/* Temporary: replaced by config.c (issue 2). */
#include "config.h"
#include <string.h>
#include <stdlib.h>
int gb_config_load(const char *path, gb_config *out, gb_diags *d)
{
	(void)path; (void)d;
	memset(out, 0, sizeof(*out));
	return 0;
}
void gb_config_free(gb_config *c) { (void)c; }
