/* SPDX-License-Identifier: MIT */
/* Row keys (ana_stacks_key) against their definition: two stacks share a
 * key exactly when their cleaned frames (ana_stacks_get) read the same, and
 * keys are numbered in the order of first use, a function sequence and a
 * place sequence alike. Checked on every stack of a synthetic trace of
 * windows cut at the depth limit with memscribe's own frames on top (to be
 * cut), of the golden traces, and of the traces named on the command line
 * (e2e.ana_keys records programs with deep recursion, allocations in a
 * signal handler and unrolled loops). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/core/ana_stacks.h"
#include "test_fmt_util.h"
#include "test_xorshift.h"

/* The definition, kept the obvious way: every distinct sequence of string
 * ids in a list, looked up by a hash of the sequence. */
struct oracle {
    uint32_t **seq; /* seq[k] = {n, ids...} of key k + 1 */
    size_t nr, cap;
    uint32_t *index; /* key + 1, 0 empty */
    size_t cap_index;
};

static uint64_t seq_hash(const uint32_t *ids, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;

    for (uint32_t i = 0; i < n; i++)
        h = (h ^ ids[i]) * 1099511628211ull;
    return h;
}

static void oracle_grow(struct oracle *o)
{
    size_t cap = o->cap_index ? o->cap_index * 2 : 1024;
    uint32_t *idx = calloc(cap, sizeof(*idx));

    assert_non_null(idx);
    for (size_t k = 0; k < o->nr; k++) {
        size_t j = seq_hash(o->seq[k] + 1, o->seq[k][0]) & (cap - 1);
        while (idx[j])
            j = (j + 1) & (cap - 1);
        idx[j] = (uint32_t)k + 1;
    }
    free(o->index);
    o->index = idx;
    o->cap_index = cap;
}

static uint32_t oracle_key(struct oracle *o, const uint32_t *ids, uint32_t n)
{
    if (!n)
        return 0;
    if ((o->nr + 1) * 2 > o->cap_index)
        oracle_grow(o);
    size_t j = seq_hash(ids, n) & (o->cap_index - 1);
    for (; o->index[j]; j = (j + 1) & (o->cap_index - 1)) {
        const uint32_t *s = o->seq[o->index[j] - 1];
        if (s[0] == n && !memcmp(s + 1, ids, n * sizeof(*ids)))
            return o->index[j];
    }
    if (o->nr == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 256;
        o->seq = realloc(o->seq, o->cap * sizeof(*o->seq));
        assert_non_null(o->seq);
    }
    uint32_t *s = malloc((n + 1) * sizeof(*s));
    assert_non_null(s);
    s[0] = n;
    memcpy(s + 1, ids, n * sizeof(*ids));
    o->seq[o->nr++] = s;
    o->index[j] = (uint32_t)o->nr;
    return (uint32_t)o->nr;
}

static void oracle_free(struct oracle *o)
{
    for (size_t k = 0; k < o->nr; k++)
        free(o->seq[k]);
    free(o->seq);
    free(o->index);
}

/* Every stack of r (every node of its tree of stacks), its place key and
 * its function key, against the oracle; keys asked twice give the same
 * answer. */
static void check_keys(struct fmt_reader *r, bool show_internal)
{
    struct ana_sym_options opt = {.show_internal = show_internal};
    struct fmt_trace_counts c;
    struct ana_stacks *st;
    struct oracle o = {0};
    uint32_t *ids = NULL;

    fmt_reader_counts(r, &c);
    assert_int_equal(ana_stacks_create(&st, r, &opt), 0);
    for (uint32_t id = 0; id <= c.nr_stacks + 1; id++) {
        const struct ana_frame *f;
        uint32_t place, function, again;

        assert_int_equal(ana_stacks_key(st, id, 1, &place), 0);
        assert_int_equal(ana_stacks_key(st, id, 0, &function), 0);
        int n = ana_stacks_get(st, id, &f);
        assert_true(n >= 0);
        ids = realloc(ids, ((size_t)n + 1) * sizeof(*ids));
        assert_non_null(ids);
        for (int i = 0; i < n; i++)
            ids[i] = f[i].place;
        assert_int_equal(place, oracle_key(&o, ids, (uint32_t)n));
        for (int i = 0; i < n; i++)
            ids[i] = f[i].function;
        assert_int_equal(function, oracle_key(&o, ids, (uint32_t)n));
        assert_int_equal(ana_stacks_key(st, id, 1, &again), 0);
        assert_int_equal(again, place);
    }
    free(ids);
    oracle_free(&o);
    ana_stacks_destroy(st);
}

/* A module of memscribe's own (not on disk: its frames read as
 * libmemscribe.so+0x..., internal by their module's name). */
static const struct fmt_module own_module = {
    .base = 0x7e0000000000ull,
    .path = "/opt/none/libmemscribe.so",
    .path_len = 25,
    .nr_segments = 1,
    .segments = {{0, 0x10000, 0, 5}},
};

#define DEPTH 16
#define PATH 400
#define TAIL 5

/* Windows of one long recursion path cut at DEPTH frames, as the
 * collector gives them for bench_deep (some frames of the path memscribe's
 * own, cut where a window starts with them); and short stacks under one to
 * three frames of memscribe's own, cut to the same frames. */
static uint32_t short_ids[50][3];
static uint32_t cut_ids[PATH / 7 + 1], window_ids[PATH];

