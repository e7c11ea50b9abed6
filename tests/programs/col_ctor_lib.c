/* SPDX-License-Identifier: MIT */
/* libcol_ctor.so: allocates 4321 bytes in its constructor, which the
 * loader runs before the program's main and before most of its own. */
#include <stdlib.h>

static void *kept;

__attribute__((constructor)) static void col_ctor_lib_init(void)
{
    kept = malloc(4321);
}

void col_ctor_touch(void);
void col_ctor_touch(void)
{
}
