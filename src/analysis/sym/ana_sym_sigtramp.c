/* SPDX-License-Identifier: MIT */
/* Recognising a signal trampoline by its code. A handler "returns" into
 * the trampoline, so its recorded address is the trampoline's first byte;
 * glibc names it __restore_rt, but only in .symtab, which a stripped libc
 * without its debug file lacks. The instructions are the same everywhere:
 * on x86-64, mov $15 (rt_sigreturn), %rax; syscall; on i386 the int $0x80
 * forms of rt_sigreturn and sigreturn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sym/ana_sym_internal.h"

struct pattern {
    uint8_t len;
    uint8_t bytes[9];
};

static const struct pattern sigreturns[] = {
    {9, {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}}, /* x86-64: mov $15,%rax; syscall */
    {7, {0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80}}, /* i386 rt: mov $173,%eax; int $0x80 */
    {8,
     {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd,
      0x80}}, /* i386: pop %eax; mov $119,%eax; int $0x80 */
};

int ana_sym_code_load(struct ana_sym_code *c, Elf *elf)
{
    Elf_Scn *scn = NULL;

    memset(c, 0, sizeof(*c));
    while (elf && (scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC))
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size == 0)
            continue;
        struct ana_sym_code_range *v = realloc(c->v, (c->nr + 1) * sizeof(*v));
        if (!v)
            return -ENOMEM;
        c->v = v;
        c->v[c->nr++] =
            (struct ana_sym_code_range){.vaddr = sh.sh_addr, .size = d->d_size, .data = d->d_buf};
    }
    return 0;
}

bool ana_sym_code_is_sigreturn(const struct ana_sym_code *c, uint64_t vaddr)
{
    for (size_t i = 0; i < c->nr; i++) {
        const struct ana_sym_code_range *r = &c->v[i];

        if (vaddr < r->vaddr || vaddr - r->vaddr >= r->size)
            continue;
        uint64_t left = r->size - (vaddr - r->vaddr);
        for (size_t k = 0; k < sizeof(sigreturns) / sizeof(sigreturns[0]); k++)
            if (left >= sigreturns[k].len &&
                !memcmp(r->data + (vaddr - r->vaddr), sigreturns[k].bytes, sigreturns[k].len))
                return true;
        return false;
    }
    return false;
}

void ana_sym_code_free(struct ana_sym_code *c)
{
    free(c->v);
    memset(c, 0, sizeof(*c));
}
