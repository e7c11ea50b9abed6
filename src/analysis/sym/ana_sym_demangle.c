/* SPDX-License-Identifier: MIT */
/* Demangling through libiberty's cplus_demangle, which knows the Itanium
 * C++ ABI and both Rust manglings (legacy _ZN...17h<hash>E and v0 _R...);
 * __cxa_demangle would cover C++ only. */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"

/* Only names that look mangled are handed to the demangler: it costs a
 * parse, and plain C names such as "main" would come back NULL anyway. */
static bool looks_mangled(const char *name)
{
    return (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) ||
           (name[0] == '_' && name[1] == '_' && name[2] == 'Z');
}

/* Length of name without a compiler clone suffix. GCC names the copies it
 * makes of a function foo.constprop.0, foo.isra.0, foo.part.0, foo.cold;
 * demangled C++ shows them as "foo(int) [clone .cold]". They are all foo
 * to a reader, and reports must count them as one function. A C or
 * assembler name cannot contain '.' otherwise. */
static size_t unclone_len(const char *name, bool was_mangled)
{
    const char *cut = was_mangled ? strstr(name, " [clone ") : strchr(name + 1, '.');

    return cut ? (size_t)(cut - name) : strlen(name);
}

/* Length of a C name without a 32-bit Windows stdcall or fastcall
 * decoration: the DWARF of an i386 PE names VirtualAllocEx
 * "VirtualAllocEx@20" (its argument bytes), where its symbol table, its
 * exports and dbghelp say VirtualAllocEx. Only an identifier followed by
 * '@' and digits; ELF symbol versions (memcpy@GLIBC_2.14) are not digits. */
static size_t undecorated_len(const char *name, size_t len)
{
    size_t at = len;

    while (at > 0 && name[at - 1] >= '0' && name[at - 1] <= '9')
        at--;
    if (at == len || at < 2 || name[at - 1] != '@')
        return len;
    for (size_t i = 0; i + 1 < at; i++)
        if (!(name[i] == '_' || (name[i] >= 'a' && name[i] <= 'z') ||
              (name[i] >= 'A' && name[i] <= 'Z') || (i && name[i] >= '0' && name[i] <= '9')))
            return len;
    return at - 1;
}

const char *ana_sym_demangle(struct ana_sym_arena *a, const char *name)
{
    if (!name[0])
        return name;
    if (!looks_mangled(name)) {
        size_t len = undecorated_len(name, unclone_len(name, false));
        return name[len] ? ana_sym_arena_strndup(a, name, len) : name;
    }
    /* DMGL_AUTO picks C++ or Rust by the name; adding DMGL_RUST to it
     * would select no style at all and demangle nothing. */
    char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);

    if (!d)
        return name;
    const char *copy = ana_sym_arena_strndup(a, d, unclone_len(d, true));

    free(d);
    return copy;
}
