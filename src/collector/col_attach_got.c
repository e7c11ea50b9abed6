/* SPDX-License-Identifier: MIT */
/* `record -p` (the attach build): without LD_PRELOAD nothing binds to our
 * hooks by name, so each loaded module's GOT entries (JUMP_SLOT and
 * GLOB_DAT relocations) that name a function we export are pointed at
 * ours, and put back as they were on detach. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/col_elf_internal.h"
#include "collector/col_internal.h"

/* The relocation types that hold a symbol's address. */
#if defined(__x86_64__)
#define COL_R_TYPE ELF64_R_TYPE
#define COL_R_SYM ELF64_R_SYM
#define COL_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define COL_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define COL_R_TYPE ELF64_R_TYPE
#define COL_R_SYM ELF64_R_SYM
#define COL_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define COL_R_GLOB_DAT R_AARCH64_GLOB_DAT
#else
#define COL_R_TYPE ELF32_R_TYPE
#define COL_R_SYM ELF32_R_SYM
#define COL_R_JUMP_SLOT R_386_JMP_SLOT
#define COL_R_GLOB_DAT R_386_GLOB_DAT
#endif

/* One GOT entry we changed: where, what it held, what we wrote. */
struct col_got_slot {
    uintptr_t *slot;
    uintptr_t old, hook;
};

/* One function we export, by name. */
struct col_export {
    const char *name;
    uintptr_t addr;
};

static struct col_got_slot *col_slots;
static uint32_t col_nr_slots, col_cap_slots;
static struct col_export *col_exports;
static uint32_t col_nr_exports;
static uintptr_t col_self_lo, col_self_hi;
static _Atomic int col_got_lock;
static int col_got_closed; /* restored: a late dlopen's poll patches nothing */

/* The functions we export (our hooks), from our own .dynsym: the entry
 * points memscribe_attach_* and pthread_create (Syscall User Dispatch,
 * off when attached) excepted. */
static int col_exports_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_dyn d;
    uint32_t n;

    (void)size;
    (void)arg;
    if (!col_elf_is_self(info) || col_dyn_read(info, &d) != 0)
        return 0;
    n = col_dyn_nr_syms(&d);
    col_exports = col_sys_mmap(((size_t)n * sizeof(*col_exports) + 4095) & ~(size_t)4095);
    if (!col_exports)
        return 1;
    for (uint32_t i = 0; i < n; i++) {
        const ElfW(Sym) *s = &d.symtab[i];
        const char *name = d.strtab + s->st_name;
        int type = ELF32_ST_TYPE(s->st_info), bind = ELF32_ST_BIND(s->st_info);

        if (s->st_shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
            (bind != STB_GLOBAL && bind != STB_WEAK) || !strncmp(name, "memscribe_", 10) ||
            !strcmp(name, "pthread_create"))
            continue;
        col_exports[col_nr_exports].name = name;
        col_exports[col_nr_exports].addr = info->dlpi_addr + s->st_value;
        col_nr_exports++;
    }
    return 1;
}

static uintptr_t col_export_find(const char *name)
{
    for (uint32_t i = 0; i < col_nr_exports; i++)
        if (col_exports[i].name[0] == name[0] && !strcmp(col_exports[i].name, name))
            return col_exports[i].addr;
    return 0;
}

/* Write one GOT entry, lifting RELRO's read-only protection around it. */
static void col_got_write(uintptr_t *slot, uintptr_t value, const struct col_dyn *d)
{
    long size = getpagesize(); /* 4, 16 or 64 KiB on AArch64 */
    uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(size - 1);
    int relro = (uintptr_t)slot >= d->relro_lo && (uintptr_t)slot < d->relro_hi;

    if (relro)
        syscall(SYS_mprotect, page, size, (long)(PROT_READ | PROT_WRITE));
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    if (relro)
        syscall(SYS_mprotect, page, size, (long)PROT_READ);
}

static int col_slot_add(uintptr_t *slot, uintptr_t old, uintptr_t hook)
{
    if (col_nr_slots == col_cap_slots) {
        uint32_t cap = col_cap_slots ? 2 * col_cap_slots : 512;
        struct col_got_slot *v = col_sys_mmap(cap * sizeof(*v));

        if (!v)
            return -1;
        if (col_slots) {
            memcpy(v, col_slots, col_nr_slots * sizeof(*v));
            col_sys_munmap(col_slots, col_cap_slots * sizeof(*v));
        }
        col_slots = v;
        col_cap_slots = cap;
    }
    col_slots[col_nr_slots++] = (struct col_got_slot){slot, old, hook};
    return 0;
}

