/* SPDX-License-Identifier: MIT */
/* Module records: load address, image size and the CodeView record (PDB
 * name, GUID, age) read from each PE's debug directory, so that stacks can
 * be symbolized after the run (PE format: "Debug Directory", "RSDS"). */
#include "win_col_internal.h"

#include <psapi.h>
#include <stddef.h>
#include <string.h>

#define WIN_PATH_MAX 1024
#define WIN_MODULES_MAX 1024

struct win_cv_rsds {
    DWORD signature; /* 'RSDS' */
    BYTE guid[16];
    DWORD age;
    char pdb[1];
};

/* The RSDS record of the image at base, or NULL. */
static const struct win_cv_rsds *codeview_find(const BYTE *base)
{
    const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
    const IMAGE_NT_HEADERS *nt;
    const IMAGE_DATA_DIRECTORY *dd;

    if (dos->e_magic != IMAGE_DOS_SIGNATURE)
        return NULL;
    nt = (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
    if (nt->Signature != IMAGE_NT_SIGNATURE ||
        nt->OptionalHeader.Magic != IMAGE_NT_OPTIONAL_HDR_MAGIC ||
        nt->OptionalHeader.NumberOfRvaAndSizes <= IMAGE_DIRECTORY_ENTRY_DEBUG)
        return NULL;
    dd = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_DEBUG];
    if (!dd->VirtualAddress || dd->Size > nt->OptionalHeader.SizeOfImage)
        return NULL;
    const IMAGE_DEBUG_DIRECTORY *dbg = (const IMAGE_DEBUG_DIRECTORY *)(base + dd->VirtualAddress);
    for (size_t i = 0; i < dd->Size / sizeof(*dbg); i++) {
        if (dbg[i].Type != IMAGE_DEBUG_TYPE_CODEVIEW || !dbg[i].AddressOfRawData ||
            dbg[i].SizeOfData < offsetof(struct win_cv_rsds, pdb) + 1 ||
            dbg[i].AddressOfRawData + dbg[i].SizeOfData > nt->OptionalHeader.SizeOfImage)
            continue;
        const struct win_cv_rsds *cv = (const struct win_cv_rsds *)(base + dbg[i].AddressOfRawData);
        if (cv->signature == 0x53445352 /* "RSDS" */)
            return cv;
    }
    return NULL;
}

void win_col_module_emit(struct win_thread *t, const void *base, const WCHAR *path)
{
    const BYTE *b = base;
    const IMAGE_DOS_HEADER *dos = base;
    const struct win_cv_rsds *cv = codeview_find(b);
    WCHAR wpath[WIN_PATH_MAX];
    char text[2 * WIN_PATH_MAX];
    uint64_t a[5] = {(uintptr_t)base, 0, 0, 0, 0};
    int n = 0;

    if (dos->e_magic == IMAGE_DOS_SIGNATURE) {
        const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(b + dos->e_lfanew);
        if (nt->Signature == IMAGE_NT_SIGNATURE)
            a[1] = nt->OptionalHeader.SizeOfImage;
    }
    if (!path && GetMappedFileNameW(GetCurrentProcess(), (void *)base, wpath, WIN_PATH_MAX))
        path = wpath;
    if (path)
        n = WideCharToMultiByte(CP_UTF8, 0, path, -1, text, WIN_PATH_MAX, NULL, NULL);
    if (n <= 0) {
        text[0] = 0;
        n = 1;
    }
    if (cv) {
        size_t pdb_len = strnlen(cv->pdb, WIN_PATH_MAX - 1);
        a[2] = cv->age;
        memcpy(&a[3], cv->guid, 16);
        memcpy(text + n, cv->pdb, pdb_len);
        n += (int)pdb_len;
    }
    text[n++] = 0;
    win_col_emit(t, WIN_REC_MODULE, 0, a, 5, 0, text, (uint32_t)n);
}

void win_col_modules_emit_all(struct win_thread *t)
{
    static HMODULE mods[WIN_MODULES_MAX];
    static WCHAR path[WIN_PATH_MAX];
    DWORD needed = 0;

    if (!EnumProcessModules(GetCurrentProcess(), mods, sizeof(mods), &needed))
        return;
    for (DWORD i = 0; i < needed / sizeof(HMODULE) && i < WIN_MODULES_MAX; i++) {
        DWORD len = GetModuleFileNameW(mods[i], path, WIN_PATH_MAX);
        win_col_module_emit(t, mods[i], len ? path : NULL);
    }
}
