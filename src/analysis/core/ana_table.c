/* SPDX-License-Identifier: MIT */
/* Result tables as text, CSV and JSON (see ana_table.h). */
#include "analysis/core/ana_table.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/ana_time.h"

struct cell {
    union { /* one number: U64 (a stack's interest), or I64 */
        uint64_t u;
        int64_t i;
    };
    char *s;      /* STR, and the joined LIST for text output */
    char **items; /* LIST */
    unsigned nr_items;
    int none;   /* no value (ana_table_set_none) */
    int has_se; /* se is set (ana_table_set_se) */
    double se;
};

struct ana_table {
    const struct ana_column *cols;
    unsigned nr_cols;
    struct cell *cells; /* nr_rows * nr_cols */
    unsigned nr_rows, cap_rows;
    bool *col_se; /* col_se[c]: a cell of column c has a standard error */
};

int ana_table_create(struct ana_table **out, const struct ana_column *cols, unsigned nr_cols)
{
    struct ana_table *t = calloc(1, sizeof(*t));

    if (!t)
        return -ENOMEM;
    t->cols = cols;
    t->nr_cols = nr_cols;
    t->col_se = calloc(nr_cols ? nr_cols : 1, sizeof(*t->col_se));
    if (!t->col_se) {
        free(t);
        return -ENOMEM;
    }
    *out = t;
    return 0;
}

void ana_table_destroy(struct ana_table *t)
{
    if (!t)
        return;
    for (size_t k = 0; k < (size_t)t->nr_rows * t->nr_cols; k++) {
        free(t->cells[k].s);
        for (unsigned i = 0; i < t->cells[k].nr_items; i++)
            free(t->cells[k].items[i]);
        free(t->cells[k].items);
    }
    free(t->cells);
    free(t->col_se);
    free(t);
}

int ana_table_add_row(struct ana_table *t)
{
    if (t->nr_rows == t->cap_rows) {
        unsigned n = t->cap_rows ? t->cap_rows * 2 : 32;
        struct cell *c = realloc(t->cells, (size_t)n * t->nr_cols * sizeof(*c));
        if (!c)
            return -ENOMEM;
        t->cells = c;
        t->cap_rows = n;
    }
    memset(&t->cells[(size_t)t->nr_rows * t->nr_cols], 0, t->nr_cols * sizeof(struct cell));
    t->nr_rows++;
    return 0;
}

static struct cell *cur(struct ana_table *t, unsigned col)
{
    if (!t->nr_rows || col >= t->nr_cols)
        return NULL;
    return &t->cells[(size_t)(t->nr_rows - 1) * t->nr_cols + col];
}

int ana_table_set_str(struct ana_table *t, unsigned col, const char *s)
{
    struct cell *c = cur(t, col);

    if (!c)
        return -EINVAL;
    free(c->s);
    c->s = strdup(s ? s : "");
    return c->s ? 0 : -ENOMEM;
}

int ana_table_set_u64(struct ana_table *t, unsigned col, uint64_t v)
{
    struct cell *c = cur(t, col);

    if (!c)
        return -EINVAL;
    c->u = v;
    return 0;
}

/* The same bits as u64: the union reads them back as i. */
int ana_table_set_i64(struct ana_table *t, unsigned col, int64_t v)
{
    return ana_table_set_u64(t, col, (uint64_t)v);
}

int ana_table_set_list(struct ana_table *t, unsigned col, const char *const *items, unsigned nr)
{
    struct cell *c = cur(t, col);

    if (!c)
        return -EINVAL;
    c->items = calloc(nr ? nr : 1, sizeof(*c->items));
    if (!c->items)
        return -ENOMEM;
    for (unsigned i = 0; i < nr; i++) {
        c->items[i] = strdup(items[i] ? items[i] : "");
        if (!c->items[i])
            return -ENOMEM;
        c->nr_items = i + 1;
    }
    return 0;
}

int ana_table_set_stack(struct ana_table *t, unsigned col, const char *const *items, unsigned nr,
                        unsigned interest)
{
    int rc = ana_table_set_list(t, col, items, nr);

    if (!rc)
        cur(t, col)->u = interest;
    return rc;
}

