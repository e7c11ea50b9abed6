/* SPDX-License-Identifier: MIT */
/* Inline hooks on Windows: a function's first bytes replaced by a jump to a
 * detour, the moved bytes kept in a trampoline that calls the original. */
#ifndef WIN_HOOK_H
#define WIN_HOOK_H

/* Hook target so that calls go to detour; *original receives the trampoline
 * (call it to run the original function) before the patch goes live.
 * Trampolines (and on x86-64 a relay jumping to detour) live in pages
 * allocated within +-2 GiB of target. Not thread-safe against other
 * installs; safe against threads calling target (docs/windows.md, Hooks).
 * Returns 0, or -errno: -EINVAL/-ENODATA (prologue the decoder refuses),
 * -ENOMEM (no free page in reach), -EACCES (VirtualProtect failed). */
int win_hook_install(void *target, void *detour, void **original);

/* Is base one of the pages the hook engine allocated for trampolines? */
int win_hook_is_pool(const void *base);

#endif
