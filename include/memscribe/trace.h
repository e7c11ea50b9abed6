/* SPDX-License-Identifier: MIT */
/* Reading a trace file: the streaming reader every analysis uses.
 *
 * Open a trace, look at its tables (process images, threads, modules,
 * stacks, chunks), then pull events in order with fmt_reader_next(), or
 * seek to the chunk holding a time first. Frees, reallocs and unmaps come
 * with the block they end already resolved (ref, ref_size, ref_stack,
 * ref_ts_ns, ref_thread). Memory grows with distinct stacks, threads and
 * modules, never with the number of events: only one chunk is decoded at a
 * time. The file format is docs/format.md.
 *
 * Errors are -errno; the reader never prints. -EPROTO means the file is
 * corrupt, and fmt_reader_error() (or the open's err buffer) then says
 * "FILE: offset N: what is wrong". A reader is not thread-safe; open one
 * per thread to decode chunks in parallel. */
#ifndef MEMSCRIBE_TRACE_H
#define MEMSCRIBE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

struct fmt_reader;

/* A process image (a pid between execs). */
struct fmt_image_info {
    uint32_t pid;
    uint32_t ppid;
    uint32_t how;    /* enum fmt_start */
    int has_start;   /* a PROCESS_START was recorded (else only pid is known) */
    const char *exe; /* NULL if unknown */
    uint32_t exe_len;
    const char *argv; /* NUL-separated words, argv_len bytes */
    uint32_t argv_len;
    uint64_t start_ns;
    uint64_t end_ns; /* valid if ended */
    int ended;
    uint64_t exit_status; /* wait status, valid if status_known */
    int status_known;
};

/* A thread of an image. One entry per distinct (image, thread, pid, tid),
 * except an image's main thread (tid == pid): one entry, whatever thread
 * indices its events carry (traces recorded before this rule gave the
 * events they made for a forked or exec'd image a second one). */
struct fmt_thread_info {
    uint32_t image;
    uint32_t thread; /* the event's thread index */
    uint32_t pid;
    uint32_t tid;
    const char *name; /* latest name, NULL if none */
    uint32_t name_len;
    uint64_t start_ns; /* first event of the thread */
    uint64_t end_ns;   /* valid if ended */
    int ended;
};

/* A loaded module of an image. */
struct fmt_module_info {
    uint32_t id; /* from 1, as MODULE_LOAD events refer to it */
    uint32_t image;
    uint64_t load_ns;
    uint64_t unload_ns; /* valid if unloaded */
    int unloaded;
    struct fmt_module m;
};

/* One chunk of events: the unit of seeking. */
struct fmt_chunk_info {
    uint64_t offset; /* of its block in the file */
    uint64_t first_ts_ns;
    uint64_t last_ts_ns;
    uint64_t first_serial; /* serial the chunk's first started block gets */
    uint64_t nr_serials;   /* blocks and mappings started in the chunk */
    uint32_t nr_events;
    uint64_t nr_heap_allocs;
    uint64_t nr_dropped;
};

struct fmt_trace_counts {
    uint64_t nr_events;
    uint64_t nr_heap_allocs; /* heap blocks started */
    uint64_t nr_serials;     /* heap blocks and mappings started */
    uint64_t nr_dropped;     /* events the collector reported lost */
    uint64_t nr_skipped;     /* events of kinds this reader does not know */
    uint32_t nr_chunks;
    uint32_t nr_stacks; /* stack nodes; ids are 1..nr_stacks */
    uint32_t nr_images;
    uint32_t nr_threads;
    uint32_t nr_modules;
    uint64_t first_ts_ns;
    uint64_t last_ts_ns;
};

/* Open a trace file. On failure returns -errno (-EPROTO: not a trace or
 * corrupt) and, if err is not NULL, puts "PATH: [offset N: ]problem" there.
 * A truncated trace opens fine and is flagged by fmt_reader_incomplete(). */
