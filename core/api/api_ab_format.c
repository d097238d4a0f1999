/* api_ab_format.c: an A/B result as people and programs read it: the
 * terminal table (fits 100 columns), JSON, CSV, Markdown, an SVG chart and
 * the shard file that fuseeng ab merge reads back.
 *
 * The JSON report is a function of the simulated figures alone but for its
 * one provenance line (the command, the date, the host), so a run split
 * into shards and merged prints the same bytes as one run but that line. Planning
 * time is a property of the host at that moment, not of the plans: it is in
 * the table, CSV, Markdown, HTML and the shard files, never in the JSON
 * report. Measured figures (--measure) are in the JSON; they are not
 * expected to repeat. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "units.h"

static void md_text(FILE *f, const char *s);

static const char *verdict(const fe_ab_cell *x, int c)
{
    if (c == 0)
        return "baseline";
    return x->lo > 1 ? "faster" : x->hi < 1 ? "slower" : "same";
}

static void plain_label(const fe_ab *ab, int r, char *buf, size_t size)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    snprintf(buf, size, "%s%s%s%s%s", rr->model, rr->dims[0] ? " " : "", rr->dims,
             ab->nmachines > 1 ? " on " : "", ab->nmachines > 1 ? rr->machine : "");
}

void fe_ab_row_label(const fe_ab *ab, int r, char *buf, size_t size)
{
    char other[600];
    plain_label(ab, r, buf, size);
    for (int q = 0; q < ab->nrows; q++) {
        if (q == r || !ab->rows[q].ran)
            continue;
        plain_label(ab, q, other, sizeof other);
        if (strcmp(buf, other) == 0) {   /* two models of one name: the file tells them apart */
            size_t l = strlen(buf);
            snprintf(buf + l, size - l, " (%s)", ab->rows[r].file);
            return;
        }
    }
}

/* ---- provenance: every format says where it came from ---- */

void fe_ab_text_provenance(const fe_ab *ab, FILE *f)
{
    char line[2600], label[600];
    fe_prov_line(&ab->prov, line, sizeof line);
    fprintf(f, "\nreport     %s\n", line);
    if (ab->prov.command[0])
        fprintf(f, "command    %s\n", ab->prov.command);
    for (int r = 0; r < ab->nrows; r++)
        if (ab->rows[r].ran) {
            fe_ab_row_label(ab, r, label, sizeof label);
            fprintf(f, "model      %s: %s sha256 %.16s\n", label, ab->rows[r].file, ab->rows[r].sha256);
        }
}

void fe_ab_json_provenance(const fe_ab *ab, fe_jw *w)
{
    fe_jw_key(w, "provenance");
    fe_jw_obj_flat(w);
    fe_prov_json(&ab->prov, w);
    fe_jw_end(w);
}

static void md_provenance(const fe_ab *ab, FILE *f)
{
    char line[2600];
    fe_prov_line(&ab->prov, line, sizeof line);
    fputs("\nReport: ", f);
    md_text(f, line);
    if (ab->prov.command[0]) {
        fputs(". Command: `", f);
        md_text(f, ab->prov.command);
        fputc('`', f);
    }
    fputs(".\n\n| model | file | sha256 |\n|---|---|---|\n", f);
    for (int r = 0; r < ab->nrows; r++)
        if (ab->rows[r].ran) {
            char label[600];
            fe_ab_row_label(ab, r, label, sizeof label);
            fputs("| ", f);
            md_text(f, label);
            fputs(" | ", f);
            md_text(f, ab->rows[r].file);
            fprintf(f, " | %s |\n", ab->rows[r].sha256);
        }
}

/* ---- text ---- */

/* Width of the policy column: the longest name, at least 18 (the table
 * is 98 columns then). */
static int name_width(const fe_ab *ab)
{
    int w = 18;
    for (int c = 0; c < ab->ncols; c++)
        if ((int)strlen(ab->cnames[c]) > w)
            w = (int)strlen(ab->cnames[c]);
    return w > 60 ? 60 : w;
}

