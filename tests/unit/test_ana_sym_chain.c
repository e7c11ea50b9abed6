/* SPDX-License-Identifier: MIT */
/* The symbolizer on real stacks: sym_chain's cases (static functions,
 * inlining, C++ templates and operator new, a qsort comparator through libc,
 * a signal handler, a dlopen'd library), captured as the collector captures
 * them, checked frame by frame against the lines marked in the sources. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/sym/ana_symbolize.h"
#include "sym_cases.h"
#include "test_ana_sym_fixture.h"

static struct symfix fx;

static int group_setup(void **state)
{
    return symfix_run(&fx);
}

static int group_teardown(void **state)
{
    symfix_free(&fx);
    return 0;
}

static struct ana_sym *new_sym(bool show_internal, bool raw)
{
    struct ana_sym_options o = {.show_internal = show_internal, .raw = raw};
    struct ana_sym *s;

    assert_int_equal(ana_sym_create(&s, &o), 0);
    for (size_t i = 0; i < fx.nr_modules; i++)
        assert_int_equal(ana_sym_add_module(s, 0, &fx.modules[i]), 0);
    return s;
}

enum exp_kind {
    EXP_END = 0,
    EXP_FRAME, /* one frame: function, source file and marked line */
    EXP_LIBC,  /* one or more frames in libc, one of them named fn */
};

struct exp {
    enum exp_kind kind;
    const char *fn;
    const char *file; /* basename of the source */
    const char *marker;
    bool inlined;
};

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;

    return s ? s + 1 : p;
}

static bool in_libc(const struct ana_sym_frame *f)
{
    return f->module && !strncmp(base_name(f->module), "libc.so", 7);
}

static void dump_stack(const struct ana_sym_stack *st)
{
    char buf[1024];

    for (uint32_t i = 0; i < st->nr_lines; i++) {
        ana_sym_format_line(&st->lines[i], buf, sizeof(buf));
        print_message("    %s\n", buf);
    }
}

/* Walk the symbolized stack along the expectations; fail on the first
 * frame that differs, after printing the whole stack. */
static void check_stack(struct ana_sym *s, uint64_t size, const struct exp *exp)
{
    const struct symfix_stack *rec = symfix_stack(&fx, size);
    struct ana_sym_stack st = {0};

    assert_non_null(rec);
    assert_int_equal(ana_sym_stack(s, 0, rec->addrs, rec->nr, &st), 0);
    print_message("  case %" PRIu64 ":\n", size);
    dump_stack(&st);

    uint32_t i = 0, index = 0;
    for (; exp->kind != EXP_END; exp++) {
        if (exp->kind == EXP_LIBC) {
            bool named = false;
            uint32_t first = i;
            while (i < st.nr_lines && in_libc(st.lines[i].frame)) {
                const struct ana_sym_frame *f = st.lines[i].frame;
                if (f->function && !strcmp(f->function, exp->fn))
                    named = true;
                if (!f->inlined)
                    index++;
                i++;
            }
            if (i == first || !named)
                fail_msg("case %" PRIu64 ": expected libc frames with %s at line %u", size, exp->fn,
                         first);
            continue;
        }
        if (i >= st.nr_lines)
            fail_msg("case %" PRIu64 ": stack ends before %s", size, exp->fn);
        const struct ana_sym_frame *f = st.lines[i].frame;
        int want_line = symfix_line(exp->file, exp->marker);
        assert_true(want_line > 0);
        if (!f->function || strcmp(f->function, exp->fn) || !f->file ||
            strcmp(base_name(f->file), exp->file) || f->line != (uint32_t)want_line ||
            f->inlined != exp->inlined || st.lines[i].index != index)
            fail_msg("case %" PRIu64 " line %u: expected [%s] %s (%s:%d), got [%s %u] %s (%s:%u)",
                     size, i, exp->inlined ? "i" : "n", exp->fn, exp->file, want_line,
                     f->inlined ? "i" : "n", st.lines[i].index, f->function ? f->function : "?",
                     f->file ? base_name(f->file) : "?", f->line);
        if (!f->inlined)
            index++;
        i++;
    }
    ana_sym_stack_release(&st);
}

#define F(fn, file, marker)                                                                        \
    {                                                                                              \
        EXP_FRAME, fn, file, marker, false                                                         \
    }
