/* bench_policy.c: planning at scale. Every shipped policy (each .lua file in policies/,
 * so a policy added later is covered) plans LLaMA-style models of ~100k,
 * ~300k and ~1M nodes; per policy it prints the planning time at each
 * size, the growth exponent between sizes, Lua hook calls per second and
 * PASS/FAIL against the targets of issue 13:
 *
 *   ~100k nodes            <= 2 s
 *   ~1M nodes              <= 10 s, or <= 5 s for a run without Lua hooks
 *   Lua hooks              >= 300,000 calls per second of hook time (the
 *                          hooks' share of the run's wall time, applied to
 *                          its CPU time)
 *   growth                 exponent <= 1.15 between sizes (n log n from
 *                          100k to 1M nodes is an exponent of about 1.08)
 *
 * Times are the process's CPU time during fe_run_policy: planning is one
 * thread, and on a quiet machine this is its wall time (which --stats
 * prints), but the machines this runs on are shared, and wall time there
 * measures the neighbours. A policy that measures on the CPU kernels
 * (ctx:bench, benchmark_fusion) runs with a bench budget of MEASURE_BUDGET
 * seconds per run, and its measuring time is reported on its own line and
 * left out of the targets (wall and CPU time both): measuring is bounded by
 * its budget, not by the model's size.
 *
 * Each run plans in a child process of its own (fork after the model is
 * loaded), so no run inherits the heap of the runs before it, and a run
 * under REPEAT_BELOW seconds is repeated and its fastest kept.
 *
 * optimal.lua is left out: it solves an integer program per window of 64
 * nodes, which no target here was set for; bench_optimal.c holds it to its
 * own (issue 36).
 *
 * Three policies written here complete the picture: `decide_only` (a
 * greedy policy whose decide says no: the cost of a hook call itself),
 * `smart` (score and decide hooks reading group fields, as a hand-written
 * Inductor policy would) and `flow` (the dataflow driver, which no shipped
 * policy uses yet). BENCH_SIZES="2500,7500" (layers) and BENCH_POLICIES
 * ("fuse_all,gcu_tlf") narrow a run while iterating.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "load.h"
#include "planning.h"

#define MAX_POLICIES 64
#define MAX_SIZES 4
#define MEASURE_BUDGET 2.0
#define T_100K 2.0
#define T_1M 10.0
#define T_1M_NO_HOOKS 5.0
#define MIN_RATE 300000.0
#define MAX_EXPONENT 1.15
#define MIN_HOOKS 1000      /* fewer hook calls (no_fusion's one plan call) give no rate */
/* Runs shorter than REPEAT_BELOW seconds are repeated REPEATS times and the
 * fastest kept: on a shared machine a short run is easily doubled by a
 * neighbour, and the growth exponents compare short runs. */
#define REPEATS 3
#define REPEAT_BELOW 1.0

