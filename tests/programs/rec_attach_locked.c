/* SPDX-License-Identifier: MIT */
/* A program whose loader lock is held while record -p attaches
 * (tests/e2e/record_attach.sh): usage rec_attach_locked DIR. A thread
 * dlopens librec_attach_block.so, whose constructor holds the lock until
 * DIR/unblock.0 exists; main waits for DIR/go.1, joins the thread and
 * prints "done". The injected dlopen waits for that lock and is given up. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char plugin[4096];

static void *loader(void *arg)
{
    (void)arg;
    if (!dlopen(plugin, RTLD_NOW)) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *slash = strrchr(argv[0], '/');
    char go[4096];
    pthread_t th;

    if (argc != 2 || setenv("REC_ATTACH_DIR", argv[1], 1) != 0)
        return 2;
    snprintf(plugin, sizeof(plugin), "%.*s/librec_attach_block.so",
             slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
    snprintf(go, sizeof(go), "%s/go.1", argv[1]);
    if (pthread_create(&th, NULL, loader, NULL) != 0)
        return 1;
    while (access(go, F_OK) != 0)
        usleep(2000);
    pthread_join(th, NULL);
    printf("done\n");
    return 0;
}