int fmt_reader_open(struct fmt_reader **out, const char *path, char *err, size_t err_size);

/* The same on an open file descriptor, which the reader does not close
 * and which must stay open while the reader is used; name is used in
 * messages. */
int fmt_reader_open_fd(struct fmt_reader **out, int fd, const char *name, char *err,
                       size_t err_size);

/* The same with FMT_OPEN_* flags. FMT_OPEN_STACKS_LATER: the stack
 * definitions are located and counted when the trace is opened, and
 * decoded when their nodes are first asked for, in id order (a corrupt
 * one fails then); a caller may then let an image's stacks go
 * (fmt_reader_forget_image). fmt_reader_load_stacks decodes them all at
 * once, as an open without the flag does. */
#define FMT_OPEN_STACKS_LATER 1u
int fmt_reader_open_flags(struct fmt_reader **out, const char *path, unsigned flags, char *err,
                          size_t err_size);
int fmt_reader_open_fd_flags(struct fmt_reader **out, int fd, const char *name, unsigned flags,
                             char *err, size_t err_size);

/* Decode every stack definition left for later. Returns 0 or -errno
 * (-EPROTO: a corrupt one, message in fmt_reader_error()). */
int fmt_reader_load_stacks(struct fmt_reader *r);

/* Opened with FMT_OPEN_STACKS_LATER: the caller needs the stacks of image
 * no more (a replay folded the process when it ended). The definitions up
 * to the image's last node (once fmt_reader_stack_image made its table, or
 * when no chunk is being read, which makes it), else up to the chunk being
 * read, are decoded (the image's among them),
 * then its nodes freed; asking for them (fmt_reader_stack,
 * fmt_reader_stack_node) fails with -ESTALE, and a later node under one of
 * them is corrupt. Without the flag it does nothing. Returns 0 or -errno
 * (a corrupt definition: -EPROTO, message in fmt_reader_error()). */
int fmt_reader_forget_image(struct fmt_reader *r, uint32_t image);

void fmt_reader_close(struct fmt_reader *r);

/* "FILE: offset N: problem" for the last failed call. */
const char *fmt_reader_error(const struct fmt_reader *r);

const struct fmt_trace_info *fmt_reader_info(const struct fmt_reader *r);

/* 1 if the trace has no valid end (recorder killed, disk full): the reader
 * gives what the last whole chunk holds. */
int fmt_reader_incomplete(const struct fmt_reader *r);

/* 1 for a trace of Windows programs (format 1.2, docs/windows.md): heap
 * events carry arg[0] HEAP_* flags and arg[1] the heap handle. */
int fmt_reader_pe(const struct fmt_reader *r);

/* 1 for a trace that may hold the program's own pools (format 1.4,
 * memscribe/annotate.h): events with FMT_EVF_POOL carry the pool handle
 * in arg[1], and HEAP_CREATE names a pool (str). */
int fmt_reader_pools(const struct fmt_reader *r);

/* A pool of the program (format 1.4): its HEAP_CREATE. */
struct fmt_pool_info {
    uint32_t image;
    uint64_t handle;
    uint64_t create_ns;
    const char *name; /* NUL-terminated, may be empty */
    uint32_t name_len;
};
/* The pools created in the trace, in order; getters return NULL when out
 * of range. fmt_reader_find_pool() gives the one image created last with
 * this handle (a handle may be reused after a destroy), or NULL: a pool
 * used without MEMSCRIBE_POOL_CREATE has no name. */
uint32_t fmt_reader_nr_pools(const struct fmt_reader *r);
const struct fmt_pool_info *fmt_reader_pool(const struct fmt_reader *r, uint32_t i);
const struct fmt_pool_info *fmt_reader_find_pool(const struct fmt_reader *r, uint32_t image,
                                                 uint64_t handle);

/* memcheck's reachability classes of a heap block live when its image
 * ended (format 1.6, docs/leaks.md): the recorder scanned the program's
 * memory at its exit. UNKNOWN: not classed (no scan, or a block made after
 * it). Also the values of the REACH record's list (docs/format.md). */
