/* SPDX-License-Identifier: MIT */
/* The flame graph's tree: call paths merged by frame name, costs summed
 * along them. Names are interned once; (parent, name) -> child lookups go
 * through one open-addressing table, so adding a path is O(depth). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ana_flame.h"

struct ana_flame {
    struct ana_flame_node *nodes;
    uint32_t nr_nodes, cap_nodes;

    char **names;
    uint32_t nr_names, cap_names;
    uint32_t *name_slots; /* name id + 1, 0 = empty */
    uint32_t name_mask;

    uint32_t *child_slots; /* node index, 0 = empty (the root is never a child) */
    uint32_t child_mask;
};

static const char *const cost_names[ANA_FLAME_NR_COSTS] = {
    "allocations", "bytes", "leaked", "peak", "temporary",
};

const char *ana_flame_cost_name(enum ana_flame_cost c)
{
    return (unsigned)c < ANA_FLAME_NR_COSTS ? cost_names[c] : "unknown";
}

int ana_flame_cost_parse(const char *name, enum ana_flame_cost *out)
{
    for (unsigned i = 0; i < ANA_FLAME_NR_COSTS; i++) {
        if (!strcmp(name, cost_names[i])) {
            *out = (enum ana_flame_cost)i;
            return 0;
        }
    }
    return -EINVAL;
}

