/* SPDX-License-Identifier: MIT */
/* A bump allocator for the symbolizer's strings and frame arrays: results
 * live as long as the symbolizer, so nothing is freed one by one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"

#define ARENA_CHUNK_SIZE (64 * 1024)
#define ARENA_ALIGN 16

struct ana_sym_arena_chunk {
    struct ana_sym_arena_chunk *next;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

void *ana_sym_arena_alloc(struct ana_sym_arena *a, size_t size)
{
    size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);

    if (need < size)
        return NULL;
    if (!a->head || a->cap - a->used < need) {
        /* Big requests get a chunk of their own, so the rest of a normal
         * chunk is not wasted on them. */
        size_t cap = need > ARENA_CHUNK_SIZE / 4 ? need : ARENA_CHUNK_SIZE;
        struct ana_sym_arena_chunk *c = malloc(sizeof(*c) + cap);

        if (!c)
            return NULL;
        if (cap != ARENA_CHUNK_SIZE && a->head) {
            /* Keep filling the current chunk: link the big one behind it. */
            c->next = a->head->next;
            a->head->next = c;
            return c->data;
        }
        c->next = a->head;
        a->head = c;
        a->used = 0;
        a->cap = cap;
    }
    void *p = a->head->data + a->used;
    a->used += need;
    return p;
}

char *ana_sym_arena_strndup(struct ana_sym_arena *a, const char *s, size_t len)
{
    char *p = ana_sym_arena_alloc(a, len + 1);

    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void ana_sym_arena_free(struct ana_sym_arena *a)
{
    struct ana_sym_arena_chunk *c = a->head;

    while (c) {
        struct ana_sym_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used = a->cap = 0;
}
