/* SPDX-License-Identifier: MIT */
/* memscribe serve's routes (cli_serve_http.h) on memscribe's one HTTP
 * server (cli_http.h): the page at /, the status at once (a stat of the
 * file), a kept answer at once (cli_serve_cache.h), and any other query
 * deferred to the server's workers, so that a slow one (a large trace
 * replayed) holds up no other request. Each query runs memscribe's own
 * command in a child (cli_serve_query.c). */
#include "cli/cli_serve_http.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli_http.h"
#include "cli/cli_serve_cache.h"
#include "cli/cli_serve_index.h"

struct cli_serve_http {
    struct cli_http *server;
    struct cli_serve_cache cache;
    struct cli_serve_end end; /* how a live recording ended (the status says) */
    atomic_int stopping;      /* set when it stops: a running query is cut short */
    struct cli_serve_trace trace;
    const char *page;
    /* When the page last asked (CLOCK_MONOTONIC ms): a scraper's /metrics
     * and pprof questions do not keep a finished recording's server up */
    atomic_ullong page_ms;
    atomic_bool asked;    /* a page has asked something */
    atomic_bool took_end; /* a page has taken a live recording's end (status?took=end) */
};

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct cache_key {
    char key[CLI_SERVE_CACHE_KEY];
    size_t len;
};

/* The cache key grows by every parameter of the URL but the token, in
 * the URL's order: a query's answer depends on its parameters alone, and
 * no list of them here has to follow the queries' table. */
static enum MHD_Result add_to_key(void *arg, enum MHD_ValueKind kind, const char *name,
                                  const char *value)
{
    struct cache_key *k = arg;
    int n;

    (void)kind;
    if (!strcmp(name, "token") || k->len >= CLI_SERVE_CACHE_KEY)
        return MHD_YES;
    n = snprintf(k->key + k->len, CLI_SERVE_CACHE_KEY - k->len, "&%s=%s", name, value ? value : "");
    k->len = n < 0 ? CLI_SERVE_CACHE_KEY : k->len + (size_t)n;
    return MHD_YES;
}

/* A query's request, deferred: its parameters copied, so that a worker
 * reads no connection. */
#define MAX_ARGS 16
struct request {
    struct cli_http_job job; /* first: the server hands it back */
    struct cli_serve_http *h;
    char name[40];
    struct cache_key key;
    uint64_t size, mtime; /* the trace's version before the query */
    bool cacheable;
    char *args[2 * MAX_ARGS]; /* name, value */
    size_t nr_args;
    struct cli_serve_answer a;
    int rc;
};

static void request_free(struct cli_http_job *j)
{
    struct request *q = (struct request *)j;

    for (size_t i = 0; i < 2 * q->nr_args; i++)
        free(q->args[i]);
    free(q->a.body);
    free(q);
}

static const char *request_param(void *arg, const char *name)
{
    const struct request *q = arg;

    for (size_t i = 0; i < q->nr_args; i++)
        if (!strcmp(q->args[2 * i], name))
            return q->args[2 * i + 1];
    return NULL;
}

static enum MHD_Result copy_arg(void *arg, enum MHD_ValueKind kind, const char *name,
                                const char *value)
{
    struct request *q = arg;

    (void)kind;
    if (q->nr_args == MAX_ARGS || !strcmp(name, "token"))
        return MHD_YES; /* more than any query takes: the query says which it knows */
    char *n = strdup(name), *v = strdup(value ? value : "");
    if (!n || !v) {
        free(n);
        free(v);
        q->rc = -ENOMEM;
        return MHD_NO;
    }
    q->args[2 * q->nr_args] = n;
    q->args[2 * q->nr_args++ + 1] = v;
    return MHD_YES;
}

/* The worker's part: run the query. */
static void request_run(struct cli_http_job *j)
{
    struct request *q = (struct request *)j;

    q->rc = cli_serve_query(&q->h->trace, q->name, request_param, q, &q->a);
}

/* Answer the query once it ran: its output becomes the body the cache and
 * the reply share. */
static enum MHD_Result request_answer(struct cli_http_job *j, struct MHD_Connection *c, bool ran)
{
    struct request *q = (struct request *)j;
    struct cli_serve_http *h = q->h;
    struct cli_serve_answer *a = &q->a;

    if (!ran || q->rc == -ECANCELED)
        return cli_http_text(c, 503, "memscribe serve is stopping\n");
    if (q->rc < 0)
        return cli_http_text(c, 500, "the server could not run the query\n");
    /* its buffer's slack given back */
    char *data = a->body_len ? realloc(a->body, a->body_len) : a->body;
    if (a->body_len && !data)
        return cli_http_text(c, 500, "the server ran out of memory\n");
    a->body = NULL;
    struct cli_serve_body *b = cli_serve_body_new(data, a->body_len, a->gzip);
    if (!b)
        return cli_http_text(c, 500, "the server ran out of memory\n");
    /* Keep answers that are the trace's, not a passing failure. */
    if (q->cacheable && (a->status == 200 || a->status == 400) && q->key.len < CLI_SERVE_CACHE_KEY)
        cli_serve_cache_put(&h->cache, q->key.key, q->size, q->mtime, a->status, a->type, b);
    return cli_serve_cache_reply(&h->cache, c, a->status, a->type, b);
}

