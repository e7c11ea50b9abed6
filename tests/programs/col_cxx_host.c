/* SPDX-License-Identifier: MIT */
/* A C program (no libstdc++ when it starts) that loads a C++ plugin, as
 * ar and nm load bfd's LLVM plugin and python a C++ module: the plugin's
 * constructor and functions use every form of operator new
 * (col_cxx_plug.cc). Prints what the plugin counted; the output is the
 * same traced or not.
 * Usage: col_cxx_host PLUGIN [DIR]: with DIR, write DIR/ready and wait for
 * DIR/go before loading the plugin, then write DIR/done and wait for
 * DIR/end (record -p attaches meanwhile). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static void touch(const char *dir, const char *name)
{
    char path[4096];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

static void wait_for(const char *dir, const char *name)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    while (access(path, F_OK) != 0)
        usleep(2000);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 2 ? argv[2] : NULL;
    unsigned long (*run)(void);
    void *plug;

    if (argc < 2)
        return 2;
    if (dir) {
        touch(dir, "ready");
        wait_for(dir, "go");
    }
    plug = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plug) {
        fprintf(stderr, "col_cxx_host: %s\n", dlerror());
        return 3;
    }
    *(void **)&run = dlsym(plug, "col_cxx_plug_run");
    if (!run)
        return 4;
    printf("plugin counted %lu\n", run());
    fflush(stdout);
    if (dir) {
        touch(dir, "done");
        wait_for(dir, "end");
    }
    return 0;
}
