/* SPDX-License-Identifier: MIT */
/* The frame of interest (ana_interest.h): classes of frames by function
 * and module, the entry chain, the frame of interest and a row's layout
 * on made-up stacks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/sym/ana_interest.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define EXE "/home/u/catalog"

static enum ana_frame_class class_of(const char *fn, const char *module)
{
    struct ana_sym_frame f = {.function = fn, .module = module};

    return ana_interest_class(&f, NULL, 0);
}

static void test_classes(void **state)
{
    static const struct {
        const char *fn, *module;
        enum ana_frame_class want;
    } cases[] = {
        /* the user's own code, templates and lambdas included */
        {"load_catalog()", EXE, ANA_FRAME_USER},
        {"main", EXE, ANA_FRAME_USER},
        {"std::string load<int>(int)", EXE, ANA_FRAME_USER},
        {"(anonymous namespace)::load_catalog()", EXE, ANA_FRAME_USER},
        {"load_catalog()::{lambda(int)#1}::operator()(int) const", EXE, ANA_FRAME_USER},
        {NULL, EXE, ANA_FRAME_USER},
        {NULL, NULL, ANA_FRAME_USER},
        {"Foo::operator<<(int)", EXE, ANA_FRAME_USER},
        /* the C++ runtime by name, wherever it was instantiated */
        {"std::__new_allocator<int>::allocate(unsigned long, void const*)", EXE, ANA_FRAME_RUNTIME},
        {"std::allocator_traits<std::allocator<int> >::allocate(std::allocator<int>&, unsigned "
         "long)",
         EXE, ANA_FRAME_RUNTIME},
        {"void std::vector<int, std::allocator<int> >::_M_realloc_insert<int "
         "const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int> >, int const&)",
         EXE, ANA_FRAME_RUNTIME},
        {"std::pair<std::_Rb_tree_iterator<int>, bool> "
         "std::_Rb_tree<int>::_M_emplace_unique<int>(int&&)",
         EXE, ANA_FRAME_RUNTIME},
        {"__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)", EXE,
         ANA_FRAME_RUNTIME},
        {"std::operator<<(std::ostream&, char const*)", EXE, ANA_FRAME_RUNTIME},
        {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
         "std::operator+<char, std::char_traits<char>, std::allocator<char> >(char const*, "
         "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
         EXE, ANA_FRAME_RUNTIME},
        {"bool operator< <int>(Box<int> const&, Box<int> const&)", EXE, ANA_FRAME_USER},
        {"bool std::operator< <int>(Box<int> const&, Box<int> const&)", EXE, ANA_FRAME_RUNTIME},
        /* libc's insides by name and by module */
        {"_IO_file_doallocate", LIBC, ANA_FRAME_RUNTIME},
        {"_IO_file_doallocate", EXE, ANA_FRAME_RUNTIME},
        {"fopen", LIBC, ANA_FRAME_RUNTIME},
        {NULL, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", ANA_FRAME_RUNTIME},
        /* Wine's and Windows' system DLLs */
        {"VirtualAllocEx", "C:\\windows\\system32\\KernelBase.dll", ANA_FRAME_RUNTIME},
        {"VirtualAlloc", "C:\\windows\\system32\\kernel32.dll", ANA_FRAME_RUNTIME},
        {"NtAllocateVirtualMemory", "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/ntdll.dll",
         ANA_FRAME_RUNTIME},
        /* perl's Newx, by name in the perl binary */
        {"Perl_safesysmalloc", "/usr/bin/perl", ANA_FRAME_ALLOCATOR},
        {"Perl_savepvn", "/usr/bin/perl", ANA_FRAME_ALLOCATOR},
        {"Perl_sv_grow", "/usr/bin/perl", ANA_FRAME_USER},
        /* the entry chain */
        {"_start", EXE, ANA_FRAME_ENTRY},
        {"__libc_start_main", LIBC, ANA_FRAME_ENTRY},
        /* libc and the loader without their symbols (no libc6-dbg): a
         * nameless frame is an internal function, at the root side
         * __libc_start_call_main, start_thread or call_init */
        {NULL, LIBC, ANA_FRAME_ENTRY},
        {NULL, "/lib64/ld-linux-x86-64.so.2", ANA_FRAME_ENTRY},
        {"__libc_start_call_main", LIBC, ANA_FRAME_ENTRY},
        {"start_thread", LIBC, ANA_FRAME_ENTRY},
        {"clone3", LIBC, ANA_FRAME_ENTRY},
        {"BaseThreadInitThunk", "C:\\windows\\system32\\kernel32.dll", ANA_FRAME_ENTRY},
        {"RtlUserThreadStart", "C:\\windows\\system32\\ntdll.dll", ANA_FRAME_ENTRY},
        {"__tmainCRTStartup", "C:\\prog.exe", ANA_FRAME_ENTRY},
        /* allocators: libc's, operator new, the GNU and GLib wrappers */
        {"malloc", LIBC, ANA_FRAME_ALLOCATOR},
        {"operator new(unsigned long)", "libstdc++.so.6", ANA_FRAME_ALLOCATOR},
        {"xmalloc", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", ANA_FRAME_ALLOCATOR},
        {"xrealloc", "libbfd-2.40-system.so", ANA_FRAME_ALLOCATOR},
        {"g_malloc", "libglib-2.0.so.0", ANA_FRAME_ALLOCATOR},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum ana_frame_class got = class_of(cases[i].fn, cases[i].module);

        if (got != cases[i].want)
            fail_msg("%s in %s: class %d, want %d", cases[i].fn ? cases[i].fn : "(no name)",
                     cases[i].module ? cases[i].module : "(no module)", got, cases[i].want);
    }
}

