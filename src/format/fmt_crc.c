/* SPDX-License-Identifier: MIT */
/* CRC32C with the SSE4.2 instruction when present and a slice-by-8 table
 * fallback; both give identical results (tests/unit/test_fmt_prims.c). */
#include "format/fmt_crc_internal.h"

#include <pthread.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define CRC32C_POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
#if defined(__x86_64__)
static int crc_have_sse42;
#endif

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
#if defined(__x86_64__)
    /* One CPUID, here, when a CRC is first wanted: __builtin_cpu_supports
     * would link libgcc's CPU model constructor into every program of the
     * project, a dozen CPUIDs at each start, each a trap to the hypervisor
     * in a virtual machine (0.15 ms a start measured here). */
    unsigned a, b, c, d;

    crc_have_sse42 = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
#endif
}

uint32_t fmt_crc32c_table(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    pthread_once(&crc_once, crc_init);
    crc = ~crc;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc; /* little-endian: the CRC covers the first four bytes */
        crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
              crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
              crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
              crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const void *buf,
                                                               size_t len)
{
    const uint8_t *p = buf;
    uint64_t c = ~crc;

    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}
#endif

uint32_t fmt_crc32c(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
#if defined(__x86_64__)
    if (crc_have_sse42)
        return crc32c_sse42(crc, buf, len);
#endif
    return fmt_crc32c_table(crc, buf, len);
}
