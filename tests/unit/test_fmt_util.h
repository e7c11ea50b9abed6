/* SPDX-License-Identifier: MIT */
/* Shared by the format's unit tests: write events to an in-memory trace
 * file, and an independent model of what the reader must give back. */
#ifndef TEST_FMT_UTIL_H
#define TEST_FMT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "format/fmt_writer.h"
#include "memscribe/event.h"
#include "memscribe/trace.h"

/* A trace being written into a memfd. */
struct tfmt {
    int fd;
    struct fmt_writer *w;
    struct fmt_trace_info info;
};

/* The trace info the tests write: a start time and its monotonic clock,
 * the recorder's pid, depth 64, host "testhost" and this command line. */
struct fmt_trace_info tfmt_info(const char *command, uint32_t command_len);
/* Create a writer on a fresh memfd; chunk_events 0 means the default. */
void tfmt_start(struct tfmt *t, uint32_t chunk_events);
/* The same with a time unit (0: nanoseconds, format 1.1; more: 1.3). */
void tfmt_start_unit(struct tfmt *t, uint32_t chunk_events, uint32_t time_unit_ns);
/* The same with packed times too (format 1.4) if time_pack is set, and
 * with recent addresses and ranked references (format 1.5) if it is 2. */
void tfmt_start_pack(struct tfmt *t, uint32_t chunk_events, uint32_t time_unit_ns, int time_pack);
/* The same with any writer options. */
void tfmt_start_opt(struct tfmt *t, const struct fmt_writer_options *opt);
/* The same with this trace info. */
void tfmt_start_info(struct tfmt *t, const struct fmt_writer_options *opt,
                     const struct fmt_trace_info *info);
/* The same with the short trace info of the golden files since 1.2 (a
 * start time, the recorder's pid, depth 32; no command, host or monotonic
 * start), the info's other fields from *base if it is not NULL. */
void tfmt_start_short(struct tfmt *t, const struct fmt_writer_options *opt,
                      const struct fmt_trace_info *base);
/* Start again on an empty file with the given writer options and stack
 * depth in the trace info. */
void tfmt_restart(struct tfmt *t, int zstd_level, uint32_t chunk_events, uint32_t stack_depth);
/* Finish (or not) and keep the fd for reading. */
void tfmt_finish(struct tfmt *t);
/* Open a reader on the trace; asserts success. */
struct fmt_reader *tfmt_open(struct tfmt *t);
void tfmt_close(struct tfmt *t);

/* The file's bytes (malloc'd) and size. */
uint8_t *tfmt_bytes(int fd, size_t *size);
/* Finish t's trace, write its bytes to PATH (a golden file made anew) and
 * close t. */
void tfmt_save(struct tfmt *t, const char *path);
/* A test's checks of a trace read from its start. */
typedef void tfmt_check_fn(struct fmt_reader *r);
/* Finish t's trace and close t. With the variable env set: write the trace
 * into the file env names (a golden file made anew); else check it. */
void tfmt_check_written(struct tfmt *t, const char *env, tfmt_check_fn *check);
/* Check the trace file at path (a golden file). */
void tfmt_check_path(const char *path, tfmt_check_fn *check);
/* want[0..n) written on t: with the variable env set, into the file it
 * names (a golden file made anew, and the test skipped); else t is
 * dropped and the golden file opened. */
struct fmt_reader *tfmt_golden_open(struct tfmt *t, const struct fmt_event *want, size_t n,
                                    const char *env, const char *golden);
/* A reader on the trace file at path; fails the test with the reader's
 * error. */
struct fmt_reader *tfmt_open_path(const char *path);
/* A memfd holding these bytes. */
int tfmt_memfd(const uint8_t *p, size_t size);

/* The model: what the reader must report for each written event. It keeps
 * its own live list (simple, obviously right): mappings are scanned
 * linearly; heap blocks are found through a small hash of their key
 * (image, pool, address), since a linear scan of thousands of live blocks
 * per event made the roundtrip tests take minutes under ASan. */
struct tmodel_blk {
    uint64_t serial, addr, size, ts, end; /* end: exclusive, mappings */
    uint32_t stack, thread, image, vm;
    uint64_t orig_addr, orig_size;
    uint64_t pool; /* a block of a pool (FMT_EVF_POOL): its handle + 1; 0 for malloc's */
};

struct tmodel {
    uint64_t next_serial;
    struct tmodel_blk *live;
    size_t nr_live, cap_live;
    uint32_t *slot; /* heap blocks: index + 1 in live, 0 empty, UINT32_MAX removed */
    size_t cap_slot, used_slot;
};

void tmodel_init(struct tmodel *m);
void tmodel_free(struct tmodel *m);
/* Fill ev's reader fields (serial, ref, ref_*, nr_refs, PARTIAL and the
 * addresses the reader derives) as the format promises. */
void tmodel_apply(struct tmodel *m, struct fmt_event *ev);

/* Read r to its end: it must give exactly want[0..n) (their reader
 * fields filled by a model on the way). */
void tfmt_read_expect(struct fmt_reader *r, struct fmt_event *want, size_t n);

/* Assert that two events are equal field by field (strings by content). */
void tfmt_assert_event(const struct fmt_event *want, const struct fmt_event *got, uint64_t index);

/* A module description the shared events load. */
extern const struct fmt_module tfmt_test_module;
/* An event of kind at ts on thread 0..2 (threads 2.. are in image 1). */
struct fmt_event tfmt_mk(uint16_t kind, uint64_t ts, uint32_t thread);
/* Intern stacks 1 and 2 on t's writer, of nr frames: each frame but the
 * last is frames[k] plus the stack's number, the last is frames[nr - 1];
 * then give ev[0..n) (stacks named 1..2, or 0) the ids. Returns n. */
size_t tfmt_two_stacks(struct tfmt *t, const uint64_t *frames, uint32_t nr, struct fmt_event *ev,
                       size_t n);
/* tfmt_mk's event of a block or a mapping: at addr, of size, on stack. */
struct fmt_event tfmt_heap(uint16_t kind, uint64_t ts, uint32_t thread, uint64_t addr,
                           uint64_t size, uint32_t stack);
/* Fill ev with one event of every kind with every field it has (stacks
 * named 1..5, which the caller interns). Returns the count (<= max). */
size_t tfmt_every_kind(struct fmt_event *ev, size_t max);

#endif
