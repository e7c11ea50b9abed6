/* SPDX-License-Identifier: MIT */
/* Load and unload a plugin whose constructor allocates 6543, 300 times, and
 * print how much the address space grew meanwhile ("vm-growth-kib: N",
 * VmSize from /proc/self/status). Each unload makes the collector forget
 * its cached unwind rules; that must not cost address space each time.
 * Usage: col_reload PATH-TO-libcol_plug.so */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COL_RELOADS 300

static long vm_size_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmSize:", 7))
            kib = strtol(line + 7, NULL, 10);
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    long before, after;

    if (argc != 2)
        return 2;
    /* Once first, so the loader's own one-time allocations are behind us. */
    void *plug = dlopen(argv[1], RTLD_NOW);

    if (!plug)
        return 3;
    dlclose(plug);
    before = vm_size_kib();
    for (int i = 1; i < COL_RELOADS; i++) {
        plug = dlopen(argv[1], RTLD_NOW);
        if (!plug)
            return 3;
        dlclose(plug);
    }
    after = vm_size_kib();
    if (before < 0 || after < 0)
        return 4;
    printf("vm-growth-kib: %ld\n", after - before);
    return 0;
}