static void write_windows(struct tfmt *t)
{
    uint64_t path[PATH], frames[DEPTH], ts = 1;
    uint64_t rnd = 0x2545f4914f6cdd1dull;
    struct fmt_event ev;
    uint32_t id;

    tfmt_restart(t, 1, 0, DEPTH);
    ev = tfmt_mk(FMT_EV_MODULE_LOAD, ts++, 0);
    ev.addr = own_module.base;
    ev.module = &own_module;
    assert_int_equal(fmt_writer_event(t->w, &ev), 0);
    for (int i = 0; i < PATH; i++) {
        test_xorshift64(&rnd);
        /* Four callers of the same few return addresses: windows repeat. */
        path[i] = i % 7 ? 0x400000 + 0x10 * (rnd % 4) : own_module.base + 0x200;
    }
    /* Deeper each time, as the recursion goes: each window is a frame
     * more at the leaf end of the last one and a frame less at the root. */
    for (int leaf = PATH - DEPTH; leaf >= 0; leaf--) {
        assert_int_equal(fmt_writer_stack(t->w, 0, path + leaf, DEPTH, &id), 0);
        window_ids[leaf] = id;
        ev = tfmt_mk(FMT_EV_MALLOC, ts++, 0);
        ev.addr = 0x10000000 + (uint64_t)leaf * 64;
        ev.size = 16;
        ev.stack = id;
        assert_int_equal(fmt_writer_event(t->w, &ev), 0);
    }
    for (int j = 0; j < 50; j++)
        for (uint32_t own = 1; own <= 3; own++) {
            uint32_t n = 0;
            for (uint32_t k = 0; k < own; k++)
                frames[n++] = own_module.base + 0x100 + 0x10 * k;
            for (uint32_t i = 0; i < TAIL; i++)
                frames[n++] = 0x500000 + 0x100 * (uint64_t)j + 0x10 * i;
            assert_int_equal(fmt_writer_stack(t->w, 0, frames, n, &short_ids[j][own - 1]), 0);
        }
    /* The frames a window that starts with memscribe's frame reads as, as
     * a stack of its own: one key for two stacks whose chains differ above
     * those frames (the window's goes on to the root, past its limit). */
    for (int leaf = 0; leaf + DEPTH <= PATH; leaf += 7) {
        assert_int_equal(fmt_writer_stack(t->w, 0, path + leaf + 1, DEPTH - 1, &id), 0);
        cut_ids[leaf / 7] = id;
    }
    /* Only memscribe's frames: the last one stays. */
    frames[0] = own_module.base + 0x100;
    frames[1] = own_module.base + 0x110;
    assert_int_equal(fmt_writer_stack(t->w, 0, frames, 2, &id), 0);
    tfmt_finish(t);
}

static void test_windows(void **state)
{
    struct tfmt t;
    struct fmt_trace_counts c;

    (void)state;
    tfmt_start(&t, 0);
    write_windows(&t);
    struct fmt_reader *r = tfmt_open(&t);
    fmt_reader_counts(r, &c);
    /* Windows are nodes under longer chains: a plain tree of them would
     * need a node per frame of each (6,160). */
    assert_true(c.nr_stacks < 3000);
    check_keys(r, false);
    check_keys(r, true);
    /* The short stacks differ only in memscribe's frames on top: 50 keys
     * of three stacks each, 150 keys with those frames shown. */
    for (int internal = 0; internal < 2; internal++) {
        struct ana_sym_options opt = {.show_internal = internal};
        struct ana_stacks *st;
        uint32_t keys[50][3];
        assert_int_equal(ana_stacks_create(&st, r, &opt), 0);
        for (int j = 0; j < 50; j++)
            for (int k = 0; k < 3; k++) {
                assert_int_equal(ana_stacks_key(st, short_ids[j][k], 1, &keys[j][k]), 0);
                for (int jj = 0; jj <= j; jj++)
                    for (int kk = 0; kk < 3 && (jj < j || kk < k); kk++)
                        assert_int_equal(keys[jj][kk] == keys[j][k], jj == j && !internal);
            }
        for (int leaf = 0; leaf + DEPTH <= PATH; leaf += 7) {
            uint32_t cut, window;
            assert_int_equal(ana_stacks_key(st, cut_ids[leaf / 7], 1, &cut), 0);
            assert_int_equal(ana_stacks_key(st, window_ids[leaf], 1, &window), 0);
            assert_int_equal(cut == window, !internal);
        }
        ana_stacks_destroy(st);
    }
    fmt_reader_close(r);
    tfmt_close(&t);
}

static void check_file(const char *path)
{
    struct fmt_reader *r;
    char err[256];

    if (fmt_reader_open(&r, path, err, sizeof(err))) {
        fail_msg("%s: %s", path, err);
        return;
    }
    check_keys(r, false);
    check_keys(r, true);
    fmt_reader_close(r);
}

static void test_golden(void **state)
{
    static const char *const golden[] = {"v1",           "v1_1", "v1_2_windows", "v1_3",
                                         "v1_3_sampled", "v1_4", "v1_4_pools"};
    char path[4096];

    (void)state;
    for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s.mscr", MS_GOLDEN_DIR, golden[i]);
        check_file(path);
    }
}

static int nr_files;
static char **files;

static void test_files(void **state)
{
    (void)state;
    for (int i = 0; i < nr_files; i++)
        check_file(files[i]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_golden),
    };
    const struct CMUnitTest given[] = {
        cmocka_unit_test(test_files),
    };

    if (argc > 1) {
        nr_files = argc - 1;
        files = argv + 1;
        return cmocka_run_group_tests(given, NULL, NULL);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