#define I(fn, file, marker)                                                                        \
    {                                                                                              \
        EXP_FRAME, fn, file, marker, true                                                          \
    }
#define LIBC(fn)                                                                                   \
    {                                                                                              \
        EXP_LIBC, fn, NULL, NULL, false                                                            \
    }
#define CC "sym_chain.cc"

static void test_static_functions(void **state)
{
    static const struct exp e[] = {
        F("static_leaf(unsigned long)", CC, "static-malloc"),
        F("run_static()", CC, "static-call"),
        F("main", CC, "main-static"),
        {0},
    };
    struct ana_sym *s = new_sym(false, false);
    check_stack(s, SYM_CASE_STATIC, e);
    ana_sym_destroy(s);
}

static void test_inlined_functions(void **state)
{
    static const struct exp e[] = {
        /* Inlined frames are named by DWARF, which gives static
         * functions no linkage name, hence no parameters. */
        I("inl_inner", CC, "inline-malloc"),
        I("inl_outer", CC, "inline-inner-call"),
        F("run_inline()", CC, "inline-outer-call"),
        F("main", CC, "main-inline"),
        {0},
    };
    struct ana_sym *s = new_sym(false, false);
    check_stack(s, SYM_CASE_INLINE, e);
    ana_sym_destroy(s);
}

static void test_cpp_template_operator_new(void **state)
{
    static const struct exp e[] = {
        F("char* ns::make_block<ns::Widget>(unsigned long)", CC, "cpp-new"),
        F("ns::Widget::build(int)", CC, "cpp-make"),
        F("run_cpp()", CC, "cpp-build"),
        F("main", CC, "main-cpp"),
        {0},
    };
    struct ana_sym *s = new_sym(false, false);
    check_stack(s, SYM_CASE_CPP, e);
    ana_sym_destroy(s);
}

/* With show_internal, operator new (libstdc++) stays on top. */
static void test_cpp_show_internal(void **state)
{
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_CPP);
    struct ana_sym *s = new_sym(true, false);
    struct ana_sym_stack st = {0};

    assert_int_equal(ana_sym_stack(s, 0, rec->addrs, rec->nr, &st), 0);
    dump_stack(&st);
    assert_int_equal(st.nr_cut, 0);
    const struct ana_sym_frame *top = st.lines[0].frame;
    assert_non_null(top->function);
    assert_true(!strncmp(top->function, "operator new", 12));
    assert_true(!strncmp(base_name(top->module), "libstdc++.so", 12));
    assert_true(ana_sym_frame_is_internal(top));
    assert_string_equal(st.lines[1].frame->function,
                        "char* ns::make_block<ns::Widget>(unsigned long)");
    assert_int_equal(st.lines[1].index, 1);
    ana_sym_stack_release(&st);

    /* Cleaned, the same stack loses exactly that frame. */
    ana_sym_destroy(s);
    s = new_sym(false, false);
    assert_int_equal(ana_sym_stack(s, 0, rec->addrs, rec->nr, &st), 0);
    assert_int_equal(st.nr_cut, 1);
    assert_int_equal(st.lines[0].index, 0);
    ana_sym_stack_release(&st);
    ana_sym_destroy(s);
}

static void test_qsort_comparator_through_libc(void **state)
{
    static const struct exp e[] = {
        F("by_value(void const*, void const*)", CC, "qsort-malloc"),
        LIBC("qsort_r"), /* exported: named with or without libc6-dbg */
        F("run_qsort()", CC, "qsort-call"),
        F("main", CC, "main-qsort"),
        {0},
    };
    struct ana_sym *s = new_sym(false, false);
    check_stack(s, SYM_CASE_QSORT, e);
    ana_sym_destroy(s);
}

