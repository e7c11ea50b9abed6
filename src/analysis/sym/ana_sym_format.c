/* SPDX-License-Identifier: MIT */
/* One frame as a line of text, in the form Windows heap tracers print:
 * "[3] 00007f3a12c4 libfoo.so!ns::Cls::method(int)+0x2b (foo.cc:118)". */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"

int ana_sym_format_line(const struct ana_sym_line *line, char *buf, size_t size)
{
    const struct ana_sym_frame *f = line->frame;
    char index[16];
    int n;

    if (f->inlined)
        snprintf(index, sizeof(index), "[i]");
    else
        snprintf(index, sizeof(index), "[%" PRIu32 "]", line->index);
    if (!f->module)
        return snprintf(buf, size, "%s %012" PRIx64 " ??", index, f->addr);

    const char *mod = ana_sym_base_name(f->module);
    if (!mod[0])
        mod = "?";
    if (!f->function)
        n = snprintf(buf, size, "%s %012" PRIx64 " %s+0x%" PRIx64, index, f->addr, mod,
                     f->module_offset);
    else if (f->has_offset)
        n = snprintf(buf, size, "%s %012" PRIx64 " %s!%s+0x%" PRIx64, index, f->addr, mod,
                     f->function, f->function_offset);
    else
        n = snprintf(buf, size, "%s %012" PRIx64 " %s!%s", index, f->addr, mod, f->function);
    if (n < 0 || !f->file)
        return n;

    size_t used = (size_t)n < size ? (size_t)n : (size > 0 ? size - 1 : 0);
    char *tail = size ? buf + used : NULL;
    int m;
    if (f->line)
        m = snprintf(tail, size - used, " (%s:%" PRIu32 ")", ana_sym_base_name(f->file), f->line);
    else
        m = snprintf(tail, size - used, " (%s)", ana_sym_base_name(f->file));
    return m < 0 ? m : n + m;
}
