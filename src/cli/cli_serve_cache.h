/* SPDX-License-Identifier: MIT */
/* The answers memscribe serve keeps (docs/serve.md, "Scale"), each until
 * the trace's size or time changes: a finished trace answers each query
 * once, and a page that polls a growing trace costs one run per change,
 * however many tabs look. At most CLI_SERVE_CACHE_ENTRIES answers and
 * CLI_SERVE_CACHE_BYTES of them (the least recently used go first; a
 * larger answer is sent, not kept). A body is held once by the cache and
 * every response sending it, freed by the last. */
#ifndef CLI_SERVE_CACHE_H
#define CLI_SERVE_CACHE_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_SERVE_CACHE_ENTRIES 32
#define CLI_SERVE_CACHE_BYTES (128u << 20)
#define CLI_SERVE_CACHE_KEY 256

struct cli_serve_body {
    unsigned refs;
    size_t len;
    char *data;
    bool gzip; /* data is gzip (cli_serve_gzip.h) */
};

struct cli_serve_cache_entry {
    char key[CLI_SERVE_CACHE_KEY];
    uint64_t size, mtime_ns; /* the trace's version */
    unsigned status;
    const char *type;
    struct cli_serve_body *body;
    uint64_t used;
};

struct cli_serve_cache {
    pthread_mutex_t lock; /* the entries and every body's refs */
    struct cli_serve_cache_entry e[CLI_SERVE_CACHE_ENTRIES];
    size_t bytes;
    uint64_t clock;
};

void cli_serve_cache_init(struct cli_serve_cache *k);
void cli_serve_cache_release(struct cli_serve_cache *k);
/* A body of data (malloc'd, taken), with one reference, the caller's;
 * NULL when out of memory (data freed). */
struct cli_serve_body *cli_serve_body_new(char *data, size_t len, bool gzip);
/* The answer kept for key at this version of the trace, with a reference
 * for the caller (and its status and type); NULL if none. */
struct cli_serve_body *cli_serve_cache_get(struct cli_serve_cache *k, const char *key,
                                           uint64_t size, uint64_t mtime, unsigned *status,
                                           const char **type);
/* Keep b (one more reference) as key's answer at this version. */
void cli_serve_cache_put(struct cli_serve_cache *k, const char *key, uint64_t size, uint64_t mtime,
                         unsigned status, const char *type, struct cli_serve_body *b);
/* Send b with the caller's reference, which the response holds until it is
 * sent (inflated for a client that does not take gzip). */
enum MHD_Result cli_serve_cache_reply(struct cli_serve_cache *k, struct MHD_Connection *c,
                                      unsigned status, const char *type, struct cli_serve_body *b);

#endif
