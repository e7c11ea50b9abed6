/* SPDX-License-Identifier: MIT */
/* A hash map from non-zero uint64_t keys to fixed-size values: open
 * addressing with linear probing and backward-shift deletion, so memory is
 * two arrays and a lookup touches one or two cache lines. Used for live
 * blocks by serial and for sparse (stack, class) counters. */
#ifndef ANA_MAP_H
#define ANA_MAP_H

#include <stddef.h>
#include <stdint.h>

struct ana_map {
    uint64_t *keys; /* 0: empty slot */
    unsigned char *vals;
    size_t val_size;
    size_t cap; /* a power of two, or 0 */
    size_t nr;
};

/* The map's hash of a key: splitmix64's finalizer, every bit of the key
 * felt in the low bits. For any table that needs it (ana_stacks_key.c). */
static inline uint64_t ana_map_mix(uint64_t key)
{
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebull;
    key ^= key >> 31;
    return key;
}

void ana_map_init(struct ana_map *m, size_t val_size);
void ana_map_release(struct ana_map *m);

/* The value of key (non-zero), or NULL. */
void *ana_map_get(const struct ana_map *m, uint64_t key);

/* The value of key, inserted zero-filled if absent (*created set to 1 then,
 * if created is not NULL). NULL on allocation failure. Pointers to values
 * stay valid until the next put or del. */
void *ana_map_put(struct ana_map *m, uint64_t key, int *created);

/* Remove key. Returns 1 if it was there, 0 if not. */
int ana_map_del(struct ana_map *m, uint64_t key);

/* Iterate: slots 0..cap-1, skipping those whose key is 0. */
static inline uint64_t ana_map_slot_key(const struct ana_map *m, size_t i)
{
    return m->keys[i];
}
static inline void *ana_map_slot_val(const struct ana_map *m, size_t i)
{
    return m->vals + i * m->val_size;
}

#endif
