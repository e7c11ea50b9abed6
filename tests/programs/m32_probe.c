/* SPDX-License-Identifier: MIT */
/* Built -m32: does this machine run 32-bit x86 programs at all? A kernel
 * without IA-32 emulation, or a hypervisor without 32-bit user mode (seen:
 * a PVM guest whose kernel has CONFIG_IA32_EMULATION=y), refuses their
 * exec with ENOEXEC. The 32-bit tests ask it first (tests/e2e/lib.sh,
 * m32_runs) and are skipped, saying so, where it cannot run. */
int main(void)
{
    return 0;
}
