/* SPDX-License-Identifier: MIT */
/* A service-like workload for record --keep-last's hour (bench/keep_last.sh):
 * worker threads serve "requests" at a steady rate, each allocating a
 * request buffer, a few parse nodes and a reply, keeping some replies in a
 * bounded cache (evicting the oldest), freeing the rest; one request in
 * LEAK_EVERY leaks a small session token from its own call site, a slow
 * leak the flight recorder must put at the top of `leaks`.
 *
 *   bench_service SECONDS [THREADS] [REQUESTS_PER_SECOND_PER_THREAD]
 *
 * Prints the requests served and the tokens leaked on stdout at the end. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_SLOTS 256
#define LEAK_EVERY 1000
#define NODES 6

static double seconds;
static long rate;

struct worker {
    uint64_t rng;
    long served, leaked;
    void *cache[CACHE_SLOTS];
    unsigned next;
};

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Its own frame: the slow leak's site. */
static __attribute__((noinline)) void *leak_session_token(struct worker *w)
{
    char *t = malloc(48);

    if (t)
        snprintf(t, 48, "session-%ld", w->served);
    w->leaked++;
    return t;
}

static __attribute__((noinline)) void serve_one(struct worker *w)
{
    size_t len = 256 + next_rand(&w->rng) % 4096;
    char *req = malloc(len);
    void *nodes[NODES];

    if (!req)
        return;
    memset(req, 'r', len);
    for (int i = 0; i < NODES; i++)
        nodes[i] = malloc(32 + next_rand(&w->rng) % 224);
    char *reply = malloc(128 + len / 4);
    if (reply)
        memcpy(reply, req, 128);
    for (int i = 0; i < NODES; i++)
        free(nodes[i]);
    free(req);
    /* a quarter of the replies stay in the cache a while */
    if (reply && next_rand(&w->rng) % 4 == 0) {
        unsigned slot = w->next++ % CACHE_SLOTS;
        free(w->cache[slot]);
        w->cache[slot] = reply;
    } else {
        free(reply);
    }
    if (++w->served % LEAK_EVERY == 0)
        leak_session_token(w);
}

static void *run(void *arg)
{
    struct worker *w = arg;
    double start = now(), t;

    /* in steps of 10 ms: rate / 100 requests, then sleep to the next step */
    for (long step = 1; (t = now()) - start < seconds; step++) {
        for (long i = 0; i < rate / 100; i++)
            serve_one(w);
        double wait = start + (double)step / 100 - now();
        if (wait > 0) {
            struct timespec ts = {0, (long)(wait * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    for (unsigned i = 0; i < CACHE_SLOTS; i++)
        free(w->cache[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    int nr = argc > 2 ? atoi(argv[2]) : 2;

    seconds = argc > 1 ? atof(argv[1]) : 10;
    rate = argc > 3 ? atol(argv[3]) : 5000;
    if (nr < 1 || nr > 64 || seconds <= 0 || rate < 100) {
        fprintf(stderr, "usage: bench_service SECONDS [THREADS 1-64] [RATE >= 100]\n");
        return 2;
    }
    pthread_t tid[64];
    struct worker *w = calloc((size_t)nr, sizeof(*w));
    if (!w)
        return 1;
    for (int i = 0; i < nr; i++) {
        w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        pthread_create(&tid[i], NULL, run, &w[i]);
    }
    long served = 0, leaked = 0;
    for (int i = 0; i < nr; i++) {
        pthread_join(tid[i], NULL);
        served += w[i].served;
        leaked += w[i].leaked;
    }
    printf("served %ld requests, leaked %ld tokens\n", served, leaked);
    free(w);
    return 0;
}