static void text_measured(const fe_ab *ab, int r, FILE *f)
{
    int nw = name_width(ab);
    int nc = ab->ncols, reps = 0;
    for (int c = 0; c < nc; c++)
        if (ab->cells[r * nc + c].reps > reps)
            reps = ab->cells[r * nc + c].reps;
    int gpu = ab->device == FE_DEVICE_CUDA;
    const fe_ab_rowres *rr = &ab->rows[r];
    if (!reps)   /* its cells say why */
        return;
    fprintf(f, "  measured on %s: %d interleaved rounds, unfused %.3f ms\n",
            gpu ? "the GPU" : "this CPU", reps, rr->cpu_unfused_ms);
    if (rr->weights[0] || rr->inputs[0])
        fprintf(f, "  data: weights %s, inputs %s\n", rr->weights[0] ? rr->weights : "seeded random",
                rr->inputs[0] ? rr->inputs : "seeded random");
    fprintf(f, "  %-*s %10s %8s  %-17s %-8s %7s %5s\n", nw, "policy", gpu ? "gpu ms" : "cpu ms", "ratio",
            "95% CI", "verdict", "results", "sim#");
    int best = fe_ab_winner(ab, r);
    for (int c = 0; c < nc; c++) {
        const fe_ab_cell *x = &ab->cells[r * nc + c];
        if (x->status != FE_AB_OK || !x->reps)
            continue;
        char ci[40];
        snprintf(ci, sizeof ci, "[%.3f, %.3f]", x->lo, x->hi);
        fprintf(f, "%s %-*s %10.3f %7.3fx  %-17s %-8s %7s %5d\n", c == best ? "*" : " ", nw,
                ab->cnames[c], x->cpu_ms, x->ratio, ci, verdict(x, c), x->cpu_ok ? "ok" : "WRONG",
                fe_ab_sim_rank(ab, r, c));
    }
    int pick = fe_ab_sim_winner(ab, r);
    if (fe_ab_ranks_agree(ab, r) == 0)
        fprintf(f, "  warning: the simulator (%s) ranks %s first; measured, %s is faster beyond "
                "its interval\n", rr->machine, ab->cnames[pick], ab->cnames[best]);
    char why[1024];
    fe_ab_miss_text(ab, r, why, sizeof why);
    if (why[0])
        fprintf(f, "  %s\n", why);
}

static void text_row(const fe_ab *ab, int r, FILE *f)
{
    int nw = name_width(ab);
    int nc = ab->ncols, best = fe_ab_winner(ab, r);
    char label[600];
    fe_ab_row_label(ab, r, label, sizeof label);
    char note[1100];
    fe_ab_optimal_note(ab, r, note, sizeof note);
    fprintf(f, "\n%s (unfused %.3f ms simulated%s%s)\n", label, ab->rows[r].unfused_ms,
            note[0] ? "; " : "", note);
    fprintf(f, "  %-*s %7s %9s %7s %10s %10s %10s %9s %8s%s\n", nw, "policy", "kernels", "sim ms",
            "ratio", "L3 bytes", "L2 peak", "mem peak", "spill", "plan ms", ab->optimal ? "     gap" : "");
    for (int c = 0; c < nc; c++) {
        const fe_ab_cell *x = &ab->cells[r * nc + c];
        if (x->status != FE_AB_OK) {
            fprintf(f, "  %-*s FAILED: %s\n", nw, ab->cnames[c], x->error ? x->error : "");
            continue;
        }
        char l3[32], l2[32], mp[32], sp[32], k[32], gap[32] = "";
        snprintf(k, sizeof k, "%d+%d", x->fig.kernels, x->fig.extern_calls);
        if (ab->optimal)
            fe_ab_gap_text(fe_ab_gap(ab, r, c), gap, sizeof gap);
        fprintf(f, "%s %-*s %7s %9.3f %6.3fx %10s %10s %10s %9s %8.1f%*s\n", c == best ? "*" : " ",
                nw, ab->cnames[c], k, x->fig.time_s * 1e3, fe_ab_ratio(ab, r, c),
                fe_fmt_bytes((double)x->fig.l3_bytes, l3, sizeof l3),
                fe_fmt_bytes((double)x->fig.l2_peak, l2, sizeof l2),
                fe_fmt_bytes((double)x->fig.mem_peak, mp, sizeof mp),
                fe_fmt_bytes((double)x->fig.spill_bytes, sp, sizeof sp), x->plan_s * 1e3,
                ab->optimal ? 8 : 0, gap);
    }
    if (ab->measure)
        text_measured(ab, r, f);
    fe_ab_truth_text(ab, r, nw, f);
}

