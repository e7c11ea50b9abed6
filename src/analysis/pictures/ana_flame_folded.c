/* SPDX-License-Identifier: MIT */
/* A flame tree as folded stacks: "outer;inner;leaf COUNT" per line. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "analysis/model/ana_tree.h"
#include "analysis/pictures/ana_flame.h"

/* Names go out as they are except for the two characters that would split
 * a frame or a line: ';' becomes ':' and a line break a space. */
static void put_name(FILE *out, const char *name)
{
    for (const char *p = name; *p; p++)
        fputc(*p == ';' ? ':' : (*p == '\n' || *p == '\r') ? ' ' : *p, out);
}

int ana_flame_write_folded(const struct ana_tree *t, ana_flame_name_fn *name, void *arg, FILE *out,
                           enum ana_flame_cost cost)
{
    uint32_t *path = malloc((t->nr_nodes ? t->nr_nodes : 1) * sizeof(*path));

    if (!path)
        return -ENOMEM;
    /* Nodes are in creation order, parents before children; readers of
     * folded stacks merge lines, so no particular order is needed. */
    for (uint32_t id = 1; id < t->nr_nodes; id++) {
        int64_t self = t->nodes[id].self[cost];
        uint32_t depth = 0;

        if (self <= 0)
            continue;
        for (uint32_t n = id; n != 0; n = t->nodes[n].parent)
            path[depth++] = n;
        while (depth--) {
            put_name(out, name(arg, t->nodes[path[depth]].label));
            fputc(depth ? ';' : ' ', out);
        }
        fprintf(out, "%" PRId64 "\n", self);
    }
    free(path);
    if (fflush(out) || ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}
