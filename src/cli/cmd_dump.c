/* SPDX-License-Identifier: MIT */
/* memscribe dump: print a trace's events one per line in time order, the
 * reference every later subcommand is tested against (docs/dump.md). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cli/cli.h"
#include "cli/cli_getopt.h"
#include "cli/cli_sym.h"
#include "memscribe/trace.h"

#define DUMP_MAX_FRAMES 4096

struct dump_opts {
    int stacks;
    struct cli_sym_opts sym; /* how --stacks resolves frames */
    int header;
    int have_pid;
    uint32_t pid;
    int verify; /* --verify: check every event and chunk summary, print none */
};

static void usage(FILE *out)
{
    fprintf(out, "usage: memscribe dump [options] FILE\n\n"
                 "Print every event of a trace, one line each, in time order:\n"
                 "  TIME PID TID SERIAL KIND FIELDS... stack=ID [ends=#SERIAL]\n"
                 "TIME is seconds.nanoseconds since recording began; SERIAL is the\n"
                 "number of the block or mapping the event starts ('-' if none).\n\n"
                 "options:\n"
                 "  --stacks        after the events, print each stack they use, one\n"
                 "                  symbolized frame per line (docs/symbols.md)\n" CLI_SYM_USAGE
                 "  --pid P         only events of process P\n"
                 "  --header        first print the trace's header and tables as '#' lines\n"
                 "  --verify        print no event: read every one and check each chunk's\n"
                 "                  summary (the index leaks --index answers from) against\n"
                 "                  them; exit 0 if the trace is sound, 1 if not\n"
                 "  --format text   output format (text is the only one)\n"
                 "  -h, --help      show this help\n\n"
                 "A truncated trace is dumped up to its last whole chunk, with a note on\n"
                 "stderr. Exit status: 0 ok, 1 unreadable or corrupt trace, 2 usage error.\n"
                 "See docs/dump.md.\n");
}

