/* SPDX-License-Identifier: MIT */
/* A deterministic synthetic trace for the export tests, with every number
 * the exporters print known exactly (see the table in the .c file). Used by
 * the unit tests and, through `test_ana_export --write-trace PATH`, by the
 * e2e scripts that feed the exports to the real readers. */
#ifndef TEST_ANA_EXPORT_TRACE_H
#define TEST_ANA_EXPORT_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* The expected figures of the trace xtrace_write() makes. */
#define XT_NR_ALLOCS 9
#define XT_ALLOC_BYTES 2296
#define XT_PEAK_BYTES 1500
#define XT_PEAK_NS 9000000ull
#define XT_LEAKED_BYTES 182
#define XT_LEAKED_BLOCKS 2
#define XT_NR_TEMPORARY 5
#define XT_END_NS 16000000ull

/* Stack ids the writer gives, in the order they are interned. */
#define XT_STACK_A 3 /* 0x1300 -> 0x1200 -> 0x1100 (leaf) */
#define XT_STACK_B 4 /* 0x1300 -> 0x1200 -> 0x2100 */
#define XT_STACK_C 6 /* 0x3200 -> 0x3100 */

/* Write the trace to fd. Returns 0 or -errno. */
int xtrace_write(int fd);

/* Write the trace of heaptrack's limit: T0 allocates X (100 bytes), T1
 * allocates Y (200: the peak, 300), T0 frees X, T1 frees Y. Both are
 * temporary for memscribe, and both are live at the peak. */
int xtrace_write_two_at_peak(int fd);

/* Write ten blocks of 8 MiB at stack A by thread 0, each allocated at
 * 100 i + 5 ms and freed at 100 i + 65 ms (temporary: the thread does
 * nothing between), and, with churn, 16 bytes at stack C that thread 1
 * allocates and frees at each ms from 1 to 999 (temporary too). */
#define XT_SPIKE_SIZE (8ull << 20)
#define XT_NR_SPIKES 10
int xtrace_write_spikes(int fd, bool churn);

/* Write a random trace from seed: nr_events mallocs, reallocs and frees by
 * three threads over 64 slots (threads free each other's blocks too), in
 * chunks of 997 events. */
int xtrace_write_random(int fd, uint64_t nr_events, uint64_t seed);

/* Write a large trace: nr_events events, a steady churn over a fixed set
 * of live blocks (for the bounded-memory checks). */
int xtrace_write_big(int fd, uint64_t nr_events);

/* Write a tree of three processes: image 0 (the synthetic one, running to
 * the end) allocates 100 bytes at stack A (1 ms, live) and 70 at stack B
 * (4 s, freed); image 1 (10-20 ms; the synthetic module at 0x5000) 300 at
 * 0x5100 < 0x5200 (live), 40 with no stack (live) and 50 at 0x5300
 * (freed); image 2 (1.5-3 s; the module at 0x9000) 600 at 0x9100 < 0x9200
 * (live) and 8 with no stack (freed). */
int xtrace_write_tree(int fd);

#endif
