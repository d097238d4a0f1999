/* sim_report.c: simulator reports as text tables and JSON (fe_sim_report_*).
 *
 * Times are written in microseconds (the plan file's "sim_us"), bytes as
 * exact integers in JSON and in binary units (KiB, MiB, GiB) in tables. All
 * JSON goes through jsonw, whose shortest round-trip numbers make the output
 * byte-identical from run to run.
 */
#include <stdio.h>
#include <string.h>

#include "ops.h"
#include "groupkey.h"
#include "sim.h"
#include "units.h"

void fe_sim_group_label(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size)
{
    char tail[48];
    if (size == 0)
        return;
    if (fe_group_compat_key(g, nodes, n, buf, size) < size)
        return;
    /* Too long: keep whole op names and say how many ops there are... */
    size_t len = (size_t)snprintf(tail, sizeof tail, "+...(%d ops)", n);
    size_t at = size - 1 > len ? size - 1 - len : 0;
    while (at > 0 && buf[at] != '+')
        at--;
    if (at > 0) {
        snprintf(buf + at, size - at, "%s", tail);
        return;
    }
    /* ...or, when the first name alone is too long, cut it (at a UTF-8
     * character boundary) and end with "...". */
    at = size > 4 ? size - 4 : 0;
    while (at > 0 && ((unsigned char)buf[at] & 0xc0) == 0x80)
        at--;
    snprintf(buf + at, size - at, "%s", "...");
}

static void num_us(fe_jw *w, const char *key, double s)
{
    fe_jw_key(w, key);
    fe_jw_num(w, s * 1e6);
}

static void int_key(fe_jw *w, const char *key, int64_t v)
{
    fe_jw_key(w, key);
    fe_jw_int(w, v);
}

/* The fields of a group result, inside an open object. */
static void group_fields(const fe_sim_group_result *r, fe_jw *w)
{
    int_key(w, "nodes", r->nodes);
    int_key(w, "split", r->split);
    int_key(w, "split_default", r->split_default);
    fe_jw_key(w, "fits");
    fe_jw_bool(w, r->fits);
    num_us(w, "time_us", r->time_s);
    num_us(w, "launch_us", r->launch_s);
    num_us(w, "tile_us", r->tile_s);
    num_us(w, "collective_us", r->collective_s);
    num_us(w, "compute_us", r->compute_s);
    num_us(w, "memory_us", r->memory_s);
    num_us(w, "l3_us", r->l3_s);
    num_us(w, "l2_us", r->l2_s);
    num_us(w, "spill_us", r->spill_s);
    int_key(w, "flops", r->flops);
    int_key(w, "l3_read", r->l3_read);
    int_key(w, "l3_write", r->l3_write);
    int_key(w, "l3_bytes", r->l3_bytes);
    int_key(w, "reread_bytes", r->reread_bytes);
    int_key(w, "overflow_bytes", r->overflow_bytes);
    int_key(w, "intermediate_bytes", r->intermediate_bytes);
    int_key(w, "l2_bytes", r->l2_traffic);   /* the format's name for the traffic */
    int_key(w, "working_set", r->working_set);
    int_key(w, "l2_peak", r->l2_peak);
    int_key(w, "l2_occupancy", r->l2_occupancy);
    int_key(w, "regs", r->regs);
    int_key(w, "spill_regs", r->spill_regs);
    int_key(w, "spill_bytes", r->spill_bytes);
    int_key(w, "collective_bytes", r->collective_bytes);
}

void fe_sim_group_json(const fe_sim_group_result *r, fe_jw *w)
{
    fe_jw_obj_flat(w);
    group_fields(r, w);
    fe_jw_end(w);
}

/* Group i of a report: when it starts, the device memory in use, and its
 * price. The one writer of per-group figures: `sim --json --verbose` puts
 * them in its group objects, plan files under each group's "sim". */
static void report_group_fields(const fe_sim_report *r, int32_t i, fe_jw *w)
{
    num_us(w, "start_us", r->start_s[i]);
    int_key(w, "mem_bytes", r->mem_bytes[i]);
    group_fields(&r->groups[i], w);
}