/* Strings from the trace may hold anything: print them escaped and quoted. */
static void put_str(FILE *out, const char *s, uint32_t len, int nul_as_space)
{
    fputc('"', out);
    for (uint32_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!c && nul_as_space && i + 1 < len)
            fputc(' ', out);
        else if (!c && nul_as_space)
            continue;
        else if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void put_prot(FILE *out, uint64_t prot)
{
    fprintf(out, " prot=0x%" PRIx64 "(%c%c%c)", prot, prot & PROT_READ ? 'r' : '-',
            prot & PROT_WRITE ? 'w' : '-', prot & PROT_EXEC ? 'x' : '-');
}

struct dump_bit {
    uint64_t bit;
    const char *name;
};

static void put_bits(FILE *out, const char *key, uint64_t v, const struct dump_bit *names, size_t n)
{
    const char *sep = "";

    fprintf(out, " %s=0x%" PRIx64 "(", key, v);
    for (size_t i = 0; i < n; i++) {
        if ((v & names[i].bit) == names[i].bit && names[i].bit) {
            fprintf(out, "%s%s", sep, names[i].name);
            sep = "|";
            v &= ~names[i].bit;
        }
    }
    if (v)
        fprintf(out, "%s0x%" PRIx64, sep, v);
    fputc(')', out);
}

static void put_map_flags(FILE *out, uint64_t flags)
{
    static const struct dump_bit names[] = {
        {MAP_SHARED_VALIDATE, "SHARED_VALIDATE"},
        {MAP_SHARED, "SHARED"},
        {MAP_PRIVATE, "PRIVATE"},
        {MAP_FIXED, "FIXED"},
        {MAP_ANONYMOUS, "ANONYMOUS"},
        {MAP_GROWSDOWN, "GROWSDOWN"},
        {MAP_DENYWRITE, "DENYWRITE"},
        {MAP_EXECUTABLE, "EXECUTABLE"},
        {MAP_LOCKED, "LOCKED"},
        {MAP_NORESERVE, "NORESERVE"},
        {MAP_POPULATE, "POPULATE"},
        {MAP_NONBLOCK, "NONBLOCK"},
        {MAP_STACK, "STACK"},
        {MAP_HUGETLB, "HUGETLB"},
        {MAP_SYNC, "SYNC"},
        {MAP_FIXED_NOREPLACE, "FIXED_NOREPLACE"},
    };

    put_bits(out, "flags", flags, names, sizeof(names) / sizeof(names[0]));
}

static void put_mremap_flags(FILE *out, uint64_t flags)
{
    static const struct dump_bit names[] = {
        {1, "MAYMOVE"},
        {2, "FIXED"},
        {4, "DONTUNMAP"},
    };

    put_bits(out, "flags", flags, names, sizeof(names) / sizeof(names[0]));
}

static const char *origin_name(unsigned origin)
{
    const char *name = fmt_origin_name(origin);

    return name ? name : "unknown";
}

static const char *start_name(uint64_t how)
{
    static const char *const names[] = {"initial", "fork", "exec", "createprocess"};

    return how < sizeof(names) / sizeof(names[0]) ? names[how] : "unknown";
}

static void put_ends(FILE *out, const struct fmt_event *ev)
{
    if (!ev->ref)
        return;
    fprintf(out, " ends=#%" PRIu64, ev->ref);
    if (ev->nr_refs > 1)
        fprintf(out, "+%u", ev->nr_refs - 1);
    if (ev->flags & FMT_EVF_PARTIAL)
        fputs("(partial)", out);
}

/* Format 1.8's kinds (docs/aggregate.md): batch rows, transient moments and
 * where the trace is aggregated from. */
static void put_agg_fields(FILE *out, const struct fmt_event *ev)
{
    switch (ev->kind) {
    case FMT_EV_HEAP_BATCH: /* format 1.8: an interval's transient blocks of a site */
        fprintf(out,
                " blocks=%" PRIu64 " bytes=%" PRIu64 " temporary=%" PRIu64
                " temporary_bytes=%" PRIu64 " class=%" PRIu64,
                ev->arg[0], ev->size, ev->arg[1], ev->arg[2], ev->arg[3]);
        return;
    case FMT_EV_HEAP_TRANSIENT: /* format 1.8: transient bytes live at a highest moment */
        fprintf(out, " bytes=%" PRIu64 " blocks=%" PRIu64 " of=%s%s", ev->size, ev->arg[0],
                ev->arg[1] ? "image" : "all", (ev->flags & FMT_EVF_TRANSIENT_END) ? " end" : "");
        return;
    case FMT_EV_AGGREGATE: /* format 1.8: aggregated from here */
        fprintf(out, " period_ns=%" PRIu64 " why=%s", ev->arg[0],
                ev->arg[1] ? "max-size" : "asked");
        return;
    }
}

/* What every kind may carry, after its own fields: a pool's or a Windows
 * heap's, the flags, a snapshot's origin. */
static void put_flags(FILE *out, const struct fmt_event *ev)
{
    if (fmt_kind_is_heap_alloc(ev->kind) || ev->kind == FMT_EV_FREE) {
        if (ev->flags & FMT_EVF_POOL) /* a block of the program's pool (format 1.4) */
            fprintf(out, " pool=0x%" PRIx64, ev->arg[1]);
    }
    if ((ev->kind == FMT_EV_MALLOC || ev->kind == FMT_EV_REALLOC || ev->kind == FMT_EV_FREE) &&
        !(ev->flags & FMT_EVF_POOL) &&
        (ev->arg[0] | ev->arg[1])) /* a Windows heap call (format 1.2) */
        fprintf(out, " heap=0x%" PRIx64 " hflags=0x%" PRIx64, ev->arg[1], ev->arg[0]);
    if (ev->flags & FMT_EVF_FAILED)
        fputs(" failed", out);
    if (ev->flags & FMT_EVF_LIBC_MMAP)
        fputs(" libc-mmap", out);
    if (ev->flags & FMT_EVF_IN_PLACE)
        fputs(" in-place", out);
    if (ev->flags & FMT_EVF_COLLECTOR)
        fputs(" collector", out);
    if (ev->flags & FMT_EVF_HEAP_DESTROYED)
        fputs(" heap-destroyed", out);
    if (((ev->kind >= FMT_EV_MMAP && ev->kind <= FMT_EV_SBRK) || fmt_kind_is_win_vm(ev->kind) ||
         fmt_kind_is_heap_alloc(ev->kind)) && /* 1.9: a block a segment carries in */
        ev->origin)
        fprintf(out, " origin=%s", origin_name(ev->origin));
}

/* Windows virtual memory (format 1.2): PAGE_* and MEM_* as passed. */
static void put_win_vm_fields(FILE *out, const struct fmt_event *ev)
{
    fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64, ev->addr, ev->size);
    if (ev->kind == FMT_EV_VM_RESERVE || ev->kind == FMT_EV_VM_COMMIT)
        fprintf(out, " page=0x%" PRIx64 " mem=0x%" PRIx64 " asked=%" PRIu64, ev->arg[0], ev->arg[1],
                ev->arg[2]);
    else if (ev->kind == FMT_EV_VM_DECOMMIT || ev->kind == FMT_EV_VM_RELEASE)
        fprintf(out, " mem=0x%" PRIx64, ev->arg[1]);
    else if (ev->kind == FMT_EV_VM_PROTECT)
        fprintf(out, " page=0x%" PRIx64 " old=0x%" PRIx64, ev->arg[0], ev->arg[1]);
    else if (ev->kind == FMT_EV_SECTION_MAP)
        fprintf(out, " page=0x%" PRIx64 " mem=0x%" PRIx64 " section=0x%" PRIx64, ev->arg[0],
                ev->arg[1], ev->arg[2]);
}

