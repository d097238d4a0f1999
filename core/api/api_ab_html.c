/* api_ab_html.c: fuseeng ab --html FILE: the whole comparison as one
 * self-contained page (no script, no network: it opens from a mail
 * attachment or an artifact store): the summary, a speedup chart per row
 * with the measured confidence intervals, each row's table, the diff of the
 * baseline against every policy (folded), each plan's Perfetto trace as a
 * link to a file beside the page (fe_ab_link_traces; without it a data:
 * URL, which makes the page megabytes), and where it came from. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api_ab.h"
#include "units.h"

static void base64(FILE *f, const char *s)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) |
                     (i + 2 < n ? u[i + 2] : 0);
        fputc(t[v >> 18 & 63], f);
        fputc(t[v >> 12 & 63], f);
        fputc(i + 1 < n ? t[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? t[v & 63] : '=', f);
    }
}

static void label(const fe_ab *ab, int r, FILE *f)
{
    char buf[1700];
    fe_ab_row_label(ab, r, buf, sizeof buf);
    fe_ab_xml_text(f, buf);
}

/* Where the report came from: fuseeng and its commit, the command, the
 * date, the host, and each model's file and hash. */
static void provenance(const fe_ab *ab, FILE *f)
{
    const fe_prov *p = &ab->prov;
    fputs("<h2>Provenance</h2>\n<table id=\"provenance\"><tr><td>fuseeng</td><td>", f);
    fe_ab_xml_text(f, p->version);
    fputs(" (commit ", f);
    fe_ab_xml_text(f, p->commit);
    fputs(")</td></tr>\n<tr><td>command</td><td><code>", f);
    fe_ab_xml_text(f, p->command[0] ? p->command : "(not recorded)");
    fputs("</code></td></tr>\n<tr><td>date</td><td>", f);
    fe_ab_xml_text(f, p->date);
    fprintf(f, "</td></tr>\n<tr><td>host</td><td>");
    fe_ab_xml_text(f, p->cpu);
    fprintf(f, ", %d core%s", p->cores, p->cores == 1 ? "" : "s");
    if (p->gpu[0]) {
        fputs("; GPU ", f);
        fe_ab_xml_text(f, p->gpu);
    }
    fputs("</td></tr>\n", f);
    for (int r = 0; r < ab->nrows; r++) {
        if (!ab->rows[r].ran)
            continue;
        fputs("<tr><td>", f);
        label(ab, r, f);
        fputs("</td><td>", f);
        fe_ab_xml_text(f, ab->rows[r].file);
        fputs(" <span class=\"note\">sha256 ", f);
        fe_ab_xml_text(f, ab->rows[r].sha256);
        fputs("</span></td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static const char style[] =
    "body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1200px}"
    "table{border-collapse:collapse;margin:8px 0 16px}"
    "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right;font-size:13px}"
    "th:first-child,td:first-child{text-align:left}"
    "tr.best td{font-weight:bold}td.fail{color:#b00;text-align:left}"
    "h2{font-size:17px;margin-top:28px}pre{font-size:12px;background:#f6f6f6;padding:8px;"
    "overflow-x:auto}summary{cursor:pointer;font-size:13px}.note{color:#666;font-size:13px}";

/* Ratios of row r: a bar per policy (simulated, against the baseline) and,
 * measured, the median with its 95% interval as a whisker. */
static void row_chart(const fe_ab *ab, int r, FILE *f)
{
    int nc = ab->ncols, left = 230, width = 460, bar = 14, gap = 10;
    double maxv = 1.2;
    for (int c = 0; c < nc; c++) {
        const fe_ab_cell *x = &ab->cells[r * nc + c];
        double q = fe_ab_ratio(ab, r, c), hi = ab->measure && x->reps ? x->hi : 0;
        maxv = q > maxv ? q : maxv;
        maxv = hi > maxv ? hi : maxv;
    }
    double step = fe_ab_tick_step(maxv, 5, &maxv);
    int h = nc * (bar * 2 + gap) + 44;
    fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-size=\"11\" font-family=\"Helvetica, Arial, sans-serif\">\n",
            left + width + 80, h);
    int x1 = left + (int)(width / maxv), ya = h - 30;
    for (int t = 0; t * step <= maxv * (1 + 1e-9); t++) {   /* round ticks: 1-2-5 steps */
        int xt = left + (int)(width * t * step / maxv);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ccc\"/><text class=\"tick\" "
                   "x=\"%d\" y=\"%d\" text-anchor=\"middle\">%gx</text>\n", xt, ya, xt, ya + 4, xt, ya + 15,
                t * step);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>"
               "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">1x (%s)</text>\n",
            x1, x1, ya, x1, h - 2, "baseline");
    for (int c = 0; c < nc; c++) {
        const fe_ab_cell *x = &ab->cells[r * nc + c];
        int y = 4 + c * (bar * 2 + gap);
        double q = fe_ab_ratio(ab, r, c);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + bar);
        fe_ab_xml_text(f, ab->cnames[c]);
        fputs("</text>\n", f);
        if (x->status != FE_AB_OK) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#b00\">failed</text>\n", left + 4, y + bar);
            continue;
        }
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>simulated "
                   "%.3fx</title></rect><text x=\"%d\" y=\"%d\">%.3fx sim</text>\n",
                left, y, (int)(width * q / maxv), bar, q >= 1 ? "#4e79a7" : "#e15759", q,
                left + (int)(width * q / maxv) + 4, y + bar - 3, q);
        if (ab->measure && x->reps) {
            int ym = y + bar + bar / 2, xl = left + (int)(width * x->lo / maxv),
                xh = left + (int)(width * x->hi / maxv), xm = left + (int)(width * x->ratio / maxv);
            fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\"/>"
                       "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\"/>"
                       "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#222\"/>"
                       "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"#f28e2b\"><title>measured %.3fx "
                       "[%.3f, %.3f]</title></circle><text x=\"%d\" y=\"%d\">%.3fx cpu [%.3f, %.3f]"
                       "</text>\n",
                    xl, ym, xh, ym, xl, ym - 4, xl, ym + 4, xh, ym - 4, xh, ym + 4, xm, ym, x->ratio,
                    x->lo, x->hi, xh + 4, ym + 4, x->ratio, x->lo, x->hi);
        }
    }
    fputs("</svg>\n", f);
}

