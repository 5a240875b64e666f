/*
 * tzfile.h -- IANA time zones from the system's compiled zone files
 * (TZif, RFC 8536, versions 1 to 4; Debian's tzdata installs them under
 * /usr/share/zoneinfo).  No TZ environment, tzset or localtime: the
 * daemon is multi-threaded.
 *
 * Ownership: gb_tz_get returns a zone owned by a process-wide cache; it
 * is never freed and never changes after load, so any thread may read it
 * without locking.  gb_tz_parse returns a zone the caller frees with
 * gb_tz_free.
 *
 * Offsets: the transition table decides up to its last transition.  After
 * it, the v2+ footer's POSIX TZ string decides when it is one of the
 * common forms (std offset [dst [offset] ,start[/time],end[/time]] with
 * Mm.w.d, Jn or n rules, quoted <+03> names, v3 hours up to 167);
 * otherwise the last transition's offset holds.  Before the first
 * transition, time type 0 holds.
 */
#ifndef GB_TZFILE_H
#define GB_TZFILE_H

#include <stddef.h>
#include <stdint.h>

#define GB_ZONEINFO_DIR "/usr/share/zoneinfo"
#define GB_TZ_NAME_MAX 64

typedef struct gb_tz gb_tz;

/* 1 when name may be a zone name: 1..63 chars of [A-Za-z0-9/_+-], not
 * absolute, no ".." or empty path component. */
int gb_tz_name_ok(const char *name);

/* The zone GB_ZONEINFO_DIR/name, loaded once per process and cached
 * (thread-safe).  NULL with a message in err (what and why) when the name
 * is refused, the file is missing or is not a valid TZif file.  The zone
 * is owned by the cache and lives until exit. */
const gb_tz *gb_tz_get(const char *name, char *err, size_t errcap);

/* Parses TZif bytes; NULL with a message in err.  Caller frees. */
gb_tz *gb_tz_parse(const unsigned char *buf, size_t len, char *err,
                   size_t errcap);
void gb_tz_free(gb_tz *z);

/* Seconds east of UTC in effect at unix time t (Europe/Berlin: 3600 in
 * winter, 7200 in summer).  Pure; safe from any thread. */
int gb_tz_offset(const gb_tz *z, int64_t t);

/* The name the zone was loaded by ("" for gb_tz_parse). Borrowed. */
const char *gb_tz_name(const gb_tz *z);

#endif
