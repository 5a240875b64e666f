/*
 * drvc_mem.h -- allocation helpers for drivers: like the core's gb_x*,
 * they abort on allocation failure (HACKING.md: allocation failures
 * abort), so callers never test for NULL.
 *
 * Part of the driver SDK (gpubroker-driver-sdk; drivers/README.md).
 * Ownership: every pointer returned is the caller's, freed with free().
 * Thread-safety: as malloc (safe from any thread).
 */
#ifndef DRVC_MEM_H
#define DRVC_MEM_H

#include <stddef.h>

void *drvc_xmalloc(size_t n);
void *drvc_xcalloc(size_t n, size_t size);
void *drvc_xrealloc(void *p, size_t n);
char *drvc_xstrdup(const char *s);          /* NULL in -> NULL out */
char *drvc_xstrndup(const char *s, size_t n);
/* printf into a fresh string. */
char *drvc_xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* Overwrite n bytes with zeros in a way the compiler keeps, then free. */
void drvc_free_secret(char *s);

#endif