static void test_user_allocators(void **state)
{
    const char *const mine[] = {"pool_alloc", "Arena::grab"};
    struct ana_sym_frame f = {.function = "pool_alloc", .module = EXE};

    (void)state;
    assert_int_equal(ana_interest_class(&f, NULL, 0), ANA_FRAME_USER);
    assert_int_equal(ana_interest_class(&f, mine, 2), ANA_FRAME_ALLOCATOR);
    /* a C++ name matches with or without its argument list */
    f.function = "Arena::grab(unsigned long)";
    assert_int_equal(ana_interest_class(&f, mine, 2), ANA_FRAME_ALLOCATOR);
    f.function = "Arena::grab_more(unsigned long)";
    assert_int_equal(ana_interest_class(&f, mine, 2), ANA_FRAME_USER);
}

enum { U = ANA_FRAME_USER, A = ANA_FRAME_ALLOCATOR, R = ANA_FRAME_RUNTIME, E = ANA_FRAME_ENTRY };

/* Where cls[0..n)'s entry chain starts, and its frame of interest. */
static void expect_chain(const uint8_t *cls, uint32_t n, uint32_t entry, uint32_t interest)
{
    assert_int_equal(ana_interest_entry(cls, n), entry);
    assert_int_equal(ana_interest_find(cls, n), interest);
}

static void test_interest(void **state)
{
    /* std::__new_allocator < allocator_traits < _Rb_tree x4 < map::operator[] <
     * load_catalog < main < __libc_start_call_main < __libc_start_main < _start */
    const uint8_t cxx[] = {R, R, R, R, R, R, R, U, U, E, E, E};
    /* xmalloc < gen_rtx < main < entry */
    const uint8_t build[] = {A, U, U, E, E};
    /* a thread: worker < start_thread < clone3 */
    const uint8_t thread[] = {U, E, E};
    /* no user frame */
    const uint8_t lib[] = {R, R, E};
    /* all start-up: kept */
    const uint8_t init[] = {E, E};
    /* a stripped program: main+0x.. < __libc_start_call_main <
     * __libc_start_main < prog+0x.. (its _start, no symbol) */
    const uint8_t stripped[] = {R, U, E, E, U};
    /* a user root after a user frame is no chain */
    const uint8_t plain[] = {U, U};

    (void)state;
    expect_chain(cxx, 12, 9, 7);
    assert_int_equal(ana_interest_find(build, 5), 1);
    expect_chain(thread, 3, 1, 0);
    assert_int_equal(ana_interest_find(lib, 3), 0);
    expect_chain(init, 2, 2, 0);
    expect_chain(stripped, 5, 2, 1);
    assert_int_equal(ana_interest_entry(plain, 2), 2);
    assert_int_equal(ana_interest_find(NULL, 0), 0);
}

