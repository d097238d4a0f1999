/* trace.c: Perfetto / Chrome trace-event JSON from simulator reports
 * (fe_trace_*).
 *
 * The file is the JSON object form of the trace-event format:
 * {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
 * Each report becomes one process (pid 1, 2, ...), so a plan and its
 * unfused baseline sit one above the other on the same time axis:
 *
 *   plan on gcu      kernels  |rms_norm|matmul   |silu+mul|...
 *                    L2       ▁▃▇▃▁
 *                    memory   ▃▃▅▅▅
 *   unfused on gcu   kernels  |rms_norm|matmul   |silu|mul|...
 *
 * Kernels are complete events ("ph": "X") with ts and dur in simulated
 * microseconds, rounded to whole nanoseconds so that back-to-back kernels
 * never overlap (Perfetto drops overlapping slices). Two counters ("ph":
 * "C"), "L2 occupancy" (the group's l2_occupancy) and "device memory",
 * step at every group start and drop at the end. Metadata events ("ph":
 * "M") name the process, its sort order and its thread. Every event has
 * name, ph, ts, pid and tid (test_sim.c checks the schema). Events are
 * written in time order and every number goes through jsonw, so the same
 * reports give the same bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "outfile.h"
#include "trace.h"

#define KERNEL_TID 1
#define MAX_ARG_MEMBERS 16

/* Every event carries the fields the trace-event format requires of it:
 * name, ph, ts, pid and tid (and dur for "X"). Metadata has no time of its
 * own and takes ts 0; counters belong to the process whatever their tid,
 * and all events of a process use its one thread, the kernels track, so
 * that no empty thread appears in the viewer. */
static void head(fe_jw *w, const char *ph, int pid, const char *name, double ts_us)
{
    fe_jw_obj_flat(w);
    fe_jw_key(w, "name");
    fe_jw_str(w, name);
    fe_jw_key(w, "ph");
    fe_jw_str(w, ph);
    fe_jw_key(w, "ts");
    fe_jw_num(w, ts_us);
    fe_jw_key(w, "pid");
    fe_jw_int(w, pid);
    fe_jw_key(w, "tid");
    fe_jw_int(w, KERNEL_TID);
}

static void meta(fe_jw *w, int pid, const char *what, const char *key, const char *text,
                 int64_t number)
{
    head(w, "M", pid, what, 0);
    fe_jw_key(w, "args");
    fe_jw_obj(w);
    fe_jw_key(w, key);
    if (text)
        fe_jw_str(w, text);
    else
        fe_jw_int(w, number);
    fe_jw_end(w);
    fe_jw_end(w);
}

static void counter(fe_jw *w, int pid, const char *name, double ts_us, int64_t bytes)
{
    head(w, "C", pid, name, ts_us);
    fe_jw_key(w, "args");
    fe_jw_obj(w);
    fe_jw_key(w, "bytes");
    fe_jw_int(w, bytes);
    fe_jw_end(w);
    fe_jw_end(w);
}

/* Simulated seconds as whole nanoseconds: Perfetto keeps ns internally and
 * refuses overlapping slices on a track, so a kernel must end exactly where
 * the next one starts, whatever the rounding of start + duration. */
static int64_t ns(double s)
{
    return llround(s * 1e9);
}

static int64_t end_ns(const fe_sim_report *r, int32_t i)
{
    return i + 1 < r->ngroups ? ns(r->start_s[i + 1]) : ns(r->total.time_s);
}

