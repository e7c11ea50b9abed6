/* SPDX-License-Identifier: MIT */
/* libcol_plug.so: dlopen'ed by col_quirks; its constructor allocates 6543. */
#include <stdlib.h>

__attribute__((constructor)) static void col_plug_init(void)
{
    free(malloc(6543));
}