enum fmt_reach_class {
    FMT_REACH_UNKNOWN = 0,
    FMT_REACH_REACHABLE = 1, /* still reachable: a pointer to its start from a root or a
                                reachable block (or an interior one memcheck's heuristics take) */
    FMT_REACH_POSSIBLE = 2,  /* possibly lost: only interior pointers reach it */
    FMT_REACH_INDIRECT = 3,  /* indirectly lost: pointed to only from lost blocks */
    FMT_REACH_DEFINITE = 4,  /* definitely lost: no pointer to it at all */
    FMT_NR_REACH = 5
};

/* What the scan at an image's exit says (a REACH record). */
enum fmt_reach_status {
    FMT_REACH_SCANNED = 0,     /* classes below */
    FMT_REACH_UNAVAILABLE = 1, /* no scan: reason says why (ptrace refused, ...) */
};

struct fmt_reach_info {
    uint32_t image;
    uint32_t status;    /* enum fmt_reach_status */
    uint64_t ts_ns;     /* when the scan began */
    const char *reason; /* NUL-terminated; "" when scanned */
    uint32_t reason_len;
    uint32_t nr_threads;    /* threads whose registers and stacks were roots */
    uint64_t root_bytes;    /* bytes of roots read */
    uint64_t skipped_bytes; /* bytes of roots and blocks that could not be read */
    uint64_t nr_blocks;     /* blocks classed */
};

/* 1 when the recorder was asked to class leaks at exit (feature bit REACH):
 * an image that ended without a REACH record was then not scanned (killed
 * by a signal, exec'd, a 32-bit program). */
int fmt_reader_reach_on(const struct fmt_reader *r);
/* The REACH records, in order; NULL out of range. fmt_reader_find_reach()
 * gives image's last one, or NULL. */
uint32_t fmt_reader_nr_reach(const struct fmt_reader *r);
const struct fmt_reach_info *fmt_reader_reach(const struct fmt_reader *r, uint32_t i);
const struct fmt_reach_info *fmt_reader_find_reach(const struct fmt_reader *r, uint32_t image);
/* The class ri gives the block with this serial (enum fmt_reach_class),
 * FMT_REACH_UNKNOWN if it lists none. O(log blocks). */
unsigned fmt_reader_reach_class(const struct fmt_reader *r, const struct fmt_reach_info *ri,
                                uint64_t serial);
/* The i-th block ri lists (i < nr_blocks, by increasing serial): its
 * class, and its serial in *serial. */
unsigned fmt_reader_reach_block(const struct fmt_reader *r, const struct fmt_reach_info *ri,
                                uint64_t i, uint64_t *serial);
/* "reachable", "possible", "indirect", "definite", "unknown". */
const char *fmt_reach_class_name(unsigned cls);

void fmt_reader_counts(const struct fmt_reader *r, struct fmt_trace_counts *c);

/* A sampled trace (format 1.3, record --sample): the rate, else 0. */
uint64_t fmt_reader_sample_bytes(const struct fmt_reader *r);
/* A sampled trace with exact counters (format 1.13, FMT_EV_COUNTER). */
int fmt_reader_has_counters(const struct fmt_reader *r);

/* A sampled trace is read with estimates by default: each heap
 * allocation's size, and the ref_size of each heap block ended, is the
 * bytes that block stands for (size / fmt_sample_prob, rounded), so that
 * sums of bytes over any set of blocks (allocated, in use at an instant,
 * per site, per window) are unbiased estimates; the recorded size stays
 * in raw_size. on = 0 reads the sizes as recorded (dump). No effect on
 * an exact trace. */
void fmt_reader_estimates(struct fmt_reader *r, int on);

/* on: every chunk read from its start to its end is also held against its
 * summary's per-stack live deltas (the index fmt_reader_live_at_chunk()
 * sums, which the decoder otherwise takes on trust): a mismatch is
 * -EPROTO. Costs a map lookup per heap event (dump --verify). Rewinds to
 * the first chunk's start, as a seek does. */