static void text_summary(const fe_ab *ab, FILE *f)
{
    int nw = name_width(ab);
    int n = 0;
    for (int r = 0; r < ab->nrows; r++)
        n += ab->rows[r].ran;
    if (ab->interrupted)
        fprintf(f, "\ninterrupted (Ctrl-C): %d row%s complete, the rest not run\n", n, n == 1 ? "" : "s");
    fprintf(f, "\nsummary over %d row%s against the baseline %s (ratio = baseline time / policy "
            "time%s)\n", n, n == 1 ? "" : "s", ab->cnames[0],
            ab->optimal ? "; gap = time over the optimum, geometric mean" : "");
    fprintf(f, "  %-*s %8s %5s %5s %6s %6s", nw, "policy", "geomean", "wins", "ties", "losses",
            "failed");
    if (ab->optimal)
        fprintf(f, " %8s", "gap");
    if (ab->measure)
        fprintf(f, " | %8s %5s %5s %6s", "measured", "wins", "same", "losses");
    fprintf(f, "\n");
    for (int c = 0; c < ab->ncols; c++) {
        fe_ab_tally t;
        fe_ab_tally_col(ab, c, &t);
        fprintf(f, "  %-*s %7.3fx %5d %5d %6d %6d", nw, ab->cnames[c], t.geomean, t.wins, t.ties,
                t.losses, t.failed);
        if (ab->optimal) {
            char gap[32];
            fe_ab_gap_text(fe_ab_gap_mean(ab, c), gap, sizeof gap);
            fprintf(f, " %8s", gap);
        }
        if (ab->measure)
            fprintf(f, " | %7.3fx %5d %5d %6d", t.cpu_geomean, t.cpu_wins, t.cpu_same,
                    t.cpu_losses);
        fprintf(f, "\n");
    }
    if (ab->measure) {
        int bm = -1, bs = -1, disagree = 0;
        double gm = 0, gs = 0;
        for (int c = 0; c < ab->ncols; c++) {
            fe_ab_tally t;
            fe_ab_tally_col(ab, c, &t);
            if (t.cpu_geomean > gm)
                gm = t.cpu_geomean, bm = c;
            if (t.geomean > gs)
                gs = t.geomean, bs = c;
        }
        for (int r = 0; r < ab->nrows; r++)
            disagree += ab->rows[r].ran && fe_ab_ranks_agree(ab, r) == 0;
        if (bm >= 0)
            fprintf(f, "  best measured: %s (%.3fx); the simulator's best: %s (%.3fx)\n",
                    ab->cnames[bm], gm, bs >= 0 ? ab->cnames[bs] : "-", gs);
        if (disagree)
            fprintf(f, "  warning: on %d row%s the simulator's fastest plan is not the measured "
                    "best (marked in the rows; fuseeng fidelity measures how far the machine "
                    "predicts the device)\n", disagree, disagree == 1 ? "" : "s");
    }
    fe_ab_truth_text_summary(ab, nw, f);
}

static void ab_text(const fe_ab *ab, FILE *f)
{
    /* Each machine once, in the order the rows first use it. */
    for (int r = 0; r < ab->nrows; r++) {
        int seen = !ab->rows[r].ran;
        for (int q = 0; q < r && !seen; q++)
            seen = ab->rows[q].ran && strcmp(ab->rows[q].machine, ab->rows[r].machine) == 0;
        if (!seen)
            fprintf(f, "machine %s: %s\n", ab->rows[r].machine, ab->rows[r].description);
    }
    for (int r = 0; r < ab->nrows; r++)
        if (ab->rows[r].ran)
            text_row(ab, r, f);
    text_summary(ab, f);
    fe_ab_text_provenance(ab, f);
}

/* ---- JSON and the shard file ---- */

