/* SPDX-License-Identifier: MIT */
/* The vocabulary every part of memscribe speaks: one decoded trace event.
 *
 * The recorder fills these and hands them to the trace writer; the trace
 * reader decodes the file back into the same struct for dump and analysis.
 * docs/format.md says how each field is stored on disk. */
#ifndef MEMSCRIBE_EVENT_H
#define MEMSCRIBE_EVENT_H

#include <math.h>
#include <stdint.h>

/* Event kinds. Values are stored in trace files: append, never renumber. */
enum fmt_kind {
    FMT_EV_NONE = 0,

    /* Heap: the malloc family. Allocation kinds start a block (they get a
     * serial); FMT_EV_FREE ends one; the realloc kinds end one and start one. */
    FMT_EV_MALLOC = 1,
    FMT_EV_CALLOC = 2,         /* arg[0] nmemb, arg[1] element size; size = product */
    FMT_EV_REALLOC = 3,        /* old_addr; ref = block ended (0: from NULL) */
    FMT_EV_REALLOCARRAY = 4,   /* as REALLOC, arg[0] nmemb, arg[1] element size */
    FMT_EV_FREE = 5,           /* addr; ref = block ended (0: NULL or unknown) */
    FMT_EV_MEMALIGN = 6,       /* arg[0] alignment */
    FMT_EV_POSIX_MEMALIGN = 7, /* arg[0] alignment, arg[1] return code */
    FMT_EV_ALIGNED_ALLOC = 8,  /* arg[0] alignment */
    FMT_EV_VALLOC = 9,
    FMT_EV_PVALLOC = 10,

    /* Windows heaps (format 1.2, PE traces; docs/windows.md). HeapAlloc,
     * HeapReAlloc and HeapFree are MALLOC, REALLOC and FREE with arg[0] the
     * HEAP_* flags and arg[1] the heap handle. The program's own pools
     * (format 1.4, FMT_EVF_POOL) use them too: addr = handle, str = name. */
    FMT_EV_HEAP_CREATE = 11,  /* addr = handle; size = reserve; arg[0] flags, arg[1] commit */
    FMT_EV_HEAP_DESTROY = 12, /* addr = handle (its live blocks were freed just before) */

    /* Virtual memory. size is the length in bytes as passed (not rounded). */
    FMT_EV_MMAP = 16,     /* arg[0] prot, arg[1] flags, arg[2] fd, arg[3] offset */
    FMT_EV_MUNMAP = 17,   /* addr, size */
    FMT_EV_MREMAP = 18,   /* old_addr, old_size, addr (new), size (new), arg[1] flags */
    FMT_EV_MPROTECT = 19, /* addr, size, arg[0] prot */
    FMT_EV_BRK = 20,      /* arg[0] requested break; addr = resulting break */
    FMT_EV_SBRK = 21,     /* arg[0] increment (two's complement); addr = old break */
    /* Windows virtual memory (format 1.2, PE traces): addr and size as
     * rounded by the kernel; arg[0] PAGE_* protection, arg[1] MEM_* type as
     * asked, arg[2] the size asked. MEM_RESERVE|MEM_COMMIT in one call is a
     * VM_RESERVE then a VM_COMMIT of the same time and stack. */
    FMT_EV_VM_RESERVE = 22,    /* starts a region */
    FMT_EV_VM_COMMIT = 23,     /* commits pages of a region */
    FMT_EV_VM_DECOMMIT = 24,   /* decommits pages; the region stays reserved */
    FMT_EV_VM_RELEASE = 25,    /* ends the region at addr (size: all of it) */
    FMT_EV_VM_PROTECT = 26,    /* arg[0] new PAGE_*, arg[1] old PAGE_* */
    FMT_EV_SECTION_MAP = 27,   /* a view: arg[0] PAGE_*, arg[1] MEM_*, arg[2] section handle */
    FMT_EV_SECTION_UNMAP = 28, /* addr = view base, size = the view's size */

