/* SPDX-License-Identifier: MIT */
/* The offline symbolizer: turns recorded return addresses into readable
 * frames (function, file:line, inline chain) from the trace's module map.
 *
 * Every report uses it the same way:
 *
 *     struct ana_sym *s;
 *     ana_sym_create(&s, &opts);
 *     ana_sym_add_module(s, ev.image, ev.module);      // each FMT_EV_MODULE_LOAD
 *     ana_sym_remove_module(s, ev.image, ev.addr);     // each FMT_EV_MODULE_UNLOAD
 *     ana_sym_stack(s, image, addrs, nr, &st);         // a recorded stack, leaf first
 *     for (i = 0; i < st.nr_lines; i++)
 *         ana_sym_format_line(&st.lines[i], buf, sizeof(buf));
 *
 * Files are opened lazily, on the first address that falls in a module.
 * A symbolizer is not thread-safe: use one per thread.
 * docs/symbols.md describes how files are found and what the output means. */
#ifndef ANA_SYMBOLIZE_H
#define ANA_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memscribe/event.h"

struct ana_sym;

struct ana_sym_options {
    /* Extra places to look for binaries and debug files (--debug-dir),
     * searched in order before the system's /usr/lib/debug. */
    const char *const *debug_dirs;
    size_t nr_debug_dirs;
    /* Root the recorded paths live under (--sysroot), or NULL for "/". */
    const char *sysroot;
    /* Keep memscribe's own frames and allocator wrapper frames (operator
     * new, malloc inside libc, ...) at the top of stacks. */
    bool show_internal;
    /* Resolve to module+offset only and open no file (--raw). */
    bool raw;
    /* ana_stacks' labels keep template and argument lists (--full-names);
     * by default they are elided (ana_names.h). */
    bool full_names;
    /* A note for every module read: which files, found where (--verbose). */
    bool verbose;
    /* Where Windows PDBs are looked for before _NT_SYMBOL_PATH's places
     * (--symbol-path), in its syntax: "DIR;srv*DIR;srv*CACHE*URL;..."
     * (docs/windows.md, "Symbols"); NULL for none. */
    const char *symbol_path;
    /* The program's own allocation wrappers (--alloc-fn, MEMSCRIBE_ALLOC_FNS):
     * rows name the frame below them (ana_interest.h). */
    const char *const *alloc_fns;
    size_t nr_alloc_fns;
    /* A symbol cache file (MEMSCRIBE_SYMBOL_CACHE; ana_sym_cache.c): the
     * frames of each module address read from it before the module's
     * files are opened, and the new ones added; NULL for none. */
    const char *cache;
};

/* How to read one recorded address. */
enum ana_sym_addr_kind {
    /* A return address: it points after a call, so the call itself is at
     * addr - 1 (the line of the call, the function that made it). */
    ANA_SYM_RETURN = 0,
    /* The exact instruction: a frame interrupted by a signal. */
    ANA_SYM_PRECISE = 1,
};

/* One frame of output. A recorded address gives one physical frame, and
 * before it one inlined frame per function inlined at that address,
 * innermost first. Strings live as long as the symbolizer. */
struct ana_sym_frame {
    uint64_t addr;            /* the recorded address */
    const char *module;       /* recorded module path; NULL: the address is in no module */
    uint64_t module_offset;   /* addr - load base: the address as the ELF file numbers it */
    const char *function;     /* demangled; NULL: unknown */
    uint64_t function_offset; /* module_offset - start of the function (physical frames) */
    bool has_offset;          /* function_offset is meaningful */
    const char *file;         /* source path as the debug info names it; NULL: unknown */
    uint32_t line;            /* 0: unknown */
    uint32_t column;          /* 0: unknown */
    bool inlined;             /* an inlined call: the next frame is the function it sits in */
    bool signal_frame; /* a signal trampoline: the next address was interrupted, not a call */
};

/* One line of a symbolized stack: a frame and the number of the recorded
 * address it came from, counted from 0 after cleaning. */
struct ana_sym_line {
    const struct ana_sym_frame *frame;
    uint32_t index;
};

/* A symbolized stack, leaf first. Reuse one across calls to save
 * allocations; release it with ana_sym_stack_release(). */
struct ana_sym_stack {
    struct ana_sym_line *lines;
    uint32_t nr_lines;
    uint32_t cap_lines;
    uint32_t nr_cut; /* recorded addresses cut from the top as internal frames */
};

/* Counters, for tests, benchmarks and --verbose output. */
struct ana_sym_stats {
    uint64_t nr_lookups;            /* ana_sym_resolve calls */
    uint64_t nr_cache_hits;         /* answered from the per-address cache */
    uint64_t nr_modules_loaded;     /* files opened and indexed */
    uint64_t nr_debuginfod_queries; /* build ids asked of debuginfod */
};

/* The file name of a path as recorded (a module's, a source file's): after
 * the last '/', or the last '\\' of a Windows path
 * ("C:\\windows\\system32\\ntdll.dll" gives "ntdll.dll"). */
const char *ana_sym_base_name(const char *path);

/* Create a symbolizer. Options are copied. Returns 0 or -errno. */
int ana_sym_create(struct ana_sym **out, const struct ana_sym_options *opts);
void ana_sym_destroy(struct ana_sym *s);

/* Tell the symbolizer that process image `image` has module m loaded.
 * The description is copied. Returns 0, -EINVAL for a module with no
 * segment, or -ENOMEM. */
int ana_sym_add_module(struct ana_sym *s, uint32_t image, const struct fmt_module *m);

/* The module of `image` loaded at `base` was unloaded. Its addresses still
 * resolve (stacks recorded while it was loaded), but a module loaded later
 * over the same range wins. Returns 0, or -ENOENT if no such module. */
