/* fake_stray_ctor.c -- a shared object that is no driver (no
 * gb_driver_entry) but has a constructor: it writes the file named by
 * GB_FAKE_CTOR_MARKER.  The loader must refuse it from its symbol table,
 * without dlopen running that constructor. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void stray(void)
{
	const char *p = getenv("GB_FAKE_CTOR_MARKER");
	FILE *f = p ? fopen(p, "w") : NULL;
	if (f) {
		fputs("the constructor ran\n", f);
		fclose(f);
	}
}

int fake_stray(void);
int fake_stray(void)
{
	return 1;
}