void fmt_reader_verify_summaries(struct fmt_reader *r, int on);

/* Free what decoding chunks holds (their columns, blocks, raw bytes:
 * some 20 MB on a build's large chunks) when no chunk is being read,
 * after the last event or a seek; the next chunk read makes it again.
 * For a command that has read its events and goes on to write. */
void fmt_reader_drop_chunk_buffers(struct fmt_reader *r);

/* Read the next event into *ev (every field set). Returns 1, 0 at the end,
 * or -errno (-EPROTO: corrupt chunk; see fmt_reader_error()), which every
 * later call returns again until a seek (a seek past the bad chunk reads
 * on). Pointers in *ev stay valid until the next call that fills an
 * event. Events of kinds from later format versions are skipped. */
int fmt_reader_next(struct fmt_reader *r, struct fmt_event *ev);

/* Tables. Indexes are dense from 0; getters return NULL when out of range. */
uint32_t fmt_reader_nr_images(const struct fmt_reader *r);
const struct fmt_image_info *fmt_reader_image(const struct fmt_reader *r, uint32_t image);
uint32_t fmt_reader_nr_threads(const struct fmt_reader *r);
const struct fmt_thread_info *fmt_reader_thread(const struct fmt_reader *r, uint32_t i);
uint32_t fmt_reader_nr_modules(const struct fmt_reader *r);
const struct fmt_module_info *fmt_reader_module(const struct fmt_reader *r, uint32_t i);
/* The module of image whose segments hold addr (the latest loaded if
 * several did over time), or NULL. */
const struct fmt_module_info *fmt_reader_find_module(const struct fmt_reader *r, uint32_t image,
                                                     uint64_t addr);

/* Stacks. Ids run 1..nr_stacks; each is a node of a per-image prefix tree.
 * fmt_reader_stack() writes up to max frames, leaf first, and returns the
 * stack's depth (which may exceed max), or -EINVAL for an unknown id. */
int fmt_reader_stack(const struct fmt_reader *r, uint32_t id, uint32_t *image, uint64_t *frames,
                     uint32_t max);
/* One node: its parent (0 for a root) and return address. 0 or -EINVAL.
 * The chain of parents is the stack only up to its depth: a stack cut at
 * the collector's depth limit may be a node under a longer chain (docs/
 * format.md, "Stacks"); get frames with fmt_reader_stack(). */
int fmt_reader_stack_node(const struct fmt_reader *r, uint32_t id, uint32_t *parent, uint64_t *addr,
                          uint32_t *image);
/* The image of stack id into *image, without decoding it: opened with
 * FMT_OPEN_STACKS_LATER, the first call of a stack not decoded reads every
 * stack record's parent distances and roots (not the addresses) into a
 * table of the runs of ids of one image (some hundred kilobytes for the
 * ten million stacks of a build of a thousand processes), which answers
 * for stacks not decoded yet and for those let go (fmt_reader_forget_image)
 * alike. It reads nothing into the buffer of a chunk or a summary being
 * read: a fmt_stack_live_fn may call it. Returns 0, -EINVAL for an unknown
 * id (0 included), -EPROTO for a corrupt stack record (message in
 * fmt_reader_error()) or -ENOMEM. */
int fmt_reader_stack_image(struct fmt_reader *r, uint32_t id, uint32_t *image);

/* Chunks and seeking. */
uint32_t fmt_reader_nr_chunks(const struct fmt_reader *r);
const struct fmt_chunk_info *fmt_reader_chunk(const struct fmt_reader *r, uint32_t k);
/* The first chunk whose last event is at or after ts_ns (nr_chunks if none). */
uint32_t fmt_reader_find_chunk(const struct fmt_reader *r, uint64_t ts_ns);
/* Make chunk k's first event the next one fmt_reader_next() returns.
 * k == nr_chunks seeks to the end. Returns 0 or -EINVAL. */
