/* SPDX-License-Identifier: MIT */
/* `record -p PID`: the collector loaded by dlopen into a running program.
 * The recorder's injector (src/recorder/rec_attach.c) makes the program
 * call memscribe_attach_start() with the recording's settings, and later
 * memscribe_attach_stop(); the library stays loaded, inert, after that. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "collector/col_internal.h"

#define COL_EXPORT __attribute__((visibility("default")))

/* The settings the recorder handed over ("NAME=value" lines), which take
 * the environment's place: the program's own environment is not ours to
 * read or change. */
#define COL_ATTACH_SETTINGS_MAX 4096
static char col_settings[COL_ATTACH_SETTINGS_MAX];
/* The mark "a recorder is attached": set by memscribe_attach_start(),
 * cleared by memscribe_attach_stop() or once the recorder is seen gone. */
static _Atomic int col_attached;
/* The pid of the recorder that set the mark (its settings say it). */
static _Atomic int col_attach_recorder;

void col_attach_orphan(void)
{
    atomic_store(&col_attached, 0);
}

/* Is the mark stale: the recorder that set it was killed (SIGKILL: nobody
 * detached) and the collector has not had to wait for it since? */
static int col_attach_orphaned(void)
{
    int pid = atomic_load(&col_attach_recorder);

    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* Every getenv() of the collector's files resolves to this one in the
 * attach build (it is hidden, so the link binds our own calls to it and
 * nobody else's): the settings block, never the program's environment. */
__attribute__((visibility("hidden"))) char *getenv(const char *name);
__attribute__((visibility("hidden"))) char *getenv(const char *name)
{
    size_t len = strlen(name);

    for (char *p = col_settings; *p; p += strlen(p) + 1)
        if (!strncmp(p, name, len) && p[len] == '=')
            return p + len + 1;
    return NULL;
}

/* dlsym: the dlopen hook must jump to the real dlopen (which reads its
 * caller's address), so a new module's GOT is patched here instead, when
 * the program asks it for a function, and at our next events otherwise.
 * RTLD_NEXT depends on the caller too: passed on with a jump. */
COL_EXPORT void *dlsym(void *handle, const char *name)
{
    if (handle == RTLD_NEXT) {
        static void *(*real)(void *, const char *);

        if (!real)
            *(void **)&real = col_attach_dlsym(RTLD_DEFAULT, "dlsym");
        return real(handle, name);
    }
    return col_attach_dlsym(handle, name);
}

/* Start recording: settings are "NAME=value\n" lines (MEMSCRIBE_SOCKET,
 * MEMSCRIBE_SECRET, MEMSCRIBE_DEPTH, ...). Returns 0, -EBUSY if a
 * recorder is attached already, -EINVAL for bad settings, -ENOTSUP if an
 * earlier attach sampled at another rate, -EIO if the recorder cannot be
 * reached or the GOTs cannot be read. */
COL_EXPORT int memscribe_attach_start(const char *settings);
COL_EXPORT int memscribe_attach_start(const char *settings)
{
    struct col_thread *t;
    int expect = 0;
    size_t len = strlen(settings);
    const char *rec_pid;

    if (!atomic_compare_exchange_strong(&col_attached, &expect, 1)) {
        if (!col_attach_orphaned())
            return -EBUSY;
        /* Its stream ends here; col_attach_restart() starts ours. */
        col_turn_off(NULL, 0);
    }
    if (len >= sizeof(col_settings) - 1) {
        atomic_store(&col_attached, 0);
        return -EINVAL;
    }
    memset(col_settings, 0, sizeof(col_settings));
    for (size_t i = 0; i < len; i++) /* lines become strings, the block ends in two NULs */
        col_settings[i] = settings[i] == '\n' ? 0 : settings[i];
    rec_pid = getenv(FMT_SHM_ENV_RECORDER_PID);
    atomic_store(&col_attach_recorder, rec_pid ? atoi(rec_pid) : 0);
    if (atomic_load(&col_state) != COL_UNINIT) {
        int rc = col_attach_restart();

        if (rc != 0) {
            atomic_store(&col_attached, 0);
            return rc;
        }
    }
    t = col_enter(); /* starts the stream: hello, modules, mappings */
    if (!t) {
        atomic_store(&col_attached, 0);
        return -EIO;
    }
    col_leave(t);
    if (col_attach_patch(1) != 0) {
        col_attach_restore();
        col_turn_off(NULL, 0);
        atomic_store(&col_attached, 0);
        return -EIO;
    }
    return 0;
}

/* Stop: the GOTs as they were, every hook straight to the real function
 * from now on. Returns the number of entries put back, or -ENOENT if no
 * recording is attached. */
COL_EXPORT long memscribe_attach_stop(void);
COL_EXPORT long memscribe_attach_stop(void)
{
    uint32_t n;

    if (!atomic_load(&col_attached))
        return -ENOENT;
    n = col_attach_restore();
    col_ring_stamp_exit();
    col_turn_off(NULL, 0);
    atomic_store(&col_attached, 0);
    return (long)n;
}