static void row_table(const fe_ab *ab, int r, FILE *f)
{
    int nc = ab->ncols, best = fe_ab_winner(ab, r);
    fputs("<table><tr><th>policy</th><th>kernels+extern</th><th>sim ms</th><th>ratio</th><th>L3 bytes</th>"
          "<th>L2 peak</th><th>mem peak</th><th>spill</th><th>plan ms</th>", f);
    if (ab->measure)
        fputs("<th>cpu ms</th><th>cpu ratio</th><th>95% CI</th><th>verdict</th><th>results</th>"
              "<th>sim rank</th>", f);
    if (ab->optimal)
        fputs("<th>gap to optimal</th>", f);
    fputs("<th>trace</th></tr>\n", f);
    for (int c = 0; c < nc; c++) {
        const fe_ab_cell *x = &ab->cells[r * nc + c];
        fprintf(f, "<tr%s><td>", c == best ? " class=\"best\"" : "");
        fe_ab_xml_text(f, ab->cnames[c]);
        fputs("</td>", f);
        if (x->status != FE_AB_OK) {
            fputs("<td class=\"fail\" colspan=\"8\">failed: ", f);
            fe_ab_xml_text(f, x->error);
            fputs("</td></tr>\n", f);
            continue;
        }
        char l3[32], l2[32], mp[32], sp[32];
        fprintf(f, "<td>%d+%d</td><td>%.3f</td><td>%.3fx</td><td>%s</td><td>%s</td><td>%s</td>"
                   "<td>%s</td><td>%.1f</td>", x->fig.kernels, x->fig.extern_calls,
                x->fig.time_s * 1e3, fe_ab_ratio(ab, r, c),
                fe_fmt_bytes((double)x->fig.l3_bytes, l3, sizeof l3),
                fe_fmt_bytes((double)x->fig.l2_peak, l2, sizeof l2),
                fe_fmt_bytes((double)x->fig.mem_peak, mp, sizeof mp),
                fe_fmt_bytes((double)x->fig.spill_bytes, sp, sizeof sp), x->plan_s * 1e3);
        if (ab->measure && x->reps)
            fprintf(f, "<td>%.3f</td><td>%.3fx</td><td>[%.3f, %.3f]</td><td>%s</td><td>%s</td>"
                       "<td>%d</td>",
                    x->cpu_ms, x->ratio, x->lo, x->hi,
                    c == 0 ? "baseline" : x->lo > 1 ? "faster" : x->hi < 1 ? "slower" : "same",
                    x->cpu_ok ? "ok" : "WRONG", fe_ab_sim_rank(ab, r, c));
        else if (ab->measure)
            fputs("<td></td><td></td><td></td><td></td><td></td><td></td>", f);
        if (ab->optimal) {
            char gap[32];
            fe_ab_gap_text(fe_ab_gap(ab, r, c), gap, sizeof gap);
            fprintf(f, "<td>%s</td>", gap);
        }
        if (x->trace && ab->trace_link[0]) {   /* a file beside the page: it stays small */
            fputs("<td><a href=\"", f);
            fe_ab_xml_text(f, ab->trace_link);
            fprintf(f, "/row%d-%d.trace.json\">trace</a></td></tr>\n", r, c);
        } else if (x->trace) {
            fprintf(f, "<td><a download=\"row%d-%d.trace.json\" href=\"data:application/json;base64,",
                    r, c);
            base64(f, x->trace);
            fputs("\">trace</a></td></tr>\n", f);
        } else {
            fputs("<td></td></tr>\n", f);
        }
    }
    fputs("</table>\n", f);
}

