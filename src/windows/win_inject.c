/* SPDX-License-Identifier: MIT */
/* Shared memory for a traced process, and loading the collector into it
 * (VirtualAllocEx + WriteProcessMemory + CreateRemoteThread(LoadLibraryW)). */
#include "win_launch_internal.h"

#include <string.h>
#include <wchar.h>

#define WIN_SHM_SIZE (WIN_SHM_HEAD_SIZE + (size_t)WIN_SHM_NR_SEGS * WIN_SHM_SEG_SIZE)
#define WIN_INJECT_WAIT_MS 60000

DWORD win_shm_create(struct win_proc *p)
{
    WCHAR name[64];

    _snwprintf(name, 64, WIN_SHM_NAME_FMT, (unsigned long)p->pid);
    name[63] = 0;
    p->map = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE, 0, (DWORD)WIN_SHM_SIZE,
                                name);
    if (!p->map)
        return GetLastError();
    if (GetLastError() == ERROR_ALREADY_EXISTS)
        return ERROR_ALREADY_EXISTS; /* another memscribe traces this pid */
    p->shm = MapViewOfFile(p->map, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, 0);
    if (!p->shm)
        return GetLastError();
    /* Fresh pagefile-backed mappings are zero: every segment FREE and empty. */
    p->shm->version = WIN_SHM_VERSION;
    p->shm->nr_segs = WIN_SHM_NR_SEGS;
    p->shm->seg_size = WIN_SHM_SEG_SIZE;
    p->shm->pid = p->pid;
    p->shm->parent_pid = p->parent_pid;
    MemoryBarrier();
    p->shm->magic = WIN_SHM_MAGIC;
    return 0;
}

static int same_arch(HANDLE proc)
{
    BOOL them = FALSE, us = FALSE;

    if (!IsWow64Process(proc, &them) || !IsWow64Process(GetCurrentProcess(), &us))
        return 1; /* cannot tell: LoadLibraryW's failure will say */
    return them == us;
}

int win_inject(struct win_proc *p, const WCHAR *dll, char *why, size_t n)
{
    size_t bytes = (wcslen(dll) + 1) * sizeof(WCHAR);
    FARPROC load = GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "LoadLibraryW");
    void *remote;
    HANDLE th;
    DWORD code = 0;

    if (!same_arch(p->handle)) {
        snprintf(why, n, "the program is of the other architecture: use the %s memscribe.exe",
                 sizeof(void *) == 8 ? "i686" : "x86_64");
        return 1;
    }
    remote = VirtualAllocEx(p->handle, NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (!remote) {
        snprintf(why, n, "VirtualAllocEx: error %lu", GetLastError());
        return 1;
    }
    if (!WriteProcessMemory(p->handle, remote, dll, bytes, NULL)) {
        snprintf(why, n, "WriteProcessMemory: error %lu", GetLastError());
        return 1;
    }
    th = CreateRemoteThread(p->handle, NULL, 0, (LPTHREAD_START_ROUTINE)(void *)load, remote, 0,
                            NULL);
    if (!th) {
        snprintf(why, n, "CreateRemoteThread: error %lu", GetLastError());
        return 1;
    }
    if (WaitForSingleObject(th, WIN_INJECT_WAIT_MS) != WAIT_OBJECT_0) {
        snprintf(why, n, "LoadLibraryW did not return within %d s", WIN_INJECT_WAIT_MS / 1000);
        CloseHandle(th);
        return 1;
    }
    /* The exit code is the HMODULE cut to 32 bits: 0 may be a module at a
     * 4 GiB multiple. The collector's own word in the shared head decides. */
    GetExitCodeThread(th, &code);
    CloseHandle(th);
    VirtualFreeEx(p->handle, remote, 0, MEM_RELEASE);
    MemoryBarrier();
    if (p->shm->ready == 1)
        return 0;
    if (p->shm->ready == 2)
        snprintf(why, n, "collector: %.*s", (int)sizeof(p->shm->reason), p->shm->reason);
    else if (code == 0)
        snprintf(why, n, "LoadLibraryW failed in the program (collector DLL missing?)");
    else
        snprintf(why, n, "the collector loaded but did not start");
    return 1;
}

int win_proc_attach(struct win_proc *p, const WCHAR *collector_dll, char *why, size_t n)
{
    DWORD err = win_shm_create(p);

    if (err) {
        snprintf(why, n, "shared memory for process %lu: error %lu", p->pid, err);
        return 1;
    }
    if (win_inject(p, collector_dll, why, n) != 0)
        return 1;
    p->traced = 1;
    return 0;
}