int ana_flame_cost_is_bytes(enum ana_flame_cost c)
{
    return c == ANA_FLAME_BYTES || c == ANA_FLAME_LEAKED || c == ANA_FLAME_PEAK;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_child(uint32_t parent, uint32_t name)
{
    uint64_t k = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;

    return k ^ (k >> 29);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    uint32_t n = *cap ? *cap : 64;
    void *q;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

static int rehash_names(struct ana_flame *f)
{
    uint32_t size = (f->name_mask + 1) * 2;
    uint32_t *slots = calloc(size, sizeof(*slots));

    if (!slots)
        return -ENOMEM;
    for (uint32_t id = 0; id < f->nr_names; id++) {
        uint32_t i = (uint32_t)hash_bytes(f->names[id], strlen(f->names[id])) & (size - 1);

        while (slots[i])
            i = (i + 1) & (size - 1);
        slots[i] = id + 1;
    }
    free(f->name_slots);
    f->name_slots = slots;
    f->name_mask = size - 1;
    return 0;
}

static int rehash_children(struct ana_flame *f)
{
    uint32_t size = (f->child_mask + 1) * 2;
    uint32_t *slots = calloc(size, sizeof(*slots));

    if (!slots)
        return -ENOMEM;
    for (uint32_t n = 1; n < f->nr_nodes; n++) {
        uint32_t i = (uint32_t)hash_child(f->nodes[n].parent, f->nodes[n].name) & (size - 1);

        while (slots[i])
            i = (i + 1) & (size - 1);
        slots[i] = n;
    }
    free(f->child_slots);
    f->child_slots = slots;
    f->child_mask = size - 1;
    return 0;
}

/* The id of a name, interning it on first sight. */
static int intern(struct ana_flame *f, const char *s, uint32_t *id)
{
    size_t len = strlen(s);
    uint32_t i = (uint32_t)hash_bytes(s, len) & f->name_mask;
    char *copy;

    for (; f->name_slots[i]; i = (i + 1) & f->name_mask) {
        if (!strcmp(f->names[f->name_slots[i] - 1], s)) {
            *id = f->name_slots[i] - 1;
            return 0;
        }
    }
    if (grow((void **)&f->names, &f->cap_names, f->nr_names + 1, sizeof(*f->names)))
        return -ENOMEM;
    copy = strdup(s);
    if (!copy)
        return -ENOMEM;
    *id = f->nr_names;
    f->names[f->nr_names++] = copy;
    f->name_slots[i] = *id + 1;
    if (f->nr_names * 2 > f->name_mask)
        return rehash_names(f);
    return 0;
}

static int child(struct ana_flame *f, uint32_t parent, uint32_t name, uint32_t *out)
{
    uint32_t i = (uint32_t)hash_child(parent, name) & f->child_mask;
    struct ana_flame_node *n;

    for (; f->child_slots[i]; i = (i + 1) & f->child_mask) {
        n = &f->nodes[f->child_slots[i]];
        if (n->parent == parent && n->name == name) {
            *out = f->child_slots[i];
            return 0;
        }
    }
    if (grow((void **)&f->nodes, &f->cap_nodes, f->nr_nodes + 1, sizeof(*f->nodes)))
        return -ENOMEM;
    n = &f->nodes[f->nr_nodes];
    memset(n, 0, sizeof(*n));
    n->name = name;
    n->parent = parent;
    n->depth = f->nodes[parent].depth + 1;
    *out = f->nr_nodes;
    f->child_slots[i] = f->nr_nodes++;
    if (f->nr_nodes * 2 > f->child_mask)
        return rehash_children(f);
    return 0;
}

int ana_flame_create(struct ana_flame **out)
{
    struct ana_flame *f = calloc(1, sizeof(*f));
    uint32_t root_name;

    if (!f)
        return -ENOMEM;
    f->name_mask = 255;
    f->child_mask = 255;
    f->name_slots = calloc(f->name_mask + 1, sizeof(*f->name_slots));
    f->child_slots = calloc(f->child_mask + 1, sizeof(*f->child_slots));
    if (!f->name_slots || !f->child_slots ||
        grow((void **)&f->nodes, &f->cap_nodes, 1, sizeof(*f->nodes)) ||
        intern(f, "all", &root_name)) {
        ana_flame_destroy(f);
        return -ENOMEM;
    }
    memset(&f->nodes[0], 0, sizeof(f->nodes[0]));
    f->nodes[0].name = root_name;
    f->nr_nodes = 1;
    *out = f;
    return 0;
}

void ana_flame_destroy(struct ana_flame *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->nr_names; i++)
        free(f->names[i]);
    free(f->names);
    free(f->name_slots);
    free(f->child_slots);
    free(f->nodes);
    free(f);
}

int ana_flame_add(struct ana_flame *f, const char *const *frames, uint32_t nr_frames,
                  const uint64_t cost[ANA_FLAME_NR_COSTS])
{
    uint32_t node = 0, name;
    int rc;

    for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
        f->nodes[0].cost[c] += cost[c];
    for (uint32_t i = 0; i < nr_frames; i++) {
        rc = intern(f, frames[i] ? frames[i] : "??", &name);
        if (!rc)
            rc = child(f, node, name, &node);
        if (rc)
            return rc;
        for (unsigned c = 0; c < ANA_FLAME_NR_COSTS; c++)
            f->nodes[node].cost[c] += cost[c];
    }
    return 0;
}

static const struct ana_flame *sort_tree; /* qsort has no context argument */

static int by_name(const void *a, const void *b)
{
    const struct ana_flame_node *x = &sort_tree->nodes[*(const uint32_t *)a];
    const struct ana_flame_node *y = &sort_tree->nodes[*(const uint32_t *)b];

    return strcmp(sort_tree->names[x->name], sort_tree->names[y->name]);
}

int ana_flame_finish(struct ana_flame *f)
{
    uint32_t *order = malloc((size_t)f->nr_nodes * sizeof(*order));
    uint32_t n = 0;

    if (!order)
        return -ENOMEM;
    for (uint32_t i = 1; i < f->nr_nodes; i++)
        order[n++] = i;
    sort_tree = f;
    qsort(order, n, sizeof(*order), by_name);
    sort_tree = NULL;
    for (uint32_t i = 0; i < f->nr_nodes; i++)
        f->nodes[i].first_child = f->nodes[i].next_sibling = 0;
    /* Link in reverse so each parent's list ends up in name order. */
    for (uint32_t k = n; k-- > 0;) {
        struct ana_flame_node *c = &f->nodes[order[k]];

        c->next_sibling = f->nodes[c->parent].first_child;
        f->nodes[c->parent].first_child = order[k];
    }
    free(order);
    return 0;
}

uint32_t ana_flame_nr_nodes(const struct ana_flame *f)
{
    return f->nr_nodes;
}

const struct ana_flame_node *ana_flame_node(const struct ana_flame *f, uint32_t i)
{
    return i < f->nr_nodes ? &f->nodes[i] : NULL;
}

uint32_t ana_flame_nr_names(const struct ana_flame *f)
{
    return f->nr_names;
}

const char *ana_flame_name(const struct ana_flame *f, uint32_t name)
{
    return name < f->nr_names ? f->names[name] : NULL;
}
