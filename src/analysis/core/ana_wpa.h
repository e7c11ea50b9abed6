/* SPDX-License-Identifier: MIT */
/* Windows Performance Analyzer's classes of a time window [t0, t1] (both
 * ends included), decided once for everything that starts and ends: heap
 * blocks (ana_window, the HTML report's window cells) and commit lifetimes
 * (ana_vm_window, the HTML report's commit cells). Each is AIFI (started
 * inside, ended inside), AIFO (inside, outstanding at t1), AOFI (before
 * t0, ended inside) or AOFO (before, outstanding at t1); one that ended
 * before t0 or started after t1 is not in the window. Impacting Type:
 * Transient = AIFI, Impacting = AIFO and AOFI. Size: bytes started inside;
 * Impacting Size: sum(AIFO) - sum(AOFI). docs/architecture.md, Meanings;
 * docs/window.md, docs/vmem.md. Header only: the heap window classifies
 * in its step, per event. */
#ifndef ANA_WPA_H
#define ANA_WPA_H

#include <stdbool.h>
#include <stdint.h>

enum ana_wpa_class { ANA_AIFI = 0, ANA_AIFO, ANA_AOFI, ANA_AOFO, ANA_NR_WPA };

/* Not in the window (ended before t0, or started after t1). */
#define ANA_WPA_OUTSIDE (-1)

/* Counts and bytes per class. */
struct ana_wpa {
    uint64_t nr[ANA_NR_WPA];
    uint64_t bytes[ANA_NR_WPA];
};

/* The class in [t0, t1] of something that started at start_ns and ended
 * at end_ns (open: never, end_ns unused), or ANA_WPA_OUTSIDE. */
static inline int ana_wpa_class_of(uint64_t start_ns, uint64_t end_ns, bool open, uint64_t t0,
                                   uint64_t t1)
{
    bool ended_in = !open && end_ns <= t1;

    if (start_ns > t1 || (!open && end_ns < t0))
        return ANA_WPA_OUTSIDE;
    if (start_ns >= t0)
        return ended_in ? ANA_AIFI : ANA_AIFO;
    return ended_in ? ANA_AOFI : ANA_AOFO;
}

/* The class's name as WPA writes it ("AIFI"). */
static inline const char *ana_wpa_class_name(int cls)
{
    static const char *const names[ANA_NR_WPA] = {"AIFI", "AIFO", "AOFI", "AOFO"};

    return cls >= 0 && cls < ANA_NR_WPA ? names[cls] : "?";
}

/* Its Impacting Type: "Transient" (AIFI), "Impacting" (AIFO, AOFI), or
 * NULL (AOFO: nothing changed inside the window, no row). */
static inline const char *ana_wpa_type_name(int cls)
{
    return cls == ANA_AIFI ? "Transient" : cls == ANA_AIFO || cls == ANA_AOFI ? "Impacting" : NULL;
}

/* Transient and Impacting columns of a count. */
static inline uint64_t ana_wpa_transient_count(const struct ana_wpa *c)
{
    return c->nr[ANA_AIFI];
}
static inline uint64_t ana_wpa_impacting_count(const struct ana_wpa *c)
{
    return c->nr[ANA_AIFO] + c->nr[ANA_AOFI];
}
static inline int64_t ana_wpa_impacting_size(const struct ana_wpa *c)
{
    return (int64_t)c->bytes[ANA_AIFO] - (int64_t)c->bytes[ANA_AOFI];
}

#endif