void fe_sim_report_group_json(const fe_sim_report *r, int32_t i, fe_jw *w)
{
    fe_jw_obj_flat(w);
    report_group_fields(r, i, w);
    fe_jw_end(w);
}

/* The plan-file summary's figures, without "kernels" (the plan writer has
 * it): the keys DESIGN.md's plan file names. */
void fe_sim_report_plan_summary(const fe_sim_report *r, fe_jw *w)
{
    num_us(w, "sim_us", r->total.time_s);
    int_key(w, "l3_bytes", r->total.l3_bytes);
    int_key(w, "l2_peak", r->total.l2_peak);
    int_key(w, "mem_peak", r->total.mem_peak);
    int_key(w, "spill_bytes", r->total.spill_bytes);
}

void fe_sim_report_summary_json(const fe_sim_report *r, fe_jw *w)
{
    fe_jw_obj_flat(w);
    int_key(w, "kernels", r->total.kernels);
    int_key(w, "extern", r->total.extern_calls);
    if (r->total.copies)
        int_key(w, "copies", r->total.copies);
    fe_sim_report_plan_summary(r, w);
    fe_jw_end(w);
}

static void totals_fields(const fe_sim_report *r, fe_jw *w)
{
    const fe_sim_totals *t = &r->total;
    int_key(w, "kernels", t->kernels);
    int_key(w, "extern", t->extern_calls);
    if (t->copies)
        int_key(w, "copies", t->copies);
    int_key(w, "views", t->views);
    num_us(w, "time_us", t->time_s);
    int_key(w, "l3_bytes", t->l3_bytes);
    int_key(w, "l2_bytes", t->l2_traffic);
    int_key(w, "l2_peak", t->l2_peak);
    int_key(w, "mem_peak", t->mem_peak);
    int_key(w, "weight_bytes", t->weight_bytes);
    int_key(w, "spill_bytes", t->spill_bytes);
    int_key(w, "reread_bytes", t->reread_bytes);
    int_key(w, "overflow_bytes", t->overflow_bytes);
    int_key(w, "flops", t->flops);
    num_us(w, "launch_us", t->launch_s);
    num_us(w, "tile_us", t->tile_s);
    num_us(w, "collective_us", t->collective_s);
    num_us(w, "compute_us", t->compute_s);
    num_us(w, "memory_us", t->memory_s);
    int_key(w, "tiled_groups", t->tiled);
    int_key(w, "overflowing_groups", t->overflowing);
    int_key(w, "spilling_groups", t->spilling);
}

