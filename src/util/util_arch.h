/* SPDX-License-Identifier: MIT */
/* What differs between the CPUs memscribe runs on (x86-64, its i386
 * collector, AArch64), in one place: a cheap tick counter and the pause
 * of a spin loop. Header-only: the collector includes it too. */
#ifndef UTIL_ARCH_H
#define UTIL_ARCH_H

#include <stdint.h>

/* A tick of the CPU's own counter: the TSC on x86, the virtual counter
 * (CNTVCT_EL0, at CNTFRQ_EL0 Hz) on AArch64. Only a clock the recorder
 * checked may be used as time (rec_clock.c). */
static inline uint64_t ms_arch_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;

    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
#error "memscribe runs on x86-64, i386 and AArch64"
#endif
}

/* One round of a spin-wait: lets the other hyperthread (x86) or core
 * (AArch64's yield hint) run. */
static inline void ms_arch_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
#error "memscribe runs on x86-64, i386 and AArch64"
#endif
}

#endif
