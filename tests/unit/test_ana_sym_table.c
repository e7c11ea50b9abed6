/* SPDX-License-Identifier: MIT */
/* The symbolizer's parts on their own: the sorted symbol table (aliases,
 * a function with no size), demangling (C++, both Rust manglings, clone
 * suffixes), line formatting and the internal-frame classifier. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/sym/ana_sym_internal.h"
#include "sym_cases.h"
#include "test_ana_sym_fixture.h"

static struct symfix fx;

static int group_setup(void **state)
{
    elf_version(EV_CURRENT);
    return symfix_run(&fx);
}

static int group_teardown(void **state)
{
    symfix_free(&fx);
    return 0;
}

static void test_table_aliases_and_sizes(void **state)
{
    const struct fmt_module *exe = symfix_module(&fx, "sym_chain");
    int fd = open(symfix_program("sym_chain"), O_RDONLY);
    assert_true(fd >= 0);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    assert_non_null(elf);
    struct ana_sym_table t;
    assert_int_equal(ana_sym_table_build(&t, &elf, 1), 0);
    assert_true(t.nr > 10);
    for (size_t i = 1; i < t.nr; i++)
        assert_true(t.syms[i - 1].addr < t.syms[i].addr); /* sorted, one per address */

    /* __sym_alias_impl, sym_alias (global) and sym_alias_weak share an
     * address: the global with the fewest underscores is shown. */
    uint64_t alias = fx.sym_alias - exe->base;
    const struct ana_sym_symbol *s = ana_sym_table_find(&t, alias);
    assert_non_null(s);
    assert_string_equal(s->name, "sym_alias");
    assert_int_equal(s->addr, alias);
    assert_ptr_equal(ana_sym_table_find(&t, alias + 1), s);

    /* An assembler function without .size: it runs up to the next symbol. */
    uint64_t nosize = fx.sym_asm_nosize - exe->base;
    s = ana_sym_table_find(&t, nosize + 3);
    assert_non_null(s);
    assert_string_equal(s->name, "sym_asm_nosize");
    assert_true(s->end > nosize + 3);
    assert_true(s->end <= alias);

    /* Below every symbol: nothing. */
    assert_null(ana_sym_table_find(&t, t.syms[0].addr - 1));
    ana_sym_table_free(&t);
    elf_end(elf);
    close(fd);
}

/* glibc's signal trampoline is recognised by its code, without symbols:
 * the signal case's second frame is its first byte. */
static void test_sigreturn_code(void **state)
{
    const struct symfix_stack *rec = symfix_stack(&fx, SYM_CASE_SIGNAL);
    const struct fmt_module *libc = NULL;
    struct ana_sym_code code;

    for (size_t i = 0; i < fx.nr_modules; i++)
        if (strstr(fx.modules[i].path, "/libc.so"))
            libc = &fx.modules[i];
    assert_non_null(rec);
    assert_non_null(libc);
    int fd = open(libc->path, O_RDONLY);
    assert_true(fd >= 0);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    assert_non_null(elf);
    assert_int_equal(ana_sym_code_load(&code, elf), 0);
    assert_true(code.nr > 0);
    uint64_t tramp = rec->addrs[1] - libc->base;
    assert_true(ana_sym_code_is_sigreturn(&code, tramp));
    assert_false(ana_sym_code_is_sigreturn(&code, tramp + 1));
    assert_false(ana_sym_code_is_sigreturn(&code, rec->addrs[2] - libc->base));
    assert_false(ana_sym_code_is_sigreturn(&code, 0));
    ana_sym_code_free(&code);
    elf_end(elf);
    close(fd);
}

