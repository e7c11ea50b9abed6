/* SPDX-License-Identifier: MIT */
/* Connections per client of memscribe serve (cli_serve_clients.h). */
#include "cli/cli_serve_clients.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

void cli_serve_clients_init(struct cli_serve_clients *c, uint16_t port)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    atomic_store(&c->port, port);
}

void cli_serve_clients_set_port(struct cli_serve_clients *c, uint16_t port)
{
    atomic_store(&c->port, port);
}

/* "HEX:PORT" of a /proc/net/tcp line: the address's 32-bit words, as the
 * kernel prints them (each word of the address in memory, as a host
 * integer), and the port. */
static bool parse_endpoint(const char *s, uint32_t *words, unsigned nr_words, unsigned *port)
{
    for (unsigned i = 0; i < nr_words; i++) {
        unsigned w;
        if (sscanf(s + 8 * i, "%8x", &w) != 1)
            return false;
        words[i] = (uint32_t)w;
    }
    return s[8 * nr_words] == ':' && sscanf(s + 8 * nr_words + 1, "%x", port) == 1;
}

/* The local user who owns the socket at addr connected to port
 * server_port, from /proc/net/tcp (tcp6 for IPv6): both ends of a loopback
 * connection are there, the client's with addr as its own; -1 if none is
 * found (a client of another machine). */
static long socket_owner(const struct sockaddr *addr, uint16_t server_port)
{
    uint32_t want[4];
    unsigned nr, want_port;
    char line[512];
    long owner = -1;

    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const void *)addr;
        memcpy(want, &in->sin_addr, 4);
        nr = 1;
        want_port = ntohs(in->sin_port);
    } else if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const void *)addr;
        memcpy(want, &in6->sin6_addr, 16);
        nr = 4;
        want_port = ntohs(in6->sin6_port);
    } else {
        return -1;
    }
    FILE *f = fopen(nr == 1 ? "/proc/net/tcp" : "/proc/net/tcp6", "re");
    if (!f)
        return -1;
    while (owner < 0 && fgets(line, sizeof(line), f)) {
        char local[80], remote[80];
        uint32_t lw[4], rw[4];
        unsigned lport, rport;
        long uid;
        /* sl local rem st tx:rx tr:when retrnsmt uid */
        if (sscanf(line, " %*[^:]: %79s %79s %*x %*s %*s %*s %ld", local, remote, &uid) != 3 ||
            !parse_endpoint(local, lw, nr, &lport) || !parse_endpoint(remote, rw, nr, &rport))
            continue;
        if (lport == want_port && rport == server_port && !memcmp(lw, want, 4 * nr))
            owner = uid;
    }
    fclose(f);
    return owner;
}

uint64_t cli_serve_client_key(const struct cli_serve_clients *c, const struct sockaddr *addr,
                              socklen_t len)
{
    long uid = socket_owner(addr, (uint16_t)atomic_load(&c->port));
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the address, not its port */
    const unsigned char *p;
    size_t n;

    if (uid >= 0)
        return CLI_SERVE_KEY_UID | (uint64_t)uid;
    if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        p = (const void *)&((const struct sockaddr_in *)(const void *)addr)->sin_addr;
        n = 4;
    } else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        p = (const void *)&((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr;
        n = 16;
    } else {
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    h &= ~CLI_SERVE_KEY_UID;
    return h ? h : 1;
}

/* Lock held. The slot of key, or a free one if add (NULL: none). */
static struct cli_serve_client *slot_of(struct cli_serve_clients *c, uint64_t key, bool add)
{
    struct cli_serve_client *free_slot = NULL;

    for (unsigned i = 0; i < CLI_SERVE_CLIENT_SLOTS; i++) {
        if (c->slot[i].key == key)
            return &c->slot[i];
        if (!c->slot[i].key && !free_slot)
            free_slot = &c->slot[i];
    }
    return add ? free_slot : NULL;
}

static uint64_t now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec;
}

/* The refusals and drops not said yet, said. */
static void say(struct cli_serve_clients *c)
{
    unsigned long long r = c->refused - c->refused_said, d = c->dropped - c->dropped_said;
    char refused[120] = "", dropped[120] = "";

    if (r)
        snprintf(refused, sizeof(refused),
                 "%llu connection%s refused (at most %u at once from one user or address)", r,
                 r == 1 ? "" : "s", CLI_SERVE_PER_CLIENT);
    if (d)
        snprintf(dropped, sizeof(dropped), "%s%llu closed with a request unfinished", r ? ", " : "",
                 d);
    cli_warn("serve: %s%s", refused, dropped);
    c->refused_said = c->refused;
    c->dropped_said = c->dropped;
}

/* Lock held. One line for the refusals since the last, once a period. */
static void say_refusals(struct cli_serve_clients *c)
{
    uint64_t t = now_s();

    if ((c->refused == c->refused_said && c->dropped == c->dropped_said) ||
        (c->said_at_s && t - c->said_at_s < CLI_SERVE_REFUSAL_PERIOD_S))
        return;
    say(c);
    c->said_at_s = t;
}

bool cli_serve_client_may(struct cli_serve_clients *c, uint64_t key)
{
    pthread_mutex_lock(&c->lock);
    struct cli_serve_client *s = slot_of(c, key, true);
    bool ok = s && s->conns < CLI_SERVE_PER_CLIENT;
    if (!ok)
        c->refused++;
    say_refusals(c);
    pthread_mutex_unlock(&c->lock);
    return ok;
}

void cli_serve_client_opened(struct cli_serve_clients *c, uint64_t key)
{
    pthread_mutex_lock(&c->lock);
    struct cli_serve_client *s = slot_of(c, key, true);
    if (s) {
        s->key = key;
        s->conns++;
    }
    pthread_mutex_unlock(&c->lock);
}

void cli_serve_client_closed(struct cli_serve_clients *c, uint64_t key)
{
    pthread_mutex_lock(&c->lock);
    struct cli_serve_client *s = slot_of(c, key, false);
    if (s && s->conns && !--s->conns)
        s->key = 0;
    pthread_mutex_unlock(&c->lock);
}

void cli_serve_clients_trouble(struct cli_serve_clients *c, bool refused)
{
    pthread_mutex_lock(&c->lock);
    if (refused)
        c->refused++;
    else
        c->dropped++;
    say_refusals(c);
    pthread_mutex_unlock(&c->lock);
}

void cli_serve_clients_release(struct cli_serve_clients *c)
{
    if (c->refused != c->refused_said || c->dropped != c->dropped_said)
        say(c);
    pthread_mutex_destroy(&c->lock);
}
