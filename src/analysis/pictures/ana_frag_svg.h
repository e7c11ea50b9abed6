/* SPDX-License-Identifier: MIT */
/* The address-space map of one image's mappings (ana_vm, ana_frag.h) as
 * SVG: memscribe frag --svg, and inline in the HTML report. */
#ifndef ANA_FRAG_SVG_H
#define ANA_FRAG_SVG_H

#include <stdio.h>

#include "analysis/vm/ana_vm.h"

/* The address-space map: mappings coloured by state, holes blank, the
 * largest hole marked. inline_svg: for HTML (no XML prolog, no <style>:
 * the page puts ana_frag_css in one). Returns 0 or -errno (write error). */
int ana_frag_svg(FILE *out, const struct ana_vm_image *im, const char *title, int inline_svg);
extern const char ana_frag_css[];

#endif
