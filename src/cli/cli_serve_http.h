/* SPDX-License-Identifier: MIT */
/* The routes of `memscribe serve` (docs/serve.md) on memscribe's one HTTP
 * server (cli_http.h): the page at /, the queries at /api/NAME, answers
 * kept until the trace changes (cli_serve_cache.h). */
#ifndef CLI_SERVE_HTTP_H
#define CLI_SERVE_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/cli_serve_query.h"

struct cli_serve_http;

struct cli_serve_http_options {
    const char *listen; /* an IPv4 or IPv6 address; 127.0.0.1 unless asked */
    uint16_t port;      /* 0: one the system picks */
    const char *token;  /* asked as ?token= on every request */
    const char *page;   /* the page, whole (its script and style inside) */
};

/* Start serving t: 0 with *out (and *port the port listened on), or
 * -errno with msg saying why. */
int cli_serve_http_start(struct cli_serve_http **out, const struct cli_serve_trace *t,
                         const struct cli_serve_http_options *o, uint16_t *port, char *msg,
                         size_t msg_size);
void cli_serve_http_stop(struct cli_serve_http *h);
/* The live recording ended, the program with wait status how (-1: not
 * seen): the status query says so from now on. */
void cli_serve_http_ended(struct cli_serve_http *h, int how);
/* Has a page said it showed the end (status?took=end)? */
bool cli_serve_http_took_end(struct cli_serve_http *h);
/* Has a page asked anything (the page itself, or a query)? */
bool cli_serve_http_asked(struct cli_serve_http *h);
/* Milliseconds since the page last asked (its page or /api/: a scraper's
 * /metrics and pprof questions do not count), none being answered now (0
 * while one is). */
uint64_t cli_serve_http_quiet_ms(struct cli_serve_http *h);

#endif
