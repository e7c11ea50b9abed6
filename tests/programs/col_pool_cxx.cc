// SPDX-License-Identifier: MIT
// A C++ class whose objects come from a pool of its own, announced
// through memscribe/annotate.h in its operator new and delete
// (tests/e2e/record_pools.sh): 5 Nodes of 32 bytes made, 2 deleted, 3
// leaked (96 bytes) in the pool "Node"; malloc's heap holds the 4 KiB
// slab, freed. The output is the same traced and untraced.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <new>
#include <unistd.h>

#include "memscribe/annotate.h"

namespace
{

class Slab
{
  public:
    explicit Slab(std::size_t size) : base_(static_cast<char *>(std::malloc(size))), size_(size)
    {
        MEMSCRIBE_POOL_CREATE(this, "Node");
    }
    ~Slab()
    {
        std::free(base_);
    }
    __attribute__((noinline)) void *get(std::size_t n)
    {
        if (used_ + n > size_)
            throw std::bad_alloc();
        void *p = base_ + used_;
        used_ += n;
        MEMSCRIBE_POOL_ALLOC(this, p, n);
        return p;
    }
    __attribute__((noinline)) void put(void *p)
    {
        MEMSCRIBE_POOL_FREE(this, p);
    }

  private:
    char *base_;
    std::size_t size_, used_ = 0;
};

Slab *slab;

struct Node {
    long key, value, pad[2];
    static void *operator new(std::size_t n)
    {
        return slab->get(n);
    }
    static void operator delete(void *p)
    {
        slab->put(p);
    }
};

} // namespace

int main()
{
    Slab s(4096);
    slab = &s;
    Node *nodes[5];
    long sum = 0;

    static_assert(sizeof(Node) == 32, "the test's numbers assume 32-byte nodes");
    for (long i = 0; i < 5; i++)
        nodes[i] = new Node{i, i * i, {0, 0}};
    delete nodes[1];
    delete nodes[3];
    for (long i : {0, 2, 4})
        sum += nodes[i]->value;
    char out[64];
    int len = std::snprintf(out, sizeof(out), "pool: sum=%ld\n", sum);
    return write(1, out, static_cast<std::size_t>(len)) == len ? 0 : 1;
}