int fmt_reader_seek_chunk(struct fmt_reader *r, uint32_t k);
/* The same, and fmt_reader_next() ends (returns 0) after chunk end - 1: a
 * range of chunks k..end-1 (end <= nr_chunks; 0: no end), until the next
 * seek. */
int fmt_reader_seek_range(struct fmt_reader *r, uint32_t k, uint32_t end);
/* Seek to the chunk holding ts_ns; events before ts_ns in it still come. */
int fmt_reader_seek_time(struct fmt_reader *r, uint64_t ts_ns);

/* Per-stack heap change over chunk k (bytes and blocks started minus
 * ended), calling fn once per stack that changed, in increasing id order.
 * fmt_reader_live_at_chunk() gives live heap bytes and blocks per stack at
 * the start of chunk k instead (the sum over chunks before it), so that a
 * reader seeking to k knows what is already live. Both return 0 or
 * -errno. */
typedef void fmt_stack_live_fn(void *arg, uint32_t stack, int64_t bytes, int64_t blocks);
int fmt_reader_chunk_delta(struct fmt_reader *r, uint32_t k, fmt_stack_live_fn *fn, void *arg);
int fmt_reader_live_at_chunk(struct fmt_reader *r, uint32_t k, fmt_stack_live_fn *fn, void *arg);

/* Format 1.10's chunk totals (docs/format.md, "TOTALS"; feature bit
 * TOTALS): what a range of a parallel replay counts of chunk k, so that a
 * report merges them instead of replaying the events (report --index). One
 * process image's part; times absolute. */
struct fmt_image_totals {
    uint32_t image, pid;
    bool has_peak, has_rss, ended;
    uint64_t first_ns, last_ns;      /* its first and last event in the chunk */
    int64_t heap, blocks;            /* its heap's change over the chunk */
    int64_t peak, peak_blocks;       /* the highest change after a block started or ended */
    uint64_t peak_ns;                /* when first reached */
    uint64_t start_maps;             /* a snapshot's mappings (not calls) */
    uint64_t carried, carried_bytes; /* a segment's carried blocks (not calls) */
    uint64_t arena_maps;          /* mmaps as pymalloc takes its arenas (fmt_event_is_arena_map) */
    uint64_t unmatched;           /* frees and reallocs of an address not live */
    uint64_t dropped;             /* events the collector lost */
    uint64_t allocs, alloc_bytes; /* heap blocks started by calls, their bytes */
    uint64_t rss_max, rss_max_ns; /* the highest RSS sample, first reached */
    uint64_t rss_last, rss_last_ns; /* the latest */
    uint64_t end_ns;                /* its exit (ended) */
    uint64_t calls[FMT_TOTALS_KEYS], failed[FMT_TOTALS_KEYS];
};
/* One stack's: heap blocks started (not a snapshot's copies) and their
 * bytes, temporary allocations (heaptrack's rule per thread) ended in the
 * chunk and their bytes. */
struct fmt_stack_totals {
    uint32_t stack;
    uint64_t allocs, alloc_bytes, temps, temp_bytes;
};
typedef int fmt_image_totals_fn(void *arg, const struct fmt_image_totals *t);
typedef int fmt_stack_totals_fn(void *arg, const struct fmt_stack_totals *t);
/* Does every chunk have its totals (feature bit TOTALS)? */
bool fmt_reader_has_totals(const struct fmt_reader *r);
/* Chunk k's totals: img per image in increasing order, then stk per
 * stack in increasing order (either may be NULL); a non-zero return of
 * either ends the walk and is returned. 0, -EINVAL (no such chunk, no
 * totals) or -EPROTO (corrupt: the reader's error says why). */
int fmt_reader_chunk_totals(struct fmt_reader *r, uint32_t k, fmt_image_totals_fn *img,
                            fmt_stack_totals_fn *stk, void *arg);