static void put_module(FILE *out, const struct fmt_module *m)
{
    fprintf(out, " base=0x%" PRIx64 " path=", m->base);
    put_str(out, m->path, m->path_len, 0);
    fputs(" build_id=", out);
    for (uint32_t i = 0; i < m->build_id_len; i++)
        fprintf(out, "%02x", m->build_id[i]);
    if (!m->build_id_len)
        fputs("none", out);
}

/* A pool of the program (format 1.4) or a Windows heap made or
 * destroyed. */
static void put_heap_fields(FILE *out, const struct fmt_event *ev)
{
    if (ev->kind == FMT_EV_HEAP_DESTROY) {
        fprintf(out, (ev->flags & FMT_EVF_POOL) ? " pool=0x%" PRIx64 : " heap=0x%" PRIx64,
                ev->addr);
        return;
    }
    if (ev->flags & FMT_EVF_POOL) {
        fprintf(out, " pool=0x%" PRIx64 " name=", ev->addr);
        put_str(out, ev->str ? ev->str : "", ev->str_len, 0);
        return;
    }
    fprintf(out, " heap=0x%" PRIx64 " reserve=%" PRIu64 " commit=%" PRIu64 " hflags=0x%" PRIx64,
            ev->addr, ev->size, ev->arg[1], ev->arg[0]);
}

/* A process's start (its parent, how, executable, arguments) or exit. */
static void put_process_fields(FILE *out, const struct fmt_event *ev)
{
    if (ev->kind == FMT_EV_PROCESS_EXIT) {
        if (ev->arg[1])
            fprintf(out, " status=0x%" PRIx64, ev->arg[0]);
        else
            fputs(" status=unknown", out);
        return;
    }
    fprintf(out, " ppid=%" PRIu64 " how=%s exe=", ev->arg[0], start_name(ev->arg[1]));
    put_str(out, ev->str, ev->str_len, 0);
    fputs(" argv=", out);
    put_str(out, ev->str2, ev->str2_len, 1);
}

