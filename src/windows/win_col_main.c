/* SPDX-License-Identifier: MIT */
/* The collector DLL's entry: attach to the launcher's shared memory, hook,
 * and say so in the shared head (the launcher's proof that injection
 * worked: LoadLibraryW's truncated return value is not). */
#include "win_col_internal.h"

#include <stdio.h>

/* Write why the collector is off where the launcher reads it, and to stderr. */
static void col_fail(struct win_shm_head *h, const char *why)
{
    char line[256];
    DWORD n;
    int len = snprintf(line, sizeof(line), "memscribe: collector off: %s\n", why);

    if (h) {
        snprintf(h->reason, sizeof(h->reason), "%s", why);
        MemoryBarrier();
        h->ready = 2;
    }
    if (len > 0)
        WriteFile(GetStdHandle(STD_ERROR_HANDLE), line, (DWORD)len, &n, NULL);
}

/* The mapping the launcher made for this process. */
static struct win_shm_head *shm_open(void)
{
    WCHAR name[64];
    HANDLE m;
    void *p;

    _snwprintf(name, 64, WIN_SHM_NAME_FMT, (unsigned long)GetCurrentProcessId());
    name[63] = 0;
    m = OpenFileMappingW(FILE_MAP_READ | FILE_MAP_WRITE, FALSE, name);
    if (!m)
        return NULL;
    p = MapViewOfFile(m, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, 0);
    CloseHandle(m);
    return p;
}

static void col_init(HINSTANCE self)
{
    struct win_shm_head *h = shm_open();
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    char why[160];
    void *start;

    if (!h) {
        col_fail(NULL, "no shared memory from the launcher (run under memscribe.exe record)");
        return;
    }
    if (h->magic != WIN_SHM_MAGIC || h->version != WIN_SHM_VERSION ||
        h->seg_size != WIN_SHM_SEG_SIZE) {
        col_fail(h, "shared memory of another version");
        return;
    }
    win_col.tls = TlsAlloc();
    /* win_col_emit reads the slot from the TEB: only the first 64 live there */
    if (win_col.tls == TLS_OUT_OF_INDEXES || win_col.tls >= 64) {
        col_fail(h, "no TLS index below 64");
        return;
    }
    start = ntdll ? (void *)GetProcAddress(ntdll, "RtlUserThreadStart") : NULL;
    win_col.stop_lo = (uintptr_t)start;
    win_col.stop_hi = start ? (uintptr_t)start + 0x100 : 0;
    win_col.pid = GetCurrentProcessId();
    win_col.segs = (uint8_t *)h + WIN_SHM_HEAD_SIZE;
    if (win_col_hooks_install(why, sizeof(why)) != 0 || win_col_child_hook(why, sizeof(why)) != 0) {
        col_fail(h, why);
        return;
    }
    /* Pinned: the hooks jump into this DLL, so it must never unload. */
    HMODULE pinned;
    GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
                       (LPCWSTR)(void *)col_init, &pinned);
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)self;
    const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)((const BYTE *)self + dos->e_lfanew);
    win_col.self_lo = (uintptr_t)self;
    win_col.self_hi = (uintptr_t)self + nt->OptionalHeader.SizeOfImage;
    win_col.shm = h; /* recording starts here */
    struct win_thread *t = win_col_enter();
    if (t) {
        uint64_t a[] = {win_col.pid, h->parent_pid, sizeof(void *)};
        win_col_emit(t, WIN_REC_PROCESS, 0, a, 3, 0, NULL, 0);
        win_col_modules_emit_all(t);
        win_col_regions_emit_all(t, h);
        win_col_leave(t);
    }
    MemoryBarrier();
    h->ready = 1;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved);

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    switch (reason) {
    case DLL_PROCESS_ATTACH:
        col_init(inst);
        break;
    case DLL_THREAD_DETACH:
        win_col_thread_exit();
        break;
    case DLL_PROCESS_DETACH:
        if (win_col.shm)
            win_col_thread_exit();
        break;
    }
    return TRUE;
}
