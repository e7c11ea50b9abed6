/* SPDX-License-Identifier: MIT */
/* Feeding a symbolizer the module map of a whole trace. */
#include <errno.h>

#include "analysis/sym/ana_symbolize.h"
#include "memscribe/trace.h"

int ana_sym_add_trace_modules(struct ana_sym *s, const struct fmt_reader *r)
{
    const struct fmt_trace_info *info = fmt_reader_info(r);
    int rc = ana_sym_set_wine(s, info->wine_prefix, info->wine_dll_dirs, info->wine_dll_dirs_len);

    if (rc)
        return rc;
    /* In load order, so a module loaded later over an unloaded one's range
     * wins; then the unloaded ones are marked, and still name the stacks
     * recorded while they were loaded. */
    for (uint32_t i = 0; i < fmt_reader_nr_modules(r); i++) {
        const struct fmt_module_info *m = fmt_reader_module(r, i);
        rc = ana_sym_add_module(s, m->image, &m->m);

        if (rc && rc != -EINVAL) /* -EINVAL: no segment; its addresses show as "??" */
            return rc;
    }
    for (uint32_t i = 0; i < fmt_reader_nr_modules(r); i++) {
        const struct fmt_module_info *m = fmt_reader_module(r, i);

        if (m->unloaded)
            ana_sym_remove_module(s, m->image, m->m.base);
    }
    return 0;
}
