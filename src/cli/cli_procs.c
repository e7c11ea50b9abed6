/* SPDX-License-Identifier: MIT */
/* The process table of `report` (see cli_procs.h). */
#include "cli/cli_procs.h"

#include <string.h>

#include "analysis/core/ana_argv.h"
#include "analysis/core/ana_sample.h"
#include "analysis/core/ana_table.h"
#include "analysis/core/ana_text.h"
#include "analysis/core/ana_time.h"
#include "cli/cli.h"

static const struct ana_column cols[] = {
    {"pid", "pid", ANA_CELL_U64},
    {"parent", "ppid", ANA_CELL_U64},
    {"start", "start", ANA_CELL_STR},
    {"end", "end", ANA_CELL_STR},
    {"peak", "peak", ANA_CELL_U64 | ANA_CELL_EST},
    {"leaked", "leaked", ANA_CELL_U64 | ANA_CELL_EST},
    {"executable", "exe", ANA_CELL_STR},
    {"command", "command", ANA_CELL_STR},
};

/* A process's argv as the table shows it: shortened in the middle to
 * about COMMAND_WIDTH characters, the program and the files kept
 * (ana_argv.h); JSON gives it as "command" (the live page's column) and
 * every word as "argv". git's children all run /usr/lib/git-core/git;
 * their commands tell them apart. */
#define COMMAND_WIDTH 60

static void short_command(char *buf, size_t size, const struct fmt_image_info *ii)
{
    buf[0] = '\0';
    if (ii && ii->argv_len)
        ana_argv_short(buf, size, ii->argv, ii->argv_len, COMMAND_WIDTH);
}

void cli_procs_text(struct cli_ana *a, const struct ana_model *m, FILE *out)
{
    struct ana_table *t;
    char buf[4 * 1024 + 1];
    int rc;

    if (ana_model_nr_seen(m) < 2)
        return;
    if ((rc = ana_table_create(&t, cols, sizeof(cols) / sizeof(cols[0]))))
        cli_ana_fail(a, rc);
    for (uint32_t i = 0; i < ana_model_nr_images(m) && !rc; i++) {
        const struct ana_scope *s = ana_model_image(m, i);
        const struct fmt_image_info *ii = fmt_reader_image(a->r, i);
        if (!s->seen)
            continue;
        rc = ana_table_add_row(t);
        rc = rc ? rc : ana_table_set_u64(t, 0, s->pid);
        rc = rc ? rc : ana_table_set_u64(t, 1, ii ? ii->ppid : 0);
        ana_time_format(ii && ii->has_start ? ii->start_ns : s->first_ns, buf, sizeof(buf));
        rc = rc ? rc : ana_table_set_str(t, 2, buf);
        if (s->ended)
            ana_time_format(s->end_ns, buf, sizeof(buf));
        else
            snprintf(buf, sizeof(buf), "-");
        rc = rc ? rc : ana_table_set_str(t, 3, buf);
        rc = rc ? rc : ana_table_set_u64(t, 4, s->peak);
        rc = rc ? rc : ana_table_set_u64(t, 5, s->heap);
        buf[0] = '\0';
        if (ii && ii->exe)
            ana_text_escape(buf, sizeof(buf), ii->exe, ii->exe_len);
        rc = rc ? rc : ana_table_set_str(t, 6, buf);
        short_command(buf, sizeof(buf), ii);
        rc = rc ? rc : ana_table_set_str(t, 7, buf);
    }
    if (rc)
        cli_ana_fail(a, rc);
    fprintf(out, "\nprocesses (end: exit or exec; peak and leaked: heap bytes):\n");
    if ((rc = ana_table_write_text_marked(t, out, "  ", " ",
                                          ana_sample_mark(fmt_reader_sample_bytes(a->r)))))
        cli_die("%s: writing the output: %s", a->cmd, strerror(-rc));
    ana_table_destroy(t);
}