static void cell_json(const fe_ab *ab, int r, int c, FILE *f, fe_jw *w, int part)
{
    const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
    (void)f;
    fe_jw_obj_flat(w);
    fe_ab_jstr(w, "policy", ab->cnames[c]);
    if (x->status != FE_AB_OK) {
        fe_ab_jstr(w, "error", x->error ? x->error : "");
        fe_jw_end(w);
        return;
    }
    fe_ab_jint(w, "kernels", x->fig.kernels);
    fe_ab_jint(w, "extern", x->fig.extern_calls);
    fe_ab_jnum(w, "sim_ms", x->fig.time_s * 1e3);
    if (part) {
        fe_jw_key(w, "time_s");   /* exact: ratios are recomputed from it */
        fe_jw_num(w, x->fig.time_s);
        fe_ab_jnum(w, "plan_s", x->plan_s);
    } else {
        fe_ab_jnum(w, "ratio", fe_ab_ratio(ab, r, c));
        fe_ab_jnum(w, "speedup", x->fig.time_s > 0 ? ab->rows[r].unfused_ms / (x->fig.time_s * 1e3) : 0);
    }
    fe_ab_jint(w, "l3_bytes", x->fig.l3_bytes);
    fe_ab_jint(w, "l2_peak", x->fig.l2_peak);
    fe_ab_jint(w, "mem_peak", x->fig.mem_peak);
    fe_ab_jint(w, "spill_bytes", x->fig.spill_bytes);
    fe_ab_jint(w, "tiled_groups", x->fig.tiled);
    if (!part) {
        fe_ab_gap_json(ab, r, c, w);
        fe_ab_truth_json_cell(ab, r, c, w);
    }
    if (ab->measure && x->reps) {
        fe_ab_jnum(w, "cpu_ms", x->cpu_ms);
        fe_ab_jnum(w, "cpu_ratio", x->ratio);
        fe_jw_key(w, "cpu_ci");
        fe_jw_arr_flat(w);
        fe_jw_num(w, x->lo);
        fe_jw_num(w, x->hi);
        fe_jw_end(w);
        if (!part) {
            fe_ab_jstr(w, "cpu_verdict", verdict(x, c));
            fe_ab_jint(w, "sim_rank", fe_ab_sim_rank(ab, r, c));
        }
        fe_ab_jint(w, "cpu_reps", x->reps);
        fe_jw_key(w, "cpu_ok");
        fe_jw_bool(w, x->cpu_ok);
        fe_ab_jnum(w, "cpu_max_rel", x->cpu_max_rel);
    }
    fe_jw_end(w);
}

static void row_json(const fe_ab *ab, int r, FILE *f, fe_jw *w, int part)
{
    const fe_ab_rowres *rr = &ab->rows[r];
    fe_jw_obj(w);
    if (part) {
        fe_ab_jint(w, "index", r);
    }
    fe_ab_jstr(w, "model", rr->model);
    fe_ab_jstr(w, "file", rr->file);
    fe_ab_jstr(w, "sha256", rr->sha256);
    if (rr->weights[0])
        fe_ab_jstr(w, "weights", rr->weights);
    if (rr->inputs[0])
        fe_ab_jstr(w, "inputs", rr->inputs);
    fe_ab_jstr(w, "dims", rr->dims);
    fe_ab_jstr(w, "machine", rr->machine);
    if (part) {
        fe_ab_jstr(w, "description", rr->description);
    }
    fe_ab_jnum(w, "unfused_ms", rr->unfused_ms);
    if (ab->measure) {
        fe_ab_jnum(w, "cpu_unfused_ms", rr->cpu_unfused_ms);
    }
    if (rr->machine_file[0])
        fe_ab_jstr(w, "machine_file", rr->machine_file);
    fe_ab_optimal_json(ab, r, w, part);
    fe_ab_miss_json(ab, r, w);
    if (!part) {
        fe_ab_truth_json_row(ab, r, w);
        int best = fe_ab_winner(ab, r), pick = fe_ab_sim_winner(ab, r);
        int agree = fe_ab_ranks_agree(ab, r);
        fe_jw_key(w, "winner");   /* measured when measured, else simulated */
        if (best >= 0)
            fe_jw_str(w, ab->cnames[best]);
        else
            fe_jw_null(w);
        if (agree >= 0) {
            fe_jw_key(w, "sim_winner");
            fe_jw_str(w, ab->cnames[pick]);
            fe_jw_key(w, "ranks_agree");
            fe_jw_bool(w, agree);
        }
    }
    fe_jw_key(w, "policies");
    fe_jw_arr(w);
    for (int c = 0; c < ab->ncols; c++)
        cell_json(ab, r, c, f, w, part);
    fe_jw_end(w);
    fe_jw_end(w);
}

