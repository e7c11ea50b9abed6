/* SPDX-License-Identifier: MIT */
/* Things a traced program may do that must not disturb the collector: name
 * a thread (then allocate 7777 in it), allocate in a signal handler (9999,
 * three times), dlopen a plugin whose constructor allocates 6543 and dlclose
 * it, and close stdout and stderr before allocating 8888 twice.
 * Usage: col_quirks PATH-TO-libcol_plug.so */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void on_usr1(int sig)
{
    (void)sig;
    free(malloc(9999));
}

static void *named(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "quirky");
    free(malloc(7777));
    return NULL;
}

int main(int argc, char **argv)
{
    struct sigaction sa = {0};
    pthread_t th;
    void *plug;

    if (argc != 2)
        return 2;
    if (pthread_create(&th, NULL, named, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 3;
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 3; i++)
        raise(SIGUSR1);
    plug = dlopen(argv[1], RTLD_NOW);
    if (!plug)
        return 4;
    dlclose(plug);
    close(1);
    close(2);
    for (int i = 0; i < 2; i++)
        free(malloc(8888));
    return 0;
}
