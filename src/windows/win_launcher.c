/* SPDX-License-Identifier: MIT */
/* memscribe.exe record [-o FILE] -- prog.exe args: start the program
 * suspended, load the collector into it, resume it, and drain its events
 * into FILE until it ends; exit with its status. */
#include "win_launch_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define WIN_CMDLINE_MAX 32768
#define WIN_DRAIN_MS 2

static void usage(void)
{
    fputs("usage: memscribe.exe record [-o FILE] -- PROGRAM [ARGS...]\n", stderr);
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
    struct win_rec r = {
        .kind = (uint16_t)kind, .size = WIN_REC_HEAD_SIZE, .pid = pid, .seq = seq, .a = {a0, a1}};
    fwrite(&r, sizeof(r), 1, out);
}

static int record(int argc, WCHAR **argv)
{
    static WCHAR cmd[WIN_CMDLINE_MAX], dll[MAX_PATH], prefix[64];
    const WCHAR *out_path = L"memscribe.mswin";
    STARTUPINFOW si = {.cb = sizeof(si)};
    PROCESS_INFORMATION pi;
    struct win_proc p = {0};
    struct win_file_head fh = {.version = 1, .head_size = sizeof(fh)};
    size_t len = 0;
    char why[300];
    DWORD status = 1, err;
    int i = 0;
    FILE *out;

    while (i < argc && wcscmp(argv[i], L"--") != 0) {
        if (wcscmp(argv[i], L"-o") != 0 || i + 1 >= argc)
            usage();
        out_path = argv[i + 1];
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

    win_shm_prefix(prefix, 64);
    SetEnvironmentVariableW(WIN_SHM_ENV, prefix);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED, NULL, NULL, &si, &pi)) {
        snprintf(why, sizeof(why), "cannot start the program: error %lu", GetLastError());
        die(why, argv[0]);
    }
    p.handle = pi.hProcess;
    p.pid = pi.dwProcessId;
    err = win_shm_create(&p);
    if (err) {
        TerminateProcess(pi.hProcess, 1);
        snprintf(why, sizeof(why), "shared memory: error %lu", err);
        die(why, NULL);
    }
    if (win_inject(&p, dll, why, sizeof(why)) != 0) {
        TerminateProcess(pi.hProcess, 1);
        die(why, dll);
    }
    ResumeThread(pi.hThread);
    CloseHandle(pi.hThread);

    while (!p.exited) {
        p.exited = WaitForSingleObject(p.handle, WIN_DRAIN_MS) == WAIT_OBJECT_0;
        if (win_drain(&p, out) < 0)
            die("write failed, or the program overwrote its event segments", out_path);
    }
    GetExitCodeProcess(p.handle, &status);
    if (p.shm->dropped)
        launcher_record(out, WIN_REC_DROPPED, p.pid, (uint64_t)p.shm->seq + 1,
                        (uint64_t)p.shm->dropped, 0);
    launcher_record(out, WIN_REC_EXIT, p.pid, (uint64_t)p.shm->seq + 2, p.pid, status);
    if (fclose(out) != 0)
        die("write failed", out_path);
    return (int)status;
}

int wmain(int argc, WCHAR **argv);

int wmain(int argc, WCHAR **argv)
{
    if (argc < 2 || wcscmp(argv[1], L"record") != 0)
        usage();
    return record(argc - 2, argv + 2);
}