static void test_demangle(void **state)
{
    struct ana_sym_arena a = {0};

    assert_string_equal(ana_sym_demangle(&a, "_ZN2ns3Cls6methodEi"), "ns::Cls::method(int)");
    assert_string_equal(ana_sym_demangle(&a, "_Znwm"), "operator new(unsigned long)");
    /* Rust, legacy (hash dropped) and v0. */
    assert_string_equal(ana_sym_demangle(&a, "_ZN7mycrate3foo17h0123456789abcdefE"),
                        "mycrate::foo");
    assert_string_equal(ana_sym_demangle(&a, "_RNvCs1234_7mycrate3foo"), "mycrate::foo");
    /* Clone suffixes go, in C and C++. */
    assert_string_equal(ana_sym_demangle(&a, "_ZL11static_leafm.constprop.0"),
                        "static_leaf(unsigned long)");
    assert_string_equal(ana_sym_demangle(&a, "msort_with_tmp.part.0"), "msort_with_tmp");
    assert_string_equal(ana_sym_demangle(&a, "main.cold"), "main");
    /* A 32-bit Windows stdcall name as i386 DWARF spells it loses its
     * argument bytes; ELF symbol versions and other '@'s stay. */
    assert_string_equal(ana_sym_demangle(&a, "VirtualAllocEx@20"), "VirtualAllocEx");
    assert_string_equal(ana_sym_demangle(&a, "Sleep@4"), "Sleep");
    assert_string_equal(ana_sym_demangle(&a, "memcpy@@GLIBC_2"), "memcpy@@GLIBC_2");
    assert_string_equal(ana_sym_demangle(&a, "a-b@8"), "a-b@8");
    assert_string_equal(ana_sym_demangle(&a, "@8"), "@8");
    /* Plain names come back as they are, the same pointer. */
    const char *plain = "main";
    assert_ptr_equal(ana_sym_demangle(&a, plain), plain);
    const char *bad = "_Zgarbage";
    assert_ptr_equal(ana_sym_demangle(&a, bad), bad);
    ana_sym_arena_free(&a);
}

static void check_line(const struct ana_sym_frame *f, uint32_t index, const char *want)
{
    struct ana_sym_line l = {.frame = f, .index = index};
    char buf[256];

    assert_int_equal(ana_sym_format_line(&l, buf, sizeof(buf)), (int)strlen(want));
    assert_string_equal(buf, want);
}

static void test_format(void **state)
{
    struct ana_sym_frame f = {
        .addr = 0x7f3a12c4,
        .module = "/usr/lib/libfoo.so",
        .module_offset = 0x12c4,
        .function = "ns::Cls::method(int)",
        .function_offset = 0x2b,
        .has_offset = true,
        .file = "/src/foo/foo.cc",
        .line = 118,
    };
    check_line(&f, 3, "[3] 00007f3a12c4 libfoo.so!ns::Cls::method(int)+0x2b (foo.cc:118)");
    f.inlined = true;
    f.has_offset = false;
    f.function = "ns::inl(int)";
    f.file = "foo.h";
    f.line = 12;
    check_line(&f, 3, "[i] 00007f3a12c4 libfoo.so!ns::inl(int) (foo.h:12)");
    f.inlined = false;
    f.has_offset = true;
    f.line = 0;
    check_line(&f, 0, "[0] 00007f3a12c4 libfoo.so!ns::inl(int)+0x2b (foo.h)");
    f.function = NULL;
    f.file = NULL;
    check_line(&f, 12, "[12] 00007f3a12c4 libfoo.so+0x12c4");
    f.module = NULL;
    check_line(&f, 5, "[5] 00007f3a12c4 ??");
}

static void test_internal_frames(void **state)
{
    struct ana_sym_frame f = {.module = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"};

    f.function = "operator new(unsigned long)";
    assert_true(ana_sym_frame_is_internal(&f));
    f.function = "operator new[](unsigned long, std::nothrow_t const&)";
    assert_true(ana_sym_frame_is_internal(&f));
    f.function = "operator delete(void*, unsigned long)";
    assert_true(ana_sym_frame_is_internal(&f));
    f.function = "std::vector<int, std::allocator<int> >::_M_realloc_insert(int&&)";
    assert_false(ana_sym_frame_is_internal(&f));
    f.module = "/lib/x86_64-linux-gnu/libc.so.6";
    f.function = "malloc";
    assert_true(ana_sym_frame_is_internal(&f));
    f.function = "__libc_calloc";
    assert_true(ana_sym_frame_is_internal(&f));
    f.function = "__default_morecore"; /* brk for malloc, seen with --vm-precise */
    assert_true(ana_sym_frame_is_internal(&f));
    f.function = "strdup"; /* allocates, but the call site is what it is */
    assert_false(ana_sym_frame_is_internal(&f));
    f.module = "/opt/memscribe/lib/memscribe/libmemscribe.so";
    f.function = NULL;
    assert_true(ana_sym_frame_is_internal(&f));
    f.module = "/home/me/app";
    f.function = "mallocate";
    assert_false(ana_sym_frame_is_internal(&f));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_aliases_and_sizes),
        cmocka_unit_test(test_sigreturn_code),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_internal_frames),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
