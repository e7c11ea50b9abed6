/* SPDX-License-Identifier: MIT */
/* Writing the page: html/report.html is copied with each <!--@name@-->
 * marker replaced by its section (styles, the inline SVG plots, the data,
 * the script). Trace strings reach the page only escaped: as XML text in
 * the plots and the title, or as JSON made safe for <script>. */
#include <errno.h>
#include <string.h>

#include "analysis/html/ana_html_assets.h"
#include "analysis/html/ana_html_internal.h"
#include "analysis/pictures/ana_plot.h"
#include "analysis/pictures/ana_plot_data.h"
#include "analysis/pictures/ana_svg.h"

static int write_timeline(struct ana_html_run *run, FILE *out)
{
    struct ana_plot_timeline p;
    struct ana_plot_series s;
    int rc;

    if ((rc = ana_plot_timeline_from(&p, &s, &run->tl, ana_model_total(run->model),
                                     run->counts.last_ts_ns)))
        return rc;
    p.title = "Heap use over time";
    p.width = 1100;
    ana_plot_timeline_address_space(&p, &s); /* the commit lifetimes' panel */
    rc = ana_plot_timeline_svg(&p, out, 1, NULL);
    ana_plot_series_release(&s);
    return rc;
}

static int write_histogram(struct ana_html_run *run, FILE *out)
{
    struct ana_plot_bucket b[ANA_NR_SIZE_CLASSES];
    struct ana_plot_histogram h = {
        .buckets = b,
        .nr_buckets = ana_plot_buckets_from(b, &run->hist),
        .title = "Allocation sizes (log-log)",
        .width = 1100,
    };

    return ana_plot_histogram_svg(&h, out, 1);
}

static int write_section(struct ana_html_run *run, const char *name, size_t len, FILE *out)
{
    char line[4096];

#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, len))
    if (IS("title")) {
        const char *t = run->o->trace_name ? run->o->trace_name : "trace";

        fputs("memscribe: ", out);
        ana_xml_escape(out, t, strlen(t));
    } else if (IS("trace")) {
        const char *t = run->o->trace_name ? run->o->trace_name : "";

        ana_xml_escape(out, t, strlen(t));
    } else if (IS("command")) {
        ana_plot_command_line(fmt_reader_info(run->r), line, sizeof(line));
        ana_xml_escape(out, line, strlen(line));
    } else if (IS("nonce")) {
        fputs(run->nonce, out);
    } else if (IS("css")) {
        const char *css = ana_asset_find(ana_html_assets, "report.css");

        fputs(css ? css : "", out);
        fputs(ana_plot_css, out);
    } else if (IS("js")) {
        const char *js = ana_asset_find(ana_html_assets, "report.js");

        fputs(js ? js : "", out);
    } else if (IS("timeline")) {
        return write_timeline(run, out);
    } else if (IS("histogram")) {
        return write_histogram(run, out);
    } else if (IS("addrspace")) {
        return ana_html_frag(run->r, &run->replay.vm, out);
    } else if (IS("data")) {
        return ana_html_write_data(run, out);
    } else {
        return -EINVAL; /* a marker the template should not have */
    }
#undef IS
    return 0;
}

int ana_html_write_page(struct ana_html_run *run, FILE *out)
{
    const char *tpl = ana_asset_find(ana_html_assets, "report.html");
    const char *p;
    int rc;

    if (!tpl)
        return -ENOENT;
    for (p = tpl;;) {
        const char *m = strstr(p, "<!--@");
        const char *e = m ? strstr(m + 5, "@-->") : NULL;

        if (!m || !e) {
            fputs(p, out);
            break;
        }
        fwrite(p, 1, (size_t)(m - p), out);
        if ((rc = write_section(run, m + 5, (size_t)(e - m - 5), out)))
            return rc;
        p = e + 4;
    }
    if (fflush(out) || ferror(out))
        return errno ? -errno : -EIO;
    return 0;
}
