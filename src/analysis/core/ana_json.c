/* SPDX-License-Identifier: MIT */
/* Streaming JSON writer: exact integers, escaped strings, commas by state. */
#include "analysis/core/ana_json.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "analysis/core/ana_utf8.h"

void ana_json_init(struct ana_json *j, FILE *f, bool pretty)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    j->pretty = pretty;
}

static bool has_members(const struct ana_json *j)
{
    return j->nonempty[j->depth / 64] >> (j->depth % 64) & 1;
}

static void set_members(struct ana_json *j, bool on)
{
    uint64_t bit = (uint64_t)1 << (j->depth % 64);

    if (on)
        j->nonempty[j->depth / 64] |= bit;
    else
        j->nonempty[j->depth / 64] &= ~bit;
}

static void newline(struct ana_json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Called before every value or key: the comma and the indentation. */
static void before_item(struct ana_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0)
        return;
    if (has_members(j))
        fputc(',', j->f);
    set_members(j, true);
    newline(j);
}

static void open_container(struct ana_json *j, char c)
{
    before_item(j);
    if (j->depth >= ANA_JSON_MAX_DEPTH) {
        j->err = j->err ? j->err : -EINVAL;
        return;
    }
    fputc(c, j->f);
    j->depth++;
    set_members(j, false);
}

static void close_container(struct ana_json *j, char c)
{
    if (j->depth == 0 || j->after_key) {
        j->err = j->err ? j->err : -EINVAL;
        return;
    }
    bool had = has_members(j);
    j->depth--;
    if (had)
        newline(j);
    fputc(c, j->f);
}

void ana_json_begin_object(struct ana_json *j)
{
    open_container(j, '{');
}

void ana_json_end_object(struct ana_json *j)
{
    close_container(j, '}');
}

void ana_json_begin_array(struct ana_json *j)
{
    open_container(j, '[');
}

void ana_json_end_array(struct ana_json *j)
{
    close_container(j, ']');
}

void ana_json_escape(const char *s, size_t len, ana_json_put_fn put, void *arg)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0; /* the first byte not yet put */

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        size_t nr_esc, used = 1;

        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            nr_esc = 2;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
            nr_esc = 2;
        } else if (c >= 0x20 && c < 0x7f) {
            continue;
        } else {
            uint32_t cp = c;
            size_t n = c < 0x80 ? 1 : ana_utf8_decode((const unsigned char *)s + i, len - i, &cp);

            if (!n) { /* not UTF-8: the byte as text, as ana_text_escape() shows it */
                memcpy(esc, "\\\\x", 3);
                esc[3] = hex[c >> 4];
                esc[4] = hex[c & 15];
                nr_esc = 5;
            } else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) { /* C0, DEL, C1 */
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[cp >> 4];
                esc[5] = hex[cp & 15];
                nr_esc = 6;
                used = n;
            } else {
                i += n - 1; /* UTF-8 passes through */
                continue;
            }
        }
        if (i > run)
            put(arg, s + run, i - run);
        put(arg, esc, nr_esc);
        i += used - 1;
        run = i + 1;
    }
    if (len > run)
        put(arg, s + run, len - run);
}

static void put_file(void *f, const char *s, size_t len)
{
    fwrite(s, 1, len, f);
}

static void put_string(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    ana_json_escape(s, len, put_file, f);
    fputc('"', f);
}

void ana_json_key(struct ana_json *j, const char *key)
{
    before_item(j);
    put_string(j->f, key, strlen(key));
    fputs(j->pretty ? ": " : ":", j->f);
    j->after_key = true;
}

void ana_json_u64(struct ana_json *j, uint64_t v)
{
    before_item(j);
    fprintf(j->f, "%" PRIu64, v);
}

void ana_json_i64(struct ana_json *j, int64_t v)
{
    before_item(j);
    fprintf(j->f, "%" PRId64, v);
}

void ana_json_bool(struct ana_json *j, bool v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->f);
}

void ana_json_null(struct ana_json *j)
{
    before_item(j);
    fputs("null", j->f);
}

void ana_json_strn(struct ana_json *j, const char *s, size_t len)
{
    before_item(j);
    if (!s)
        fputs("null", j->f);
    else
        put_string(j->f, s, len);
}

void ana_json_str(struct ana_json *j, const char *s)
{
    ana_json_strn(j, s, s ? strlen(s) : 0);
}

void ana_json_kv_u64(struct ana_json *j, const char *key, uint64_t v)
{
    ana_json_key(j, key);
    ana_json_u64(j, v);
}

void ana_json_kv_i64(struct ana_json *j, const char *key, int64_t v)
{
    ana_json_key(j, key);
    ana_json_i64(j, v);
}

void ana_json_kv_str(struct ana_json *j, const char *key, const char *s)
{
    ana_json_key(j, key);
    ana_json_str(j, s);
}

void ana_json_kv_bool(struct ana_json *j, const char *key, bool v)
{
    ana_json_key(j, key);
    ana_json_bool(j, v);
}

void ana_json_kv_u64_or_null(struct ana_json *j, const char *key, bool has, uint64_t v)
{
    ana_json_key(j, key);
    if (has)
        ana_json_u64(j, v);
    else
        ana_json_null(j);
}

int ana_json_finish(struct ana_json *j)
{
    if (!j->err && (j->depth != 0 || j->after_key))
        j->err = -EINVAL;
    fputc('\n', j->f);
    if (!j->err && ferror(j->f))
        j->err = -EIO;
    return j->err;
}
