/* SPDX-License-Identifier: MIT */
/* librec_attach_plug.so: dlopen'ed by rec_attach_target while a recorder
 * is attached; its malloc goes through its own GOT. */
#include <stdlib.h>

void *rec_attach_plug_alloc(size_t size);
void *rec_attach_plug_alloc(size_t size)
{
    return malloc(size);
}