static void col_got_relocs(const struct dl_phdr_info *info, const struct col_dyn *d,
                           const col_rel_t *r, size_t size)
{
    for (size_t i = 0; r && i < size / sizeof(*r); i++) {
        unsigned long type = COL_R_TYPE(r[i].r_info);
        uintptr_t *slot, hook, cur;

        if (type != COL_R_JUMP_SLOT && type != COL_R_GLOB_DAT)
            continue;
        hook = col_export_find(d->strtab + d->symtab[COL_R_SYM(r[i].r_info)].st_name);
        if (!hook)
            continue;
        slot = (uintptr_t *)(info->dlpi_addr + r[i].r_offset);
        cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        /* Already ours (a module seen before), or pointing into us. */
        if (cur == hook || (cur >= col_self_lo && cur < col_self_hi))
            continue;
        if (col_slot_add(slot, cur, hook) != 0)
            return;
        col_got_write(slot, hook, d);
    }
}

/* The loader and the vDSO are left alone: ld.so reaches malloc through
 * pointers of its own, and neither is the program's. */
static int col_module_skipped(const struct dl_phdr_info *info)
{
    const char *name = info->dlpi_name ? info->dlpi_name : "";

    return col_elf_is_self(info) || strstr(name, "/ld-linux") || strstr(name, "linux-vdso") ||
           strstr(name, "linux-gate");
}

static int col_patch_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_dyn d;

    (void)size;
    (void)arg;
    if (col_module_skipped(info) || col_dyn_read(info, &d) != 0)
        return 0;
    col_got_relocs(info, &d, d.jmprel, d.jmprel_size);
    col_got_relocs(info, &d, d.rela, d.rela_size);
    return 0;
}

static void col_got_lock_take(void)
{
    while (atomic_exchange_explicit(&col_got_lock, 1, memory_order_acquire))
        sched_yield();
}

static void col_got_lock_drop(void)
{
    atomic_store_explicit(&col_got_lock, 0, memory_order_release);
}

int col_attach_patch(int begin)
{
    int rc = 0;

    col_got_lock_take();
    if (begin)
        col_got_closed = 0;
    if (col_got_closed) {
        col_got_lock_drop();
        return 0;
    }
    if (!col_exports) {
        if (col_self_range(&col_self_lo, &col_self_hi) != 0)
            rc = -1;
        else
            col_dl_iterate_phdr(col_exports_one, NULL);
        if (!col_exports || !col_nr_exports)
            rc = -1;
    }
    if (rc == 0)
        col_dl_iterate_phdr(col_patch_one, NULL);
    col_got_lock_drop();
    return rc;
}

void *col_attach_dlsym(void *handle, const char *name)
{
    static void *(*real)(void *, const char *);
    static unsigned long long seen_adds;
    unsigned long long adds;

    if (COL_UNLIKELY(!real)) /* libc's: we are in no global scope */
        *(void **)&real = dlsym(RTLD_DEFAULT, "dlsym");
    adds = col_elf_adds();
    /* Off (detached, or a sandbox that allows us no system call): no
     * GOT is patched, its mprotect could be the program's death. */
    if (adds != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) && col_state != COL_OFF) {
        __atomic_store_n(&seen_adds, adds, __ATOMIC_RELAXED);
        col_attach_patch(0);
    }
    return real(handle, name);
}

/* Put back the entries of a module still loaded (a module dlclosed
 * meanwhile took its GOT with it), unless the program changed them. */
static int col_restore_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct col_dyn d;
    uint32_t *nr_restored = arg;

    (void)size;
    if (col_module_skipped(info) || col_dyn_read(info, &d) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        for (uint32_t k = 0; k < col_nr_slots; k++) {
            struct col_got_slot *s = &col_slots[k];

            if (!s->slot || (uintptr_t)s->slot < lo || (uintptr_t)s->slot >= hi)
                continue;
            if (__atomic_load_n(s->slot, __ATOMIC_ACQUIRE) == s->hook) {
                col_got_write(s->slot, s->old, &d);
                ++*nr_restored;
            }
            s->slot = NULL;
        }
    }
    return 0;
}

uint32_t col_attach_restore(void)
{
    uint32_t nr_restored = 0;

    col_got_lock_take();
    col_dl_iterate_phdr(col_restore_one, &nr_restored);
    col_nr_slots = 0;
    col_got_closed = 1;
    col_got_lock_drop();
    return nr_restored;
}
