/* SPDX-License-Identifier: MIT */
/* memscribe.exe record [-o FILE] [-t TRACE] -- prog.exe args: start the
 * program suspended, load the collector into it, resume it, and drain its
 * events into FILE until it ends; then, with -t, write them as a memscribe
 * trace (format 1.2, zlib-coded chunks) into TRACE; exit with its status. */
#include "win_launch_internal.h"
#include "win_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <intrin.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

#define WIN_CMDLINE_MAX 32768
#define WIN_DRAIN_MS 2

static void usage(void)
{
    fputs("usage: memscribe.exe record [-o FILE] [-t TRACE] -- PROGRAM [ARGS...]\n", stderr);
    exit(2);
}

static void die(const char *what, const WCHAR *file)
{
    if (file)
        fprintf(stderr, "memscribe: %ls: %s\n", file, what);
    else
        fprintf(stderr, "memscribe: %s\n", what);
    exit(1);
}

/* Append arg to cmd quoted the way CommandLineToArgvW reads it back
 * (backslashes double only before a quote). */
static void quote_arg(WCHAR *cmd, size_t *len, const WCHAR *arg)
{
    size_t n = *len;
    int plain = arg[0] && !wcspbrk(arg, L" \t\n\v\"");

    if (n)
        cmd[n++] = L' ';
    if (plain) {
        for (const WCHAR *a = arg; *a && n < WIN_CMDLINE_MAX - 1; a++)
            cmd[n++] = *a;
        *len = n;
        return;
    }
    cmd[n++] = L'"';
    for (const WCHAR *a = arg;; a++) {
        size_t bs = 0;
        while (*a == L'\\') {
            a++;
            bs++;
        }
        if (n + 2 * bs + 3 >= WIN_CMDLINE_MAX)
            die("command line too long", NULL);
        if (!*a) {
            for (size_t i = 0; i < 2 * bs; i++)
                cmd[n++] = L'\\';
            break;
        }
        for (size_t i = 0; i < (*a == L'"' ? 2 * bs + 1 : bs); i++)
            cmd[n++] = L'\\';
        cmd[n++] = *a;
    }
    cmd[n++] = L'"';
    *len = n;
}

/* The collector beside this executable. */
static void collector_path(WCHAR *out, size_t n)
{
    DWORD len = GetModuleFileNameW(NULL, out, (DWORD)n);
    WCHAR *slash;

    if (!len || len >= n)
        die("cannot find my own path", NULL);
    slash = wcsrchr(out, L'\\');
    slash = slash ? slash + 1 : out;
    if ((size_t)(slash - out) + 32 > n)
        die("path too long", NULL);
    wcscpy(slash, L"memscribe_collector.dll");
}

/* A record the launcher writes itself (exit status, losses). */
static void launcher_record(FILE *out, unsigned kind, uint32_t pid, uint64_t seq, uint64_t a0,
                            uint64_t a1)
{
    struct win_rec r = {.kind = (uint16_t)kind,
                        .size = WIN_REC_HEAD_SIZE,
                        .pid = pid,
                        .seq = seq,
                        .tsc = __rdtsc(),
                        .a = {a0, a1}};
    fwrite(&r, sizeof(r), 1, out);
}

#define WIN_MAX_PROCS 256

static struct win_proc procs[WIN_MAX_PROCS];
static unsigned nr_procs;

/* A traced process asks for its new child (suspended) to be traced too. */
static void serve_child(struct win_proc *parent, const WCHAR *dll)
{
    struct win_shm_head *h = parent->shm;
    struct win_proc *c;
    char why[300];

    if (h->child_state != WIN_CHILD_REQUESTED)
        return;
    MemoryBarrier();
    if (nr_procs == WIN_MAX_PROCS) {
        fprintf(stderr, "memscribe: more than %d processes: child %u not traced\n", WIN_MAX_PROCS,
                h->child_pid);
        h->child_state = WIN_CHILD_FAILED;
        return;
    }
    c = &procs[nr_procs];
    *c = (struct win_proc){.pid = h->child_pid, .parent_pid = parent->pid};
    c->handle = OpenProcess(PROCESS_ALL_ACCESS, FALSE, c->pid);
    if (!c->handle || win_proc_attach(c, dll, why, sizeof(why)) != 0) {
        fprintf(stderr, "memscribe: child %lu not traced: %s\n", (unsigned long)c->pid,
                c->handle ? why : "OpenProcess failed");
        if (c->handle)
            CloseHandle(c->handle);
        h->child_state = WIN_CHILD_FAILED;
        return;
    }
    nr_procs++;
    MemoryBarrier();
    h->child_state = WIN_CHILD_DONE;
}

