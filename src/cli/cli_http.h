/* SPDX-License-Identifier: MIT */
/* memscribe's one HTTP server (docs/serve.md, "Other users"), on
 * libmicrohttpd: the rules every page or endpoint memscribe serves keeps.
 * One polling thread reads every connection (a half-open one costs a
 * descriptor, not a thread); each local user or remote address holds at
 * most CLI_SERVE_PER_CLIENT connections (cli_serve_clients.h), idle ones
 * close; refusals are counted, not logged one by one; only GET and HEAD,
 * without a body, answered at their headers otherwise; every request
 * carries the token (?token=), compared in constant time; work that takes
 * time is deferred to a few workers (cli_serve_pool.h), its connection
 * suspended meanwhile, up to a queue's depth. What a server answers is its
 * route's. */
#ifndef CLI_HTTP_H
#define CLI_HTTP_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct cli_http;

/* Work a route defers (cli_http_defer): run in a worker, answered in the
 * polling thread once run (ran false: the server stopped first), freed
 * when its request completes. A route embeds it in its own state. */
struct cli_http_job {
    void (*run)(struct cli_http_job *j);
    enum MHD_Result (*answer)(struct cli_http_job *j, struct MHD_Connection *c, bool ran);
    void (*free)(struct cli_http_job *j);
    struct MHD_Connection *c; /* cli_http_defer's */
    bool ran, done;
};

/* A request that passed the rules, at its path; state is the request's,
 * for cli_http_defer. Answer with the cli_http_* replies below. */
typedef enum MHD_Result cli_http_route_fn(void *arg, struct cli_http *h, struct MHD_Connection *c,
                                          const char *url, void **state);

struct cli_http_options {
    const char *listen; /* an IPv4 or IPv6 address */
    uint16_t port;      /* 0: one the system picks */
    const char *token;  /* asked as ?token= on every request */
    const char *name;   /* the server's name in its answers ("memscribe serve") */
    cli_http_route_fn *route;
    void *arg;
};

/* Start serving: 0 with *out (and *port the port listened on), or -errno
 * with msg saying why. */
int cli_http_start(struct cli_http **out, const struct cli_http_options *o, uint16_t *port,
                   char *msg, size_t msg_size);
/* Whether a server could listen on listen (an IPv4 or IPv6 address) and
 * port now: a socket bound there (SO_REUSEADDR, as the server's) and
 * closed. 0, or -errno with msg saying why: a command that starts its
 * server later, where nobody reads its words (record without the
 * wrapper), says so while someone does. */
int cli_http_can_listen(const char *listen, uint16_t port, char *msg, size_t msg_size);
/* Stop: the jobs queued are answered that the server stops, those running
 * are waited for (the route's to cut short); every connection closes. */
void cli_http_stop(struct cli_http *h);
/* Whether a request is being answered now. */
bool cli_http_busy(struct cli_http *h);

/* Run job in a worker, then answer it: MHD_YES with the connection
 * suspended meanwhile; a full queue is answered 503 at once (and the job
 * freed). */
enum MHD_Result cli_http_defer(struct cli_http *h, struct MHD_Connection *c,
                               struct cli_http_job *job, void **state);

/* Replies, with the headers every answer has (no caching, no sniffing,
 * a Content-Security-Policy that lets the page talk to this server only).
 * r NULL (out of memory): MHD_NO. */
enum MHD_Result cli_http_queue(struct MHD_Connection *c, unsigned status, const char *type,
                               struct MHD_Response *r);
/* A body that outlives the server (the page). */
enum MHD_Result cli_http_static(struct MHD_Connection *c, unsigned status, const char *type,
                                const char *body, size_t len);
/* A text, copied. */
enum MHD_Result cli_http_text(struct MHD_Connection *c, unsigned status, const char *text);

#endif
