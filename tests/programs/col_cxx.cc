// SPDX-License-Identifier: MIT
// C++ new, delete, new[] and delete[] reach malloc and free through
// libstdc++; a static initializer allocates before main (size 2345).
#include <cstdint>

#include "col_expect.h"

namespace {

struct WithDtor {
    ~WithDtor() { x[0] = 0; }
    char x[16];
};

struct Early {
    Early() : p(new char[2345]) {}
    char *p;
};

Early early;

unsigned long X(const void *p)
{
    return static_cast<unsigned long>(reinterpret_cast<uintptr_t>(p));
}

}  // namespace

int main()
{
    col_mark(COL_MARK_BEGIN);

    int *one = new int(5);
    col_expect("malloc addr=0x%lx size=%zu", X(one), sizeof(int));
    delete one;
    col_expect("free addr=0x%lx size=%zu", X(one), sizeof(int));

    char *arr = new char[300];
    col_expect("malloc addr=0x%lx size=300", X(arr));
    delete[] arr;
    col_expect("free addr=0x%lx size=300", X(arr));

    // An array of a type with a destructor carries an 8-byte count first.
    WithDtor *objs = new WithDtor[3];
    const char *block = reinterpret_cast<char *>(objs) - sizeof(size_t);
    col_expect("malloc addr=0x%lx size=%zu", X(block), 3 * sizeof(WithDtor) + sizeof(size_t));
    delete[] objs;
    col_expect("free addr=0x%lx size=%zu", X(block), 3 * sizeof(WithDtor) + sizeof(size_t));

    col_mark(COL_MARK_END);
    delete[] early.p;
    col_expect_flush(1);
    return 0;
}
