/* SPDX-License-Identifier: MIT */
/* The labels of attached traces' outputs (see ana_attach.h). */
#include "analysis/core/ana_attach.h"

#include <stdio.h>

#include "analysis/core/ana_json.h"

char *ana_attach_note(char *buf, size_t size, uint32_t pid)
{
    snprintf(buf, size,
             "the trace starts mid-run (record -p %u): blocks allocated before the attach are "
             "not in it, their frees count as frees of unknown blocks",
             pid);
    return buf;
}

void ana_attach_json(struct ana_json *j, uint32_t pid)
{
    if (!pid)
        return;
    ana_json_key(j, "attached");
    ana_json_begin_object(j);
    ana_json_kv_u64(j, "pid", pid);
    ana_json_kv_str(j, "starts", "mid-run");
    ana_json_kv_str(j, "unmatched_frees", "allocated before the attach");
    ana_json_end_object(j);
}
