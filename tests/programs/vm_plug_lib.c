/* SPDX-License-Identifier: MIT */
/* A library vm_every loads with dlopen: ld.so maps it. */
int vm_plug_value(void);
int vm_plug_value(void)
{
    return 42;
}