int ana_table_set_se(struct ana_table *t, unsigned col, double se)
{
    struct cell *c = cur(t, col);

    if (!c || !(t->cols[col].type & ANA_CELL_EST))
        return -EINVAL;
    c->se = se > 0.0 ? se : 0.0;
    c->has_se = 1;
    t->col_se[col] = true;
    return 0;
}

/* Whether col gets a "_se" member or column in JSON and CSV. */
static bool se_column(const struct ana_table *t, unsigned col)
{
    return t->col_se[col];
}

/* A cell's standard error as JSON and CSV give it: a whole number. */
static uint64_t se_value(const struct cell *c)
{
    return (uint64_t)llround(c->se);
}

/* A standard error as text, relative to the value it belongs to: "±1.3%"
 * (two significant digits below 10 %, whole percents above), "" for no
 * standard error, one of 0, or a value of 0. */
static void se_text(const struct cell *c, enum ana_cell_type type, char *out, size_t size)
{
    double v = ANA_CELL_KIND(type) == ANA_CELL_I64 ? fabs((double)c->i) : (double)c->u, pct;

    *out = 0;
    if (!c->has_se || c->none || v == 0.0 || !se_value(c))
        return;                            /* "~0": what a sampled 0 can hide is in JSON and CSV; an
                                              estimate of blocks each sure to be recorded has none */
    pct = 100.0 * (double)se_value(c) / v; /* the figure JSON gives, as the page says it */
    snprintf(out, size, pct < 9.95 ? "±%.1f%%" : "±%.0f%%", pct);
}

int ana_table_set_none(struct ana_table *t, unsigned col)
{
    struct cell *c = cur(t, col);

    if (!c)
        return -EINVAL;
    c->none = 1;
    return 0;
}

unsigned ana_table_nr_rows(const struct ana_table *t)
{
    return t->nr_rows;
}

/* Render one cell as text (for people: times in seconds) or for CSV into
 * a malloc'd string (lists joined with sep). Returns it or NULL. */
static char *render(const struct ana_table *t, const struct cell *c, unsigned col, const char *sep,
                    bool text)
{
    char *s = NULL, tb[64];
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);

    if (!m)
        return NULL;
    switch (c->none ? ANA_CELL_STR : ANA_CELL_KIND(t->cols[col].type)) {
    case ANA_CELL_STR:
        fputs(c->s ? c->s : "", m);
        break;
    case ANA_CELL_U64:
        if (text && (t->cols[col].type & ANA_CELL_TIME))
            fputs(ana_time_format(c->u, tb, sizeof(tb)), m);
        else
            fprintf(m, "%" PRIu64, c->u);
        break;
    case ANA_CELL_I64:
        fprintf(m, "%" PRId64, c->i);
        break;
    case ANA_CELL_LIST:
        for (unsigned i = 0; i < c->nr_items; i++)
            fprintf(m, "%s%s", i ? sep : "", c->items[i]);
        break;
    }
    if (fclose(m)) {
        free(s);
        return NULL;
    }
    return s;
}

/* The columns s takes on a terminal: its characters, not its bytes (a
 * standard error's "±" is two; so may a function's name be). */