static void test_signal_handler(void **state)
{
    static const struct exp e[] = {
        F("on_signal(int)", CC, "signal-malloc"),
        LIBC("raise"),
        F("run_signal()", CC, "signal-raise"),
        F("main", CC, "main-signal"),
        {0},
    };
    struct ana_sym *s = new_sym(false, false);
    check_stack(s, SYM_CASE_SIGNAL, e);

    /* The trampoline is named and flagged, and the frame it interrupted
     * (inside raise) is looked up at its exact address. */
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_SIGNAL);
    const struct ana_sym_frame *fr;
    int n = ana_sym_resolve(s, 0, rec->addrs[1], ANA_SYM_RETURN, &fr);
    assert_true(n >= 1);
    assert_true(fr[n - 1].signal_frame);
    /* Named by libc's .symtab when its debug file is installed, else by
     * its code (test_ana_sym_table checks the code is recognised). */
    if (strcmp(fr[n - 1].function, "<signal handler called>")) {
        assert_string_equal(fr[n - 1].function, "__restore_rt");
        assert_int_equal(fr[n - 1].function_offset, 0);
    }
    ana_sym_destroy(s);
}

static void test_dlopen_library(void **state)
{
    static const struct exp e[] = {
        F("plugin_inner", "sym_plugin.c", "plugin-malloc"),
        F("sym_plugin_alloc", "sym_plugin.c", "plugin-call"),
        F("run_plugin()", CC, "plugin-main-call"),
        F("main", CC, "main-plugin"),
        {0},
    };
    const struct fmt_module *plugin = symfix_module(&fx, "libsym_plugin.so");
    assert_non_null(plugin);

    /* The library was dlclose'd: an unloaded module still names the
     * stacks recorded while it was loaded. */
    struct ana_sym *s = new_sym(false, false);
    assert_int_equal(ana_sym_remove_module(s, 0, plugin->base), 0);
    assert_int_equal(ana_sym_remove_module(s, 0, 0x1000), -ENOENT);
    check_stack(s, SYM_CASE_PLUGIN, e);

    /* A module loaded later over the same range wins, and replaces what
     * the cache said about those addresses. */
    const struct fmt_module *exe = symfix_module(&fx, "sym_chain");
    struct fmt_module other = *exe;
    other.base = plugin->base;
    assert_int_equal(ana_sym_add_module(s, 0, &other), 0);
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_PLUGIN);
    const struct ana_sym_frame *fr;
    int n = ana_sym_resolve(s, 0, rec->addrs[0], ANA_SYM_RETURN, &fr);
    assert_true(n >= 1);
    assert_string_equal(base_name(fr[n - 1].module), "sym_chain");
    ana_sym_destroy(s);
}

/* The exact text of a line, and the raw mode's. */
static void test_format_and_raw(void **state)
{
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_STATIC);
    const struct fmt_module *exe = symfix_module(&fx, "sym_chain");
    struct ana_sym *s = new_sym(false, false);
    struct ana_sym_stack st = {0};
    char buf[512], want[512];

    assert_int_equal(ana_sym_stack(s, 0, rec->addrs, rec->nr, &st), 0);
    const struct ana_sym_frame *f = st.lines[0].frame;
    assert_true(f->has_offset);
    snprintf(want, sizeof(want),
             "[0] %012" PRIx64 " sym_chain!static_leaf(unsigned long)+0x%" PRIx64
             " (sym_chain.cc:%d)",
             rec->addrs[0], f->function_offset, symfix_line(CC, "static-malloc"));
    int n = ana_sym_format_line(&st.lines[0], buf, sizeof(buf));
    assert_string_equal(buf, want);
    assert_int_equal(n, (int)strlen(want));
    /* Truncation reports the full length, as snprintf. */
    assert_int_equal(ana_sym_format_line(&st.lines[0], buf, 10), (int)strlen(want));
    assert_int_equal(strlen(buf), 9);
    ana_sym_stack_release(&st);
    ana_sym_destroy(s);

    /* Raw: module+offset, no file opened. */
    s = new_sym(false, true);
    assert_int_equal(ana_sym_stack(s, 0, rec->addrs, rec->nr, &st), 0);
    assert_int_equal(st.nr_lines, rec->nr);
    snprintf(want, sizeof(want), "[0] %012" PRIx64 " sym_chain+0x%" PRIx64, rec->addrs[0],
             rec->addrs[0] - exe->base);
    ana_sym_format_line(&st.lines[0], buf, sizeof(buf));
    assert_string_equal(buf, want);
    struct ana_sym_stats stats;
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_modules_loaded, 0);
    ana_sym_stack_release(&st);
    ana_sym_destroy(s);
}

