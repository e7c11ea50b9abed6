/* SPDX-License-Identifier: MIT */
/* A flame tree as folded stacks: "outer;inner;leaf COUNT" per line. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ana_flame.h"

/* Names go out as they are except for the two characters that would split
 * a frame or a line: ';' becomes ':' and a line break a space. */
static void put_name(FILE *out, const char *name)
{
    for (const char *p = name; *p; p++)
        fputc(*p == ';' ? ':' : (*p == '\n' || *p == '\r') ? ' ' : *p, out);
}

static void put_path(const struct ana_flame *f, FILE *out, uint32_t id, uint32_t *path)
{
    uint32_t depth = 0;

    for (uint32_t n = id; n; n = ana_flame_node(f, n)->parent)
        path[depth++] = n;
    while (depth--) {
        put_name(out, ana_flame_name(f, ana_flame_node(f, path[depth])->name));
        if (depth)
            fputc(';', out);
    }
}

int ana_flame_write_folded(const struct ana_flame *f, FILE *out, enum ana_flame_cost cost)
{
    uint32_t nr = ana_flame_nr_nodes(f);
    uint32_t *path = malloc((size_t)nr * sizeof(*path));

    if (!path)
        return -ENOMEM;
    /* Node order is creation order: a parent always comes before its
     * children, which is all folded stacks need (readers merge lines). */
    for (uint32_t id = 1; id < nr; id++) {
        const struct ana_flame_node *n = ana_flame_node(f, id);
        uint64_t self = n->cost[cost];

        for (uint32_t c = n->first_child; c; c = ana_flame_node(f, c)->next_sibling)
            self -= ana_flame_node(f, c)->cost[cost];
        if (!self)
            continue;
        put_path(f, out, id, path);
        fprintf(out, " %" PRIu64 "\n", self);
    }
    free(path);
    if (fflush(out) || ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}
