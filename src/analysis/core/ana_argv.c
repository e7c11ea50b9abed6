/* SPDX-License-Identifier: MIT */
/* argv shortened in the middle (see ana_argv.h). */
#include "analysis/core/ana_argv.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_text.h"

/* What a word is to the shortening: the order in which words go. */
enum keep { KEEP_ALWAYS, KEEP_OPTION_OF_FILE, KEEP_OTHER };

struct word {
    char *text; /* escaped */
    size_t len;
    enum keep keep;
    bool dropped;
};

/* A file's name: not an option, and a path or a name with an extension
 * that has a letter ("main.c", "out.o"; not "1.5"). */
static bool is_file(const char *w)
{
    if (w[0] == '-' || !w[0])
        return false;
    if (strchr(w, '/'))
        return true;
    const char *dot = strrchr(w, '.');
    if (!dot || dot == w || !dot[1] || strlen(dot + 1) > 8)
        return false;
    bool letter = false;
    for (const char *p = dot + 1; *p; p++) {
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
        letter = letter || isalpha((unsigned char)*p);
    }
    return letter;
}

/* The line's length: kept words, and one "..." for each run dropped. */
static size_t line_len(const struct word *v, size_t n)
{
    size_t len = 0, parts = 0;

    for (size_t i = 0; i < n; i++) {
        if (v[i].dropped && i > 0 && v[i - 1].dropped)
            continue;
        len += v[i].dropped ? 3 : v[i].len;
        parts++;
    }
    return len + (parts ? parts - 1 : 0);
}

/* Drop the words of kind k from the middle out until the line fits. */
static void drop(struct word *v, size_t n, enum keep k, size_t width)
{
    size_t mid = n / 2;

    for (size_t d = 0; d <= n && line_len(v, n) > width; d++)
        for (int side = 0; side < 2 && line_len(v, n) > width; side++) {
            if (side == 0 ? mid + d >= n : d > mid || d == 0)
                continue;
            size_t i = side == 0 ? mid + d : mid - d;
            if (i > 0 && v[i].keep == k)
                v[i].dropped = true;
        }
}

/* A file's last part, in place. */
static void base_name(struct word *w)
{
    const char *slash = strrchr(w->text, '/');

    if (slash && slash[1]) {
        size_t len = strlen(slash + 1);
        memmove(w->text, slash + 1, len + 1);
        w->len = len;
    }
}

size_t ana_argv_short(char *out, size_t size, const char *argv, size_t argv_len, size_t width)
{
    struct word *v;
    size_t n = 0, at = 0;

    if (argv_len && !argv[argv_len - 1])
        argv_len--;
    for (size_t i = 0; i < argv_len; i++)
        n += !argv[i];
    n++;
    if (!argv_len || !(v = calloc(n, sizeof(*v)))) {
        size_t len = ana_text_escape_words(out, size, argv, argv_len);
        return len < size ? len : strlen(out);
    }
    n = 0;
    for (size_t i = 0, end; i <= argv_len; i = end + 1) {
        for (end = i; end < argv_len && argv[end]; end++)
            ;
        size_t need = ana_text_escape(NULL, 0, argv + i, end - i) + 1;
        if (!(v[n].text = malloc(need)))
            break;
        v[n].len = ana_text_escape(v[n].text, need, argv + i, end - i);
        v[n].keep = n == 0 || is_file(v[n].text) ? KEEP_ALWAYS : KEEP_OTHER;
        n++;
    }
    for (size_t i = 1; i + 1 < n; i++)
        if (v[i].keep == KEEP_OTHER && v[i].text[0] == '-' && v[i].len == 2 &&
            v[i + 1].keep == KEEP_ALWAYS)
            v[i].keep = KEEP_OPTION_OF_FILE;
    drop(v, n, KEEP_OTHER, width);
    drop(v, n, KEEP_OPTION_OF_FILE, width);
    for (size_t i = 0; i < n && line_len(v, n) > width; i++)
        if (v[i].keep == KEEP_ALWAYS)
            base_name(&v[i]);
    /* Join, cut at 2 x width (and at size) with "...". */
    size_t limit = 2 * width < size - 1 ? 2 * width : size - 1;
    bool cut = false;
    for (size_t i = 0; i < n && !cut; i++) {
        if (v[i].dropped && i > 0 && v[i - 1].dropped)
            continue;
        const char *w = v[i].dropped ? "..." : v[i].text;
        size_t len = v[i].dropped ? 3 : v[i].len, sep = at ? 1 : 0;
        if (at + sep + len > limit) {
            len = limit > at + sep + 3 ? limit - at - sep - 3 : 0;
            /* not inside a character: UTF-8 continuation bytes */
            while (len && ((unsigned char)w[len] & 0xc0) == 0x80)
                len--;
            sep = len || at + sep + 3 <= size - 1 ? sep : 0; /* "... a.c ..." */
            cut = true;
        }
        if (sep)
            out[at++] = ' ';
        /* at + len + 3 <= limit < size whenever len > 0 (above) */
        memcpy(out + at, w, len);
        at += len;
        if (cut && at + 3 <= size - 1) {
            memcpy(out + at, "...", 3);
            at += 3;
        }
    }
    out[at] = '\0';
    for (size_t i = 0; i < n; i++)
        free(v[i].text);
    free(v);
    return at;
}