static void kernel(fe_jw *w, int pid, const fe_sim_report *r, int32_t i)
{
    const fe_plan *p = r->plan;
    const fe_graph *g = r->g;
    const fe_group *pg = &p->groups[i];
    const int32_t *mem = fe_group_nodes(p, pg);
    const fe_sim_group_result *gr = &r->groups[i];
    char label[160];
    fe_sim_group_label(g, mem, pg->n, label, sizeof label);
    int64_t t0 = ns(r->start_s[i]), t1 = end_ns(r, i);
    head(w, "X", pid, label, (double)t0 / 1e3);
    fe_jw_key(w, "cat");
    fe_jw_str(w, gr->collective ? "collective" : pg->n > 1 ? "fused" : "single");
    fe_jw_key(w, "dur");
    fe_jw_num(w, (double)(t1 > t0 ? t1 - t0 : 0) / 1e3);
    fe_jw_key(w, "args");
    fe_jw_obj(w);
    fe_jw_key(w, "group");
    fe_jw_int(w, i);
    fe_jw_key(w, "members");
    fe_jw_arr(w);
    for (int32_t k = 0; k < pg->n && k < MAX_ARG_MEMBERS; k++)
        fe_jw_str(w, fe_node_name(g, fe_graph_node(g, mem[k])));
    if (pg->n > MAX_ARG_MEMBERS) {
        char more[48];
        snprintf(more, sizeof more, "... %d more", (int)(pg->n - MAX_ARG_MEMBERS));
        fe_jw_str(w, more);
    }
    fe_jw_end(w);
    fe_jw_key(w, "split");
    fe_jw_int(w, gr->split);
    fe_jw_key(w, "l3_bytes");
    fe_jw_int(w, gr->l3_bytes);
    fe_jw_key(w, "reread_bytes");
    fe_jw_int(w, gr->reread_bytes);
    fe_jw_key(w, "overflow_bytes");
    fe_jw_int(w, gr->overflow_bytes);
    fe_jw_key(w, "working_set");
    fe_jw_int(w, gr->working_set);
    fe_jw_key(w, "l2_peak");
    fe_jw_int(w, gr->l2_peak);
    fe_jw_key(w, "regs");
    fe_jw_int(w, gr->regs);
    fe_jw_key(w, "spill_bytes");
    fe_jw_int(w, gr->spill_bytes);
    fe_jw_key(w, "flops");
    fe_jw_int(w, gr->flops);
    fe_jw_key(w, "compute_us");
    fe_jw_num(w, gr->compute_s * 1e6);
    fe_jw_key(w, "memory_us");
    fe_jw_num(w, gr->memory_s * 1e6);
    fe_jw_end(w);
    fe_jw_end(w);
}

static void process(fe_jw *w, int pid, const fe_sim_report *r, const char *label)
{
    char name[200];
    if (!label) {
        const fe_plan *p = r->plan;
        snprintf(name, sizeof name, "%s on %s",
                 p && p->policy >= 0 ? fe_strtab_str(p->strs, p->policy) : "plan",
                 r->machine.name);
        label = name;
    }
    meta(w, pid, "process_name", "name", label, 0);
    meta(w, pid, "process_sort_index", "sort_index", NULL, pid);
    meta(w, pid, "thread_name", "name", "kernels", 0);
    for (int32_t i = 0; i < r->ngroups; i++) {
        double ts = (double)ns(r->start_s[i]) / 1e3;
        counter(w, pid, "L2 occupancy", ts, r->groups[i].l2_occupancy);
        counter(w, pid, "device memory", ts, r->mem_bytes[i]);
        kernel(w, pid, r, i);
    }
    double end = (double)ns(r->total.time_s) / 1e3;
    counter(w, pid, "L2 occupancy", end, 0);
    counter(w, pid, "device memory", end, r->total.weight_bytes);
}

int fe_trace_write(FILE *f, const fe_sim_report *const *reports, const char *const *labels, int n,
                   fe_error *err)
{
    fe_jw w;
    fe_jw_init(&w, f, 1);
    fe_jw_obj(&w);
    fe_jw_key(&w, "displayTimeUnit");
    fe_jw_str(&w, "ms");
    fe_jw_key(&w, "otherData");
    fe_jw_obj_flat(&w);
    fe_jw_key(&w, "generator");
    fe_jw_str(&w, "fuseeng simulator");
    fe_jw_key(&w, "time");
    fe_jw_str(&w, "simulated microseconds");
    if (n > 0) {
        fe_jw_key(&w, "machine");
        fe_jw_str(&w, reports[0]->machine.name);
    }
    fe_jw_end(&w);
    fe_jw_key(&w, "traceEvents");
    fe_jw_arr(&w);
    for (int i = 0; i < n; i++)
        process(&w, i + 1, reports[i], labels ? labels[i] : NULL);
    fe_jw_end(&w);
    fe_jw_end(&w);
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        return fe_error_set(err, FE_EINPUT, "cannot write the trace: %s",
                            strerror(errno ? errno : EIO));
    return FE_OK;
}

int fe_trace_write_file(const char *path, const fe_sim_report *const *reports,
                        const char *const *labels, int n, fe_error *err)
{
    fe_outfile o;
    if (fe_outfile_open(&o, path, "the trace", err) != FE_OK)
        return FE_EINPUT;
    if (fe_trace_write(o.f, reports, labels, n, err) != FE_OK)
        return fe_outfile_fail(&o, err);
    return fe_outfile_commit(&o, err);
}
