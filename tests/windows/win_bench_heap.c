/* SPDX-License-Identifier: MIT */
/* Cost of tracing a heap call: N HeapAlloc+HeapFree pairs of 32 bytes on a
 * private heap; prints the process's CPU time per call (user+kernel, from
 * GetProcessTimes) so runs with and without memscribe can be compared.
 * Usage: win_bench_heap [N] (default 100000). Not a test: docs/windows.md. */
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>

static double cpu_s(void)
{
    FILETIME c, e, k, u;
    ULARGE_INTEGER kk, uu;

    GetProcessTimes(GetCurrentProcess(), &c, &e, &k, &u);
    kk.LowPart = k.dwLowDateTime;
    kk.HighPart = k.dwHighDateTime;
    uu.LowPart = u.dwLowDateTime;
    uu.HighPart = u.dwHighDateTime;
    return (double)(kk.QuadPart + uu.QuadPart) * 1e-7;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    HANDLE h = HeapCreate(0, 0, 0);
    double t0 = cpu_s();

    for (long i = 0; i < n; i++) {
        void *p = HeapAlloc(h, 0, 32);
        HeapFree(h, 0, p);
    }
    double t1 = cpu_s();
    printf("calls %ld cpu %.3f s %.1f ns/call\n", 2 * n, t1 - t0, (t1 - t0) * 1e9 / (2.0 * n));
    return 0;
}