static const struct ana_column prog_cols[] = {
    {"processes", "processes", ANA_CELL_U64},
    {"peak", "peak", ANA_CELL_U64 | ANA_CELL_EST},
    {"leaked", "leaked", ANA_CELL_U64 | ANA_CELL_EST},
    {"allocs", "allocations", ANA_CELL_U64 | ANA_CELL_EST},
    {"temp", "temporary", ANA_CELL_U64},
    {"executable", "exe", ANA_CELL_STR},
};

void cli_programs_text(struct cli_ana *a, const struct ana_model *m, const uint32_t *order,
                       uint32_t n, FILE *out)
{
    struct ana_table *t;
    char buf[4 * 1024 + 1];
    int rc;

    if ((rc = ana_table_create(&t, prog_cols, sizeof(prog_cols) / sizeof(prog_cols[0]))))
        cli_ana_fail(a, rc);
    for (uint32_t i = 0; i < n && !rc; i++) {
        const struct ana_program *pg = &a->programs.v[order[i]];
        const struct ana_scope *s = ana_model_program(m, order[i]);
        rc = ana_table_add_row(t);
        rc = rc ? rc : ana_table_set_u64(t, 0, pg->nr_images);
        rc = rc ? rc : ana_table_set_u64(t, 1, s->peak);
        rc = rc ? rc : ana_table_set_u64(t, 2, s->heap);
        rc = rc ? rc : ana_table_set_u64(t, 3, s->nr_allocs);
        if (ana_sample_has_temporary(fmt_reader_sample_bytes(a->r)))
            rc = rc ? rc : ana_table_set_u64(t, 4, s->nr_temporary);
        else
            rc = rc ? rc : ana_table_set_none(t, 4);
        rc = rc ? rc : ana_table_set_str(t, 5, cli_ana_program_exe(a, order[i], buf, sizeof(buf)));
    }
    if (rc)
        cli_ana_fail(a, rc);
    fprintf(out, "\nprograms (the processes of one executable; peak: the largest sum of their "
                 "heaps at one moment):\n");
    if ((rc = ana_table_write_text_marked(t, out, "  ", " ",
                                          ana_sample_mark(fmt_reader_sample_bytes(a->r)))))
        cli_die("%s: writing the output: %s", a->cmd, strerror(-rc));
    ana_table_destroy(t);
}

void cli_procs_json(struct cli_ana *a, const struct ana_model *m, struct ana_json *j)
{
    if (ana_model_nr_seen(m) < 2)
        return;
    ana_json_key(j, "process_table");
    ana_json_begin_array(j);
    for (uint32_t i = 0; i < ana_model_nr_images(m); i++) {
        const struct ana_scope *s = ana_model_image(m, i);
        const struct fmt_image_info *ii = fmt_reader_image(a->r, i);
        if (!s->seen)
            continue;
        ana_json_begin_object(j);
        cli_ana_image_json(a, j, i);
        ana_json_kv_u64(j, "ppid", ii ? ii->ppid : 0);
        /* Every word, escaped as every string of the document. */
        ana_json_key(j, "argv");
        ana_json_begin_array(j);
        for (uint32_t k = 0, end; ii && k < ii->argv_len; k = end + 1) {
            for (end = k; end < ii->argv_len && ii->argv[end]; end++)
                ;
            ana_json_strn(j, ii->argv + k, end - k);
        }
        ana_json_end_array(j);
        char cmd[4 * 1024 + 1];
        short_command(cmd, sizeof(cmd), ii);
        ana_json_kv_str(j, "command", cmd);
        ana_json_kv_u64(j, "start_ns", ii && ii->has_start ? ii->start_ns : s->first_ns);
        ana_json_key(j, "end_ns");
        if (s->ended)
            ana_json_u64(j, s->end_ns);
        else
            ana_json_null(j);
        ana_json_kv_u64(j, "peak_bytes", s->peak);
        ana_json_kv_u64(j, "leaked_bytes", s->heap);
        ana_json_end_object(j);
    }
    ana_json_end_array(j);
}