    /* Life of processes, threads and modules. */
    FMT_EV_PROCESS_START = 32, /* pid; arg[0] ppid; arg[1] how (enum fmt_start); str = exe
                                  path, str2 = NUL-separated argv */
    FMT_EV_PROCESS_EXIT = 33,  /* pid; arg[0] wait status, arg[1] 1 if status is known */
    FMT_EV_THREAD_START = 34,  /* tid; str = name */
    FMT_EV_THREAD_EXIT = 35,   /* tid */
    FMT_EV_THREAD_NAME = 36,   /* tid; str = new name */
    FMT_EV_MODULE_LOAD = 37,   /* module points at the description */
    FMT_EV_MODULE_UNLOAD = 38, /* addr = module base */

    /* Measurements and bookkeeping. */
    FMT_EV_RSS = 48,     /* pid; size = resident bytes */
    FMT_EV_DROPPED = 49, /* arg[0] number of events the collector could not record */

    /* Aggregated traces (format 1.8, feature bit AGGREGATE; docs/aggregate.md).
     * Blocks born and freed inside one interval are not written; these say
     * what they did. */
    FMT_EV_HEAP_BATCH = 50,     /* at a cut: thread, stack; size = bytes of the interval's
                                   transient blocks, arg[0] their number, arg[1] temporary
                                   blocks (kept ones too), arg[2] their bytes, arg[3] size class */
    FMT_EV_HEAP_TRANSIENT = 51, /* at a moment of highest heap: image, stack; size = transient
                                   bytes live, arg[0] blocks; added to the heap, taken away by
                                   the same with FMT_EVF_TRANSIENT_END; arg[1] 0 the moment of
                                   all running images, 1 of this image alone */
    FMT_EV_AGGREGATE = 52,      /* the trace is aggregated from here: arg[0] period ns,
                                   arg[1] 0 asked (--aggregate), 1 switched at --max-size */

    /* A sampled trace's exact counters (format 1.13, feature bit COUNTERS;
     * docs/format-events.md, "Counters"): a process image's counter
     * arg[0] (enum fmt_counter) is size from its start on, at this time.
     * The recorder writes one when it changed, every few ms and at the
     * image's end. */
    FMT_EV_COUNTER = 53,
};

/* The counters of FMT_EV_COUNTER: each every heap call of the image
 * counted, none sampled. The calls of each kind at FMT_CTR_CALLS + kind
 * (malloc to pvalloc; failed ones too), the blocks by the log2 class of
 * their requested size at FMT_CTR_CLASS + class (0: 0-1 bytes, k: 2^k to
 * 2^(k+1) - 1). Usable bytes are what the allocator gave
 * (malloc_usable_size): a free learns its block's size so. */
enum fmt_counter {
    FMT_CTR_CALLS = 0,            /* + kind, 16 */
    FMT_CTR_ALLOCS = 16,          /* heap blocks started */
    FMT_CTR_ALLOC_BYTES = 17,     /* their requested bytes */
    FMT_CTR_ALLOC_USABLE = 18,    /* their usable bytes */
    FMT_CTR_FREES = 19,           /* heap blocks ended (free, a realloc's old block) */
    FMT_CTR_FREE_USABLE = 20,     /* their usable bytes */
    FMT_CTR_TEMPORARY = 21,       /* blocks freed before their thread did anything else */
    FMT_CTR_TEMPORARY_BYTES = 22, /* their requested bytes */
    FMT_CTR_FAILED = 23,          /* calls that failed (no block) */
    FMT_CTR_CLASS = 24,           /* + class, 48 */
    FMT_CTR_NR = 72,              /* the per-thread ones (a slot, fmt_shm_counters.h) */
    FMT_CTR_HEAP_USABLE = 72,     /* heap in use, usable bytes */
    FMT_CTR_PEAK_USABLE = 73,     /* its highest so far */
    /* 1: the program called an allocator's own entry points (mallocx,
     * mi_malloc, tc_malloc, ...), which are not counted */
    FMT_CTR_UNCOUNTED = 74,
    FMT_CTR_ALL = 75,
};
#define FMT_CTR_NR_CLASSES 48

/* How a process image began (FMT_EV_PROCESS_START arg[1]). */
enum fmt_start {
    FMT_START_INITIAL = 0,       /* the program memscribe record started */
    FMT_START_FORK = 1,          /* a child by fork (or clone without exec) */
    FMT_START_EXEC = 2,          /* a new image after execve in an existing process */
    FMT_START_CREATEPROCESS = 3, /* a Windows child by CreateProcess (format 1.2) */
};

