// SPDX-License-Identifier: MIT
// libcol_cxx_plug.so: a C++ plugin for a C host (col_cxx_host), which
// brings libstdc++ into the process only when it is loaded. Its static
// constructor, and col_cxx_plug_run() after it, use every form of operator
// new and delete: plain, array, nothrow, aligned, aligned nothrow, sized;
// a nothrow new that fails returns NULL and a throwing one throws
// std::bad_alloc. Any NULL where the form promises a block aborts.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

unsigned long total;

void use(void *p, size_t size, size_t align)
{
    if (!p || reinterpret_cast<uintptr_t>(p) % align != 0)
        abort();
    memset(p, 0x5a, size);
    total += size;
}

struct alignas(64) Wide {
    char x[3008];
};

void every_form()
{
    int *a = new int(7);
    use(a, sizeof(*a), alignof(int));
    delete a;
    char *b = new char[3001];
    use(b, 3001, 1);
    delete[] b;
    char *c = new (std::nothrow) char[3002];
    use(c, 3002, 1);
    delete[] c;
    void *d = operator new(3003, std::nothrow);
    use(d, 3003, 1);
    operator delete(d, std::nothrow);
    Wide *e = new Wide;
    use(e, sizeof(*e), 64);
    delete e;
    Wide *f = new Wide[2];
    use(f, 2 * sizeof(*f), 64);
    delete[] f;
    void *g = operator new(3005, std::align_val_t(128));
    use(g, 3005, 128);
    operator delete(g, std::align_val_t(128));
    void *h = operator new(3006, std::align_val_t(128), std::nothrow);
    use(h, 3006, 128);
    operator delete(h, std::align_val_t(128), std::nothrow);
    void *i = operator new[](3007, std::align_val_t(256));
    use(i, 3007, 256);
    operator delete[](i, 3007, std::align_val_t(256));
    void *j = operator new(3009);
    use(j, 3009, 1);
    operator delete(j, 3009);
    void *k = operator new[](3010);
    use(k, 3010, 1);
    operator delete[](k, 3010);
    void *l = operator new[](3011, std::nothrow);
    use(l, 3011, 1);
    operator delete[](l, std::nothrow);
    void *m = operator new[](3012, std::align_val_t(64), std::nothrow);
    use(m, 3012, 64);
    operator delete[](m, std::align_val_t(64), std::nothrow);

    // No heap has this much: nothrow gives NULL, the others throw.
    const size_t huge = SIZE_MAX / 4;
    if (operator new(huge, std::nothrow) || operator new[](huge, std::nothrow))
        abort();
    try {
        void *never = operator new(huge);
        (void)never;
        abort();
    } catch (const std::bad_alloc &) {
        total += 1;
    }
}

struct AtLoad {
    AtLoad() { every_form(); }
} at_load;

}  // namespace

extern "C" unsigned long col_cxx_plug_run(void);
extern "C" unsigned long col_cxx_plug_run(void)
{
    every_form();
    return total;
}
