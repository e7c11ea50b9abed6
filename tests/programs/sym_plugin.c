/* SPDX-License-Identifier: MIT */
/* The library sym_chain dlopens, allocates from, and dlcloses. */
#include <stdlib.h>

#include "sym_cases.h"

void *sym_plugin_alloc(void);
void *volatile sym_plugin_sink;

static __attribute__((noinline)) void *plugin_inner(size_t n)
{
    void *p = malloc(n); /* @sym:plugin-malloc */
    sym_plugin_sink = p;
    return p;
}

void *sym_plugin_alloc(void)
{
    void *p = plugin_inner(SYM_CASE_PLUGIN); /* @sym:plugin-call */
    sym_plugin_sink = NULL;
    return p;
}