/* Where a virtual-memory call came from (struct fmt_event.origin). */
enum fmt_origin {
    FMT_ORIGIN_CALL = 0,     /* the program called the public function */
    FMT_ORIGIN_LIBC = 1,     /* made inside libc (malloc's own mmaps, stdio, ...) */
    FMT_ORIGIN_LOADER = 2,   /* made by ld.so (dlopen, startup) */
    FMT_ORIGIN_THREAD = 3,   /* a thread stack made by pthread_create */
    FMT_ORIGIN_SNAPSHOT = 4, /* already mapped when tracing began; on a heap allocation
                                (format 1.9): a --keep-last segment's block live when
                                the segment began, carried in at its own time */
};
#define FMT_NR_ORIGINS 5

/* Event flags (struct fmt_event.flags). */
#define FMT_EVF_FAILED 0x0001    /* the call failed: NULL, MAP_FAILED, -1 or non-zero */
#define FMT_EVF_LIBC_MMAP 0x0002 /* glibc served this block with its own mmap */
#define FMT_EVF_IN_PLACE 0x0004  /* realloc/mremap kept the address */
#define FMT_EVF_PARTIAL                                                                            \
    0x0008 /* set by the reader: an munmap, mremap or MAP_FIXED                                    \
              mmap left part of a mapping it touched alive */
#define FMT_EVF_COLLECTOR                                                                          \
    0x0010 /* a snapshot mmap of memscribe's own collector (rings,                                 \
              stack tables): it takes address space but is not                                     \
              the program's memory */

#define FMT_EVF_HEAP_DESTROYED                                                                     \
    0x0020 /* a free the program did not call: the block's heap was                                \
              destroyed (FMT_EV_HEAP_DESTROY follows) */
#define FMT_EVF_POOL                                                                               \
    0x0040 /* format 1.4 (feature bit POOLS): an event of the program's own                        \
              pool (memscribe/annotate.h), arg[1] the pool's handle: a                             \
              MALLOC, REALLOC or FREE of a block of that pool, a                                   \
              HEAP_CREATE (str = its name) or a HEAP_DESTROY */

#define FMT_EVF_TRANSIENT_END                                                                      \
    0x0080 /* FMT_EV_HEAP_TRANSIENT: takes the transient bytes away again */

/* Kinds of Windows virtual memory (format 1.2). */
static inline int fmt_kind_is_win_vm(unsigned kind)
{
    return kind >= FMT_EV_VM_RESERVE && kind <= FMT_EV_SECTION_UNMAP;
}

/* One loaded module (FMT_EV_MODULE_LOAD). Segments let an address be mapped
 * to the module without the file; build_id lets the analyser find the right
 * file later, elsewhere. */
#define FMT_MAX_SEGMENTS 16
#define FMT_MAX_BUILD_ID 64

struct fmt_segment {
    uint64_t vaddr;  /* p_vaddr: address relative to base */
    uint64_t memsz;  /* p_memsz */
    uint64_t offset; /* p_offset in the file */
    uint32_t flags;  /* p_flags: PF_X, PF_W, PF_R */
};

struct fmt_module {
    uint64_t base; /* load bias (dl_phdr_info.dlpi_addr) */
    const char *path;
    uint32_t path_len;
    uint32_t build_id_len;
    uint8_t build_id[FMT_MAX_BUILD_ID];
    uint32_t nr_segments;
    struct fmt_segment segments[FMT_MAX_SEGMENTS];
};

/* One event. Fields a kind does not use are zero. Times are nanoseconds of
 * CLOCK_MONOTONIC since the trace's start (struct fmt_trace_info). */
struct fmt_event {
    uint64_t ts_ns;
    uint16_t kind;   /* enum fmt_kind */
    uint16_t flags;  /* FMT_EVF_* */
    uint8_t origin;  /* enum fmt_origin, virtual-memory kinds */
    uint32_t image;  /* process image index (a pid between execs), dense from 0 */
    uint32_t thread; /* thread index, dense from 0 across the trace */
    uint32_t pid;
    uint32_t tid;
    uint32_t stack; /* stack id, 0 = no stack */

