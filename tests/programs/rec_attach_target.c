/* SPDX-License-Identifier: MIT */
/* A program record -p attaches to mid-run (tests/e2e/record_attach.sh).
 * Usage: rec_attach_target DIR ROUNDS (1-6). It allocates 8 blocks
 * (4001..4008 bytes) and writes DIR/ready.0, then for each round N waits
 * until DIR/go.N exists and, in that round, makes exactly these heap calls:
 * frees the 7 blocks of the round before (round 1: blocks 0 and 1 of the 8
 * from before), mallocs 5 blocks of 5000 + N bytes, callocs 3 x 100,
 * reallocs block N + 1 of the 8 to 6000 + N bytes; then writes
 * DIR/done.N. Files are made with open(2) and stdout's buffer exists
 * before the first round, so nothing else allocates. DIR/got.N says
 * whether malloc's address as the program sees it (its GOT) was the one
 * it saw at the start ("same") or not ("other": attached). Its output is the
 * same traced or not: a checksum of what it wrote, per round.
 * A thread started before DIR/ready.0 also mallocs 3 blocks of 7000 + N
 * bytes in round N and frees them. In round 3, main dlopens the plugin
 * librec_attach_plug.so (beside the program), which mallocs 7703 bytes
 * for it; main frees them. With REC_ATTACH_BIG=1 in its environment, main
 * also mallocs and frees 16 bytes 200,000 times in round 1, more events
 * than a ring holds (tests/e2e/record_attach_killed.sh). */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void touch(const char *dir, const char *name, int round)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/%s.%d", dir, name, round);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    close(fd);
}

static void say_got(const char *dir, int round, int same)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/got.%d", dir, round);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, same ? "same\n" : "other\n", same ? 5 : 6) < 0) {
        perror(path);
        exit(1);
    }
    close(fd);
}

static void wait_for(const char *dir, const char *name, int round)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s.%d", dir, name, round);
    while (access(path, F_OK) != 0)
        usleep(2000);
}

static const char *dir;
static int rounds;
static sem_t worker_done;

static void *worker(void *arg)
{
    (void)arg;
    for (int r = 1; r <= rounds; r++) {
        void *b[3];

        wait_for(dir, "go", r);
        for (int i = 0; i < 3; i++)
            b[i] = malloc(7000 + r);
        for (int i = 0; i < 3; i++)
            free(b[i]);
        sem_post(&worker_done);
    }
    return NULL;
}

/* Round 3: a module loaded while attached (its GOT is patched too). */
static void plugin_round(const char *argv0)
{
#ifdef REC_ATTACH_STATIC /* no dlopen there: -p refuses it before round 1 */
    (void)argv0;
#else
    char path[4096];
    const char *slash = strrchr(argv0, '/');
    void *(*alloc)(size_t);
    void *h;

    snprintf(path, sizeof(path), "%.*s/librec_attach_plug.so", slash ? (int)(slash - argv0) : 1,
             slash ? argv0 : ".");
    h = dlopen(path, RTLD_NOW);
    if (!h || !(*(void **)&alloc = dlsym(h, "rec_attach_plug_alloc"))) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    free(alloc(7703));
#endif
}

int main(int argc, char **argv)
{
    void *(*volatile start_malloc)(size_t) = malloc;
    void *early[8], *prev[7] = {0};
    unsigned long sum = 0;
    const char *big = getenv("REC_ATTACH_BIG");
    pthread_t th;

    if (argc != 3)
        return 2;
    rounds = atoi(argv[2]);
    if (rounds < 1 || rounds > 6)
        return 2;
    printf("rounds: %d\n", rounds); /* stdout's buffer, before any attach */
    fflush(stdout);
    for (int i = 0; i < 8; i++) {
        early[i] = malloc(4001 + i);
        memset(early[i], i, 4001 + i);
    }
    dir = argv[1];
    sem_init(&worker_done, 0, 0);
    if (pthread_create(&th, NULL, worker, NULL) != 0)
        return 1;
    touch(argv[1], "ready", 0);
    for (int r = 1; r <= rounds; r++) {
        void *cur[7];

        wait_for(argv[1], "go", r);
        if (r == 1) {
            free(early[0]);
            free(early[1]);
        } else {
            for (int i = 0; i < 7; i++)
                free(prev[i]);
        }
        for (int i = 0; i < 5; i++) {
            cur[i] = malloc(5000 + r);
            memset(cur[i], r + i, 5000 + r);
        }
        cur[5] = calloc(3, 100);
        cur[6] = realloc(early[r + 1], 6000 + r);
        early[r + 1] = NULL;
        for (int i = 0; i < 7; i++)
            sum += ((unsigned char *)cur[i])[0];
        memcpy(prev, cur, sizeof(cur));
        printf("round %d: %lu\n", r, sum);
        fflush(stdout);
        if (r == 3)
            plugin_round(argv[0]);
        for (int i = 0; r == 1 && big && *big == '1' && i < 200000; i++) {
            void *volatile b = malloc(16);

            free(b);
        }
        while (sem_wait(&worker_done) != 0)
            ;
        say_got(argv[1], r, (void *(*volatile)(size_t))malloc == start_malloc);
        touch(argv[1], "done", r);
    }
    pthread_join(th, NULL);
    return 0;
}