/* Drain every process until all have ended; children join on the way. */
static void drain_all(FILE *out, const WCHAR *out_path, const WCHAR *dll)
{
    unsigned live;

    do {
        long copied = 0, n;

        live = 0;
        for (unsigned i = 0; i < nr_procs; i++) {
            struct win_proc *p = &procs[i];
            DWORD status = 0;

            if (p->exited)
                continue;
            p->exited = WaitForSingleObject(p->handle, 0) == WAIT_OBJECT_0;
            if ((n = win_drain(p, out)) < 0)
                die("write failed, or the program overwrote its event segments", out_path);
            copied += n;
            if (!p->exited) {
                serve_child(p, dll);
                live++;
                continue;
            }
            GetExitCodeProcess(p->handle, &status);
            if (p->shm->dropped)
                launcher_record(out, WIN_REC_DROPPED, p->pid, (uint64_t)p->shm->seq + 1,
                                (uint64_t)p->shm->dropped, 0);
            launcher_record(out, WIN_REC_EXIT, p->pid, (uint64_t)p->shm->seq + 2, p->pid, status);
            copied++;
        }
        /* Whole rounds reach the file at once: memscribe record on Linux
         * reads it as it grows (docs/windows.md, "memscribe record"). */
        if (copied && fflush(out) != 0)
            die("write failed", out_path);
        if (live)
            Sleep(WIN_DRAIN_MS);
    } while (live);
}

/* The drained records, now complete on disk whatever the program did, as
 * a trace (win_trace.c), its chunks coded with zlib. */
static void write_trace(const WCHAR *in_path, const WCHAR *trace_path)
{
    struct win_file f;
    char err[512];
    FILE *in = _wfopen(in_path, L"rb");
    int fd, rc;

    if (!in || win_file_read(&f, in, "the event file", err, sizeof(err)))
        die(in ? err : strerror(errno), in_path);
    fd = _wopen(trace_path, _O_WRONLY | _O_CREAT | _O_TRUNC | _O_BINARY, _S_IREAD | _S_IWRITE);
    if (fd < 0)
        die(strerror(errno), trace_path);
    rc = win_trace_write(&f, fd, NULL, 1, err, sizeof(err));
    win_file_release(&f);
    if (_close(fd) && !rc)
        die("write failed", trace_path);
    if (rc)
        die(err, trace_path);
}

static int record(int argc, WCHAR **argv)
{
    static WCHAR cmd[WIN_CMDLINE_MAX], dll[MAX_PATH];
    const WCHAR *out_path = L"memscribe.mswin", *trace_path = NULL;
    STARTUPINFOW si = {.cb = sizeof(si)};
    PROCESS_INFORMATION pi;
    struct win_file_head fh = {.version = 1, .head_size = sizeof(fh)};
    size_t len = 0;
    char why[300];
    DWORD status = 1;
    int i = 0;
    FILE *out;

    while (i < argc && wcscmp(argv[i], L"--") != 0) {
        if (i + 1 >= argc)
            usage();
        if (wcscmp(argv[i], L"-o") == 0)
            out_path = argv[i + 1];
        else if (wcscmp(argv[i], L"-t") == 0)
            trace_path = argv[i + 1];
        else
            usage();
        i += 2;
    }
    if (i + 1 >= argc)
        usage();
    for (i++; i < argc; i++)
        quote_arg(cmd, &len, argv[i]);
    cmd[len] = 0;

    collector_path(dll, MAX_PATH);
    if (GetFileAttributesW(dll) == INVALID_FILE_ATTRIBUTES)
        die("collector DLL not found beside memscribe.exe", dll);
    out = _wfopen(out_path, L"wb");
    if (!out)
        die(strerror(errno), out_path);
    memcpy(fh.magic, WIN_FILE_MAGIC, 8);
    fwrite(&fh, sizeof(fh), 1, out);

    if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi)) {
        snprintf(why, sizeof(why), "cannot start the program: error %lu", GetLastError());
        die(why, cmd);
    }
    LARGE_INTEGER qpc0, qpc1, freq;
    uint64_t tsc0 = __rdtsc();
    QueryPerformanceCounter(&qpc0);
    procs[0] = (struct win_proc){.handle = pi.hProcess, .pid = pi.dwProcessId};
    nr_procs = 1;
    if (win_proc_attach(&procs[0], dll, why, sizeof(why)) != 0) {
        TerminateProcess(pi.hProcess, 1);
        die(why, dll);
    }
    ResumeThread(pi.hThread);
    CloseHandle(pi.hThread);
    drain_all(out, out_path, dll);
    uint64_t tsc1 = __rdtsc();
    QueryPerformanceCounter(&qpc1);
    QueryPerformanceFrequency(&freq);
    struct win_rec clock = {.kind = WIN_REC_CLOCK,
                            .size = WIN_REC_HEAD_SIZE,
                            .a = {tsc0, (uint64_t)qpc0.QuadPart, tsc1, (uint64_t)qpc1.QuadPart,
                                  (uint64_t)freq.QuadPart}};
    fwrite(&clock, sizeof(clock), 1, out);
    GetExitCodeProcess(procs[0].handle, &status);
    if (fclose(out) != 0)
        die("write failed", out_path);
    if (trace_path)
        write_trace(out_path, trace_path);
    return (int)status;
}

int wmain(int argc, WCHAR **argv);

int wmain(int argc, WCHAR **argv)
{
    if (argc < 2 || wcscmp(argv[1], L"record") != 0)
        usage();
    return record(argc - 2, argv + 2);
}