    uint64_t addr;     /* result address (allocations, mmap), or the address freed */
    uint64_t size;     /* requested bytes or mapping length */
    uint64_t old_addr; /* realloc, mremap */
    uint64_t old_size; /* mremap */
    uint64_t arg[4];   /* per kind, see enum fmt_kind */

    /* Filled by the reader, ignored by the writer. */
    uint64_t serial;    /* allocation serial, from 1, for kinds that start a block */
    uint64_t ref;       /* serial of the block this event ends, 0 = none or unknown */
    uint64_t ref_size;  /* that block's requested size */
    uint64_t ref_ts_ns; /* that block's allocation time */
    uint32_t ref_stack; /* that block's stack id */
    uint32_t ref_thread;
    uint32_t nr_refs; /* mappings an munmap/mremap/MAP_FIXED mmap touched; ref is
                         the lowest of them (1 for a heap free with a ref) */
    /* The size as recorded. Equal to size, except in a sampled trace read
     * with estimates (fmt_reader_estimates), where a heap allocation's
     * size and the ref_size of a heap block ended are the estimated bytes
     * the recorded block stands for: round(size / fmt_sample_prob). Size
     * classes are of the raw sizes. */
    uint64_t raw_size;
    uint64_t raw_ref_size;
    /* The blocks a recorded heap allocation (count) and the heap block it
     * ends (ref_count) stand for: 1, except in a sampled trace read with
     * estimates, where it is the block's weight 1 / fmt_sample_prob rounded
     * up or down at random (by a hash of the block's serial, so the free
     * gives its block the count its allocation had) with the probability
     * that makes the count an unbiased estimate. 0 is read as 1
     * (fmt_event_count), so events made without the reader count once. */
    uint64_t count;
    uint64_t ref_count;

    /* Strings and the module: valid until the next call that fills this event. */
    const char *str;
    uint32_t str_len;
    const char *str2;
    uint32_t str2_len;
    const struct fmt_module *module;
};

/* The heap an event's block belongs to: the pool's handle (format 1.4),
 * the Windows heap handle (format 1.2, pe a trace of Windows programs),
 * or 0 for malloc's heap. */
static inline uint64_t fmt_event_heap(const struct fmt_event *ev, int pe)
{
    return (pe || (ev->flags & FMT_EVF_POOL)) ? ev->arg[1] : 0;
}

/* Facts about a whole trace (file header and metadata). */
struct fmt_trace_info {
    uint32_t version_major;
    uint32_t version_minor;
    uint64_t start_realtime_ns;  /* CLOCK_REALTIME when recording began */
    uint64_t start_monotonic_ns; /* CLOCK_MONOTONIC origin of every ts_ns */
    uint32_t recorder_pid;
    uint32_t stack_depth; /* frames kept per stack */
    const char *command;  /* command line, NUL-separated words */
    uint32_t command_len;
    const char *hostname;
    uint32_t time_unit_ns; /* resolution of every ts_ns: 1, or (format 1.3) the unit's ns */
    const char *only;      /* record --only's glob; NULL: every process was traced */
    /* record --sample: mean bytes between sampling points, 0 in an exact
     * trace (format 1.3, feature bit SAMPLED). A block of s bytes was
     * recorded with probability fmt_sample_prob(sample_bytes, s). */
    uint64_t sample_bytes;
    /* record -p: the pid the recorder attached to, mid-run (META
     * ATTACHED); 0: recorded from the program's start. Blocks allocated
     * before the attach are not in the trace; their frees are. */
    uint32_t attached_pid;
    /* record -- prog.exe (META WINE_PREFIX, WINE_DLL_DIR): the Linux path
     * of the Wine prefix the program ran in, and the folders of Wine's own
     * DLLs the recorder found (NUL-separated words, wine_dll_dirs_len
     * bytes), where the symbolizer finds the files behind C:\ paths
     * (docs/symbols.md); NULL and 0 when not recorded. */
    const char *wine_prefix;
    const char *wine_dll_dirs;
    uint32_t wine_dll_dirs_len;
    /* An aggregated trace (format 1.8, feature bit AGGREGATE,
     * docs/aggregate.md): the period of its intervals in ns, and the time
     * of its FMT_EV_AGGREGATE event (0 when aggregated from the start);
     * aggregate_ns is 0 for an exact trace. */
    uint64_t aggregate_ns;
    uint64_t aggregate_from_ns;
    /* record --keep-last (format 1.9, docs/aggregate.md "Flight recorder"):
     * the duration of exact events kept (META KEEP_LAST), in the whole
     * run's aggregated trace and in each segment; 0 otherwise. A segment
     * (feature bit SEGMENT, META SEGMENT) is an exact trace of the run
     * from segment_from_ns on, its segment_nr-th (from 1): before that
     * time it holds only what was still live then (processes, threads,
     * modules, mappings and heap blocks, at their own times), so its
     * counts before it are of those alone. segment_nr is 0 elsewhere. */
    uint64_t keep_last_ns;
    uint64_t segment_from_ns;
    uint32_t segment_nr;
};

