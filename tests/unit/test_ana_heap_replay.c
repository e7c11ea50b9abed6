/* SPDX-License-Identifier: MIT */
/* The heap replay (ana_heap_replay.h) on a hand-made event sequence: each
 * consumer gets every event with its step, in the order consumers
 * subscribed; moments come before the event that passes them reaches any
 * consumer, one per interval, none at a time no event passed; finish
 * comes once at the end; nr_steps numbers the events that start or end a
 * block; a consumer's error stops the pass; a model fed by the replay
 * equals one fed event by event. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/model/ana_heap_replay.h"
#include "analysis/model/ana_model.h"

/* What one consumer saw, as a string of records. */
struct log {
    const char *name;
    char text[2048];
    const struct ana_heap_replay *p;
    int fail_at; /* return -EIO at this event's time (0: never) */
};

static void put(struct log *l, char what, uint64_t a, const char *more)
{
    size_t n = strlen(l->text);

    snprintf(l->text + n, sizeof(l->text) - n, "%s:%c%llu%s ", l->name, what, (unsigned long long)a,
             more);
}

static int on_step(void *arg, const struct fmt_event *ev, const struct ana_step *st)
{
    struct log *l = arg;
    char step[24];

    snprintf(step, sizeof(step), "/%llu",
             (unsigned long long)(st->starts || st->ends ? l->p->nr_steps : 0));
    put(l, 'e', ev->ts_ns, step);
    return l->fail_at && ev->ts_ns == (uint64_t)l->fail_at ? -EIO : 0;
}

static int on_moment(void *arg, uint64_t t_ns)
{
    put(arg, 'm', t_ns, "");
    return 0;
}

static int on_finish(void *arg)
{
    put(arg, 'f', 0, "");
    return 0;
}

static const struct ana_heap_replay_ops all_ops = {
    .step = on_step, .moment = on_moment, .finish = on_finish};

/* malloc at 10 (serial 1), an RSS sample at 25, free of 1 at 30, malloc
 * at 30 (serial 2), nothing at 40..59, malloc at 60 (serial 3). */
static void events(struct fmt_event *e)
{
    e[0] = (struct fmt_event){.kind = FMT_EV_MALLOC, .ts_ns = 10, .serial = 1, .size = 8};
    e[1] = (struct fmt_event){.kind = FMT_EV_RSS, .ts_ns = 25, .size = 4096};
    e[2] = (struct fmt_event){.kind = FMT_EV_FREE,
                              .ts_ns = 30,
                              .addr = 0x1000,
                              .ref = 1,
                              .ref_size = 8,
                              .ref_ts_ns = 10,
                              .nr_refs = 1};
    e[3] = (struct fmt_event){.kind = FMT_EV_MALLOC, .ts_ns = 30, .serial = 2, .size = 16};
    e[4] = (struct fmt_event){.kind = FMT_EV_MALLOC, .ts_ns = 60, .serial = 3, .size = 32};
    for (int i = 0; i < 5; i++)
        e[i].pid = 10;
}

/* Replay the events to a, then b, subscribed with moments every a_every
 * and b_every (a's after the events at a moment if a_after), until the
 * first error. Returns it, or what finish returns; p is left to release. */
static int replay_two(struct ana_heap_replay *p, struct log *a, struct log *b, bool a_after,
                      uint64_t a_every, uint64_t b_every)
{
    struct fmt_event e[5];
    int rc = 0;

    events(e);
    ana_heap_replay_init(p, NULL);
    a->p = b->p = p;
    if (a_after)
        assert_int_equal(ana_heap_replay_subscribe_after(p, &all_ops, a, a_every), 0);
    else
        assert_int_equal(ana_heap_replay_subscribe(p, &all_ops, a, a_every), 0);
    assert_int_equal(ana_heap_replay_subscribe(p, &all_ops, b, b_every), 0);
    for (int i = 0; i < 5 && !rc; i++)
        rc = ana_heap_replay_event(p, &e[i]);
    return rc ? rc : ana_heap_replay_finish(p);
}

