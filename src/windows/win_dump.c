/* SPDX-License-Identifier: MIT */
/* win_dump FILE: print the interim Windows event file (docs/windows.md,
 * "Interim records") as text, one event a line, in each process's order.
 * Host tool: reads what memscribe.exe wrote under Wine or on Windows. */
#include "win_rec.h"

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
};

/* ns per tsc tick and the tsc of time 0, from the CLOCK record; 0 without. */
static double ns_per_tick;
static uint64_t tsc_zero;

static void clock_set(const struct win_rec *r)
{
    if (r->a[2] > r->a[0] && r->a[3] > r->a[1] && r->a[4]) {
        double seconds = (double)(r->a[3] - r->a[1]) / (double)r->a[4];
        ns_per_tick = seconds * 1e9 / (double)(r->a[2] - r->a[0]);
        tsc_zero = r->a[0];
    }
}

struct rec_ref {
    const struct win_rec *r;
};

static int by_pid_seq(const void *a, const void *b)
{
    const struct win_rec *x = ((const struct rec_ref *)a)->r, *y = ((const struct rec_ref *)b)->r;

    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void print_rec(const struct win_rec *r)
{
    const uint64_t *frames = (const uint64_t *)(r + 1);

    printf("%" PRIu32 " %" PRIu32 " %" PRIu64 " %s", r->pid, r->tid, r->seq, kind_names[r->kind]);
    /* time since the launcher started the program, when the clock is known */
    if (ns_per_tick > 0 && r->tsc >= tsc_zero)
        printf(" t_ns=%.0f", (double)(r->tsc - tsc_zero) * ns_per_tick);
    for (unsigned i = 0; i < 8 && arg_names[r->kind][i]; i++)
        if (arg_names[r->kind][i][0])
            printf(" %s=0x%" PRIx64, arg_names[r->kind][i], r->a[i]);
    if (r->kind == WIN_REC_MODULE) {
        const char *text = (const char *)(frames + r->nr_frames);
        size_t room = r->size - WIN_REC_HEAD_SIZE - 8u * r->nr_frames;
        size_t path_len = strnlen(text, room);
        const char *pdb = path_len < room ? text + path_len + 1 : "";
        const uint8_t *g = (const uint8_t *)&r->a[3];

        printf(" guid=");
        for (unsigned i = 0; i < 16; i++)
            printf("%02x", g[i]);
        printf(" path=%.*s pdb=%.*s", (int)path_len, text,
               (int)strnlen(pdb, room - (size_t)(pdb - text)), pdb);
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
    struct win_file_head fh;
    struct rec_ref *refs = NULL;
    size_t nr = 0, cap = 0, len;
    uint8_t *buf;
    long size;
    FILE *f;

    if (argc != 2) {
        fprintf(stderr, "usage: win_dump FILE\n");
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
        fprintf(stderr, "win_dump: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "win_dump: %s: cannot read\n", argv[1]);
        return 1;
    }
    fclose(f);
    len = (size_t)size;
    memcpy(&fh, buf, len < sizeof(fh) ? len : sizeof(fh));
    if (len < sizeof(fh) || memcmp(fh.magic, WIN_FILE_MAGIC, 8) != 0 || fh.version != 1 ||
        fh.head_size != sizeof(fh)) {
        fprintf(stderr, "win_dump: %s: not a memscribe Windows event file (version 1)\n", argv[1]);
        return 1;
    }
    for (size_t off = sizeof(fh); off < len;) {
        const struct win_rec *r = (const struct win_rec *)(buf + off);

        if (len - off < WIN_REC_HEAD_SIZE || r->size < WIN_REC_HEAD_SIZE || r->size % 8 ||
            r->size > len - off || r->kind == 0 || r->kind > WIN_REC_KIND_MAX ||
            r->nr_frames > WIN_REC_MAX_FRAMES || WIN_REC_HEAD_SIZE + 8u * r->nr_frames > r->size) {
            fprintf(stderr, "win_dump: %s: corrupt record at byte %zu\n", argv[1], off);
            return 1;
        }
        if (nr == cap) {
            cap = cap ? 2 * cap : 1024;
            refs = realloc(refs, cap * sizeof(*refs));
            if (!refs) {
                fprintf(stderr, "win_dump: %s: out of memory\n", argv[1]);
                return 1;
            }
        }
        refs[nr++].r = r;
        if (r->kind == WIN_REC_CLOCK)
            clock_set(r);
        off += r->size;
    }
    if (nr)
        qsort(refs, nr, sizeof(*refs), by_pid_seq);
    for (size_t i = 0; i < nr; i++)
        print_rec(refs[i].r);
    free(refs);
    free(buf);
    return 0;
}