/* Fields that depend on the kind, after "KIND". */
static void put_fields(FILE *out, const struct fmt_event *ev)
{
    switch (ev->kind) {
    case FMT_EV_MALLOC:
    case FMT_EV_VALLOC:
    case FMT_EV_PVALLOC:
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64, ev->addr, ev->size);
        break;
    case FMT_EV_CALLOC:
    case FMT_EV_REALLOCARRAY:
        if (ev->kind == FMT_EV_REALLOCARRAY)
            fprintf(out, " old=0x%" PRIx64, ev->old_addr);
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64 " nmemb=%" PRIu64 " elem=%" PRIu64,
                ev->addr, ev->size, ev->arg[0], ev->arg[1]);
        break;
    case FMT_EV_MEMALIGN:
    case FMT_EV_ALIGNED_ALLOC:
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64 " align=%" PRIu64, ev->addr, ev->size,
                ev->arg[0]);
        break;
    case FMT_EV_POSIX_MEMALIGN:
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64 " align=%" PRIu64 " rc=%" PRId64, ev->addr,
                ev->size, ev->arg[0], (int64_t)ev->arg[1]);
        break;
    case FMT_EV_REALLOC:
        fprintf(out, " old=0x%" PRIx64 " addr=0x%" PRIx64 " size=%" PRIu64, ev->old_addr, ev->addr,
                ev->size);
        break;
    case FMT_EV_FREE:
        fprintf(out, " addr=0x%" PRIx64, ev->addr);
        if (ev->ref)
            fprintf(out, " size=%" PRIu64, ev->ref_size);
        break;
    case FMT_EV_MMAP:
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64, ev->addr, ev->size);
        put_prot(out, ev->arg[0]);
        put_map_flags(out, ev->arg[1]);
        fprintf(out, " fd=%" PRId64 " off=0x%" PRIx64, (int64_t)ev->arg[2], ev->arg[3]);
        break;
    case FMT_EV_MUNMAP:
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64, ev->addr, ev->size);
        break;
    case FMT_EV_MREMAP:
        fprintf(out, " old=0x%" PRIx64 " old_size=%" PRIu64 " addr=0x%" PRIx64 " size=%" PRIu64,
                ev->old_addr, ev->old_size, ev->addr, ev->size);
        put_mremap_flags(out, ev->arg[1]);
        break;
    case FMT_EV_MPROTECT:
        fprintf(out, " addr=0x%" PRIx64 " size=%" PRIu64, ev->addr, ev->size);
        put_prot(out, ev->arg[0]);
        break;
    case FMT_EV_BRK:
        fprintf(out, " addr=0x%" PRIx64 " req=0x%" PRIx64, ev->addr, ev->arg[0]);
        break;
    case FMT_EV_SBRK:
        fprintf(out, " addr=0x%" PRIx64 " incr=%" PRId64, ev->addr, (int64_t)ev->arg[0]);
        break;
    case FMT_EV_PROCESS_START:
    case FMT_EV_PROCESS_EXIT:
        put_process_fields(out, ev);
        break;
    case FMT_EV_THREAD_START:
    case FMT_EV_THREAD_NAME:
        if (ev->str) {
            fputs(" name=", out);
            put_str(out, ev->str, ev->str_len, 0);
        }
        break;
    case FMT_EV_MODULE_LOAD:
        if (ev->module)
            put_module(out, ev->module);
        break;
    case FMT_EV_MODULE_UNLOAD:
        fprintf(out, " base=0x%" PRIx64, ev->addr);
        break;
    case FMT_EV_RSS:
        fprintf(out, " rss=%" PRIu64, ev->size);
        break;
    case FMT_EV_DROPPED:
        fprintf(out, " count=%" PRIu64, ev->arg[0]);
        break;
    case FMT_EV_COUNTER: {
        char name[32];
        fprintf(out, " %s=%" PRIu64, fmt_counter_name((unsigned)ev->arg[0], name, sizeof(name)),
                ev->size);
        break;
    }
    case FMT_EV_HEAP_CREATE:
    case FMT_EV_HEAP_DESTROY:
        put_heap_fields(out, ev);
        break;
    case FMT_EV_HEAP_BATCH ... FMT_EV_AGGREGATE:
        put_agg_fields(out, ev);
        break;
    case FMT_EV_VM_RESERVE ... FMT_EV_SECTION_UNMAP:
        put_win_vm_fields(out, ev);
        break;
    }
    put_flags(out, ev);
}

