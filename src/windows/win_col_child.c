/* SPDX-License-Identifier: MIT */
/* Following children: kernelbase's CreateProcessInternalW (where
 * CreateProcessA/W and their kin end) starts the child suspended, the
 * launcher loads the collector into it, and only then does it run. */
#include "win_col_internal.h"

#include "win_hook.h"

#include <errno.h>
#include <stdio.h>

/* How long a parent waits for the launcher to load the collector. */
#define WIN_CHILD_WAIT_MS 60000

typedef BOOL(WINAPI *create_fn)(HANDLE, LPCWSTR, LPWSTR, LPSECURITY_ATTRIBUTES,
                                LPSECURITY_ATTRIBUTES, BOOL, DWORD, LPVOID, LPCWSTR, LPSTARTUPINFOW,
                                LPPROCESS_INFORMATION, PHANDLE);

static create_fn real_create;

/* Ask the launcher to trace pid; 1 when it did. */
static int child_request(DWORD pid)
{
    struct win_shm_head *h = win_col.shm;
    int traced;

    while (InterlockedCompareExchange((volatile LONG *)&h->child_state, WIN_CHILD_CLAIMED,
                                      WIN_CHILD_NONE) != WIN_CHILD_NONE)
        Sleep(1);
    h->child_pid = pid;
    MemoryBarrier();
    h->child_state = WIN_CHILD_REQUESTED;
    for (DWORD waited = 0; h->child_state == WIN_CHILD_REQUESTED && waited < WIN_CHILD_WAIT_MS;
         waited++)
        Sleep(1);
    traced = h->child_state == WIN_CHILD_DONE;
    /* A launcher that never answered may answer late: it only writes DONE
     * or FAILED over REQUESTED, so NONE after the timeout is safe enough. */
    h->child_state = WIN_CHILD_NONE;
    return traced;
}

static BOOL WINAPI hook_create(HANDLE token, LPCWSTR app, LPWSTR cmd, LPSECURITY_ATTRIBUTES pa,
                               LPSECURITY_ATTRIBUTES ta, BOOL inherit, DWORD flags, LPVOID env,
                               LPCWSTR dir, LPSTARTUPINFOW si, LPPROCESS_INFORMATION pi,
                               PHANDLE new_token)
{
    BOOL ok = real_create(token, app, cmd, pa, ta, inherit, flags | CREATE_SUSPENDED, env, dir, si,
                          pi, new_token);
    struct win_thread *t;
    DWORD err = GetLastError();

    if (!ok || !win_col.shm)
        return ok;
    uint64_t a[] = {pi->dwProcessId, (uint64_t)child_request(pi->dwProcessId)};
    t = win_col_enter();
    if (t) {
        win_col_emit(t, WIN_REC_CHILD, 0, a, 2, 1, NULL, 0);
        win_col_leave(t);
    }
    if (!(flags & CREATE_SUSPENDED))
        ResumeThread(pi->hThread);
    SetLastError(err);
    return ok;
}

int win_col_child_hook(char *why, size_t why_size)
{
    HMODULE kb = GetModuleHandleW(L"kernelbase.dll");
    void *target = kb ? (void *)GetProcAddress(kb, "CreateProcessInternalW") : NULL;
    int rc;

    if (!target) {
        snprintf(why, why_size, "kernelbase has no CreateProcessInternalW");
        return -ENOENT;
    }
    rc = win_hook_install(target, (void *)hook_create, (void **)&real_create);
    if (rc)
        snprintf(why, why_size, "cannot hook CreateProcessInternalW: error %d", -rc);
    return rc;
}