/* Addresses in no module, and the cache. */
static void test_unknown_and_cache(void **state)
{
    struct ana_sym *s = new_sym(false, false);
    const struct ana_sym_frame *a, *b;
    struct ana_sym_stats stats;
    char buf[128];

    assert_int_equal(ana_sym_resolve(s, 0, 0x10, ANA_SYM_RETURN, &a), 1);
    assert_null(a->module);
    assert_null(a->function);
    struct ana_sym_line l = {.frame = a, .index = 4};
    ana_sym_format_line(&l, buf, sizeof(buf));
    assert_string_equal(buf, "[4] 000000000010 ??");
    /* An image the symbolizer never heard of. */
    assert_int_equal(ana_sym_resolve(s, 7, fx.stacks[0].addrs[0], ANA_SYM_RETURN, &a), 1);
    assert_null(a->module);

    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_STATIC);
    int n1 = ana_sym_resolve(s, 0, rec->addrs[0], ANA_SYM_RETURN, &a);
    int n2 = ana_sym_resolve(s, 0, rec->addrs[0], ANA_SYM_RETURN, &b);
    assert_int_equal(n1, n2);
    assert_ptr_equal(a, b);
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_lookups, 4);
    assert_int_equal(stats.nr_cache_hits, 1);
    /* The same address read as precise is another question. */
    ana_sym_resolve(s, 0, rec->addrs[0], ANA_SYM_PRECISE, &b);
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_cache_hits, 1);

    /* A module loaded elsewhere keeps the cached answers; one loaded over
     * the unknown address 0x10 replaces its "??". */
    struct fmt_module other = *symfix_module(&fx, "sym_chain");
    other.base = 0;
    other.nr_segments = 1;
    other.segments[0] = (struct fmt_segment){.vaddr = 0, .memsz = 0x100, .offset = 0, .flags = 5};
    assert_int_equal(ana_sym_add_module(s, 0, &other), 0);
    assert_int_equal(ana_sym_resolve(s, 0, rec->addrs[0], ANA_SYM_RETURN, &b), n1);
    assert_ptr_equal(a, b);
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_cache_hits, 2);
    assert_int_equal(ana_sym_resolve(s, 0, 0x10, ANA_SYM_RETURN, &b), 1);
    assert_string_equal(base_name(b->module), "sym_chain");
    assert_int_equal(b->module_offset, 0x10);
    ana_sym_get_stats(s, &stats);
    assert_int_equal(stats.nr_cache_hits, 2);
    ana_sym_destroy(s);
}

/* libc's own frames come with source lines when the system has its debug
 * file (libc6-dbg), found through /usr/lib/debug/.build-id. */
static void test_libc_debug_file(void **state)
{
    const struct fmt_module *libc = NULL;
    char path[512];

    for (size_t i = 0; i < fx.nr_modules; i++)
        if (!strncmp(base_name(fx.modules[i].path), "libc.so", 7))
            libc = &fx.modules[i];
    assert_non_null(libc);
    assert_true(libc->build_id_len > 1);
    int n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", libc->build_id[0]);
    for (uint32_t i = 1; i < libc->build_id_len; i++)
        n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", libc->build_id[i]);
    snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
    FILE *f = fopen(path, "r");
    if (!f) /* scripts/setup.sh --test installs it: a test that skips cannot fail */
        fail_msg("%s: no libc6-dbg here: run scripts/setup.sh --test", path);
    fclose(f);

    struct ana_sym *s = new_sym(false, false);
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_QSORT);
    const struct ana_sym_frame *fr;
    int k = ana_sym_resolve(s, 0, rec->addrs[1], ANA_SYM_RETURN, &fr);
    assert_true(k >= 1);
    assert_true(in_libc(&fr[0]));
    assert_non_null(fr[0].file);
    assert_string_equal(base_name(fr[0].file), "msort.c");
    assert_true(fr[0].line > 0);
    ana_sym_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_functions),
        cmocka_unit_test(test_inlined_functions),
        cmocka_unit_test(test_cpp_template_operator_new),
        cmocka_unit_test(test_cpp_show_internal),
        cmocka_unit_test(test_qsort_comparator_through_libc),
        cmocka_unit_test(test_signal_handler),
        cmocka_unit_test(test_dlopen_library),
        cmocka_unit_test(test_format_and_raw),
        cmocka_unit_test(test_unknown_and_cache),
        cmocka_unit_test(test_libc_debug_file),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
