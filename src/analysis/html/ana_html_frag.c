/* SPDX-License-Identifier: MIT */
/* The HTML report's address-space section (ana_html_page.c's
 * <!--@addrspace@--> marker): the map of memscribe frag, inline, of the
 * address space the timeline's pass replayed. */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/html/ana_html_internal.h"
#include "analysis/pictures/ana_frag_svg.h"
#include "analysis/vm/ana_vm.h"
#include "memscribe/trace.h"

int ana_html_frag(struct fmt_reader *r, const struct ana_vm *vm, FILE *out)
{
    uint32_t best = UINT32_MAX;
    char title[128];
    int rc;

    for (uint32_t i = 0; i < vm->nr_images; i++)
        if (vm->images[i].nr && (best == UINT32_MAX || vm->images[i].nr > vm->images[best].nr))
            best = i;
    if (best == UINT32_MAX) {
        fputs("<p>No mappings were recorded.</p>\n", out);
        return 0;
    }
    snprintf(title, sizeof(title), "Address space of pid %" PRIu32 " at the end of the trace",
             fmt_reader_image(r, best)->pid);
    fprintf(out, "<style>%s</style>\n", ana_frag_css);
    rc = ana_frag_svg(out, &vm->images[best], title, 1);
    fputs("<p>Holes are blank; the largest free gap is outlined. <code>memscribe frag</code> "
          "lists the holes, the gap over time and the misaligned mappings.</p>\n",
          out);
    return rc;
}
