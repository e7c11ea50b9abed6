/* SPDX-License-Identifier: MIT */
/* The causes of unmatched frees (see ana_unmatched.h). */
#include "analysis/core/ana_unmatched.h"

static const struct {
    const char *words, *key;
} causes[ANA_UNMATCHED_NR] = {
    [ANA_UNMATCHED_FORK] = {"inherited at fork, the parent allocated them before it, as in a "
                            "shell script's subshells (a pyenv shim's)",
                            "inherited_at_fork"},
    [ANA_UNMATCHED_ATTACH] = {"allocated before the attach (record -p)", "before_attach"},
    [ANA_UNMATCHED_WINE] = {"made by Wine's heap before memscribe's hooks went in",
                            "wine_before_hooks"},
    [ANA_UNMATCHED_BEFORE] = {"allocated before tracing began", "before_tracing"},
};

enum ana_unmatched_cause ana_unmatched_cause_of(const struct fmt_reader *r, uint32_t image)
{
    const struct fmt_image_info *ii = fmt_reader_image(r, image);
    uint32_t attached = fmt_reader_info(r)->attached_pid;

    /* A fork child's first frees are of its parent's blocks, attached or
     * not, Windows or not (a Wine process forks too). */
    if (ii && ii->has_start && ii->how == FMT_START_FORK)
        return ANA_UNMATCHED_FORK;
    if (attached && ii && ii->pid == attached && (!ii->has_start || ii->how == FMT_START_INITIAL))
        return ANA_UNMATCHED_ATTACH;
    if (fmt_reader_pe(r))
        return ANA_UNMATCHED_WINE;
    return ANA_UNMATCHED_BEFORE;
}

const char *ana_unmatched_words(enum ana_unmatched_cause c)
{
    return causes[c].words;
}

const char *ana_unmatched_key(enum ana_unmatched_cause c)
{
    return causes[c].key;
}
