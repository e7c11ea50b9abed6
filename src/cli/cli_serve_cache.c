/* SPDX-License-Identifier: MIT */
/* memscribe serve's answers kept (cli_serve_cache.h). */
#include "cli/cli_serve_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_http.h"
#include "cli/cli_serve_gzip.h"

void cli_serve_cache_init(struct cli_serve_cache *k)
{
    memset(k, 0, sizeof(*k));
    pthread_mutex_init(&k->lock, NULL);
}

/* Lock held. */
static void body_drop(struct cli_serve_body *b)
{
    if (b && !--b->refs) {
        free(b->data);
        free(b);
    }
}

/* Drop a reference to b, taking the lock. */
static void body_release(struct cli_serve_cache *k, struct cli_serve_body *b)
{
    pthread_mutex_lock(&k->lock);
    body_drop(b);
    pthread_mutex_unlock(&k->lock);
}

/* Lock held. Forget entry e. */
static void drop(struct cli_serve_cache *k, struct cli_serve_cache_entry *e)
{
    if (!e->body)
        return;
    k->bytes -= e->body->len;
    body_drop(e->body);
    e->body = NULL;
}

void cli_serve_cache_release(struct cli_serve_cache *k)
{
    for (size_t i = 0; i < CLI_SERVE_CACHE_ENTRIES; i++)
        drop(k, &k->e[i]);
    pthread_mutex_destroy(&k->lock);
}

struct cli_serve_body *cli_serve_body_new(char *data, size_t len, bool gzip)
{
    struct cli_serve_body *b = malloc(sizeof(*b));

    if (!b) {
        free(data);
        return NULL;
    }
    *b = (struct cli_serve_body){1, len, data, gzip};
    return b;
}

struct cli_serve_body *cli_serve_cache_get(struct cli_serve_cache *k, const char *key,
                                           uint64_t size, uint64_t mtime, unsigned *status,
                                           const char **type)
{
    struct cli_serve_body *b = NULL;

    pthread_mutex_lock(&k->lock);
    for (size_t i = 0; i < CLI_SERVE_CACHE_ENTRIES && !b; i++) {
        struct cli_serve_cache_entry *e = &k->e[i];
        if (!e->body || strcmp(e->key, key) || e->size != size || e->mtime_ns != mtime)
            continue;
        b = e->body;
        b->refs++; /* the caller's */
        *status = e->status;
        *type = e->type;
        e->used = ++k->clock;
    }
    pthread_mutex_unlock(&k->lock);
    return b;
}

void cli_serve_cache_put(struct cli_serve_cache *k, const char *key, uint64_t size, uint64_t mtime,
                         unsigned status, const char *type, struct cli_serve_body *b)
{
    if (b->len > CLI_SERVE_CACHE_BYTES)
        return;
    pthread_mutex_lock(&k->lock);
    for (;;) { /* the least recently used go until it fits */
        struct cli_serve_cache_entry *lru = NULL;
        size_t n = 0;
        for (size_t i = 0; i < CLI_SERVE_CACHE_ENTRIES; i++) {
            struct cli_serve_cache_entry *e = &k->e[i];
            n += e->body != NULL;
            if (e->body && (!lru || e->used < lru->used))
                lru = e;
        }
        if (n < CLI_SERVE_CACHE_ENTRIES && k->bytes + b->len <= CLI_SERVE_CACHE_BYTES)
            break;
        drop(k, lru);
    }
    for (size_t i = 0; i < CLI_SERVE_CACHE_ENTRIES; i++) {
        struct cli_serve_cache_entry *e = &k->e[i];
        if (e->body)
            continue;
        *e = (struct cli_serve_cache_entry){.size = size,
                                            .mtime_ns = mtime,
                                            .status = status,
                                            .type = type,
                                            .body = b,
                                            .used = ++k->clock};
        snprintf(e->key, sizeof(e->key), "%s", key);
        b->refs++;
        k->bytes += b->len;
        break;
    }
    pthread_mutex_unlock(&k->lock);
}

struct sent {
    struct cli_serve_cache *k;
    struct cli_serve_body *b;
};

/* libmicrohttpd is done sending a shared body. */
static void body_sent(void *arg)
{
    struct sent *s = arg;

    body_release(s->k, s->b);
    free(s);
}

/* A gzipped body for a client that does not take gzip: inflated for this
 * reply alone (the kept body stays small). */
static enum MHD_Result reply_inflated(struct cli_serve_cache *k, struct MHD_Connection *c,
                                      unsigned status, const char *type, struct cli_serve_body *b)
{
    char *data;
    size_t len;
    int rc = cli_gzip_inflate(b->data, b->len, &data, &len);

    body_release(k, b);
    if (rc)
        return MHD_NO;
    return cli_http_queue(c, status, type,
                          MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE));
}

enum MHD_Result cli_serve_cache_reply(struct cli_serve_cache *k, struct MHD_Connection *c,
                                      unsigned status, const char *type, struct cli_serve_body *b)
{
    struct sent *s;
    struct MHD_Response *r = NULL;

    if (b->gzip && !cli_gzip_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                                  MHD_HTTP_HEADER_ACCEPT_ENCODING)))
        return reply_inflated(k, c, status, type, b);
    if ((s = malloc(sizeof(*s)))) {
        *s = (struct sent){k, b};
        r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, body_sent, s);
    }
    if (!r) {
        free(s);
        body_release(k, b);
        return MHD_NO;
    }
    if (b->gzip)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    return cli_http_queue(c, status, type, r);
}
