/* SPDX-License-Identifier: MIT */
/* A program whose fd 2 is a data file (tests/e2e/record_stderr.sh): it
 * reopens 2 onto FILE, writes one line, lowers its file size limit below a
 * ring segment's size and starts more threads than a segment has rings,
 * so the collector cannot add a segment and has something to say. Usage:
 * col_stderr FILE THREADS */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static pthread_barrier_t all_in;

static void *worker(void *arg)
{
    void *p = malloc(4242);

    pthread_barrier_wait(&all_in); /* every thread holds its ring at once */
    free(p);
    return arg;
}

int main(int argc, char **argv)
{
    static const char line[] = "data line\n";
    struct rlimit small = {1 << 20, 1 << 20};
    int n = argc > 2 ? atoi(argv[2]) : 40, fd;
    pthread_t t[256];

    if (argc < 2 || n < 1 || n > 256)
        return 2;
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) != 2 || write(2, line, strlen(line)) != (ssize_t)strlen(line))
        return 1;
    close(fd);
    if (setrlimit(RLIMIT_FSIZE, &small) != 0)
        return 1;
    pthread_barrier_init(&all_in, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
