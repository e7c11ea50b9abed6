/* SPDX-License-Identifier: MIT */
/* Who is connected to `memscribe serve`, and how many connections each may
 * hold (docs/serve.md, "Other users"). On one machine every user's
 * connection comes from 127.0.0.1, so a limit per address would let any
 * local user fill the server's slots with half-open connections and shut
 * its owner out: a client here is the local user who owns the connecting
 * socket (its line in /proc/net/tcp or tcp6), or the address of a client
 * of another machine (--listen 0.0.0.0). Each client holds at most
 * CLI_SERVE_PER_CLIENT connections; the connections refused, and those
 * closed with a request unfinished, are counted and said at most once in
 * CLI_SERVE_REFUSAL_PERIOD_S, not one line each. */
#ifndef CLI_SERVE_CLIENTS_H
#define CLI_SERVE_CLIENTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define CLI_SERVE_PER_CLIENT 64
#define CLI_SERVE_CLIENT_SLOTS 256 /* clients at once (more: refused) */
#define CLI_SERVE_REFUSAL_PERIOD_S 10

struct cli_serve_client {
    uint64_t key; /* a local user (CLI_SERVE_KEY_UID | uid) or an address's hash; 0: free */
    unsigned conns;
};

struct cli_serve_clients {
    pthread_mutex_t lock;
    struct cli_serve_client slot[CLI_SERVE_CLIENT_SLOTS];
    atomic_uint port;               /* the server's, to find a connecting socket's owner */
    uint64_t refused, refused_said; /* connections refused, and of them said */
    uint64_t dropped, dropped_said; /* closed by their client or the idle timeout mid-request */
    uint64_t said_at_s;             /* CLOCK_MONOTONIC seconds of the last line said */
};

#define CLI_SERVE_KEY_UID (1ull << 63)

void cli_serve_clients_init(struct cli_serve_clients *c, uint16_t port);
/* The port, once the server listens (one the system picked). */
void cli_serve_clients_set_port(struct cli_serve_clients *c, uint16_t port);
/* Say the refusals not said yet; free. */
void cli_serve_clients_release(struct cli_serve_clients *c);
/* The client a connection from addr is: the local user owning the socket
 * at addr that is connected to the server's port, else the address. */
uint64_t cli_serve_client_key(const struct cli_serve_clients *c, const struct sockaddr *addr,
                              socklen_t len);
/* Whether client key may open one more connection; a refusal is counted. */
bool cli_serve_client_may(struct cli_serve_clients *c, uint64_t key);
/* A connection of key was set up, or closed. */
void cli_serve_client_opened(struct cli_serve_clients *c, uint64_t key);
void cli_serve_client_closed(struct cli_serve_clients *c, uint64_t key);
/* Count one more refusal of libmicrohttpd's own (its connection limit,
 * descriptors), or (refused false) a connection closed mid-request. */
void cli_serve_clients_trouble(struct cli_serve_clients *c, bool refused);

#endif
