/*
 * driver_int.h -- the driver loader's private parts, shared by driver.c,
 * driver_elf.c and driver_guard.c (not for other core files: they use
 * drivers.h).
 */
#ifndef GB_DRIVER_INT_H
#define GB_DRIVER_INT_H

#include <stddef.h>

/* Is path a complete ELF shared object for this machine (class, byte
 * order, machine, ET_DYN; program headers, every PT_LOAD segment and the
 * section header table inside the file)?  dlopen maps what the headers
 * promise: a truncated file would die with SIGBUS inside it.  Reads the
 * file with read(2) only, so it cannot crash.  (A file changed between
 * this check and dlopen is not covered: the loading guard below still
 * names it if dlopen dies.)  0, or -1 with err saying "PATH: cannot
 * load: what is wrong: how to fix it". */
int gb_drv_check_elf(const char *path, char *err, size_t cap);

/* May the file at path be loaded into this process (driver_perm.c)?  As
 * sshd's StrictModes: after resolving symlinks, the file and every folder
 * above it must be owned by root or this process's user and writable by
 * no one else (a folder writable by others only with the sticky bit, as
 * /tmp: no one else can rename or remove what is in it).  0 with the
 * resolved path in *resolved (caller frees; load that one), or -1 with
 * err naming the path, the culprit and the fix. */
int gb_drv_check_perms(const char *path, char **resolved, char *err,
                       size_t cap);

/* ---- the loading guard (driver_guard.c) ----
 *
 * Between gb_drv_guard_enter and gb_drv_guard_leave the process reports
 * a misbehaving driver instead of dying in silence:
 *   - SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT (in any thread) write
 *     "gpubroker: driver NAME (PATH) crashed with SIGSEGV while loading;
 *     ..." to stderr and end the process with that signal;
 *   - SIGTERM and SIGINT (unless ignored) are unblocked in the calling
 *     thread and write "gpubroker: stopped by SIGTERM while driver NAME
 *     (PATH) was loading" before ending the process with that signal;
 *   - exit() (a constructor's or init's) writes "gpubroker: driver NAME
 *     (PATH) called exit() while loading; refusing to report success"
 *     and ends the process with status 1.
 * The previous handlers, signal mask and alternate stack are restored by
 * leave.  enter takes a process-wide lock: one driver loads at a time.
 * Call both from the same thread. */
typedef enum gb_drv_phase {
	GB_DRV_PHASE_LOADING = 0, /* dlopen, constructors, the entry */
	GB_DRV_PHASE_INIT         /* the descriptor's init() */
} gb_drv_phase;

void gb_drv_guard_enter(const char *name, const char *path,
                        gb_drv_phase phase);
void gb_drv_guard_leave(void);

/* For a thread that runs driver code under the guard (init's thread):
 * gives it an alternate signal stack, so a stack overflow is still
 * reported.  Returns what gb_drv_guard_thread_end releases; call both
 * in that thread. */
void *gb_drv_guard_thread_begin(void);
void gb_drv_guard_thread_end(void *stack);

#endif