static void test_order(void **state)
{
    struct log a = {.name = "a"}, b = {.name = "b"};
    struct ana_heap_replay p;

    (void)state;
    assert_int_equal(replay_two(&p, &a, &b, false, 20, 0), 0);
    /* a's moments: 20 before the event at 25; 40 and 60 before the event
     * at 60 (a moment at t comes before the first event at or after t); b
     * has none. Steps number the events that start or end a block. */
    assert_string_equal(a.text, "a:e10/1 a:m20 a:e25/0 a:e30/2 a:e30/3 a:m40 a:m60 a:e60/4 a:f0 ");
    assert_string_equal(b.text, "b:e10/1 b:e25/0 b:e30/2 b:e30/3 b:e60/4 b:f0 ");
    assert_int_equal(p.nr_steps, 4);
    ana_heap_replay_release(&p);
}

static void test_error_stops(void **state)
{
    struct log a = {.name = "a", .fail_at = 30}, b = {.name = "b"};
    struct ana_heap_replay p;

    (void)state;
    assert_int_equal(replay_two(&p, &a, &b, false, 0, 0), -EIO);
    /* b never saw the event a failed on. */
    assert_string_equal(b.text, "b:e10/1 b:e25/0 ");
    ana_heap_replay_release(&p);
}

/* Moments after (ana_heap_replay_subscribe_after): the moment t comes
 * after the events at t, before the first one after it; a plain one
 * before the events at t. */
static void test_moments_after(void **state)
{
    struct log a = {.name = "a"}, b = {.name = "b"};
    struct ana_heap_replay p;

    (void)state;
    assert_int_equal(replay_two(&p, &a, &b, true, 30, 30), 0);
    assert_string_equal(a.text, "a:e10/1 a:e25/0 a:e30/2 a:e30/3 a:m30 a:e60/4 a:f0 ");
    assert_string_equal(b.text, "b:e10/1 b:e25/0 b:m30 b:e30/2 b:e30/3 b:m60 b:e60/4 b:f0 ");
    ana_heap_replay_release(&p);
}

static void test_too_many(void **state)
{
    struct log l = {.name = "x"};
    struct ana_heap_replay p;

    (void)state;
    ana_heap_replay_init(&p, NULL);
    for (int i = 0; i < ANA_HEAP_REPLAY_MAX_CONSUMERS; i++)
        assert_int_equal(ana_heap_replay_subscribe(&p, &all_ops, &l, 0), 0);
    assert_int_equal(ana_heap_replay_subscribe(&p, &all_ops, &l, 0), -E2BIG);
    ana_heap_replay_release(&p);
}

/* A model fed by the replay equals one fed event by event; one with other
 * options than the replay's is refused. */
static void test_model(void **state)
{
    struct ana_model_options loose = {.loose_temporary = true};
    struct ana_model *direct, *fed, *other;
    struct ana_heap_replay p;
    struct fmt_event e[5];

    (void)state;
    events(e);
    assert_int_equal(ana_model_create(&direct, NULL), 0);
    assert_int_equal(ana_model_create(&fed, NULL), 0);
    assert_int_equal(ana_model_create(&other, &loose), 0);
    ana_heap_replay_init(&p, NULL);
    assert_int_equal(ana_model_subscribe(other, &p), -EINVAL);
    assert_int_equal(ana_model_subscribe(fed, &p), 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(ana_model_event(direct, &e[i]), 0);
        assert_int_equal(ana_heap_replay_event(&p, &e[i]), 0);
    }
    ana_model_finish(direct);
    assert_int_equal(ana_heap_replay_finish(&p), 0);
    const struct ana_scope *x = ana_model_total(direct), *y = ana_model_total(fed);
    assert_int_equal(x->peak, 48);
    assert_int_equal(y->peak, x->peak);
    assert_int_equal(y->peak_ns, x->peak_ns);
    assert_int_equal(y->heap, x->heap);
    assert_int_equal(y->nr_allocs, x->nr_allocs);
    assert_int_equal(y->nr_temporary, x->nr_temporary);
    assert_int_equal(y->nr_calls[FMT_EV_MALLOC], 3);
    ana_heap_replay_release(&p);
    ana_model_destroy(direct);
    ana_model_destroy(fed);
    ana_model_destroy(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),         cmocka_unit_test(test_error_stops),
        cmocka_unit_test(test_moments_after), cmocka_unit_test(test_too_many),
        cmocka_unit_test(test_model),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