int ana_sym_remove_module(struct ana_sym *s, uint32_t image, uint64_t base);

/* Where Wine kept the program's files (a Windows program's trace, META
 * WINE_PREFIX and WINE_DLL_DIR): the prefix and the NUL-separated DLL
 * folders, copied; NULL/0 for what was not recorded, which is then taken
 * from this host (WINEPREFIX or ~/.wine; Wine's DLL folders found here).
 * Call before the first lookup. Returns 0 or -ENOMEM. */
int ana_sym_set_wine(struct ana_sym *s, const char *prefix, const char *dll_dirs,
                     size_t dll_dirs_len);

struct fmt_reader;

/* Add every module of a trace (memscribe/trace.h), in load order, and mark
 * the unloaded ones, and the trace's Wine folders (ana_sym_set_wine).
 * Returns 0 or -ENOMEM. */
int ana_sym_add_trace_modules(struct ana_sym *s, const struct fmt_reader *r);

/* Resolve one address of `image`. On success *frames points at the frames
 * (innermost inlined first, the physical frame last) and the count (>= 1)
 * is returned; an address in no module gives one frame with module NULL.
 * Results are cached: a second call for the same address is a lookup.
 * Returns -ENOMEM on allocation failure. */
int ana_sym_resolve(struct ana_sym *s, uint32_t image, uint64_t addr, enum ana_sym_addr_kind kind,
                    const struct ana_sym_frame **frames);

/* ana_sym_resolve with the frames shared by every image that maps the
 * same module, at any base: cached by (module, offset, kind), so the
 * thousand processes of a build, each running its compiler at another
 * address, read each of its addresses once. The frames' addr is the
 * address the first image asked with (their module_offset is every
 * image's); an address in no module is resolved as ana_sym_resolve does. */
int ana_sym_resolve_shared(struct ana_sym *s, uint32_t image, uint64_t addr,
                           enum ana_sym_addr_kind kind, const struct ana_sym_frame **frames);

/* Symbolize a recorded stack (leaf first, every address a return address
 * as unw_backtrace gives them; the frame after a signal trampoline is read
 * as precise). Unless show_internal is set, memscribe's frames and
 * allocator wrapper frames are cut from the top (never the last one).
 * Returns 0 or -ENOMEM. */
int ana_sym_stack(struct ana_sym *s, uint32_t image, const uint64_t *addrs, uint32_t nr,
                  struct ana_sym_stack *out);
/* ana_sym_stack with each address's frames from the cache shared by
 * every image that maps its module (ana_sym_resolve_shared): a tree's
 * processes read a module's addresses once. The frames' addr is then the
 * first asker's: the recorded address of line l is
 * addrs[out->nr_cut + l.index] (addresses are cut from the top only). */
int ana_sym_stack_shared(struct ana_sym *s, uint32_t image, const uint64_t *addrs, uint32_t nr,
                         struct ana_sym_stack *out);
void ana_sym_stack_release(struct ana_sym_stack *st);

/* Is this frame internal: memscribe's own code or an allocator wrapper
 * that would be cut from the top of a stack? */
bool ana_sym_frame_is_internal(const struct ana_sym_frame *f);

/* The cleaning rule of ana_sym_stack(), one recorded address at a time, for
 * a caller that keeps its own per-address results (ana_stacks.c):
 *
 *     struct ana_sym_clean c = ana_sym_clean_start(s);
 *     for (i = 0; i < nr; i++) {
 *         frames = resolve(addrs[i], ana_sym_clean_kind(&c));
 *         if (!ana_sym_clean_next(&c, i, nr, &frames[n - 1]))
 *             keep frames;
 *     }
 *
 * An address is read as precise after a signal trampoline; addresses are
 * cut from the top while every one so far was internal (by its physical
 * frame: an allocator inlined into user code is still user code's call),
 * never the last one. */
struct ana_sym_clean {
    bool cutting;
    bool precise;
};

/* The options the symbolizer was created with. */
const struct ana_sym_options *ana_sym_options_of(const struct ana_sym *s);

static inline struct ana_sym_clean ana_sym_clean_start(const struct ana_sym *s)
{
    return (struct ana_sym_clean){.cutting = !ana_sym_options_of(s)->show_internal};
}

static inline enum ana_sym_addr_kind ana_sym_clean_kind(const struct ana_sym_clean *c)
{
    return c->precise ? ANA_SYM_PRECISE : ANA_SYM_RETURN;
}

/* Address i of nr, whose physical frame is internal or not and a signal
 * trampoline or not: true when it is cut. */
static inline bool ana_sym_clean_next(struct ana_sym_clean *c, uint32_t i, uint32_t nr,
                                      bool internal, bool signal_frame)
{
    c->cutting = c->cutting && i + 1 < nr && internal;
    c->precise = signal_frame;
    return c->cutting;
}

/* Format one line as
 *     [3] 00007f3a12c4 libfoo.so!ns::Cls::method(int)+0x2b (foo.cc:118)
 *     [i] 00007f3a12c4 libfoo.so!ns::inl(int) (foo.h:12)
 *     [4] 00007f3a1300 libfoo.so+0x1300
 *     [5] 00007f3a1400 ??
 * with no newline. Returns the length the full line needs, as snprintf. */
int ana_sym_format_line(const struct ana_sym_line *line, char *buf, size_t size);

/* Notes about modules that could not be symbolized (file missing, build id
 * differs from the recorded one, ...), one per module, in the order they
 * were found. Valid until the symbolizer is destroyed. */
size_t ana_sym_nr_notes(const struct ana_sym *s);
const char *ana_sym_note(const struct ana_sym *s, size_t i);

void ana_sym_get_stats(const struct ana_sym *s, struct ana_sym_stats *out);

#endif
