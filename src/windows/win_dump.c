/* SPDX-License-Identifier: MIT */
/* win_dump FILE: print the interim Windows event file (docs/windows-internals.md,
 * "Interim records") as text, one event a line, in each process's order.
 * Host tool: reads what memscribe.exe wrote under Wine or on Windows. */
#include "win_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[WIN_REC_KIND_MAX + 1] = {
    [WIN_REC_HEAP_ALLOC] = "HEAP_ALLOC",
    [WIN_REC_HEAP_REALLOC] = "HEAP_REALLOC",
    [WIN_REC_HEAP_FREE] = "HEAP_FREE",
    [WIN_REC_HEAP_CREATE] = "HEAP_CREATE",
    [WIN_REC_HEAP_DESTROY] = "HEAP_DESTROY",
    [WIN_REC_VM_ALLOC] = "VM_ALLOC",
    [WIN_REC_VM_FREE] = "VM_FREE",
    [WIN_REC_VM_PROTECT] = "VM_PROTECT",
    [WIN_REC_MAP_VIEW] = "MAP_VIEW",
    [WIN_REC_UNMAP_VIEW] = "UNMAP_VIEW",
    [WIN_REC_MODULE] = "MODULE",
    [WIN_REC_PROCESS] = "PROCESS",
    [WIN_REC_EXIT] = "EXIT",
    [WIN_REC_THREAD] = "THREAD",
    [WIN_REC_DROPPED] = "DROPPED",
    [WIN_REC_CHILD] = "CHILD",
    [WIN_REC_CLOCK] = "CLOCK",
    [WIN_REC_REGION] = "REGION",
};

/* Names of a0..a7 per kind; NULL ends the list. */
static const char *const arg_names[WIN_REC_KIND_MAX + 1][9] = {
    [WIN_REC_HEAP_ALLOC] = {"heap", "flags", "size", "result", "", "", "", "depth"},
    [WIN_REC_HEAP_REALLOC] = {"heap", "flags", "ptr", "size", "result", "", "", "depth"},
    [WIN_REC_HEAP_FREE] = {"heap", "flags", "ptr", "result", "", "", "", "depth"},
    [WIN_REC_HEAP_CREATE] = {"flags", "base", "reserve", "commit", "result"},
    [WIN_REC_HEAP_DESTROY] = {"heap", "result"},
    [WIN_REC_VM_ALLOC] = {"process", "base", "size", "type", "protect", "status", "got",
                          "got_size"},
    [WIN_REC_VM_FREE] = {"process", "base", "size", "type", "protect", "status", "got", "got_size"},
    [WIN_REC_VM_PROTECT] = {"process", "base", "size", "old_protect", "protect", "status", "got",
                            "got_size"},
    [WIN_REC_MAP_VIEW] = {"process", "section", "size", "type", "protect", "status", "got",
                          "got_size"},
    [WIN_REC_UNMAP_VIEW] = {"process", "base", "", "", "", "status"},
    [WIN_REC_MODULE] = {"base", "size", "age"},
    [WIN_REC_PROCESS] = {"pid", "parent", "ptr_bytes"},
    [WIN_REC_EXIT] = {"pid", "status"},
    [WIN_REC_THREAD] = {"tid"},
    [WIN_REC_DROPPED] = {"records"},
    [WIN_REC_CHILD] = {"pid", "traced"},
    [WIN_REC_CLOCK] = {"tsc0", "qpc0", "tsc1", "qpc1", "qpc_freq"},
    [WIN_REC_REGION] = {"alloc_base", "base", "size", "state", "protect", "alloc_protect", "type",
                        "alloc_size"},
};

static void print_rec(const struct win_file *f, const struct win_rec *r)
{
    const uint64_t *frames = win_rec_frames(r);

    printf("%" PRIu32 " %" PRIu32 " %" PRIu64 " %s", r->pid, r->tid, r->seq, kind_names[r->kind]);
    /* time since the launcher started the program, when the clock is known */
    if (f->ns_per_tick > 0 && r->tsc >= f->tsc_zero)
        printf(" t_ns=%" PRIu64, win_file_ns(f, r));
    for (unsigned i = 0; i < 8 && arg_names[r->kind][i]; i++)
        if (arg_names[r->kind][i][0])
            printf(" %s=0x%" PRIx64, arg_names[r->kind][i], r->a[i]);
    if (r->kind == WIN_REC_MODULE) {
        const uint8_t *g = (const uint8_t *)&r->a[3];
        const char *path, *pdb;
        size_t path_len, pdb_len;

        win_rec_module_text(r, &path, &path_len, &pdb, &pdb_len);
        printf(" guid=");
        for (unsigned i = 0; i < 16; i++)
            printf("%02x", g[i]);
        printf(" path=%.*s pdb=%.*s", (int)path_len, path, (int)pdb_len, pdb);
    }
    if (r->nr_frames) {
        printf(" |");
        for (unsigned i = 0; i < r->nr_frames; i++)
            printf(" 0x%" PRIx64, frames[i]);
    }
    putchar('\n');
}

int main(int argc, char **argv)
{
    struct win_file f;
    char err[512];

    if (argc != 2) {
        fprintf(stderr, "usage: win_dump FILE\n");
        return 2;
    }
    if (win_file_load(&f, argv[1], err, sizeof(err))) {
        fprintf(stderr, "win_dump: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < f.nr; i++)
        print_rec(&f, f.recs[i]);
    win_file_release(&f);
    return 0;
}
