/* SPDX-License-Identifier: MIT */
/* Short function names (see ana_names.h). */
#include "analysis/core/ana_names.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#define MAX_NEST 64

struct out {
    char *p;
    size_t size, len;
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->p[o->len++] = c;
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* "operator" as a word at s (name + i). */
static bool at_operator(const char *name, size_t i)
{
    return !strncmp(name + i, "operator", 8) && (i == 0 || !ident_char(name[i - 1])) &&
           !ident_char(name[i + 8]);
}

/* A Rust legacy hash at s: "::h" and 16 hex digits ending the name. */
static bool at_rust_hash(const char *s)
{
    if (strncmp(s, "::h", 3))
        return false;
    for (int i = 3; i < 19; i++) {
        if (!isxdigit((unsigned char)s[i]))
            return false;
    }
    return s[19] == 0;
}

char *ana_name_short(char *buf, size_t size, const char *name)
{
    struct out o = {.p = buf, .size = size};
    /* For each open '<': kept (a Rust "<T as Trait>" path) or elided. */
    bool keep[MAX_NEST];
    unsigned depth = 0, elided = 0; /* elided: open '<' not kept, outermost first */
    unsigned paren = 0;             /* open '(' of an elided argument list */

    if (!size)
        return buf;
    for (size_t i = 0; name[i]; i++) {
        char c = name[i];

        if (paren) {
            paren += c == '(';
            paren -= c == ')';
            if (!paren)
                put(&o, ')');
            continue;
        }
        if (!elided && at_operator(name, i)) {
            /* The operator's symbols are its name: "operator<<", "operator()". */
            for (size_t k = 0; k < 8; k++)
                put(&o, name[i + k]);
            i += 8;
            if (name[i] == '(' && name[i + 1] == ')') {
                put(&o, '(');
                put(&o, ')');
                i += 2;
            } else {
                while (name[i] && strchr("<>=!+-*/%^&|~[],", name[i]))
                    put(&o, name[i++]);
            }
            i--;
            continue;
        }
        if (!elided && at_rust_hash(name + i))
            break;
        if (c == '<') {
            /* At the start of a name or of a path segment, '<' opens a Rust
             * qualified path (<T as Trait>::f): keep its words. */
            bool path = i == 0 || (i >= 2 && name[i - 1] == ':' && name[i - 2] == ':');
            if (depth < MAX_NEST)
                keep[depth] = path && !elided;
            if (!(depth < MAX_NEST && keep[depth]))
                elided++;
            if (elided <= 1)
                put(&o, '<');
            depth++;
            continue;
        }
        if (c == '>' && depth) {
            depth--;
            bool kept = depth < MAX_NEST && keep[depth];
            if (!kept)
                elided--;
            if (!elided)
                put(&o, '>');
            continue;
        }
        if (elided)
            continue;
        if (c == '(' && strncmp(name + i, "(anonymous namespace)", 21)) {
            put(&o, '(');
            paren = 1;
            continue;
        }
        put(&o, c);
    }
    buf[o.len] = 0;
    return buf;
}