static void summary_json(const fe_ab *ab, fe_jw *w)
{
    fe_jw_key(w, "summary");
    fe_jw_arr(w);
    for (int c = 0; c < ab->ncols; c++) {
        fe_ab_tally t;
        fe_ab_tally_col(ab, c, &t);
        fe_jw_obj_flat(w);
        fe_ab_jstr(w, "policy", ab->cnames[c]);
        fe_ab_jnum(w, "geomean", t.geomean);
        fe_ab_jint(w, "wins", t.wins);
        fe_ab_jint(w, "ties", t.ties);
        fe_ab_jint(w, "losses", t.losses);
        fe_ab_jint(w, "failed", t.failed);
        if (ab->optimal && !isnan(fe_ab_gap_mean(ab, c)))
            fe_ab_jnum(w, "gap_pct", fe_ab_gap_mean(ab, c) * 100);
        fe_ab_truth_json_summary(ab, c, w);
        if (ab->measure) {
            fe_ab_jnum(w, "cpu_geomean", t.cpu_geomean);
            fe_ab_jint(w, "cpu_wins", t.cpu_wins);
            fe_ab_jint(w, "cpu_same", t.cpu_same);
            fe_ab_jint(w, "cpu_losses", t.cpu_losses);
        }
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

void fe_ab_write_json(const fe_ab *ab, FILE *f, int part)
{
    fe_jw w;
    fe_jw_init(&w, f, 2);
    fe_jw_obj(&w);
    fe_ab_jstr(&w, "format", part ? "fuseeng.ab-part/1" : "fuseeng.ab/1");
    fe_ab_jstr(&w, "suite", ab->id);
    fe_ab_json_provenance(ab, &w);   /* one line: a byte comparison of two runs can drop it */
    if (part) {
        fe_ab_jint(&w, "shard", ab->shard ? ab->shard : 1);
        fe_ab_jint(&w, "shards", ab->nshards ? ab->nshards : 1);
        fe_ab_jint(&w, "rows_total", ab->nrows);
        fe_ab_jint(&w, "machines", ab->nmachines);
        fe_jw_key(&w, "measure");
        fe_jw_bool(&w, ab->measure);
        if (ab->optimal) {
            fe_jw_key(&w, "optimal");
            fe_jw_bool(&w, 1);
        }
    }
    if (ab->measure)
        fe_ab_jstr(&w, "measured_on", ab->device == FE_DEVICE_CUDA ? "cuda" : "cpu");
    if (ab->interrupted) {   /* Ctrl-C: the rows below are the complete ones */
        fe_jw_key(&w, "interrupted");
        fe_jw_bool(&w, 1);
    }
    fe_ab_jstr(&w, "baseline", ab->cnames[0]);
    fe_jw_key(&w, "policies");
    fe_jw_arr_flat(&w);
    for (int c = 0; c < ab->ncols; c++)
        fe_jw_str(&w, ab->cnames[c]);
    fe_jw_end(&w);
    fe_jw_key(&w, "rows");
    fe_jw_arr(&w);
    for (int r = 0; r < ab->nrows; r++)
        if (ab->rows[r].ran)
            row_json(ab, r, f, &w, part);
    fe_jw_end(&w);
    if (part) {
        fe_jw_key(&w, "faults");
        fe_jw_arr(&w);
        for (int i = 0; i < ab->nfaults; i++)
            fe_jw_str(&w, ab->faults[i]);
        fe_jw_end(&w);
    } else {
        summary_json(ab, &w);
    }
    fe_jw_end(&w);
    fputc('\n', f);
}

/* ---- CSV and Markdown ---- */

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
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
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* The provenance columns, last on every line: the row's file and hash,
 * then the report's (the same on every line, so that each line stands
 * alone when rows of several reports are concatenated). */
#define CSV_PROV_HEADER ",file,sha256,fuseeng,commit,date,cpu,cores,gpu,command"
static void csv_provenance(const fe_ab *ab, int r, FILE *f)
{
    const fe_prov *p = &ab->prov;
    const char *fields[] = {ab->rows[r].file, ab->rows[r].sha256, p->version, p->commit, p->date,
                            p->cpu};
    for (int k = 0; k < 6; k++) {
        fputc(',', f);
        csv_field(f, fields[k]);
    }
    fprintf(f, ",%d,", p->cores);
    csv_field(f, p->gpu);
    fputc(',', f);
    csv_field(f, p->command);
}

static void ab_csv(const fe_ab *ab, FILE *f)
{
    fprintf(f, "model,policy,kernels,extern,sim_ms,speedup,l3_bytes,mem_peak,tiled_groups,machine,dims,"
               "ratio,l2_peak,spill_bytes,plan_ms,winner,error%s%s%s%s\n",
            ab->measure ? ",cpu_ms,cpu_ratio,cpu_lo,cpu_hi,cpu_verdict,cpu_ok,cpu_max_rel" : "",
            ab->optimal ? ",optimal_ms,gap_pct" : "",
            ab->against ? ",recall,precision,kernels_differ,differ" : "", CSV_PROV_HEADER);
    for (int r = 0; r < ab->nrows; r++) {
        const fe_ab_rowres *rr = &ab->rows[r];
        int best = fe_ab_winner(ab, r);
        for (int c = 0; rr->ran && c < ab->ncols; c++) {
            const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
            csv_field(f, rr->model);
            fputc(',', f);
            csv_field(f, ab->cnames[c]);
            if (x->status == FE_AB_OK)
                fprintf(f, ",%d,%d,%.6f,%.4f,%lld,%lld,%d,", x->fig.kernels, x->fig.extern_calls,
                        x->fig.time_s * 1e3,
                        rr->unfused_ms / (x->fig.time_s * 1e3), (long long)x->fig.l3_bytes,
                        (long long)x->fig.mem_peak, x->fig.tiled);
            else
                fprintf(f, ",,,,,,,,");
            csv_field(f, rr->machine);
            fputc(',', f);
            csv_field(f, rr->dims);
            if (x->status == FE_AB_OK)
                fprintf(f, ",%.6f,%lld,%lld,%.3f,%d,", fe_ab_ratio(ab, r, c), (long long)x->fig.l2_peak,
                        (long long)x->fig.spill_bytes, x->plan_s * 1e3, c == best);
            else
                fprintf(f, ",,,,,0,");
            csv_field(f, x->error ? x->error : "");
            if (ab->measure && x->reps)
                fprintf(f, ",%.6f,%.6f,%.6f,%.6f,%s,%d,%.3g", x->cpu_ms, x->ratio, x->lo, x->hi,
                        verdict(x, c), x->cpu_ok, x->cpu_max_rel);
            else if (ab->measure)
                fprintf(f, ",,,,,,,");
            if (ab->optimal) {
                double g = fe_ab_gap(ab, r, c);
                if (rr->optimal == 1)
                    fprintf(f, ",%.6f", rr->optimal_s * 1e3);
                else
                    fputc(',', f);
                if (!isnan(g))
                    fprintf(f, ",%.4f", g * 100);
                else
                    fputc(',', f);
            }
            fe_ab_truth_csv(ab, r, c, f);
            csv_provenance(ab, r, f);
            fprintf(f, "\n");
        }
    }
}

/* A Markdown cell: '|' escaped, line breaks as spaces. */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void ab_md(const fe_ab *ab, FILE *f)
{
    fprintf(f, "| model | policy | kernels | extern | sim ms | ratio | L3 bytes | L2 peak | mem peak | "
               "spill | plan ms |%s%s\n", ab->measure ? " cpu ms | cpu ratio [95% CI] |" : "",
            ab->optimal ? " gap to optimal |" : "");
    fprintf(f, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|%s%s\n",
            ab->measure ? "---:|---|" : "", ab->optimal ? "---:|" : "");
    for (int r = 0; r < ab->nrows; r++) {
        int best = fe_ab_winner(ab, r);
        char label[600];
        fe_ab_row_label(ab, r, label, sizeof label);
        for (int c = 0; ab->rows[r].ran && c < ab->ncols; c++) {
            const fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
            fputs("| ", f);
            md_text(f, label);
            fputs(c == best ? " | **" : " | ", f);
            md_text(f, ab->cnames[c]);
            fputs(c == best ? "** |" : " |", f);
            if (x->status != FE_AB_OK) {
                fputs(" failed: ", f);
                md_text(f, x->error ? x->error : "");
                fprintf(f, " ||||||||||%s%s\n", ab->measure ? "||" : "", ab->optimal ? "|" : "");
                continue;
            }
            char l3[32], l2[32], mp[32], sp[32];
            fprintf(f, " %d | %d | %.3f | %.3fx | %s | %s | %s | %s | %.1f |", x->fig.kernels,
                    x->fig.extern_calls, x->fig.time_s * 1e3, fe_ab_ratio(ab, r, c),
                    fe_fmt_bytes((double)x->fig.l3_bytes, l3, sizeof l3),
                    fe_fmt_bytes((double)x->fig.l2_peak, l2, sizeof l2),
                    fe_fmt_bytes((double)x->fig.mem_peak, mp, sizeof mp),
                    fe_fmt_bytes((double)x->fig.spill_bytes, sp, sizeof sp), x->plan_s * 1e3);
            if (ab->measure && x->reps)
                fprintf(f, " %.3f | %.3fx [%.3f, %.3f] %s |", x->cpu_ms, x->ratio, x->lo, x->hi,
                        verdict(x, c));
            else if (ab->measure)
                fputs(" | |", f);
            if (ab->optimal) {
                char gap[32];
                fe_ab_gap_text(fe_ab_gap(ab, r, c), gap, sizeof gap);
                fprintf(f, " %s |", gap);
            }
            fputc('\n', f);
        }
    }
    /* the rows' notes: the optimum (--optimal), why the simulated best lost */
    for (int r = 0, first = 1; r < ab->nrows; r++) {
        char label[600], note[2][1100];
        note[0][0] = note[1][0] = '\0';
        if (ab->optimal)
            fe_ab_optimal_note(ab, r, note[0], sizeof note[0]);
        fe_ab_miss_text(ab, r, note[1], sizeof note[1]);
        fe_ab_row_label(ab, r, label, sizeof label);
        for (int k = 0; k < 2 && ab->rows[r].ran; k++)
            if (note[k][0]) {
                fputs(first ? "\n" : "", f);
                first = 0;
                md_text(f, label);
                fputs(": ", f);
                md_text(f, note[k]);
                fputs("  \n", f);
            }
    }
    fprintf(f, "\n| policy | geomean vs %s | wins | ties | losses | failed |%s%s\n", ab->cnames[0],
            ab->optimal ? " gap to optimal |" : "",
            ab->measure ? " measured geomean | wins | same | losses |" : "");
    fprintf(f, "|---|---:|---:|---:|---:|---:|%s%s\n", ab->optimal ? "---:|" : "",
            ab->measure ? "---:|---:|---:|---:|" : "");
    for (int c = 0; c < ab->ncols; c++) {
        fe_ab_tally t;
        fe_ab_tally_col(ab, c, &t);
        fputs("| ", f);
        md_text(f, ab->cnames[c]);
        fprintf(f, " | %.3fx | %d | %d | %d | %d |", t.geomean, t.wins, t.ties, t.losses, t.failed);
        if (ab->optimal) {
            char gap[32];
            fe_ab_gap_text(fe_ab_gap_mean(ab, c), gap, sizeof gap);
            fprintf(f, " %s |", gap);
        }
        if (ab->measure)
            fprintf(f, " %.3fx | %d | %d | %d |", t.cpu_geomean, t.cpu_wins, t.cpu_same,
                    t.cpu_losses);
        fputc('\n', f);
    }
    fe_ab_truth_md(ab, f);
    md_provenance(ab, f);
}

/* ---- SVG: speedup over unfused per row and policy ---- */

void fe_ab_xml_text(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
}

double fe_ab_tick_step(double maxv, int nticks, double *top)
{
    if (!(maxv > 0))
        maxv = 1;
    double raw = maxv / (nticks > 0 ? nticks : 4), mag = pow(10, floor(log10(raw))), step = 10 * mag;
    static const double m125[] = {1, 2, 5};
    for (int i = 2; i >= 0; i--)   /* the smallest of 1, 2, 5 x 10^k at or above raw */
        if (m125[i] * mag >= raw * (1 - 1e-9))
            step = m125[i] * mag;
    *top = ceil(maxv / step - 1e-9) * step;
    return step;
}

void fe_ab_write_svg(const fe_ab *ab, FILE *f)
{
    static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                         "#edc948", "#b07aa1", "#ff9da7"};
    int np = ab->ncols, nm = 0, rows[4096];
    for (int r = 0; r < ab->nrows && nm < 4096; r++)
        if (ab->rows[r].ran)
            rows[nm++] = r;
    double maxv = 1;
    for (int i = 0; i < nm; i++)
        for (int c = 0; c < np; c++) {
            const fe_ab_cell *x = &ab->cells[rows[i] * np + c];
            double v = x->status == FE_AB_OK && x->fig.time_s > 0 ?
                       ab->rows[rows[i]].unfused_ms / (x->fig.time_s * 1e3) : 0;
            if (v > maxv)
                maxv = v;
        }
    int bar = 18, gap = 14, left = 60, top = 40, h = 260;
    int width = left + nm * (np * bar + gap) + 220, height = top + h + 140;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n", width, height);
    fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">Simulated speedup over unfused</text>\n", left);
    /* round ticks: 0, step, 2 step, ... up to the axis top */
    double step = fe_ab_tick_step(maxv, 4, &maxv);
    int nt = (int)(maxv / step + 0.5);
    for (int t = 0; t <= nt; t++) {
        int y = top + h - (int)(h * t / nt);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n", left, y,
                left + nm * (np * bar + gap), y);
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%gx</text>\n", left - 6,
                y + 4, step * t);
    }
    int y1 = top + h - (int)(h / maxv);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
            left, y1, left + nm * (np * bar + gap), y1);
    for (int i = 0; i < nm; i++) {
        int x0 = left + i * (np * bar + gap) + gap / 2;
        char label[600];
        fe_ab_row_label(ab, rows[i], label, sizeof label);
        for (int c = 0; c < np; c++) {
            const fe_ab_cell *x = &ab->cells[rows[i] * np + c];
            double v = x->status == FE_AB_OK && x->fig.time_s > 0 ?
                       ab->rows[rows[i]].unfused_ms / (x->fig.time_s * 1e3) : 0;
            int bh = (int)(h * v / maxv);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>",
                    x0 + c * bar, top + h - bh, bar - 2, bh, colors[c % 8]);
            fe_ab_xml_text(f, label);
            fputs(", ", f);
            fe_ab_xml_text(f, ab->cnames[c]);
            fprintf(f, ": %.2fx</title></rect>\n", v);
        }
        fprintf(f, "<text transform=\"translate(%d,%d) rotate(35)\">", x0, top + h + 14);
        fe_ab_xml_text(f, label);
        fputs("</text>\n", f);
    }
    for (int c = 0; c < np; c++) {
        int x = left + nm * (np * bar + gap) + 20, y = top + c * 18;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", x, y,
                colors[c % 8]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">", x + 18, y + 10);
        fe_ab_xml_text(f, ab->cnames[c]);
        fputs("</text>\n", f);
    }
    fprintf(f, "</svg>\n");
}

