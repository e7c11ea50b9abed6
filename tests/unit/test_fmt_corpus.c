/* SPDX-License-Identifier: MIT */
/* Replay the fuzz corpus (tests/fuzz/corpus: malformed traces and every
 * crash the fuzzer ever found) through the fuzz target's code in the
 * normal build, checksums checked, under ASan and UBSan; and read each file
 * with the public reader, which must give the error the file is named for. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "memscribe/trace.h"

#ifndef MS_CORPUS_DIR
#error "MS_CORPUS_DIR must name tests/fuzz/corpus"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void test_corpus(void **state)
{
    DIR *d = opendir(MS_CORPUS_DIR);
    struct dirent *de;
    int nr = 0;

    (void)state;
    assert_non_null(d);
    while ((de = readdir(d))) {
        char path[1024];
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", MS_CORPUS_DIR, de->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t *buf = malloc(1 << 20);
        assert_non_null(buf);
        size_t n = fread(buf, 1, 1 << 20, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        nr++;
    }
    closedir(d);
    assert_true(nr >= 20);
}

#define READS_OK NULL
#define INCOMPLETE "(incomplete)"

/* Each corpus file and the error its name promises: a part of the reader's
 * message, READS_OK for a trace that reads to its end, INCOMPLETE for a
 * truncated one read up to its last whole chunk. A file added to the corpus
 * must be added here. */
static const struct named_error {
    const char *file, *error;
} named_errors[] = {
    {"addr-escape", READS_OK},
    {"addr-escape-short", "field runs past the end of its column"},
    {"addr-no-freed", "bad address code"},
    {"addr-recent-no-bit", "bad address code"},
    {"addr-recent-none", "bad address code"},
    {"addr-unused-code", "bad address code"},
    {"aggregate-golden", READS_OK}, /* format 1.8: tests/golden/v1_8_aggregate.mscr */
    /* v1_8_aggregate.mscr without its feature bit AGGREGATE: its META's
     * period says what no reader of the bit's kinds may read. */
    {"aggregate-no-bit", "bad aggregate period in metadata"},
    {"bad-block-magic", "bad block magic"},
    {"bad-chunk-crc", "bad CRC"},
    {"bad-defs-varint", "bad thread context record"},
    {"bad-stack-code", "bad stack node 2"},
    {"bad-stack-code-parent", "bad stack node 2"},
    {"bad-stack-nolit", "bad stack node 2"},
    {"bad-stack-parent", "bad stack node 1"},
    {"bad-stack-streams", "bad stack record"},
    {"bad-varint", "field runs past the end of its column"},
    {"bitflip", "bad CRC"},
    {"column-too-big", "bad column 1 in chunk header"},
    {"complete", READS_OK},
    {"complete-v1.1", READS_OK},
    {"complete-v1.4", READS_OK},
    {"complete-v1.5", READS_OK},
    {"complete-v1.7", READS_OK},
    {"crafted-ok", READS_OK},
    {"crash-null-column", "bad block magic"},
    {"defs-bomb", "implausibly many definitions"},
    {"duplicate-column", "column 6 appears twice"},
    {"future-kind", READS_OK},
    {"future-kind-short", "bad escaped event"},
    {"future-parts", READS_OK},
    {"future-version", "unsupported major version"},
    {"golden-v1", READS_OK},
    {"golden-v1.4-pools", READS_OK},
    {"impossible-size", "impossible block size"},
    {"leftover", "has 1 bytes left over"},
    {"reach-golden", READS_OK},        /* format 1.6: tests/golden/v1_6_reach.mscr */
    {"totals-golden", READS_OK},       /* format 1.10: tests/golden/v1_10.mscr */
    {"totals-all-golden", READS_OK},   /* format 1.11: tests/golden/v1_11.mscr */
    {"totals-progs-golden", READS_OK}, /* format 1.12: tests/golden/v1_12.mscr */
    {"counters-golden", READS_OK},     /* format 1.13: tests/golden/v1_13_counters.mscr */
    /* v1_7.mscr without its feature bit REALLOC_PRED: its reallocs read
     * as 1.5's, which soon names a block twice. */
    {"realloc-pred-no-bit", "reference to a block already ended"},
    {"recorded-demo", READS_OK},
    {"ref-before-first", "reference before the first block"},
    {"ref-chunk-before", "reference before the chunk's first block"},
    {"ref-fact-range", "reference to an earlier chunk's block out of range"},
    {"ref-rank-none", "reference past the thread's live blocks"},
    {"ref-thread-empty", "reference past the thread's first block"},
    {"short-column", "field runs past the end of its column"},
    {"summary-events", "op column holds 1 events, chunk says 2"},
    {"summary-serials", "more blocks than the chunk summary says"},
    /* Mutants (tests/fuzz/mutate.py) that commands once disagreed on. */
    /* window --from/--to, leaks --at and frag --at stopped (or started)
     * before the corrupt chunk and exited 0 with numbers. */
    {"seek-at-column", "chunk 0, event 111: field runs past the end of its column"},
    {"seek-late-column", "chunk 13, event 2: field runs past the end of its column"},
    {"seek-window-ref", "chunk 10, event 0: bad reference to an earlier chunk"},
    {"time-4g-timeline", "chunk 1, event 0: time outside its chunk's summary"},
    {"time-huge-timeline", "chunk 0, event 0: time outside its chunk's summary"},
    {"time-late-fork", "chunk 0, event 0: time outside its chunk's summary"},
    {"time-late-leaks", "chunk 14, event 0: time outside its chunk's summary"},
    {"time-late-process", "chunk 13, event 0: time outside its chunk's summary"},
    {"tpack-bad-token", "chunk 0, event 0: bad packed time token"},
    {"tpack-leftover", "a group of packed times of chunk 0 has 1 left over"},
    {"trailer-outside", "outside the file"},
    {"truncated-mid-chunk", INCOMPLETE},
    {"truncated-mid-chunk-v1.1", INCOMPLETE},
    {"truncated-zero-tail", INCOMPLETE},
    {"unknown-kind", "unknown event kind"},
    {"unknown-stack", "reference to an unknown stack"},
    {"unknown-thread", "unknown thread context"},
};

