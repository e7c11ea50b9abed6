/* SPDX-License-Identifier: MIT */
/* The HTML report's address-space section (ana_html_page.c's
 * <!--@addrspace@--> marker): the map of memscribe frag, inline. */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/core/ana_scan.h"
#include "analysis/pictures/ana_svg.h"
#include "analysis/vm/ana_frag.h"
#include "analysis/vm/ana_vm.h"
#include "memscribe/trace.h"

static int on_event(void *arg, const struct fmt_event *ev)
{
    return ana_vm_event(arg, ev);
}

int ana_frag_html(struct fmt_reader *r, FILE *out)
{
    struct ana_scan_options o;
    struct ana_vm vm;
    uint32_t best = UINT32_MAX;
    char title[128];
    int rc;

    ana_vm_init(&vm, NULL, NULL);
    ana_scan_options_init(&o);
    if ((rc = ana_scan(r, &o, on_event, &vm)))
        goto out;
    for (uint32_t i = 0; i < vm.nr_images; i++)
        if (vm.images[i].nr && (best == UINT32_MAX || vm.images[i].nr > vm.images[best].nr))
            best = i;
    if (best == UINT32_MAX) {
        fputs("<p>No mappings were recorded.</p>\n", out);
        goto out;
    }
    snprintf(title, sizeof(title), "Address space of pid %" PRIu32 " at the end of the trace",
             fmt_reader_image(r, best)->pid);
    fprintf(out, "<style>%s</style>\n", ana_frag_css);
    rc = ana_frag_svg(out, &vm.images[best], title, 1);
    fputs("<p>Holes are blank; the largest free gap is outlined. <code>memscribe frag</code> "
          "lists the holes, the gap over time and the misaligned mappings.</p>\n",
          out);
out:
    ana_vm_release(&vm);
    return rc;
}
