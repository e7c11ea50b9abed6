/* SPDX-License-Identifier: MIT */
/* The frame of interest (see ana_interest.h): frame classes by name and
 * module, the entry chain, and a row's layout. */
#include "analysis/sym/ana_interest.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The program's entry chain: what runs before main or a thread's function
 * and after them (exit's handlers), on Linux, in mingw's CRT and in Wine. */
static const char *const entry_functions[] = {
    "_start",
    "__libc_start_main",
    "__libc_start_main_impl",
    "__libc_start_main_alias_2",
    "__libc_start_call_main",
    "__libc_csu_init",
    "_dl_start",
    "_dl_start_user",
    "_dl_start_final",
    "_dl_init",
    "call_init",
    "_dl_fini",
    "exit",
    "__GI_exit",
    "__run_exit_handlers",
    "__call_tls_dtors",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "__GI___clone",
    "__GI___clone3",
    "__clone_internal",
    /* mingw-w64's CRT */
    "mainCRTStartup",
    "WinMainCRTStartup",
    "__tmainCRTStartup",
    "wmainCRTStartup",
    "wWinMainCRTStartup",
    /* Wine's and Windows' thread start */
    "BaseThreadInitThunk",
    "RtlUserThreadStart",
    "call_thread_func",
    "call_thread_func_wrapper",
    "start_process",
    "__wine_start_process",
    "signal_start_thread",
    "call_thread_entry_point",
    "call_process_entry",
};

/* Allocation wrappers: what the libc allocator's cleaning list
 * (ana_sym_frame_is_internal) does not name: gnulib's and libiberty's x*
 * and concat, obstacks and objalloc, BFD's (binutils), GCC's garbage
 * collector's, GLib's, libc's strdup, perl's: the allocators every build,
 * desktop program and perl script calls through. */
static const char *const allocator_functions[] = {
    "xmalloc",
    "xcalloc",
    "xrealloc",
    "xzalloc",
    "xstrdup",
    "xstrndup",
    "xmemdup",
    "xmemdup0",
    "xnmalloc",
    "xcharalloc",
    "ximalloc",
    "xireallocarray",
    "xreallocarray",
    "x2realloc",
    "x2nrealloc",
    "xpalloc",
    "xvasprintf",
    "xasprintf",
    "concat",
    "reconcat",
    "_obstack_newchunk",
    "_obstack_begin",
    "_obstack_begin_1",
    "objalloc_create",
    "_objalloc_alloc",
    "objalloc_alloc",
    "bfd_malloc",
    "bfd_zmalloc",
    "bfd_realloc",
    "bfd_realloc_or_free",
    "bfd_alloc",
    "bfd_zalloc",
    "bfd_hash_allocate",
    "ggc_internal_alloc",
    "ggc_internal_cleared_alloc",
    "ggc_alloc_string",
    "g_malloc",
    "g_malloc0",
    "g_realloc",
    "g_try_malloc",
    "g_try_malloc0",
    "g_try_realloc",
    "g_malloc_n",
    "g_malloc0_n",
    "g_realloc_n",
    "g_try_malloc_n",
    "g_strdup",
    "g_strndup",
    "g_memdup",
    "g_memdup2",
    "g_slice_alloc",
    "g_slice_alloc0",
    "strdup",
    "strndup",
    "__strdup",
    "__strndup",
    /* perl's Newx and its string copies */
    "Perl_safesysmalloc",
    "Perl_safesyscalloc",
    "Perl_safesysrealloc",
    "Perl_savepv",
    "Perl_savepvn",
    "Perl_savesharedpv",
    "Perl_savesharedpvn",
};

/* Qualified-name prefixes of the C++ runtime and libc's insides. */
static const char *const runtime_prefixes[] = {
    "std::",  "__gnu_cxx::", "__cxxabiv1::", "__gnu_debug::",
    "__cxa_", "_IO_",        "__GI__IO_",    "_Unwind_",
};

/* Modules of the runtime, by file name up to the ".so" (any version), and
 * the system DLLs of Windows and Wine, by file name, case aside. */
static const char *const runtime_libs[] = {
    "libc.so",
    "libstdc++.so",
    "libgcc_s.so",
    "libm.so",
    "libpthread.so",
    "libdl.so",
    "ld-linux-x86-64.so",
    "ld-linux.so",
    "ld-linux-aarch64.so",
    "libc++.so",
    "libc++abi.so",
};
static const char *const runtime_dlls[] = {
    "ntdll.dll",   "kernel32.dll", "kernelbase.dll", "msvcrt.dll", "ucrtbase.dll",
    "ntdll.so",    "win32u.dll",   "user32.dll",     "gdi32.dll",  "advapi32.dll",
    "sechost.dll", "combase.dll",  "ole32.dll",      "rpcrt4.dll",
};

static bool starts_with(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* [s, s + len) is one of list's n names. Every distinct address of a
 * report asks: the first letter decides most before a comparison. */
static bool in_list(const char *s, size_t len, const char *const *list, size_t n)
{
    for (size_t i = 0; len && i < n; i++)
        if (list[i][0] == s[0] && !strncmp(s, list[i], len) && !list[i][len])
            return true;
    return false;
}

const char *ana_frame_class_name(enum ana_frame_class c)
{
    static const char *const names[ANA_FRAME_NR_CLASSES] = {"user", "allocator", "runtime",
                                                            "entry"};

    return (unsigned)c < ANA_FRAME_NR_CLASSES ? names[c] : "user";
}

/* Past an operator's name at p (just after "operator"): its symbol, the
 * longest that matches ("operator+<char>" is operator+ with a template
 * argument; the demangler writes "operator< <int>" for operator<); a word
 * operator (new, delete, a conversion) reaches its argument list. */
static const char *skip_operator(const char *p)
{
    static const char *const symbols[] = {
        "()", "[]", "<=>", "<<=", ">>=", "->*", "->", "<<", ">>", "<=", ">=", "==", "!=",
        "&&", "||", "++",  "--",  "+=",  "-=",  "*=", "/=", "%=", "&=", "|=", "^=", "+",
        "-",  "*",  "/",   "%",   "^",   "&",   "|",  "~",  "!",  "=",  "<",  ">",  ",",
    };

    if (*p == ' ') {
        while (*p && *p != '(')
            p++;
        return p;
    }
    for (size_t i = 0; i < N_OF(symbols); i++)
        if (starts_with(p, symbols[i])) {
            p += strlen(symbols[i]);
            return starts_with(p, " <") ? p + 1 : p; /* "operator< <int>" */
        }
    return p;
}

/* The qualified name of a demangled function: [*start, *end) without its
 * return type (a template function's: "std::string load<int>(int)" is
 * "load<int>") and its argument list. */
static void qualified_name(const char *fn, const char **start, const char **end)
{
    int depth = 0;
    const char *p = fn;

    *start = fn;
    while (*p) {
        if (starts_with(p, "(anonymous namespace)")) {
            p += strlen("(anonymous namespace)");
            continue;
        }
        if (starts_with(p, "operator") && (p == fn || p[-1] == ':' || p[-1] == ' ')) {
            p = skip_operator(p + strlen("operator"));
            continue;
        }
        if (*p == '<')
            depth++;
        else if (*p == '>' && depth > 0)
            depth--;
        else if (*p == '(' && depth == 0)
            break;
        else if (*p == ' ' && depth == 0)
            *start = p + 1;
        p++;
    }
    *end = p;
}

/* A module's file name is a runtime library's or a system DLL's. */
static bool runtime_module(const char *module)
{
    const char *base = ana_sym_base_name(module);

    for (size_t i = 0; i < N_OF(runtime_libs); i++)
        if (starts_with(base, runtime_libs[i]))
            return true;
    for (size_t i = 0; i < N_OF(runtime_dlls); i++)
        if (!strcasecmp(base, runtime_dlls[i]))
            return true;
    /* Windows' own folder: C:\windows\system32\*.dll as Wine records it. */
    return strcasestr(module, "\\windows\\system32\\") ||
           strcasestr(module, "\\windows\\syswow64\\");
}

/* A module whose internal functions, named only by its debug symbols,
 * make the entry chain: libc (__libc_start_call_main, start_thread,
 * clone3) and the dynamic loader (_dl_start_user, _dl_init, call_init).
 * A nameless frame of theirs is one of those where their symbols are not
 * installed (libc6-dbg), as on a fresh Debian machine: the exported ones
 * have names. */
static bool start_up_module(const char *module)
{
    const char *base = ana_sym_base_name(module);

    return starts_with(base, "libc.so") || starts_with(base, "ld-linux");
}

enum ana_frame_class ana_interest_class(const struct ana_sym_frame *f, const char *const *alloc_fns,
                                        size_t nr_alloc_fns)
{
    if (ana_sym_frame_is_internal(f))
        return ANA_FRAME_ALLOCATOR; /* memscribe's, libc's allocator, operator new */
    if (f->function) {
        const char *fn = f->function, *start, *end;

        qualified_name(fn, &start, &end);
        for (size_t i = 0; i < nr_alloc_fns; i++)
            if (!strcmp(fn, alloc_fns[i]) || (strlen(alloc_fns[i]) == (size_t)(end - start) &&
                                              !memcmp(start, alloc_fns[i], (size_t)(end - start))))
                return ANA_FRAME_ALLOCATOR;
        if (in_list(start, (size_t)(end - start), allocator_functions, N_OF(allocator_functions)))
            return ANA_FRAME_ALLOCATOR;
        if (in_list(start, (size_t)(end - start), entry_functions, N_OF(entry_functions)))
            return ANA_FRAME_ENTRY;
        for (size_t i = 0; i < N_OF(runtime_prefixes); i++)
            if (starts_with(start, runtime_prefixes[i]))
                return ANA_FRAME_RUNTIME;
    }
    if (!f->function && f->module && start_up_module(f->module))
        return ANA_FRAME_ENTRY;
    if (f->module && runtime_module(f->module))
        return ANA_FRAME_RUNTIME;
    return ANA_FRAME_USER;
}

uint32_t ana_interest_entry(const uint8_t *cls, uint32_t n)
{
    uint32_t e = n;

    /* The root of a stripped program's main thread is its _start, named
     * by no symbol: the chain's when the frame it calls is. */
    if (n >= 2 && cls[n - 1] == ANA_FRAME_USER && cls[n - 2] == ANA_FRAME_ENTRY)
        e--;
    while (e > 0 && cls[e - 1] == ANA_FRAME_ENTRY)
        e--;
    return e == 0 ? n : e;
}

uint32_t ana_interest_find(const uint8_t *cls, uint32_t n)
{
    uint32_t e = ana_interest_entry(cls, n);

    for (uint32_t k = 0; k < e; k++)
        if (cls[k] == ANA_FRAME_USER)
            return k;
    return 0;
}

int ana_interest_mark(char *buf, size_t size, uint32_t n)
{
    return snprintf(buf, size, "[%u library frame%s]", n, n == 1 ? "" : "s");
}

void ana_interest_row(const uint8_t *cls, uint32_t n, uint32_t max, struct ana_interest_item *items,
                      struct ana_interest_row *out)
{
    uint32_t e = ana_interest_entry(cls, n), i = ana_interest_find(cls, n), k = 0, nr = 0;

    *out = (struct ana_interest_row){.interest = i, .entry = e};
    if (!n)
        return;
    /* The leaf's side, down to the frame of interest: its allocation
     * wrappers left out as malloc is, the rest one mark, which a row with
     * room for one item only leaves out too. */
    while (k < i && cls[k] == ANA_FRAME_ALLOCATOR)
        k++;
    if (k < i && max != 1)
        items[nr++] = (struct ana_interest_item){k, i - k, true};
    k = i;
    while (k < e && (!max || nr < max)) {
        uint32_t j = k + 1;

        if (k > i && cls[k] != ANA_FRAME_USER)
            while (j < e && cls[j] != ANA_FRAME_USER)
                j++;
        items[nr++] = (struct ana_interest_item){k, j - k, j - k > 1};
        k = j;
    }
    out->nr_items = nr;
    out->nr_more = e - k;
}