/* What reading path gives: the reader's error, INCOMPLETE, or READS_OK. */
static const char *read_error(const char *path, char *err, size_t err_size)
{
    struct fmt_reader *r;
    struct fmt_event ev;
    int rc;

    if (fmt_reader_open(&r, path, err, err_size) != 0)
        return err;
    while ((rc = fmt_reader_next(r, &ev)) > 0)
        ;
    if (rc < 0)
        snprintf(err, err_size, "%s", fmt_reader_error(r));
    else if (fmt_reader_incomplete(r))
        snprintf(err, err_size, "%s", INCOMPLETE);
    fmt_reader_close(r);
    return rc < 0 || !strcmp(err, INCOMPLETE) ? err : READS_OK;
}

static void test_named_errors(void **state)
{
    size_t n = sizeof(named_errors) / sizeof(named_errors[0]);
    DIR *d = opendir(MS_CORPUS_DIR);
    struct dirent *de;
    size_t nr_files = 0;

    (void)state;
    for (size_t i = 0; i < n; i++) {
        char path[1024], err[512] = "";
        const char *got;

        snprintf(path, sizeof(path), "%s/%s", MS_CORPUS_DIR, named_errors[i].file);
        got = read_error(path, err, sizeof(err));
        if (!named_errors[i].error) {
            if (got)
                fail_msg("%s: want no error, got '%s'", named_errors[i].file, got);
        } else if (!got || !strstr(got, named_errors[i].error)) {
            fail_msg("%s: want '%s', got '%s'", named_errors[i].file, named_errors[i].error,
                     got ? got : "no error");
        }
    }
    /* Every file of the corpus is in the table. */
    assert_non_null(d);
    while ((de = readdir(d))) {
        size_t i = 0;

        if (de->d_name[0] == '.')
            continue;
        while (i < n && strcmp(named_errors[i].file, de->d_name))
            i++;
        if (i == n)
            fail_msg("%s is in the corpus but not in named_errors", de->d_name);
        nr_files++;
    }
    closedir(d);
    assert_int_equal(nr_files, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_named_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