/* A sampled trace (fmt_trace_info.sample_bytes = rate, 0 for exact):
 * the probability that a block of size bytes was recorded, 1 - (1 -
 * 1/rate)^size (size 0 counts as 1 byte; 1 for an exact trace, and for
 * rate 1). Its inverse is the block's weight: each recorded block stands
 * for 1/p blocks of its size, which makes sums of counts and bytes
 * unbiased estimates (docs/record.md, Sampling). */
static inline double fmt_sample_prob(uint64_t rate, uint64_t size)
{
    double s = size ? (double)size : 1.0;

    if (rate <= 1)
        return 1.0;
    return -expm1(s * log1p(-1.0 / (double)rate));
}

/* The blocks an event's allocation, or the block it ends, stands for
 * (struct fmt_event, count). */
static inline uint64_t fmt_event_count(const struct fmt_event *ev)
{
    return ev->count ? ev->count : 1;
}
static inline uint64_t fmt_event_ref_count(const struct fmt_event *ev)
{
    return ev->ref_count ? ev->ref_count : 1;
}

/* True for kinds that start a heap block (give it a serial). */
static inline int fmt_kind_is_heap_alloc(unsigned kind)
{
    return (kind >= FMT_EV_MALLOC && kind <= FMT_EV_PVALLOC && kind != FMT_EV_FREE);
}

/* The call keys of format 1.10's chunk totals (docs/format.md, "TOTALS"):
 * the kind, + 64 for a pool's call (FMT_EVF_POOL), + 128 for a free a
 * heap's destruction made (FMT_EVF_HEAP_DESTROYED). */
#define FMT_TOTALS_KEYS 256
static inline unsigned fmt_totals_key(unsigned kind, unsigned flags)
{
    return (kind & 63) | (flags & FMT_EVF_POOL ? 64 : 0) |
           (flags & FMT_EVF_HEAP_DESTROYED ? 128 : 0);
}
/* A key's kind is key & 63; its flags: */
static inline unsigned fmt_totals_key_flags(unsigned key)
{
    return (key & 64 ? FMT_EVF_POOL : 0) | (key & 128 ? FMT_EVF_HEAP_DESTROYED : 0);
}

/* The size of CPython's pymalloc arenas: 1 MiB since 3.10 on 64-bit
 * (obmalloc.c, USE_LARGE_ARENAS), 256 KiB before. */
#define FMT_PYMALLOC_ARENA (1u << 20)
#define FMT_PYMALLOC_ARENA_OLD (256u << 10)

/* An mmap as CPython's pymalloc takes its arenas: the program's own call
 * of an arena's size, read-write, private and anonymous (report's pymalloc
 * note counts them; the writer's chunk totals too). Linux's values of
 * PROT_READ | PROT_WRITE (3) and MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS
 * (1, 2, 0x20): the writer is also built for Windows, without them. */
static inline int fmt_event_is_arena_map(unsigned kind, unsigned origin, uint64_t size,
                                         uint64_t prot, uint64_t flags)
{
    return kind == FMT_EV_MMAP && origin == FMT_ORIGIN_CALL &&
           (size == FMT_PYMALLOC_ARENA || size == FMT_PYMALLOC_ARENA_OLD) && prot == 3 &&
           (flags & 0x23) == 0x22;
}

#endif
