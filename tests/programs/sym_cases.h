/* SPDX-License-Identifier: MIT */
/* The allocation sizes that name sym_chain's test cases: each case makes
 * exactly one allocation of its size, so a capture or a trace event of that
 * size is that case's stack. */
#ifndef SYM_CASES_H
#define SYM_CASES_H

#define SYM_SIZE_BASE 77000
#define SYM_CASE_STATIC (SYM_SIZE_BASE + 1) /* static functions */
#define SYM_CASE_INLINE (SYM_SIZE_BASE + 2) /* two functions inlined into one */
#define SYM_CASE_CPP (SYM_SIZE_BASE + 3)    /* namespace, class, template, operator new[] */
#define SYM_CASE_QSORT (SYM_SIZE_BASE + 4)  /* a qsort comparator, through libc */
#define SYM_CASE_SIGNAL (SYM_SIZE_BASE + 5) /* a signal handler */
#define SYM_CASE_PLUGIN (SYM_SIZE_BASE + 6) /* a dlopen'd library, dlclose'd later */

#define SYM_MAX_FRAMES 64

#endif