void fe_sim_report_json(const fe_sim_report *r, fe_jw *w, int groups)
{
    const fe_graph *g = r->g;
    const fe_plan *p = r->plan;
    fe_jw_obj(w);
    fe_jw_key(w, "machine");
    fe_jw_str(w, r->machine.name);
    fe_jw_key(w, "model");
    fe_jw_str(w, g && g->name ? g->name : "");
    fe_jw_key(w, "policy");
    if (p && p->policy >= 0)
        fe_jw_str(w, fe_strtab_str(p->strs, p->policy));
    else
        fe_jw_null(w);
    totals_fields(r, w);
    if (groups && p) {
        char label[256];
        fe_jw_key(w, "groups");
        fe_jw_arr(w);
        for (int32_t i = 0; i < r->ngroups; i++) {
            const fe_group *gr = &p->groups[i];
            const int32_t *mem = fe_group_nodes(p, gr);
            fe_jw_obj_flat(w);
            int_key(w, "id", i);
            fe_sim_group_label(g, mem, gr->n, label, sizeof label);
            fe_jw_key(w, "label");
            fe_jw_str(w, label);
            fe_jw_key(w, "members");
            fe_jw_arr(w);
            for (int32_t k = 0; k < gr->n; k++)
                fe_jw_str(w, fe_node_name(g, fe_graph_node(g, mem[k])));
            fe_jw_end(w);
            report_group_fields(r, i, w);
            fe_jw_end(w);
        }
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

void fe_sim_report_compare_json(const fe_sim_report *plan, const fe_sim_report *base, fe_jw *w)
{
    fe_jw_obj(w);
    fe_jw_key(w, "machine");
    fe_jw_str(w, plan->machine.name);
    fe_jw_key(w, "plan");
    fe_sim_report_summary_json(plan, w);
    fe_jw_key(w, "unfused");
    fe_sim_report_summary_json(base, w);
    fe_jw_key(w, "speedup");
    fe_jw_num(w, plan->total.time_s > 0 ? base->total.time_s / plan->total.time_s : 1.0);
    fe_jw_end(w);
}

/* ---- text ---- */

static const char *fmt_rate(double bps, char *buf, size_t size)
{
    if (bps >= 1e12)
        snprintf(buf, size, "%g TB/s", bps / 1e12);
    else
        snprintf(buf, size, "%g GB/s", bps / 1e9);
    return buf;
}

static void machine_line(const fe_machine *m, FILE *f)
{
    char a[32], b[32], c[32];
    fprintf(f, "machine %s: %s L2 at %s, L3 at %s, %g us launch%s\n", m->name,
            fe_fmt_bytes_table((double)m->l2_bytes, a, sizeof a),
            fmt_rate(m->l2_bandwidth, b, sizeof b),
            fmt_rate(m->l3_bandwidth, c, sizeof c), m->launch_us,
            m->overlap ? ", compute overlaps memory" : "");
}

/* Relative change of plan against base, e.g. "-37.5%". */
static const char *fmt_change(int64_t plan, int64_t base, char *buf, size_t size)
{
    if (base == 0)
        snprintf(buf, size, "%s", plan == 0 ? "=" : "new");
    else
        snprintf(buf, size, "%+.1f%%", 100.0 * (double)(plan - base) / (double)base);
    return buf;
}

static void bytes_row(FILE *f, const char *what, int64_t base, int64_t plan)
{
    char a[32], b[32], c[32];
    fprintf(f, "%-22s %14s %14s %12s\n", what, fe_fmt_bytes_table((double)base, a, sizeof a),
            fe_fmt_bytes_table((double)plan, b, sizeof b), fmt_change(plan, base, c, sizeof c));
}

void fe_sim_report_compare_table(const fe_sim_report *plan, const fe_sim_report *base, FILE *f)
{
    const fe_sim_totals *p = &plan->total, *u = &base->total;
    char a[32], b[32], c[48];
    machine_line(&plan->machine, f);
    fprintf(f, "%-22s %14s %14s %12s\n", "", "unfused", "plan", "change");
    fprintf(f, "%-22s %14d %14d %+12d\n", "kernels", (int)u->kernels, (int)p->kernels,
            (int)(p->kernels - u->kernels));
    fprintf(f, "%-22s %14d %14d %+12d\n", "extern calls", (int)u->extern_calls,
            (int)p->extern_calls, (int)(p->extern_calls - u->extern_calls));
    if (p->copies || u->copies)
        fprintf(f, "%-22s %14d %14d %+12d\n", "layout copies", (int)u->copies, (int)p->copies,
                (int)(p->copies - u->copies));
    double speedup = p->time_s > 0 ? u->time_s / p->time_s : 1.0;
    snprintf(c, sizeof c, "%.2fx %s", speedup >= 1 ? speedup : 1 / speedup,
             speedup >= 1 ? "faster" : "slower");
    fprintf(f, "%-22s %14s %14s %12s\n", "time", fe_fmt_time(u->time_s, a, sizeof a),
            fe_fmt_time(p->time_s, b, sizeof b), c);
    bytes_row(f, "L3 traffic", u->l3_bytes, p->l3_bytes);
    bytes_row(f, "L2 occupancy peak", u->l2_peak, p->l2_peak);
    bytes_row(f, "device memory peak", u->mem_peak, p->mem_peak);
    bytes_row(f, "register spill", u->spill_bytes, p->spill_bytes);
    fprintf(f, "%-22s %14d %14d\n", "tiled groups", (int)u->tiled, (int)p->tiled);
    fprintf(f, "%-22s %14d %14d\n", "overflowing groups", (int)u->overflowing,
            (int)p->overflowing);
    fprintf(f, "speedup %.2fx\n", speedup);
}

void fe_sim_report_groups_table(const fe_sim_report *r, FILE *f)
{
    const fe_plan *p = r->plan;
    const fe_graph *g = r->g;
    /* The ops column is 32 wide: labels are cut to fit (fe_sim_group_label
     * ends a cut one with "..."), so long groups never shift the columns. */
    char label[33], l3[32], ws[32], tile[32], spill[32], note[64];
    machine_line(&r->machine, f);
    fprintf(f, "%5s  %-32s %5s %5s %11s %11s %11s %11s %5s %11s  %s\n", "group", "ops", "nodes",
            "split", "time_us", "L3", "work set", "L2/tile", "regs", "spill", "note");
    for (int32_t i = 0; i < r->ngroups; i++) {
        const fe_sim_group_result *gr = &r->groups[i];
        const fe_group *pg = &p->groups[i];
        for (int32_t c = 0; c < r->ncopies; c++) {
            if (fe_plan_copy_group(p, p->copies[c].tensor) != i)
                continue;
            snprintf(label, sizeof label, "copy %s",
                     fe_tensor_name(g, fe_graph_tensor(g, p->copies[c].tensor)));
            fprintf(f, "%5s  %-32s %5d %5d %11.1f %11s %11s %11s %5d %11s  %s\n", "", label, 0, 1,
                    r->copies[c].time_s * 1e6,
                    fe_fmt_bytes_table((double)r->copies[c].l3_bytes, l3, sizeof l3),
                    fe_fmt_bytes_table(0, ws, sizeof ws), fe_fmt_bytes_table(0, tile, sizeof tile),
                    0, fe_fmt_bytes_table(0, spill, sizeof spill), "layout copy");
        }
        fe_sim_group_label(g, fe_group_nodes(p, pg), pg->n, label, sizeof label);
        size_t at = 0;
        note[0] = '\0';
        if (gr->launch != FE_LAUNCH_KERNEL)
            at += (size_t)snprintf(note + at, sizeof note - at, "%s ",
                                   gr->launch == FE_LAUNCH_NONE ? "view: no launch" : "extern");
        if (gr->collective)
            at += (size_t)snprintf(note + at, sizeof note - at, "collective ");
        if (gr->split > 1)
            at += (size_t)snprintf(note + at, sizeof note - at, "tiled x%d ", (int)gr->split);
        if (gr->overflow_bytes > 0)
            at += (size_t)snprintf(note + at, sizeof note - at, "overflows L2 ");
        if (gr->spill_bytes > 0)
            snprintf(note + at, sizeof note - at, "spills %d regs", (int)gr->spill_regs);
        fprintf(f, "%5d  %-32s %5d %5d %11.1f %11s %11s %11s %5d %11s  %s\n", (int)i, label,
                (int)gr->nodes, (int)gr->split, gr->time_s * 1e6,
                fe_fmt_bytes_table((double)gr->l3_bytes, l3, sizeof l3),
                fe_fmt_bytes_table((double)gr->working_set, ws, sizeof ws),
                fe_fmt_bytes_table((double)gr->l2_peak, tile, sizeof tile), (int)gr->regs,
                fe_fmt_bytes_table((double)gr->spill_bytes, spill, sizeof spill), note);
    }
    char t[32], l[32];
    char copies[48] = "";
    if (r->total.copies)
        snprintf(copies, sizeof copies, "; %d layout cop%s", (int)r->total.copies,
                 r->total.copies == 1 ? "y" : "ies");
    fprintf(f, "total: %d kernels (+%d extern%s), %s, %s of L3 traffic\n", (int)r->total.kernels,
            (int)r->total.extern_calls, copies,
            fe_fmt_time(r->total.time_s, t, sizeof t),
            fe_fmt_bytes_table((double)r->total.l3_bytes, l, sizeof l));
}
