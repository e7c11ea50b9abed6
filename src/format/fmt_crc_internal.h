/* SPDX-License-Identifier: MIT */
/* CRC32C (Castagnoli), the checksum of every block header and payload. */
#ifndef FMT_CRC_INTERNAL_H
#define FMT_CRC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC32C over len bytes. Start with crc = 0; feeding a buffer in
 * pieces gives the same result as feeding it whole. Uses the SSE4.2 crc32
 * instruction when the CPU has it, a table otherwise. */
uint32_t fmt_crc32c(uint32_t crc, const void *buf, size_t len);

/* The table version, exposed so tests can compare both paths. */
uint32_t fmt_crc32c_table(uint32_t crc, const void *buf, size_t len);

#endif