static size_t text_width(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

int ana_table_write_text(const struct ana_table *t, FILE *f, const char *indent, const char *sep)
{
    return ana_table_write_text_marked(t, f, indent, sep, "");
}

int ana_table_write_text_marked(const struct ana_table *t, FILE *f, const char *indent,
                                const char *sep, const char *mark)
{
    size_t n = (size_t)t->nr_rows * t->nr_cols;
    char **txt = calloc(n ? n : 1, sizeof(*txt));
    size_t *width = calloc(t->nr_cols, sizeof(*width));
    int rc = 0;

    if (!txt || !width) {
        rc = -ENOMEM;
        goto out;
    }
    for (unsigned c = 0; c < t->nr_cols; c++)
        width[c] = strlen(t->cols[c].title);
    for (size_t k = 0; k < n; k++) {
        unsigned c = (unsigned)(k % t->nr_cols);
        txt[k] = render(t, &t->cells[k], c, sep, true);
        if (txt[k] && *txt[k] && (t->cols[c].type & ANA_CELL_EST)) {
            char *marked = NULL, se[32];

            se_text(&t->cells[k], t->cols[c].type, se, sizeof(se));
            if (asprintf(&marked, "%s%s%s", mark, txt[k], se) < 0)
                marked = NULL;
            free(txt[k]);
            txt[k] = marked;
        }
        if (!txt[k]) {
            rc = -ENOMEM;
            goto out;
        }
        size_t w = text_width(txt[k]);
        if (w > width[c])
            width[c] = w;
    }
    for (long r = -1; r < (long)t->nr_rows; r++) {
        fputs(indent, f);
        for (unsigned c = 0; c < t->nr_cols; c++) {
            const char *s = r < 0 ? t->cols[c].title : txt[(size_t)r * t->nr_cols + c];
            bool last = c + 1 == t->nr_cols;
            unsigned type = ANA_CELL_KIND(t->cols[c].type);
            bool num = type == ANA_CELL_U64 || type == ANA_CELL_I64;
            size_t pad = last && !num ? 0 : width[c] - text_width(s);
            if (num)
                fprintf(f, "%*s", (int)pad, "");
            fputs(s, f);
            if (!num)
                fprintf(f, "%*s", (int)pad, "");
            fputs(last ? "\n" : "  ", f);
        }
    }
    if (ferror(f))
        rc = -EIO;
out:
    if (txt)
        for (size_t k = 0; k < n; k++)
            free(txt[k]);
    free(txt);
    free(width);
    return rc;
}

static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int ana_table_write_csv(const struct ana_table *t, FILE *f, bool header)
{
    if (header)
        for (unsigned c = 0; c < t->nr_cols; c++) {
            csv_field(f, t->cols[c].key);
            if (se_column(t, c))
                fprintf(f, ",%s_se", t->cols[c].key);
            fputs(c + 1 == t->nr_cols ? "\n" : ",", f);
        }
    for (unsigned r = 0; r < t->nr_rows; r++)
        for (unsigned c = 0; c < t->nr_cols; c++) {
            const struct cell *cl = &t->cells[(size_t)r * t->nr_cols + c];
            char *s = render(t, cl, c, ";", false);
            if (!s)
                return -ENOMEM;
            csv_field(f, s);
            free(s);
            if (se_column(t, c)) {
                fputc(',', f);
                if (cl->has_se && !cl->none)
                    fprintf(f, "%" PRIu64, se_value(cl));
            }
            fputs(c + 1 == t->nr_cols ? "\n" : ",", f);
        }
    return ferror(f) ? -EIO : 0;
}

/* After a column's member: its standard error's, if the column has
 * them. */
static void json_se(const struct ana_table *t, unsigned col, const struct cell *cl,
                    struct ana_json *j)
{
    char key[96];

    if (!se_column(t, col))
        return;
    snprintf(key, sizeof(key), "%s_se", t->cols[col].key);
    ana_json_key(j, key);
    if (cl->has_se && !cl->none)
        ana_json_u64(j, se_value(cl));
    else
        ana_json_null(j);
}

void ana_table_write_json(const struct ana_table *t, struct ana_json *j)
{
    ana_json_begin_array(j);
    for (unsigned r = 0; r < t->nr_rows; r++) {
        ana_json_begin_object(j);
        for (unsigned c = 0; c < t->nr_cols; c++) {
            const struct cell *cl = &t->cells[(size_t)r * t->nr_cols + c];
            ana_json_key(j, t->cols[c].key);
            if (cl->none) {
                ana_json_null(j);
                json_se(t, c, cl, j);
                continue;
            }
            switch (ANA_CELL_KIND(t->cols[c].type)) {
            case ANA_CELL_STR:
                ana_json_str(j, cl->s ? cl->s : "");
                break;
            case ANA_CELL_U64:
                ana_json_u64(j, cl->u);
                json_se(t, c, cl, j);
                break;
            case ANA_CELL_I64:
                ana_json_i64(j, cl->i);
                json_se(t, c, cl, j);
                break;
            case ANA_CELL_LIST:
                ana_json_begin_array(j);
                for (unsigned i = 0; i < cl->nr_items; i++)
                    ana_json_str(j, cl->items[i]);
                ana_json_end_array(j);
                if (t->cols[c].type & ANA_CELL_INTEREST)
                    ana_json_kv_u64(j, "interest", cl->u);
                break;
            }
        }
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
}
