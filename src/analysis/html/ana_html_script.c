/* SPDX-License-Identifier: MIT */
/* A FILE that makes JSON safe inside an HTML <script> element.
 *
 * In JSON, '<', '>' and '&' can only occur inside strings, where "\u003c"
 * means the same; written that way no "</script>" or "<!--" from a trace
 * string can end or change the script element. U+2028 and U+2029 become
 * escapes too (older JavaScript parsers treat them as line breaks). So
 * the core's JSON writer can write the report's data unchanged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/html/ana_html_internal.h"

struct script_cookie {
    FILE *out;
    unsigned char pend[2]; /* a possible start of E2 80 A8/A9 */
    int nr_pend;
};

static void put_byte(struct script_cookie *c, unsigned char b)
{
    switch (b) {
    case '<':
        fputs("\\u003c", c->out);
        break;
    case '>':
        fputs("\\u003e", c->out);
        break;
    case '&':
        fputs("\\u0026", c->out);
        break;
    default:
        fputc(b, c->out);
    }
}

static void flush_pending(struct script_cookie *c)
{
    for (int i = 0; i < c->nr_pend; i++)
        put_byte(c, c->pend[i]);
    c->nr_pend = 0;
}

static ssize_t script_write(void *cookie, const char *buf, size_t size)
{
    struct script_cookie *c = cookie;

    for (size_t i = 0; i < size; i++) {
        unsigned char b = (unsigned char)buf[i];

        if (c->nr_pend == 0 && b == 0xe2) {
            c->pend[c->nr_pend++] = b;
        } else if (c->nr_pend == 1 && b == 0x80) {
            c->pend[c->nr_pend++] = b;
        } else if (c->nr_pend == 2 && (b == 0xa8 || b == 0xa9)) {
            fputs(b == 0xa8 ? "\\u2028" : "\\u2029", c->out);
            c->nr_pend = 0;
        } else {
            flush_pending(c);
            if (b == 0xe2)
                c->pend[c->nr_pend++] = b;
            else
                put_byte(c, b);
        }
    }
    if (ferror(c->out)) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)size;
}

static int script_close(void *cookie)
{
    struct script_cookie *c = cookie;
    int bad;

    flush_pending(c);
    bad = ferror(c->out);
    free(c);
    return bad ? -1 : 0;
}

FILE *ana_html_script_open(FILE *out)
{
    struct script_cookie *c = calloc(1, sizeof(*c));
    cookie_io_functions_t io = {.write = script_write, .close = script_close};
    FILE *f;

    if (!c)
        return NULL;
    c->out = out;
    f = fopencookie(c, "w", io);
    if (!f)
        free(c);
    return f;
}
