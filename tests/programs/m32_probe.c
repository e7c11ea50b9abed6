/* SPDX-License-Identifier: MIT */
/* Built -m32: the smallest 32-bit program, for memcheck's x86 build to run
 * (tests/e2e/rec_reach32.sh asks whether valgrind has one). Whether this
 * machine runs 32-bit programs at all is scripts/runs-i386.sh's question. */
int main(void)
{
    return 0;
}
