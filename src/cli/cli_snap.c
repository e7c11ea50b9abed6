/* SPDX-License-Identifier: MIT */
/* record --snapshot-every: pprof profiles while the program runs (see
 * cli_snap.h). */
#include "cli/cli_snap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "recorder/rec_session.h"
#include "util/util_outfile.h"

extern char **environ;

void cli_snap_init(struct cli_snap *sn, const char *dir, uint64_t every_ns, int quiet)
{
    memset(sn, 0, sizeof(*sn));
    sn->dir = strdup(dir);
    if (!sn->dir || asprintf(&sn->trace, "%s/trace.mscr", dir) < 0)
        cli_die("record: out of memory");
    sn->every_ns = every_ns;
    sn->quiet = quiet;
}

int cli_snap_make(struct cli_snap *sn, char *msg, size_t msg_size)
{
    struct util_outfile o;

    /* Its files are made with util_outfile_open: the trace here, each
     * profile by `memscribe export` under its temporary name. */
    if (util_outfile_dir(sn->dir, 0755, &o) == 0)
        return 0;
    snprintf(msg, msg_size, "--snapshot-every: cannot make the directory %s: %s", sn->dir, o.why);
    return -1;
}

/* The export that ran has ended with status: its file under its name, or
 * a word on stderr and no file. */
static void snap_done(struct cli_snap *sn, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (rename(sn->tmp, sn->final))
            cli_warn("record: snapshot %s: %s", sn->final, strerror(errno));
    } else {
        cli_warn("record: snapshot %s was not written (memscribe export %s %d)", sn->final,
                 WIFEXITED(status) ? "exited with" : "killed by signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        unlink(sn->tmp);
    }
    free(sn->tmp);
    free(sn->final);
    sn->tmp = sn->final = NULL;
    sn->pid = 0;
}

static void snap_start(struct cli_snap *sn, struct rec_session *s)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    posix_spawn_file_actions_t fa;
    int rc;

    /* What the reader will see: every event merged so far, in whole chunks. */
    if (rec_session_flush(s) < 0)
        return; /* the loop reports the write error */
    if (n <= 0)
        cli_die("record: cannot find my own executable: %s", strerror(errno));
    self[n] = 0;
    sn->nr++;
    if (asprintf(&sn->final, "%s/heap.%04u.pb.gz", sn->dir, sn->nr) < 0 ||
        asprintf(&sn->tmp, "%s/.heap.%04u.pb.gz.part", sn->dir, sn->nr) < 0)
        cli_die("record: out of memory");
    char *argv[] = {self, "export", "--to", "pprof", "-o", sn->tmp, sn->trace, NULL};
    /* Its notes (an unfinished trace, a sampled one) are for a person
     * reading a report, not for every tick. */
    if (posix_spawn_file_actions_init(&fa) ||
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ||
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0))
        cli_die("record: out of memory");
    rc = posix_spawn(&sn->pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        cli_warn("record: snapshot %s: cannot start memscribe export: %s", sn->final, strerror(rc));
        free(sn->tmp);
        free(sn->final);
        sn->tmp = sn->final = NULL;
        sn->pid = 0;
    }
}

/* Each round, after the recorder's reap: notes the end of the export
 * running, and when a period has passed flushes the trace and starts the
 * next export, unless one is still running (that tick is skipped). */
static void snap_round(struct rec_session *s, void *tap, uint64_t now_ns)
{
    struct cli_snap *sn = tap;
    int status;

    if (!sn->next_ns)
        sn->next_ns = rec_session_start_ns(s) + sn->every_ns;
    if (sn->pid && rec_session_child_status(s, sn->pid, &status))
        snap_done(sn, status);
    if (now_ns < sn->next_ns)
        return;
    while (sn->next_ns <= now_ns)
        sn->next_ns += sn->every_ns;
    if (rec_session_program_ended(s))
        return; /* the program ended: the trace is about to be whole */
    if (sn->pid)
        sn->nr_late++;
    else
        snap_start(sn, s);
}

/* After the recording (every child reaped): the end of the last export,
 * and how many were written. */
static void snap_finish(struct rec_session *s, void *tap)
{
    struct cli_snap *sn = tap;
    int status;

    if (sn->pid) {
        if (rec_session_child_status(s, sn->pid, &status) ||
            waitpid(sn->pid, &status, 0) == sn->pid)
            snap_done(sn, status);
    }
    if (!sn->quiet)
        cli_warn("record: %u snapshot(s) in %s%s", sn->nr, sn->dir,
                 sn->nr_late ? " (some ticks skipped: an export was still running)" : "");
}

const struct rec_tap_ops cli_snap_tap = {.round = snap_round, .finish = snap_finish};

void cli_snap_release(struct cli_snap *sn)
{
    free(sn->dir);
    free(sn->trace);
    sn->dir = sn->trace = NULL;
}