static void dump_event(FILE *out, const struct fmt_event *ev)
{
    fprintf(out, "%" PRIu64 ".%09" PRIu64 " %u %u ", ev->ts_ns / 1000000000u,
            ev->ts_ns % 1000000000u, ev->pid, ev->tid);
    if (ev->serial)
        fprintf(out, "#%" PRIu64, ev->serial);
    else
        fputc('-', out);
    fprintf(out, " %s", fmt_kind_name(ev->kind));
    put_fields(out, ev);
    fprintf(out, " stack=%u", ev->stack);
    put_ends(out, ev);
    fputc('\n', out);
}

static void dump_header(FILE *out, const struct fmt_reader *r)
{
    const struct fmt_trace_info *info = fmt_reader_info(r);
    struct fmt_trace_counts c;

    fmt_reader_counts(r, &c);
    fprintf(out, "# memscribe trace version %u.%u%s\n", info->version_major, info->version_minor,
            fmt_reader_incomplete(r) ? " (incomplete)" : "");
    fprintf(out, "# start realtime_ns=%" PRIu64 " monotonic_ns=%" PRIu64 " recorder_pid=%u\n",
            info->start_realtime_ns, info->start_monotonic_ns, info->recorder_pid);
    if (info->time_unit_ns > 1) /* format 1.3; ns traces keep their old header */
        fprintf(out, "# time_unit_ns=%u\n", info->time_unit_ns);
    fputs("# command ", out);
    put_str(out, info->command ? info->command : "", info->command_len, 1);
    fputs(" host ", out);
    put_str(out, info->hostname ? info->hostname : "",
            info->hostname ? (uint32_t)strlen(info->hostname) : 0, 0);
    fprintf(out, " stack_depth=%u", info->stack_depth);
    if (info->sample_bytes) /* record --sample: sizes below are as recorded */
        fprintf(out, " sample_bytes=%" PRIu64, info->sample_bytes);
    fputc('\n', out);
    if (info->only) {
        /* record --only: only the processes it matched are in the trace. */
        fputs("# only ", out);
        put_str(out, info->only, (uint32_t)strlen(info->only), 0);
        fputc('\n', out);
    }
    if (info->attached_pid) /* record -p: blocks from before are not in it */
        fprintf(out, "# attached pid=%u (the trace starts mid-run)\n", info->attached_pid);
    if (info->aggregate_ns) /* format 1.8: record --aggregate, or --max-size's switch */
        fprintf(out, "# aggregate period_ns=%" PRIu64 " from_ns=%" PRIu64 "\n", info->aggregate_ns,
                info->aggregate_from_ns);
    if (info->keep_last_ns) /* format 1.9: record --keep-last's trace, or a segment of it */
        fprintf(out, "# keep-last ns=%" PRIu64 " segment=%u from_ns=%" PRIu64 "\n",
                info->keep_last_ns, info->segment_nr, info->segment_from_ns);
    if (info->wine_prefix || info->wine_dll_dirs_len) {
        /* record -- prog.exe: where C:\ paths and Wine's DLLs are found */
        fputs("# wine prefix ", out);
        put_str(out, info->wine_prefix ? info->wine_prefix : "",
                info->wine_prefix ? (uint32_t)strlen(info->wine_prefix) : 0, 0);
        fputs(" dlls ", out);
        put_str(out, info->wine_dll_dirs ? info->wine_dll_dirs : "",
                info->wine_dll_dirs_len ? info->wine_dll_dirs_len - 1 : 0, 1);
        fputc('\n', out);
    }
    fprintf(out,
            "# events=%" PRIu64 " heap_allocs=%" PRIu64 " serials=%" PRIu64 " dropped=%" PRIu64
            " chunks=%u stacks=%u images=%u threads=%u modules=%u\n",
            c.nr_events, c.nr_heap_allocs, c.nr_serials, c.nr_dropped, c.nr_chunks, c.nr_stacks,
            c.nr_images, c.nr_threads, c.nr_modules);
    for (uint32_t i = 0; i < fmt_reader_nr_images(r); i++) {
        const struct fmt_image_info *im = fmt_reader_image(r, i);
        fprintf(out, "# image %u pid=%u ppid=%u how=%s exe=", i, im->pid, im->ppid,
                im->has_start ? start_name(im->how) : "unknown");
        put_str(out, im->exe ? im->exe : "", im->exe_len, 0);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < fmt_reader_nr_threads(r); i++) {
        const struct fmt_thread_info *t = fmt_reader_thread(r, i);
        fprintf(out, "# thread %u image=%u pid=%u tid=%u name=", t->thread, t->image, t->pid,
                t->tid);
        put_str(out, t->name ? t->name : "", t->name_len, 0);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < fmt_reader_nr_modules(r); i++) {
        const struct fmt_module_info *m = fmt_reader_module(r, i);
        fprintf(out, "# module %u image=%u base=0x%" PRIx64 " path=", m->id, m->image, m->m.base);
        put_str(out, m->m.path ? m->m.path : "", m->m.path_len, 0);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < fmt_reader_nr_pools(r); i++) {
        const struct fmt_pool_info *p = fmt_reader_pool(r, i);
        fprintf(out, "# pool image=%u pool=0x%" PRIx64 " name=", p->image, p->handle);
        put_str(out, p->name, p->name_len, 0);
        fputc('\n', out);
    }
    for (uint32_t i = 0; i < fmt_reader_nr_reach(r); i++) {
        const struct fmt_reach_info *ri = fmt_reader_reach(r, i);

        fprintf(out,
                "# reach image=%u time=%" PRIu64 " %s threads=%u roots=%" PRIu64 " skipped=%" PRIu64
                " blocks=%" PRIu64 " reason=",
                ri->image, ri->ts_ns, ri->status == FMT_REACH_SCANNED ? "scanned" : "unavailable",
                ri->nr_threads, ri->root_bytes, ri->skipped_bytes, ri->nr_blocks);
        put_str(out, ri->reason, ri->reason_len, 0);
        fputc('\n', out);
        for (uint64_t k = 0; k < ri->nr_blocks; k++) {
            uint64_t serial = 0;
            unsigned cls = fmt_reader_reach_block(r, ri, k, &serial);

            fprintf(out, "#   serial=%" PRIu64 " %s\n", serial, fmt_reach_class_name(cls));
        }
    }
}