static enum MHD_Result status(struct cli_serve_http *h, struct MHD_Connection *c)
{
    struct cli_serve_answer a = {0};
    int rc = cli_serve_query(&h->trace, "status", NULL, NULL, &a);
    const char *took = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "took");

    /* the page showed the live recording's end (serve.js): the server may go */
    if (took && !strcmp(took, "end") && atomic_load(&h->end.ended))
        atomic_store(&h->took_end, true);
    if (rc < 0) {
        free(a.body);
        return cli_http_text(c, 500, "the server could not run the query\n");
    }
    return cli_http_queue(
        c, a.status, a.type,
        MHD_create_response_from_buffer(a.body_len, a.body, MHD_RESPMEM_MUST_FREE));
}

/* /api/NAME: the status at once, a kept answer at once, else the query
 * deferred. */
static enum MHD_Result api(struct cli_serve_http *h, struct MHD_Connection *c, const char *name,
                           void **state)
{
    struct request *q;

    if (!strcmp(name, "status"))
        return status(h, c);
    if (!(q = calloc(1, sizeof(*q))))
        return cli_http_text(c, 500, "the server ran out of memory\n");
    q->job =
        (struct cli_http_job){.run = request_run, .answer = request_answer, .free = request_free};
    q->h = h;
    snprintf(q->name, sizeof(q->name), "%s", name);
    q->key.len = (size_t)snprintf(q->key.key, sizeof(q->key.key), "%s", name);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_to_key, &q->key);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, copy_arg, q);
    q->cacheable = cli_serve_trace_version(h->trace.path, &q->size, &q->mtime) == 0 &&
                   q->key.len < CLI_SERVE_CACHE_KEY;
    if (q->rc) {
        request_free(&q->job);
        return cli_http_text(c, 500, "the server ran out of memory\n");
    }
    unsigned st;
    const char *type;
    struct cli_serve_body *b =
        q->cacheable ? cli_serve_cache_get(&h->cache, q->key.key, q->size, q->mtime, &st, &type)
                     : NULL;
    if (b) {
        request_free(&q->job);
        return cli_serve_cache_reply(&h->cache, c, st, type, b);
    }
    return cli_http_defer(h->server, c, &q->job, state);
}

static enum MHD_Result route(void *arg, struct cli_http *server, struct MHD_Connection *c,
                             const char *url, void **state)
{
    struct cli_serve_http *h = arg;

    (void)server;
    if (!strcmp(url, "/") || !strncmp(url, "/api/", 5)) {
        atomic_store(&h->page_ms, mono_ms());
        atomic_store(&h->asked, true);
    }
    if (!strcmp(url, "/"))
        return cli_http_static(c, 200, "text/html; charset=utf-8", h->page, strlen(h->page));
    if (!strncmp(url, "/api/", 5) && strlen(url) < 40)
        return api(h, c, url + 5, state);
    /* Prometheus's path, for a scraper with the token as its bearer
     * credentials (memscribe metrics; docs/fleet.md) */
    if (!strcmp(url, "/metrics"))
        return api(h, c, "metrics", state);
    /* Go's pprof paths (go tool pprof URL, Parca's and Alloy's scrapers):
     * one profile, its sample types all four (-sample_index picks; Go's
     * /allocs defaults to alloc_space) */
    if (!strcmp(url, "/debug/pprof/heap"))
        return api(h, c, "pprof", state);
    if (!strcmp(url, "/debug/pprof/allocs"))
        return api(h, c, "pprof_allocs", state);
    return cli_http_text(c, 404, "not here\n");
}

int cli_serve_http_start(struct cli_serve_http **out, const struct cli_serve_trace *t,
                         const struct cli_serve_http_options *o, uint16_t *port, char *msg,
                         size_t msg_size)
{
    struct cli_serve_http *h = calloc(1, sizeof(*h));
    struct cli_http_options ho = {.listen = o->listen,
                                  .port = o->port,
                                  .token = o->token,
                                  .name = "memscribe serve",
                                  .route = route};
    int rc;

    if (!h)
        return -ENOMEM;
    h->trace = *t;
    h->trace.stop = &h->stopping;
    h->trace.end = &h->end;
    h->page = o->page;
    atomic_store(&h->page_ms, mono_ms());
    cli_serve_cache_init(&h->cache);
    ho.arg = h;
    if ((rc = cli_http_start(&h->server, &ho, port, msg, msg_size))) {
        cli_serve_cache_release(&h->cache);
        free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void cli_serve_http_stop(struct cli_serve_http *h)
{
    if (!h)
        return;
    atomic_store(&h->stopping, 1);
    cli_http_stop(h->server); /* every response is sent or dropped: its bodies released */
    cli_serve_cache_release(&h->cache);
    free(h);
}

void cli_serve_http_ended(struct cli_serve_http *h, int how)
{
    atomic_store(&h->end.how, how);
    atomic_store(&h->end.ended, 1);
}

bool cli_serve_http_took_end(struct cli_serve_http *h)
{
    return atomic_load(&h->took_end);
}

bool cli_serve_http_asked(struct cli_serve_http *h)
{
    return atomic_load(&h->asked);
}

uint64_t cli_serve_http_quiet_ms(struct cli_serve_http *h)
{
    uint64_t last = atomic_load(&h->page_ms), now = mono_ms();

    return cli_http_busy(h->server) || now < last ? 0 : now - last;
}
