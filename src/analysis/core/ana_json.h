/* SPDX-License-Identifier: MIT */
/* A streaming JSON writer. Integers are printed exactly from uint64_t and
 * int64_t (never through a double: 2^53+1 must stay 2^53+1), strings are
 * escaped per RFC 8259, and commas are placed by the writer. Memory is
 * constant: nothing is buffered beyond the FILE. */
#ifndef ANA_JSON_H
#define ANA_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deep enough for a call tree of the deepest stacks record keeps (256
 * frames, two levels each: a node and its children) and what wraps it. */
#define ANA_JSON_MAX_DEPTH 1024

struct ana_json {
    FILE *f;
    bool pretty;
    int depth;
    int err;        /* first error, sticky (-EIO, -EINVAL) */
    bool after_key; /* a key was written, its value is next */
    /* Bit d: the container at depth d has members. */
    uint64_t nonempty[ANA_JSON_MAX_DEPTH / 64 + 1];
};

/* Start writing one JSON value to f; pretty puts one member per line. */
void ana_json_init(struct ana_json *j, FILE *f, bool pretty);

void ana_json_begin_object(struct ana_json *j);
void ana_json_end_object(struct ana_json *j);
void ana_json_begin_array(struct ana_json *j);
void ana_json_end_array(struct ana_json *j);
/* An object member's name; the next value call writes its value. */
void ana_json_key(struct ana_json *j, const char *key);

void ana_json_u64(struct ana_json *j, uint64_t v);
void ana_json_i64(struct ana_json *j, int64_t v);
void ana_json_bool(struct ana_json *j, bool v);
void ana_json_null(struct ana_json *j);
/* s may be NULL (written as null). UTF-8 passes through; control
 * characters (C0, DEL, C1) become \uXXXX escapes, and a byte that is not
 * UTF-8 the text \xHH (as ana_text_escape() writes it): the document is
 * always valid UTF-8. */
void ana_json_str(struct ana_json *j, const char *s);
void ana_json_strn(struct ana_json *j, const char *s, size_t len);

/* The one JSON string escaper (every JSON memscribe writes goes through
 * it): the contents of s, without the quotes, as ana_json_str() writes
 * them, passed to put in pieces. */
typedef void (*ana_json_put_fn)(void *arg, const char *s, size_t len);
void ana_json_escape(const char *s, size_t len, ana_json_put_fn put, void *arg);

/* Shorthands for a member: key then value. */
void ana_json_kv_u64(struct ana_json *j, const char *key, uint64_t v);
void ana_json_kv_i64(struct ana_json *j, const char *key, int64_t v);
void ana_json_kv_str(struct ana_json *j, const char *key, const char *s);
void ana_json_kv_bool(struct ana_json *j, const char *key, bool v);
/* v if has, else null (a figure that is not there: no RSS recorded, a
 * sampled trace's temporary allocations). */
void ana_json_kv_u64_or_null(struct ana_json *j, const char *key, bool has, uint64_t v);

/* End the document (a newline) and report: 0, -EINVAL if containers are
 * still open or were closed wrongly, -EIO if the FILE failed. */
int ana_json_finish(struct ana_json *j);

#endif