/* Format 1.11's all-processes part of chunk k's totals (feature bit
 * TOTALS_ALL): the heap of the processes running, as a report of several
 * processes counts it (an exit takes that process's whole heap out), its
 * change and its live blocks' over the chunk, and the highest that change
 * reached just after a block of a running process started or ended, first
 * reached (has_peak: some event did), with the live blocks' change then;
 * and the running processes' RSS. */
struct fmt_all_totals {
    bool has_peak;
    int64_t heap, blocks;
    int64_t peak, peak_blocks;
    uint64_t peak_ns;
    /* RSS samples in the chunk (has_rss): the highest sum of the running
     * processes' latest samples just after one, first reached (a sum, not
     * a change) */
    bool has_rss;
    uint64_t rss_max, rss_max_ns;
};
/* Format 1.12's programs' parts of chunk k's totals (feature bit
 * TOTALS_PROGS): for each program (the processes of one executable path,
 * byte for byte, as the per-program view groups them; a process of no
 * known executable is its own) two of whose processes had events in the
 * chunk, or one exited, what the all-processes part holds of its running
 * processes: their heap's change and live blocks', its highest just after
 * a block of one started or ended, first reached (has_peak), the blocks'
 * change then; the highest sum of their latest RSS samples just after a
 * sample of one of them (has_rss), and that sum at the chunk's end.
 * first_image names the program: its first process in the trace. In
 * increasing order of first_image. A program a process joined after a
 * sample or a block of its own (before its PROCESS_START) has no part in
 * that chunk. */
struct fmt_prog_totals {
    uint32_t first_image;
    struct fmt_all_totals part;
    uint64_t rss; /* its running processes' RSS sum at the chunk's end */
};
typedef int fmt_prog_totals_fn(void *arg, const struct fmt_prog_totals *t);
/* Do the chunks' totals have the programs' parts (TOTALS_PROGS)? */
bool fmt_reader_has_prog_totals(const struct fmt_reader *r);
/* Chunk k's programs' parts, fn called for each (a non-zero return ends
 * the walk and is returned): 0, -EINVAL (no such chunk, no such parts) or
 * -EPROTO (corrupt: the reader's error says why). */
int fmt_reader_chunk_prog_totals(struct fmt_reader *r, uint32_t k, fmt_prog_totals_fn *fn,
                                 void *arg);

/* Do the chunks' totals have the all-processes part (TOTALS_ALL)? */
bool fmt_reader_has_all_totals(const struct fmt_reader *r);
/* Chunk k's all-processes part in *out: 0, -EINVAL (no such chunk, no
 * such part) or -EPROTO (corrupt: the reader's error says why). */
int fmt_reader_chunk_all_totals(struct fmt_reader *r, uint32_t k, struct fmt_all_totals *out);

/* "malloc", "munmap", ...; "unknown" for other values. */
const char *fmt_kind_name(unsigned kind);
/* The name of an enum fmt_counter (FMT_EV_COUNTER's arg[0]): "calls.malloc",
 * "allocations", "class.12", ..., into buf (size bytes); "counter.N" for
 * one the format does not define. Returns buf. */
char *fmt_counter_name(unsigned id, char *buf, size_t size);
/* The name of an enum fmt_origin ("call", "libc", "loader", "thread",
 * "snapshot"), NULL for a value the format does not define (below
 * FMT_NR_ORIGINS every value has one). */
const char *fmt_origin_name(unsigned origin);

/* The trace format versions of this build (docs/format.md, "Versions and
 * compatibility"): the major version, the lowest and highest minor version
 * it reads (a later minor reads too unless it sets a required feature bit
 * this build does not know), and the lowest and highest it writes (a trace
 * says the lowest version that has every feature it uses). */
struct fmt_versions {
    unsigned major;
    unsigned read_minor_min, read_minor_max;
    unsigned write_minor_min, write_minor_max;
};
void fmt_versions_get(struct fmt_versions *v);

#endif
