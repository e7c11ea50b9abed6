/* SPDX-License-Identifier: MIT */
/* Short function names (ana_names.h): templates and argument lists go,
 * operators, anonymous namespaces and Rust trait paths stay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/core/ana_names.h"

static void check(const char *name, const char *want)
{
    char buf[512];

    assert_string_equal(ana_name_short(buf, sizeof(buf), name), want);
}

static void test_cxx(void **state)
{
    (void)state;
    check("main", "main");
    check("InnerLoopOperation(int)", "InnerLoopOperation()");
    check("(anonymous namespace)::AllocateSteadyState(unsigned long)",
          "(anonymous namespace)::AllocateSteadyState()");
    check("std::vector<char*, std::allocator<char*> >::push_back(char* const&)",
          "std::vector<>::push_back()");
    check("void std::vector<char*, std::allocator<char*> >::_M_realloc_insert<char* const&>("
          "__gnu_cxx::__normal_iterator<char**, std::vector<char*, std::allocator<char*> > >, "
          "char* const&)",
          "void std::vector<>::_M_realloc_insert<>()");
    check("std::__new_allocator<char*>::allocate(unsigned long, void const*)",
          "std::__new_allocator<>::allocate()");
    check("std::ostream::operator<<(int)", "std::ostream::operator<<()");
    check("Foo::operator()(int) const", "Foo::operator()() const");
    check("bool std::operator< <int>(Box<int> const&, Box<int> const&)",
          "bool std::operator< <>()");
    check("Foo::operator->() const", "Foo::operator->() const");
    check("f(void (*)(int, char))", "f()");
    check("std::string::_M_construct<char const*>(char const*, char const*) [clone .isra.0]",
          "std::string::_M_construct<>() [clone .isra.0]");
    check("_dl_start_user", "_dl_start_user");
    check("libstdc++.so.6+0xa57ba", "libstdc++.so.6+0xa57ba");
}

static void test_rust(void **state)
{
    (void)state;
    check("alloc::raw_vec::RawVec<T,A>::allocate_in::h0123456789abcdef",
          "alloc::raw_vec::RawVec<>::allocate_in");
    check("<alloc::vec::Vec<u8> as core::ops::drop::Drop>::drop",
          "<alloc::vec::Vec<> as core::ops::drop::Drop>::drop");
    check("core::ptr::drop_in_place<alloc::string::String>", "core::ptr::drop_in_place<>");
    check("foo::h12", "foo::h12"); /* not a hash: too short */
}

static void test_truncated(void **state)
{
    char buf[8];

    (void)state;
    assert_string_equal(ana_name_short(buf, sizeof(buf), "abcdefghij(int)"), "abcdefg");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cxx),
        cmocka_unit_test(test_rust),
        cmocka_unit_test(test_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