static int write_ab(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    (void)arg, (void)err;
    const fe_ab *ab = obj;
    if (format == FE_FORMAT_JSON || format == FE_FORMAT_PART)
        fe_ab_write_json(ab, f, format == FE_FORMAT_PART);
    else if (format == FE_FORMAT_CSV)
        ab_csv(ab, f);
    else if (format == FE_FORMAT_MD)
        ab_md(ab, f);
    else if (format == FE_FORMAT_SVG)
        fe_ab_write_svg(ab, f);
    else if (format == FE_FORMAT_HTML)
        fe_ab_write_html(ab, f);
    else
        ab_text(ab, f);
    return FE_OK;
}

char *fe_ab_format(const fe_ab *ab, int format, fe_error *err)
{
    if (fe_api_null(ab, "fe_ab_format", "the comparison", err))
        return NULL;
    int kind = format & FE_FORMAT_MASK;
    if (kind != FE_FORMAT_TEXT && kind != FE_FORMAT_JSON && kind != FE_FORMAT_CSV &&
        kind != FE_FORMAT_SVG && kind != FE_FORMAT_MD && kind != FE_FORMAT_PART &&
        kind != FE_FORMAT_HTML) {
        fe_error_set(err, FE_EINPUT, "fe_ab_format: format %d is not text, JSON, CSV, Markdown, "
                     "SVG, HTML or a shard file", kind);
        return NULL;
    }
    return fe_api_text(write_ab, ab, NULL, kind, err);
}
