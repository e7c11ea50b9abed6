/* SPDX-License-Identifier: MIT */
/* Ten 8 MiB buffers, each live 60 ms, 40 ms apart, each freed before the
 * program allocates anything else: ten temporary allocations, each live
 * across several of heaptrack's 10 ms ticks (tests/e2e/
 * export_view_heaptrack.sh). The peak is one buffer plus what libc and
 * ld.so keep; a heaptrack_gui chart of the program draws ten spikes of
 * 8 MiB. Nothing else allocates: no stdio. */
#include <stdlib.h>
#include <time.h>

#define NR_BUFFERS 10
#define BUFFER_SIZE (8u << 20)
#define LIVE_MS 60
#define GAP_MS 40

/* Keep the compiler from dropping an allocation whose memory is unused. */
static void escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

/* Sleep ms, however often a signal wakes us. */
static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

    while (nanosleep(&ts, &ts))
        ;
}

__attribute__((noinline)) static void spike(void)
{
    char *p = malloc(BUFFER_SIZE);

    if (!p)
        abort();
    escape(p);
    sleep_ms(LIVE_MS);
    free(p);
}

int main(void)
{
    for (int i = 0; i < NR_BUFFERS; i++) {
        spike();
        sleep_ms(GAP_MS);
    }
    return 0;
}
