/*
 * paths.h -- where gpubroker finds its drivers and data.
 *
 * Run from a build tree ($(BUILD)/bin/gpubroker) or an install
 * ($PREFIX/bin/gpubroker), the layout around the executable is the same:
 *   <exe>/../lib/gpubroker/drivers/<name>.so
 *   <exe>/../share/gpubroker/{drivers/<name>/data/, policies/}
 * so both are found relative to /proc/self/exe; GB_PREFIX (compiled in)
 * is the fallback.  GPUBROKER_DRIVER_DIR and GPUBROKER_DATA_DIR override.
 */
#ifndef GB_PATHS_H
#define GB_PATHS_H

/* Borrowed, computed once, never NULL. */
const char *gb_driver_dir(void);
const char *gb_data_dir(void);
/* The directory holding the running executable. Borrowed. */
const char *gb_bin_dir(void);
/* <data_dir>/policies. Borrowed. */
const char *gb_policy_dir(void);
/* The drivers installed in gb_driver_dir(): one name per NAME.so whose
 * NAME is 1-32 of [a-z0-9_-], sorted, NULL-terminated.  Read once (the
 * first call) and kept for the life of the process; borrowed.  These are
 * the clouds of a broker config that lists no drivers. */
const char *const *gb_driver_dir_names(void);

#endif
