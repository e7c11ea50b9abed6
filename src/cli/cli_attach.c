/* SPDX-License-Identifier: MIT */
/* record -p: the duration, the attach collector's path and its settings.
 * The injection itself is the recorder's (src/recorder/rec_attach.c). */
#include "cli/cli_attach.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "format/fmt_shm.h"

char *cli_attach_lib(const char *collector, int pid, int is32)
{
    const char *slash = strrchr(collector, '/');
    char *lib;

    if (asprintf(&lib, "%.*s/%slibmemscribe-attach.so", slash ? (int)(slash - collector) : 1,
                 slash ? collector : ".", is32 ? "i386/" : "") < 0)
        cli_die("record: out of memory");
    if (access(lib, R_OK) != 0 && is32)
        cli_die("record: process %d is a 32-bit program and the i386 attach collector %s is "
                "not there (%s): build memscribe with gcc-multilib",
                pid, lib, strerror(errno));
    if (access(lib, R_OK) != 0)
        cli_die("record: -p needs the attach collector %s: %s", lib, strerror(errno));
    return lib;
}

char *cli_attach_settings(const char *sock, const char *secret, uint32_t depth, int tsc,
                          uint64_t sample_bytes)
{
    static const char *const passed[] = {"MEMSCRIBE_FREE_STACKS", "MEMSCRIBE_UNWIND",
                                         "MEMSCRIBE_SAMPLE_SEED"};
    char *out = NULL, *more;

    if (asprintf(&out, "%s=%s\n%s=%s\n%s=%u\n%s=%s\n%s=0\n%s=%llu\n%s=%d\n", FMT_SHM_ENV_SOCKET,
                 sock, FMT_SHM_ENV_SECRET, secret, FMT_SHM_ENV_DEPTH, depth, FMT_SHM_ENV_CLOCK,
                 tsc ? "tsc" : "monotonic", FMT_SHM_ENV_NO_FOLLOW, FMT_SHM_ENV_SAMPLE,
                 (unsigned long long)sample_bytes, FMT_SHM_ENV_RECORDER_PID, (int)getpid()) < 0)
        cli_die("record: out of memory");
    for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
        const char *v = getenv(passed[i]);

        if (!v || strchr(v, '\n'))
            continue;
        if (asprintf(&more, "%s%s=%s\n", out, passed[i], v) < 0)
            cli_die("record: out of memory");
        free(out);
        out = more;
    }
    return out;
}
