/* SPDX-License-Identifier: MIT */
/* A program with two pools of its own, announced through
 * memscribe/annotate.h, with exactly known blocks (tests/e2e/
 * record_pools.sh checks the trace's numbers):
 *
 * - "nodes": 48-byte nodes on a free list carved from a 64 KiB malloc'd
 *   arena, whose first node has the arena's address. 12 allocated, 6
 *   freed, 6 leaked (288 bytes): the pool is never destroyed, the arena
 *   is freed at the end.
 * - "strings": a bump allocator in a 4 KiB malloc'd arena: 100, 200 and
 *   300 bytes, the 300 grown to 400 (a realloc, at a new address), then
 *   the pool destroyed with its 3 blocks (700 bytes) still in it.
 *
 * malloc's heap holds the two arenas (69632 bytes), both freed: no leak.
 * The output (a checksum of what the blocks held) is the same traced and
 * untraced. Output by write(2): stdio's buffer would be a malloc block. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memscribe/annotate.h"

#define NODE_SIZE 48
#define NODES_ARENA 65536
#define STRINGS_ARENA 4096

struct nodes {
    unsigned char *arena;
    size_t used;
    void *free_list;
};

static __attribute__((noinline)) void *node_alloc(struct nodes *p)
{
    void *n = p->free_list;

    if (n)
        memcpy(&p->free_list, n, sizeof(void *));
    else if (p->used + NODE_SIZE <= NODES_ARENA)
        n = p->arena + (p->used += NODE_SIZE) - NODE_SIZE;
    MEMSCRIBE_POOL_ALLOC(p, n, NODE_SIZE);
    return n;
}

static __attribute__((noinline)) void node_free(struct nodes *p, void *n)
{
    MEMSCRIBE_POOL_FREE(p, n);
    memcpy(n, &p->free_list, sizeof(void *));
    p->free_list = n;
}

struct strings {
    char *arena;
    size_t used;
};

static __attribute__((noinline)) char *str_alloc(struct strings *p, size_t size)
{
    char *s = p->arena + p->used;

    p->used += (size + 15) & ~(size_t)15;
    MEMSCRIBE_POOL_ALLOC(p, s, size);
    return s;
}

/* Grow a block: a bump allocator copies it to a new place. */
static __attribute__((noinline)) char *str_grow(struct strings *p, char *old, size_t old_size,
                                                size_t size)
{
    char *s = p->arena + p->used;

    p->used += (size + 15) & ~(size_t)15;
    memcpy(s, old, old_size);
    MEMSCRIBE_POOL_REALLOC(p, old, s, size);
    return s;
}

int main(void)
{
    static struct nodes nodes;
    static struct strings strings;
    void *n[12];
    uint64_t sum = 0;
    char out[128];

    nodes.arena = malloc(NODES_ARENA);
    MEMSCRIBE_POOL_CREATE(&nodes, "nodes");
    for (int i = 0; i < 10; i++) {
        n[i] = node_alloc(&nodes);
        memset(n[i], i + 1, NODE_SIZE);
    }
    for (int i = 0; i < 6; i++)
        node_free(&nodes, n[i]);
    for (int i = 10; i < 12; i++) {
        n[i] = node_alloc(&nodes);
        memset(n[i], i + 1, NODE_SIZE);
    }
    for (int i = 6; i < 12; i++)
        sum += ((unsigned char *)n[i])[NODE_SIZE - 1] * (uint64_t)(i + 1);

    strings.arena = malloc(STRINGS_ARENA);
    MEMSCRIBE_POOL_CREATE(&strings, "strings");
    char *a = str_alloc(&strings, 100), *b = str_alloc(&strings, 200);
    char *c = str_alloc(&strings, 300);
    memset(a, 'a', 100);
    memset(b, 'b', 200);
    memset(c, 'c', 300);
    c = str_grow(&strings, c, 300, 400);
    memset(c + 300, 'd', 100);
    for (int i = 0; i < 400; i++)
        sum += (unsigned char)c[i];
    MEMSCRIBE_POOL_DESTROY(&strings);
    free(strings.arena);
    free(nodes.arena); /* the 6 live nodes leak from their pool */

    int len = snprintf(out, sizeof(out), "pools: sum=%llu\n", (unsigned long long)sum);
    return write(1, out, (size_t)len) == len ? 0 : 1;
}