static void dump_stacks(FILE *out, const struct fmt_reader *r, const uint8_t *used,
                        const struct cli_sym_opts *so)
{
    struct ana_sym *s = cli_sym_open("dump", so, r);
    uint64_t *frames = malloc(DUMP_MAX_FRAMES * sizeof(*frames));
    struct fmt_trace_counts c;

    if (!frames)
        cli_die("dump: out of memory");
    fmt_reader_counts(r, &c);
    for (uint32_t id = 1; id <= c.nr_stacks; id++) {
        if (!(used[id / 8] & (1u << (id % 8))))
            continue;
        uint32_t image = 0;
        int depth = fmt_reader_stack(r, id, &image, frames, DUMP_MAX_FRAMES);
        if (depth < 0)
            continue;
        fprintf(out, "stack %u image=%u depth=%d\n", id, image, depth);
        cli_sym_print_stack("dump", out, s, image, frames,
                            (uint32_t)(depth < DUMP_MAX_FRAMES ? depth : DUMP_MAX_FRAMES), "  ");
    }
    cli_sym_print_notes(out, s);
    ana_sym_destroy(s);
    free(frames);
}

static void parse_args(int argc, char **argv, struct dump_opts *o, const char **path)
{
    static const struct option own[] = {
        {"stacks", no_argument, NULL, 's'},       {"pid", required_argument, NULL, 'p'},
        {"format", required_argument, NULL, 'f'}, {"header", no_argument, NULL, 'H'},
        {"verify", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
    };
    struct cli_getopt g = {.takes = CLI_TAKES_SYM, .own = own, .usage = usage};
    struct cli_ana ca;
    int c;

    cli_ana_init(&ca, "dump", 0);
    while ((c = cli_getopt(&g, &ca, argc, argv)) != -1) {
        switch (c) {
        case 's':
            o->stacks = 1;
            break;
        case 'H':
            o->header = 1;
            break;
        case 'V':
            o->verify = 1;
            break;
        case 'p': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || *end || !*optarg || v > UINT32_MAX || optarg[0] == '-')
                cli_usage_error("dump: --pid wants a process id, not '%s'", optarg);
            o->have_pid = 1;
            o->pid = (uint32_t)v;
            break;
        }
        case 'f':
            if (strcmp(optarg, "text"))
                cli_usage_error("dump: unknown --format '%s' (text is the only one)", optarg);
            break;
        }
    }
    o->sym = ca.sym;
    if (optind != argc - 1)
        cli_usage_error("dump: %s; see 'memscribe dump --help'",
                        optind == argc ? "no trace file given" : "more than one trace file given");
    *path = argv[optind];
}