static const char smart[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy {\n"
    "  name = 'smart', driver = 'greedy', params = { max_nodes = 24, max_reductions = 1 },\n"
    "  -- Inductor-like: memory saved first, nearer pairs next.\n"
    "  score = function(self, a, b, ctx)\n"
    "    local shared = 0\n"
    "    for _, t in ipairs(a.outputs) do\n"
    "      for _, c in ipairs(t.consumers) do if b:contains(c) then shared = shared + t.bytes break end end\n"
    "    end\n"
    "    return shared / (1 + math.abs(a.first.index - b.first.index))\n"
    "  end,\n"
    "  decide = function(self, g, ctx)\n"
    "    if #g > self.params.max_nodes then return false, 'too big' end\n"
    "    local k = g.kinds\n"
    "    if k.reduction > self.params.max_reductions then return false, 'two reductions' end\n"
    "    if g.internal_bytes == 0 then return false, 'saves nothing' end\n"
    "    return true, 'saves ' .. fe.fmt_bytes(g.internal_bytes)\n"
    "  end,\n"
    "}\n";

/* The dataflow driver (no shipped policy uses it yet): a LLaMA MLP's flow. */
static const char flow[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy { name = 'flow', driver = 'dataflow',\n"
    "  dataflow = [[\n"
    "    norm -> proj -> act -> gate -> down -> res\n"
    "    norm = rms_norm; proj = matmul; act = silu; gate = mul; down = matmul; res = add\n"
    "  ]],\n"
    "  decide = function(self, g, ctx) return #g > 1, 'along the flow' end }\n";

static const char decide_only[] =
    "local fe = require 'fuseeng'\n"
    "return fe.policy { name = 'decide_only', driver = 'greedy',\n"
    "  decide = function(self, g, ctx) return false, 'no' end }\n";

typedef struct row {
    char name[64];
    const char *src;            /* Lua source for the bench's own, else NULL */
    fe_policy *p;
    double cpu[MAX_SIZES], wall[MAX_SIZES], measuring[MAX_SIZES];
    int64_t hooks[MAX_SIZES];
    double hook_s[MAX_SIZES];
    int kernels[MAX_SIZES];
    int measures;               /* called ctx:bench */
    char error[1100];
} row;

/* The largest peak of this process and the measuring children. */
static double peak_rss_mib(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_maxrss > kids.ru_maxrss ? self.ru_maxrss : kids.ru_maxrss) / 1024.0;
}

/* One planning run's figures, as a child process reports them. */
typedef struct sample {
    double cpu, wall, measuring, hook_s;
    int64_t hooks;
    int kernels, measures;
    char error[1100];
} sample;

/* Plan g with p in a child process and report its figures in *m. A child
 * per run starts every policy from the same engine state: run in one
 * process, a policy inherited the heap its predecessors left (a plan of
 * decide_only took 0.2 s alone and 0.5 s after the spill policies), which
 * was most of the noise in the growth exponents. */
static void measure(fe_policy *p, const fe_graph *g, sample *m)
{
    int fd[2];
    memset(m, 0, sizeof *m);
    if (pipe(fd) != 0) {
        snprintf(m->error, sizeof m->error, "pipe: %s", strerror(errno));
        return;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(m->error, sizeof m->error, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        close(fd[0]);
        sample r = {0};
        fe_error err = {0};
        fe_run_stats st;
        double c0 = fe_clock_cpu_s(), w0 = fe_clock_s();
        fe_plan *plan = fe_run_policy(&p->r, g, &st, &err);
        double c1 = fe_clock_cpu_s(), w1 = fe_clock_s();
        if (!plan) {
            snprintf(r.error, sizeof r.error, "%s", err.message);
        } else {
            r.measures = st.bench_measured + st.bench_cached + st.bench_fallbacks > 0;
            /* Measuring is bounded by its budget, not the model: left out. */
            r.measuring = st.bench_seconds;
            r.wall = w1 - w0 - st.bench_seconds;
            r.cpu = c1 - c0 - st.bench_cpu_seconds;
            r.hooks = st.hook_calls;
            /* The hooks' share of the run's wall time, applied to its CPU
             * time: on a busy machine wall time counts the neighbours. */
            double share = st.seconds > st.bench_seconds
                               ? (st.hook_seconds - st.bench_seconds) / (st.seconds - st.bench_seconds) : 0;
            r.hook_s = share * r.cpu;
            r.kernels = plan->ngroups;
        }
        ssize_t k = write(fd[1], &r, sizeof r);
        _exit(k == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof *m) {
        ssize_t k = read(fd[0], (char *)m + got, sizeof *m - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != sizeof *m)
        snprintf(m->error, sizeof m->error, "the measuring process died (%s)",
                 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no report");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is name in the comma list (NULL: everything)? */
static int wanted(const char *list, const char *name)
{
    if (!list)
        return 1;
    size_t n = strlen(name);
    for (const char *s = list; (s = strstr(s, name)); s += n)
        if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == 0))
            return 1;
    return 0;
}

/* The shipped policies, sorted, then the bench's own. */
static int list_policies(row *rows, const char *only)
{
    char *names[MAX_POLICIES];
    int n = 0, nr = 0;
    DIR *d = opendir("policies");
    struct dirent *ent;
    while (d && (ent = readdir(d)) && n < MAX_POLICIES) {
        size_t len = strlen(ent->d_name);
        if (len > 4 && strcmp(ent->d_name + len - 4, ".lua") == 0)
            names[n++] = strndup(ent->d_name, len - 4);
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++) {
        if (wanted(only, names[i]) && strcmp(names[i], "optimal") != 0 && nr < MAX_POLICIES - 3)
            snprintf(rows[nr++].name, sizeof rows[0].name, "%s", names[i]);
        free(names[i]);
    }
    const char *own[][2] = {{"decide_only", decide_only}, {"smart", smart}, {"flow", flow}};
    for (int i = 0; i < 3; i++)
        if (wanted(only, own[i][0])) {
            snprintf(rows[nr].name, sizeof rows[0].name, "%s", own[i][0]);
            rows[nr++].src = own[i][1];
        }
    return nr;
}

static const char *model_path(int layers, char *buf, size_t size)
{
    snprintf(buf, size, "build/bench/llama_%d.json", layers);
    struct stat st;
    if (stat(buf, &st) == 0)
        return buf;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "lua5.4 examples/gen_models.lua --layers %d --compact --out %s",
             layers, buf);
    return system(cmd) == 0 ? buf : NULL;
}

static double exponent(double t0, double t1, int n0, int n1)
{
    if (t0 <= 0 || t1 <= 0 || n0 <= 0 || n1 <= n0)
        return NAN;
    return log(t1 / t0) / log((double)n1 / n0);
}

int main(void)
{
    int layers[MAX_SIZES] = {2500, 7500, 25000}, nsizes = 3, nodes[MAX_SIZES] = {0};
    const char *env = getenv("BENCH_SIZES");
    if (env) {
        nsizes = 0;
        for (const char *s = env; *s && nsizes < MAX_SIZES; s = strchr(s, ',') ? strchr(s, ',') + 1 : "")
            layers[nsizes++] = atoi(s);
    }
    static row rows[MAX_POLICIES];
    int nr = list_policies(rows, getenv("BENCH_POLICIES"));
    fe_error err = {0};
    /* A shared machine may take many times the CPU time in wall time: no
     * wall-clock limit short of an hour per run. Policies that keep a Lua
     * table per group (the Inductor family's facts) need more than the
     * default 512 MiB of Lua memory at 1M nodes, as they would with
     * --max-memory on the command line: 4 GiB here. */
    fe_engine_options eo = {.bench_budget = MEASURE_BUDGET, .max_seconds = 3600,
                            .max_memory = (int64_t)4 << 30};
    fe_engine *e = fe_engine_new(&eo, &err);
    if (!e) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    for (int i = 0; i < nr; i++) {
        row *w = &rows[i];
        w->p = w->src ? fe_engine_load_policy_buffer(e, w->src, strlen(w->src), w->name, &err)
                      : fe_engine_load_policy(e, w->name, &err);
        if (!w->p)
            snprintf(w->error, sizeof w->error, "%s", err.message);
    }

    printf("planning time, CPU seconds of the run (wall seconds in brackets), %d policies\n", nr);
    for (int s = 0; s < nsizes; s++) {
        char buf[128];
        const char *path = model_path(layers[s], buf, sizeof buf);
        double t0 = fe_clock_s();
        fe_graph *g = path ? fe_load_model_file(path, NULL, &err) : NULL;
        if (!g) {
            fprintf(stderr, "%s: %s\n", buf, path ? err.message : "cannot generate it");
            return 1;
        }
        nodes[s] = g->nnodes;
        printf("\nmodel %s: %d nodes, loaded in %.2f s\n", path, g->nnodes, fe_clock_s() - t0);
        for (int i = 0; i < nr; i++) {
            row *w = &rows[i];
            if (!w->p || w->error[0])
                continue;
            sample best = {0};
            for (int rep = 0; rep < REPEATS; rep++) {
                sample m;
                measure(w->p, g, &m);
                if (m.error[0]) {
                    snprintf(w->error, sizeof w->error, "%s", m.error);
                    break;
                }
                if (rep == 0 || m.cpu < best.cpu)
                    best = m;
                if (m.cpu >= REPEAT_BELOW)
                    break;   /* long runs: one is enough, and noise is a small part */
            }
            if (w->error[0])
                continue;
            w->measures |= best.measures;
            w->measuring[s] = best.measuring;
            w->wall[s] = best.wall;
            w->cpu[s] = best.cpu;
            w->hooks[s] = best.hooks;
            w->hook_s[s] = best.hook_s;
            w->kernels[s] = best.kernels;
            printf("  %-24s %8.3f s (%7.3f)  %7d kernels  %9lld hook calls%s\n", w->name, w->cpu[s],
                   w->wall[s], best.kernels, (long long)best.hooks,
                   w->measures ? "  (measuring left out)" : "");
            fflush(stdout);
        }
        fe_graph_free(g);
        printf("peak RSS so far %.0f MiB\n", peak_rss_mib());
    }

    printf("\n%-24s", "policy");
    for (int s = 0; s < nsizes; s++)
        printf(" %7dk", (nodes[s] + 500) / 1000);
    for (int s = 1; s < nsizes; s++)
        printf("  exp %3dk", (nodes[s] + 500) / 1000);
    printf(" %12s  verdict\n", "hook calls/s");
    int failed = 0;
    for (int i = 0; i < nr; i++) {
        row *w = &rows[i];
        if (w->error[0]) {
            printf("%-24s FAIL: %s\n", w->name, w->error);
            failed = 1;
            continue;
        }
        char why[512] = "";
        size_t at = 0;
        printf("%-24s", w->name);
        for (int s = 0; s < nsizes; s++) {
            printf(" %7.3fs", w->cpu[s]);
            int n = nodes[s];
            double limit = n < 200000 ? T_100K : n > 700000 ? (w->hooks[s] ? T_1M : T_1M_NO_HOOKS) : 0;
            if (limit > 0 && w->cpu[s] > limit)
                at += (size_t)snprintf(why + at, sizeof why - at, "%s%.2f s > %.0f s at %dk",
                                       at ? "; " : "", w->cpu[s], limit, (n + 500) / 1000);
        }
        for (int s = 1; s < nsizes; s++) {
            double x = exponent(w->cpu[s - 1], w->cpu[s], nodes[s - 1], nodes[s]);
            printf("  %8.2f", x);
            /* Runs under 50 ms are mostly noise and start-up. */
            if (x > MAX_EXPONENT && w->cpu[s] > 0.05)
                at += (size_t)snprintf(why + at, sizeof why - at, "%sgrows as n^%.2f", at ? "; " : "", x);
        }
        double rate = w->hook_s[nsizes - 1] > 0 ? (double)w->hooks[nsizes - 1] / w->hook_s[nsizes - 1] : 0;
        if (w->hooks[nsizes - 1] >= MIN_HOOKS) {
            printf(" %12.0f", rate);
            if (rate < MIN_RATE)
                at += (size_t)snprintf(why + at, sizeof why - at, "%s%.0f hook calls/s < %.0f",
                                       at ? "; " : "", rate, MIN_RATE);
        } else {
            printf(" %12s", w->hooks[nsizes - 1] ? "few hooks" : "no hooks");
        }
        printf("  %s%s%s\n", at ? "FAIL: " : "PASS", why, "");
        if (w->measures) {
            printf("%-24s measures on the CPU kernels (ctx:bench): budget %.0f s per run, spent",
                   "", MEASURE_BUDGET);
            for (int s = 0; s < nsizes; s++)
                printf(" %.2f s", w->measuring[s]);
            printf("; left out of the times above\n");
        }
        failed |= at > 0;
    }
    printf("targets: %.0f s at ~100k nodes, %.0f s at ~1M (%.0f s without Lua hooks), >= %.0f hook "
           "calls/s, growth exponent <= %.2f\n", T_100K, T_1M, T_1M_NO_HOOKS, MIN_RATE, MAX_EXPONENT);
    printf("peak RSS %.0f MiB\n", peak_rss_mib());
    for (int i = 0; i < nr; i++)
        fe_policy_free(rows[i].p);
    fe_engine_free(e);
    return failed;
}
