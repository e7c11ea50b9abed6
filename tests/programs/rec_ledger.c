/* SPDX-License-Identifier: MIT */
/* Allocates and frees in a loop until killed, and keeps a ledger of its
 * heap calls in a MAP_SHARED file, which a SIGKILL leaves as it was, for
 * tests/e2e/rec_killed_ledger.sh to hold a trace against.
 *
 *   rec_ledger run LEDGER [SECONDS]: NR_WORKERS threads, each the same
 *     calls every run (its own xorshift, seeded by its index): a temporary
 *     block (malloc, then free at once) each round, and every 8th round a
 *     block of a pool of POOL_SLOTS slots made (malloc or calloc) or freed
 *     (most blocks die at once, some live across thousands of calls), a
 *     pause every PACE_ROUNDS rounds so that the trace stays small. One
 *     block in 8 is one glibc serves by mmap (the threshold fixed): its
 *     calls are slow, so a kill often lands inside one. Exits 0 after
 *     SECONDS (60) if nobody killed it first.
 *   rec_ledger read LEDGER: prints the ledger as KEY=VALUE lines, the sums
 *     over the threads; exit 1 until every worker has made its first call.
 *
 * Per thread the ledger counts the calls started (just before the call) and
 * done (just after it returns), and the blocks and requested bytes the
 * thread holds live. After a call returns, the live blocks and bytes are
 * updated before "done", so a kill in between leaves the call counted as in
 * flight with the live numbers already holding it, which the bounds allow:
 * a trace holds every call done, some of those in flight, none other. The
 * size of a call in flight is kept (pending_size) for the bounds on bytes.
 * Only the workers' calls are counted: the test selects their threads
 * (report --thread), since pthread_create and stdio allocate too. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NR_WORKERS 3
#define POOL_SLOTS 64
#define PACE_ROUNDS 256
#define PACE_NS 1000000L
#define MMAP_THRESHOLD (128 * 1024)
#define LEDGER_MAGIC 0x4c656467u /* "Ledg" */

enum ledger_op { LEDGER_NONE, LEDGER_ALLOC, LEDGER_FREE };

/* One worker's counters, a cache line of their own. */
struct ledger_thread {
    uint64_t alloc_started, alloc_done, free_started, free_done;
    uint64_t live_blocks, live_size, alloc_size; /* after the calls done */
    uint64_t pending_op, pending_size;           /* the call in flight */
    uint64_t tid;
} __attribute__((aligned(64)));

struct ledger {
    uint32_t magic;
    int64_t pid;
    uint64_t nr_ready; /* workers that have made their first call */
    struct ledger_thread t[NR_WORKERS];
};

static struct ledger *ledger;

/* Keep the compiler from dropping allocations whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

static void put(uint64_t *field, uint64_t value)
{
    __atomic_store_n(field, value, __ATOMIC_SEQ_CST);
}

static uint64_t get(const uint64_t *field)
{
    return __atomic_load_n(field, __ATOMIC_SEQ_CST);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static __attribute__((noinline)) void *ledger_alloc(struct ledger_thread *t, size_t size, int zero)
{
    void *p;

    put(&t->pending_size, size);
    put(&t->pending_op, LEDGER_ALLOC);
    put(&t->alloc_started, t->alloc_started + 1);
    p = zero ? calloc(1, size) : malloc(size);
    if (!p)
        abort();
    escape(p);
    put(&t->live_blocks, t->live_blocks + 1);
    put(&t->live_size, t->live_size + size);
    put(&t->alloc_size, t->alloc_size + size);
    put(&t->alloc_done, t->alloc_done + 1);
    put(&t->pending_op, LEDGER_NONE);
    return p;
}

static __attribute__((noinline)) void ledger_free(struct ledger_thread *t, void *p, size_t size)
{
    put(&t->pending_size, size);
    put(&t->pending_op, LEDGER_FREE);
    put(&t->free_started, t->free_started + 1);
    free(p);
    put(&t->live_blocks, t->live_blocks - 1);
    put(&t->live_size, t->live_size - size);
    put(&t->free_done, t->free_done + 1);
    put(&t->pending_op, LEDGER_NONE);
}

/* A size: mostly small; one in 8 at or over MMAP_THRESHOLD, which glibc
 * serves by mmap and frees by munmap, slower calls that a kill lands in. */
static size_t pick_size(uint64_t r)
{
    if ((r >> 40) % 8 == 0)
        return MMAP_THRESHOLD + (size_t)(r % 65536);
    return 16 + (size_t)(r % 2000);
}

