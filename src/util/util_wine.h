/* SPDX-License-Identifier: MIT */
/* Wine on this host: the prefix a program runs in and the folders of Wine's
 * own DLLs (PE files: ntdll.dll, kernelbase.dll, ...). The recorder writes
 * both into a Windows program's trace (docs/format.md, META WINE_PREFIX and
 * WINE_DLL_DIR); the symbolizer falls back on this host's for a trace that
 * has none (docs/symbols.md, "Windows modules"). */
#ifndef UTIL_WINE_H
#define UTIL_WINE_H

#include <stdbool.h>
#include <stddef.h>

/* The prefix Wine uses in this environment: $WINEPREFIX, else $HOME/.wine
 * (Wine's default), made absolute against the working directory. Returns
 * a malloc'd path (it need not exist yet: Wine makes it on its first run),
 * or NULL with neither variable set, or out of memory. */
char *util_wine_prefix(void);

/* The folders of Wine's PE DLLs on this host, one per architecture
 * (`x86_64-windows`, `i386-windows`), each holding ntdll.dll: looked for
 * beside the loader `loader` (the wine or wine64 binary; NULL: none) and
 * then beside the usual loaders (MEMSCRIBE_WINE, Debian's /usr/lib/wine/
 * wine64 and wine, /usr/bin/wine64 and wine), in the layouts Debian,
 * upstream and WineHQ's packages install (DIR/../<triplet>/wine/,
 * DIR/../lib64/wine/, DIR/../lib/wine/, ...). i386_first puts the i386
 * folder first. Returns the real paths as NUL-ended words in a malloc'd
 * buffer and *len its bytes, or NULL (*len 0) when none is found or out of
 * memory. */
char *util_wine_dll_dirs(const char *loader, bool i386_first, size_t *len);

#endif
