/* SPDX-License-Identifier: MIT */
/* A result table written three ways: aligned text for people, CSV and JSON
 * for programs. Numbers stay exact integers in every form. A list cell (a
 * stack's frames) is a JSON array, and is joined with a separator in text
 * and CSV. */
#ifndef ANA_TABLE_H
#define ANA_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/core/ana_json.h"

enum ana_cell_type {
    ANA_CELL_STR = 0,
    ANA_CELL_U64,
    ANA_CELL_I64,
    ANA_CELL_LIST,
    /* Or'd with U64 or I64: a count or bytes that a sampled trace
     * estimates (ana_table_write_text_marked). */
    ANA_CELL_EST = 0x10,
    /* Or'd with U64: a time in ns from the trace's start, written in
     * seconds in text ("1.250000s", as every command prints times) and in
     * ns in CSV and JSON. */
    ANA_CELL_TIME = 0x20,
    /* Or'd with LIST: a stack's frames (leaf first), whose JSON row also
     * has "interest", the index of its frame of interest in the list
     * (ana_interest.h; ana_table_set_stack). One such column a table. */
    ANA_CELL_INTEREST = 0x40,
};
/* The kind of a column's type: STR, U64, I64 or LIST. */
#define ANA_CELL_KIND(type) ((type)&0x0f)

struct ana_column {
    const char *title; /* text header */
    const char *key;   /* JSON member and CSV header */
    enum ana_cell_type type;
};

struct ana_table;

/* cols must outlive the table. Returns 0 or -ENOMEM. */
int ana_table_create(struct ana_table **out, const struct ana_column *cols, unsigned nr_cols);
void ana_table_destroy(struct ana_table *t);

/* Append an empty row; the setters below fill the latest row. Returns 0 or
 * -ENOMEM. Strings are copied. */
int ana_table_add_row(struct ana_table *t);
int ana_table_set_str(struct ana_table *t, unsigned col, const char *s);
int ana_table_set_u64(struct ana_table *t, unsigned col, uint64_t v);
int ana_table_set_i64(struct ana_table *t, unsigned col, int64_t v);
int ana_table_set_list(struct ana_table *t, unsigned col, const char *const *items, unsigned nr);
/* A list cell of a stack column (ANA_CELL_INTEREST) and the index of its
 * frame of interest among items. */
int ana_table_set_stack(struct ana_table *t, unsigned col, const char *const *items, unsigned nr,
                        unsigned interest);
/* The standard error of the latest row's estimate in col (a sampled
 * trace's, ana_site_se.h; an ANA_CELL_EST column), in the cell's unit:
 * "±N%" of the value after it in text (nothing after a 0), and a member or column of its own
 * named as the column's key with "_se" after it (rounded to a whole
 * number) in JSON and CSV, in every row once a row has one (null, or
 * empty in CSV, where a row has none). A table with none writes as
 * before. */
int ana_table_set_se(struct ana_table *t, unsigned col, double se);
/* A cell with no value (a figure that would mislead): empty in text and
 * CSV, null in JSON. */
int ana_table_set_none(struct ana_table *t, unsigned col);
unsigned ana_table_nr_rows(const struct ana_table *t);

/* Text: a header line, then one line per row, columns aligned (numbers to
 * the right); list cells joined with sep. indent is put before each line. */
int ana_table_write_text(const struct ana_table *t, FILE *f, const char *indent, const char *sep);
/* The same with mark before the numbers of the estimate columns (a sampled
 * trace: ANA_SAMPLE_MARK, ana_sample.h); "" marks nothing. */
int ana_table_write_text_marked(const struct ana_table *t, FILE *f, const char *indent,
                                const char *sep, const char *mark);
/* CSV (RFC 4180) with a header line; list cells joined with ';'. */
int ana_table_write_csv(const struct ana_table *t, FILE *f, bool header);
/* A JSON array of objects, one per row, keyed by column key. */
void ana_table_write_json(const struct ana_table *t, struct ana_json *j);

#endif