static void *worker(void *arg)
{
    struct ledger_thread *t = arg;
    uint64_t s = (uint64_t)(t - ledger->t) + 1, round = 0;
    struct timespec pace = {0, PACE_NS};
    void *pool[POOL_SLOTS] = {0};
    size_t pool_size[POOL_SLOTS] = {0};

    put(&t->tid, (uint64_t)gettid());
    for (;;) {
        uint64_t r = xorshift(&s);
        size_t size = pick_size(r);
        void *p = ledger_alloc(t, size, 0);

        ledger_free(t, p, size);
        if (round == 0)
            __atomic_add_fetch(&ledger->nr_ready, 1, __ATOMIC_SEQ_CST);
        if ((r >> 12) % 8 == 0) {
            unsigned k = (unsigned)((r >> 16) % POOL_SLOTS);

            if (pool[k]) {
                ledger_free(t, pool[k], pool_size[k]);
                pool[k] = NULL;
            } else {
                pool_size[k] = pick_size(xorshift(&s));
                pool[k] = ledger_alloc(t, pool_size[k], (r >> 24) % 2);
            }
        }
        if (++round % PACE_ROUNDS == 0)
            nanosleep(&pace, NULL);
    }
    return NULL;
}

static int run(const char *path, int seconds)
{
    pthread_t th;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd < 0 || ftruncate(fd, sizeof(*ledger)) != 0) {
        fprintf(stderr, "rec_ledger: %s: %s\n", path, strerror(errno));
        return 1;
    }
    ledger = mmap(NULL, sizeof(*ledger), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ledger == MAP_FAILED) {
        fprintf(stderr, "rec_ledger: mmap %s: %s\n", path, strerror(errno));
        return 1;
    }
    close(fd);
    /* A fixed threshold: glibc's own would rise past our sizes after the
     * first munmap (mallopt(3), M_MMAP_THRESHOLD). */
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    ledger->pid = getpid();
    __atomic_store_n(&ledger->magic, LEDGER_MAGIC, __ATOMIC_SEQ_CST);
    for (int k = 0; k < NR_WORKERS; k++)
        if (pthread_create(&th, NULL, worker, &ledger->t[k]) != 0)
            return 1;
    sleep((unsigned)seconds);
    _exit(0);
}

/* Read while the program runs too (a killed recorder's program runs on):
 * each counter is loaded whole from the shared mapping, and the calls
 * started only grow. */
static int read_ledger(const char *path)
{
    uint64_t sum[9] = {0};
    const char *names[9] = {"alloc_started", "alloc_done",    "free_started",
                            "free_done",     "live_blocks",   "live_size",
                            "alloc_size",    "pending_alloc", "pending_free"};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const struct ledger *l;

    /* Not yet made, or a worker not yet started: the test asks again. */
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(*l))
        return 1;
    l = mmap(NULL, sizeof(*l), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (l == MAP_FAILED || __atomic_load_n(&l->magic, __ATOMIC_SEQ_CST) != LEDGER_MAGIC ||
        get(&l->nr_ready) < NR_WORKERS)
        return 1;
    printf("pid=%lld\ntids=", (long long)l->pid);
    for (int k = 0; k < NR_WORKERS; k++) {
        const struct ledger_thread *t = &l->t[k];
        uint64_t started[2] = {get(&t->alloc_started), get(&t->free_started)};
        uint64_t done[2] = {get(&t->alloc_done), get(&t->free_done)};
        uint64_t op = get(&t->pending_op), size = get(&t->pending_size);
        int in_flight = started[0] != done[0] || started[1] != done[1];

        printf("%s%llu", k ? "," : "", (unsigned long long)get(&t->tid));
        sum[0] += started[0];
        sum[1] += done[0];
        sum[2] += started[1];
        sum[3] += done[1];
        sum[4] += get(&t->live_blocks);
        sum[5] += get(&t->live_size);
        sum[6] += get(&t->alloc_size);
        /* The bytes of the calls in flight: the trace may hold them. */
        sum[7] += in_flight && op == LEDGER_ALLOC ? size : 0;
        sum[8] += in_flight && op == LEDGER_FREE ? size : 0;
    }
    printf("\n");
    for (int i = 0; i < 9; i++)
        printf("%s=%llu\n", names[i], (unsigned long long)sum[i]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "run"))
        return run(argv[2], argc > 3 ? atoi(argv[3]) : 60);
    if (argc == 3 && !strcmp(argv[1], "read"))
        return read_ledger(argv[2]);
    fprintf(stderr, "usage: rec_ledger run LEDGER [SECONDS] | rec_ledger read LEDGER\n");
    return 2;
}