/* The row of cls[0..n) at most max items long: its number of items. */
static uint32_t row_of(const uint8_t *cls, uint32_t n, uint32_t max, struct ana_interest_item *it,
                       struct ana_interest_row *row)
{
    ana_interest_row(cls, n, max, it, row);
    return row->nr_items;
}

/* An item: frames [first, first + nr), folded into a mark or not. */
static void expect_item(const struct ana_interest_item *it, uint32_t first, uint32_t nr,
                        bool folded)
{
    assert_int_equal(it->first, first);
    assert_int_equal(it->nr, nr);
    assert_int_equal(it->folded, folded);
}

static void test_row(void **state)
{
    const uint8_t cxx[] = {R, R, R, R, R, R, R, U, U, E, E, E};
    /* user < two runtime < user < one runtime < user < entry */
    const uint8_t mixed[] = {U, R, R, U, R, U, E};
    /* xmalloc < concat < strlen-ish runtime < user < entry */
    const uint8_t wrapped[] = {A, A, R, U, E};
    /* xmalloc < gen_rtx */
    const uint8_t build[] = {A, U};
    struct ana_interest_item it[16];
    struct ana_interest_row row;
    char mark[32];

    (void)state;
    /* [7 library frames] < load_catalog < main; the chain left out */
    assert_int_equal(row_of(cxx, 12, 6, it, &row), 3);
    assert_int_equal(row.interest, 7);
    assert_int_equal(row.entry, 9);
    assert_int_equal(row.nr_more, 0);
    expect_item(&it[0], 0, 7, true);
    expect_item(&it[1], 7, 1, false);
    assert_int_equal(it[2].first, 8);
    /* one item: the frame of interest alone, main after it */
    assert_int_equal(row_of(cxx, 12, 1, it, &row), 1);
    assert_int_equal(it[0].first, 7);
    assert_int_equal(it[0].nr, 1);
    assert_int_equal(row.nr_more, 1);
    /* two items: the mark and the frame of interest */
    assert_int_equal(row_of(cxx, 12, 2, it, &row), 2);
    assert_int_equal(it[1].first, 7);
    assert_int_equal(row.nr_more, 1);
    /* runs of two or more fold; one runtime frame shows */
    assert_int_equal(row_of(mixed, 7, 0, it, &row), 5);
    assert_int_equal(it[0].first, 0);
    expect_item(&it[1], 1, 2, true);
    assert_int_equal(it[2].first, 3);
    expect_item(&it[3], 4, 1, false);
    assert_int_equal(it[4].first, 5);
    assert_int_equal(row.nr_more, 0);
    assert_int_equal(row_of(mixed, 7, 3, it, &row), 3);
    assert_int_equal(row.nr_more, 2);
    /* the leaf's wrappers are left out, one runtime frame before the
     * frame of interest is a mark of one */
    assert_int_equal(row_of(wrapped, 5, 6, it, &row), 2);
    expect_item(&it[0], 2, 1, true);
    assert_int_equal(it[1].first, 3);
    assert_int_equal(row_of(build, 2, 6, it, &row), 1);
    assert_int_equal(it[0].first, 1);
    /* empty */
    assert_int_equal(row_of(NULL, 0, 6, it, &row), 0);
    /* the mark's words */
    ana_interest_mark(mark, sizeof(mark), 7);
    assert_string_equal(mark, "[7 library frames]");
    ana_interest_mark(mark, sizeof(mark), 1);
    assert_string_equal(mark, "[1 library frame]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_user_allocators),
        cmocka_unit_test(test_interest),
        cmocka_unit_test(test_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
