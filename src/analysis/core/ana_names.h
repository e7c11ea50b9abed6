/* SPDX-License-Identifier: MIT */
/* Short function names for people: a demangled C++ or Rust name with its
 * template (generic) arguments and its argument list elided, as heaptrack's
 * GUI shows them: "std::vector<char*, std::allocator<char*> >::push_back(
 * char* const&)" is "std::vector<>::push_back()". Operators keep their
 * symbols ("operator<<()"), "(anonymous namespace)" stays, a Rust path's
 * "<T as Trait>" keeps its words (with T's own arguments elided) and a
 * Rust legacy hash ("::h0123456789abcdef") goes. --full-names keeps all. */
#ifndef ANA_NAMES_H
#define ANA_NAMES_H

#include <stddef.h>

/* Write the short form of name into out (size bytes, NUL-terminated,
 * truncated if need be). Returns out. */
char *ana_name_short(char *out, size_t size, const char *name);

#endif