static void summary(const fe_ab *ab, FILE *f)
{
    fputs("<table id=\"summary\"><tr><th>policy</th><th>geomean ratio</th><th>wins</th><th>ties</th>"
          "<th>losses</th><th>failed</th>", f);
    if (ab->optimal)
        fputs("<th>gap to optimal</th>", f);
    if (ab->measure)
        fputs("<th>measured geomean</th><th>wins</th><th>same</th><th>losses</th>", f);
    fputs("</tr>\n", f);
    for (int c = 0; c < ab->ncols; c++) {
        fe_ab_tally t;
        fe_ab_tally_col(ab, c, &t);
        fputs("<tr><td>", f);
        fe_ab_xml_text(f, ab->cnames[c]);
        fprintf(f, "</td><td>%.3fx</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td>", t.geomean,
                t.wins, t.ties, t.losses, t.failed);
        if (ab->optimal) {
            char gap[32];
            fe_ab_gap_text(fe_ab_gap_mean(ab, c), gap, sizeof gap);
            fprintf(f, "<td>%s</td>", gap);
        }
        if (ab->measure)
            fprintf(f, "<td>%.3fx</td><td>%d</td><td>%d</td><td>%d</td>", t.cpu_geomean, t.cpu_wins,
                    t.cpu_same, t.cpu_losses);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

void fe_ab_write_html(const fe_ab *ab, FILE *f)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<link rel=\"icon\" href=\"data:,\"><title>fuseeng ab: ");
    fe_ab_xml_text(f, ab->cnames[0]);
    fprintf(f, " and %d other%s</title><style>%s</style></head><body>\n", ab->ncols - 1,
            ab->ncols == 2 ? "" : "s", style);
    fputs("<h1>fuseeng ab</h1>\n<p class=\"note\">Ratio = baseline time / policy time (above 1: "
          "faster than the baseline, ", f);
    fe_ab_xml_text(f, ab->cnames[0]);
    fputs(").", f);
    if (ab->measure)
        fprintf(f, " Measured: the plans ran interleaved in shuffled rounds on the %s kernels; the "
              "interval is a 95%% bootstrap interval of the paired ratio, and one that holds 1 is "
              "\"same\", never a win.", ab->device == FE_DEVICE_CUDA ? "GPU" : "CPU");
    fputs(" Traces open in ui.perfetto.dev.</p>\n<ul class=\"note\">\n", f);
    for (int r = 0; r < ab->nrows; r++) {
        int seen = !ab->rows[r].ran;
        for (int q = 0; q < r && !seen; q++)
            seen = ab->rows[q].ran && strcmp(ab->rows[q].machine, ab->rows[r].machine) == 0;
        if (seen)
            continue;
        fputs("<li>simulated figures: machine ", f);
        fe_ab_xml_text(f, ab->rows[r].machine);
        if (ab->rows[r].machine_file[0]) {
            fputs(" (", f);
            fe_ab_xml_text(f, ab->rows[r].machine_file);
            fputs(")", f);
        }
        fputs(": ", f);
        fe_ab_xml_text(f, ab->rows[r].description);
        fputs("</li>\n", f);
    }
    if (ab->measure) {
        fprintf(f, "<li>measured figures: fuseeng's kernels on the %s; the best row of each "
                "table (bold) is the measured fastest, its simulated rank beside</li>\n",
                ab->device == FE_DEVICE_CUDA ? "GPU" : "CPU");
        for (int r = 0; r < ab->nrows; r++)
            if (ab->rows[r].ran && fe_ab_ranks_agree(ab, r) == 0) {
                fputs("<li class=\"fail\">warning: on ", f);
                label(ab, r, f);
                fputs(" the simulator ranks ", f);
                fe_ab_xml_text(f, ab->cnames[fe_ab_sim_winner(ab, r)]);
                fputs(" first; measured, ", f);
                fe_ab_xml_text(f, ab->cnames[fe_ab_winner(ab, r)]);
                fputs(" is faster beyond its interval</li>\n", f);
                char why[1024];
                fe_ab_miss_text(ab, r, why, sizeof why);
                if (why[0]) {
                    fputs("<li>", f);
                    fe_ab_xml_text(f, why);
                    fputs("</li>\n", f);
                }
            }
    }
    fputs("</ul>\n<h2>Summary</h2>\n", f);
    summary(ab, f);
    fe_ab_truth_html_summary(ab, f);
    fputs("<h2>Speedup over unfused</h2>\n<div id=\"overview\">", f);
    fe_ab_write_svg(ab, f);
    fputs("</div>\n", f);
    for (int r = 0; r < ab->nrows; r++) {
        if (!ab->rows[r].ran)
            continue;
        fprintf(f, "<h2 id=\"row%d\">", r);
        label(ab, r, f);
        fprintf(f, " <span class=\"note\">(unfused %.3f ms simulated", ab->rows[r].unfused_ms);
        if (ab->measure)
            fprintf(f, ", %.3f ms measured", ab->rows[r].cpu_unfused_ms);
        if (ab->optimal) {
            char note[1100];
            fe_ab_optimal_note(ab, r, note, sizeof note);
            fputs("; ", f);
            fe_ab_xml_text(f, note);
        }
        fputs(")</span></h2>\n", f);
        row_chart(ab, r, f);
        row_table(ab, r, f);
        fe_ab_truth_html(ab, r, f);
        for (int c = 1; c < ab->ncols; c++) {
            const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
            if (!x->diff)
                continue;
            fputs("<details><summary>diff ", f);
            fe_ab_xml_text(f, ab->cnames[0]);
            fputs(" vs ", f);
            fe_ab_xml_text(f, ab->cnames[c]);
            fputs("</summary><pre>", f);
            fe_ab_xml_text(f, x->diff);
            fputs("</pre></details>\n", f);
        }
    }
    provenance(ab, f);
    fputs("</body></html>\n", f);
}

void fe_ab_link_traces(fe_ab *ab, const char *link_dir)
{
    if (ab)
        snprintf(ab->trace_link, sizeof ab->trace_link, "%s", link_dir ? link_dir : "");
}

int fe_ab_write_traces(const fe_ab *ab, const char *dir, fe_error *err)
{
    char path[1400];
    if (mkdir(dir, 0777) && errno != EEXIST)
        return fe_error_set(err, FE_ERUNTIME, "%s: cannot make the traces' folder: %s", dir,
                            strerror(errno));
    for (int r = 0; r < ab->nrows; r++)
        for (int c = 0; ab->rows[r].ran && c < ab->ncols; c++) {
            const char *t = ab->cells[r * ab->ncols + c].trace;
            if (!t)
                continue;
            snprintf(path, sizeof path, "%s/row%d-%d.trace.json", dir, r, c);
            if (fe_write_file(path, "a trace", t, err) != FE_OK)
                return err ? err->code : FE_ERUNTIME;
        }
    return FE_OK;
}