int cmd_dump(int argc, char **argv)
{
    struct dump_opts o = {0};
    const char *path;
    struct fmt_reader *r;
    struct fmt_event ev;
    char err[600];
    uint8_t *used = NULL;
    int rc;

    parse_args(argc, argv, &o, &path);
    /* Events name their stacks by id: the definitions are read only for
     * --stacks, or checked by --verify (a build's are most of its trace's
     * memory). */
    if ((rc = fmt_reader_open_flags(&r, path, o.stacks || o.verify ? 0 : FMT_OPEN_STACKS_LATER, err,
                                    sizeof(err))))
        cli_die("dump: %s", err);
    fmt_reader_estimates(r, 0); /* dump shows what was recorded */
    if (fmt_reader_incomplete(r))
        cli_warn("dump: %s: trace is incomplete (no valid end: the recorder was killed or the "
                 "disk filled); showing its %u whole chunks",
                 path, fmt_reader_nr_chunks(r));
    if (o.verify && (o.header || o.stacks))
        cli_usage_error("dump: --verify prints nothing: not with --header or --stacks");
    if (o.verify)
        fmt_reader_verify_summaries(r, 1);
    if (o.header)
        dump_header(stdout, r);
    if (o.stacks) {
        struct fmt_trace_counts c;
        fmt_reader_counts(r, &c);
        used = calloc((size_t)c.nr_stacks / 8 + 1, 1);
        if (!used)
            cli_die("dump: out of memory");
    }
    while ((rc = fmt_reader_next(r, &ev)) > 0) {
        if (o.verify || (o.have_pid && ev.pid != o.pid))
            continue;
        dump_event(stdout, &ev);
        if (used) {
            used[ev.stack / 8] |= (uint8_t)(1u << (ev.stack % 8));
            used[ev.ref_stack / 8] |= (uint8_t)(1u << (ev.ref_stack % 8));
        }
    }
    if (rc < 0)
        cli_die("dump: %s", fmt_reader_error(r));
    if (used)
        dump_stacks(stdout, r, used, &o.sym);
    free(used);
    fmt_reader_close(r);
    if (fflush(stdout) || ferror(stdout))
        cli_die("dump: writing the output failed");
    return CLI_EXIT_OK;
}
