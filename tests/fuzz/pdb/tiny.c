/* SPDX-License-Identifier: MIT */
/* The source of tests/fuzz/corpus_pdb/tiny.pdb, the PDB reader's seed and
 * unit test input (tests/unit/test_sym_pdb.c), built with Debian's clang 14:
 *   clang --target=x86_64-w64-mingw32 -g -gcodeview -O0 -nostdlib -fuse-ld=lld \
 *       -Wl,--entry=start -Wl,--pdb=tiny.pdb tiny.c -o tiny.exe
 * The lines below are checked by number: keep them where they are. */
int helper(int x)
{
    return x * 3;
}

static int twice(int x)
{
    int a = helper(x);
    int b = helper(x + 1);
    return a + b;
}

int start(void)
{
    return twice(7);
}
