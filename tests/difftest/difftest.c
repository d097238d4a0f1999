/* difftest.c: the random-graph differential tester (docs/testing.md).
 *
 * For every seed: generate a valid model (gen.c), write it to a file and
 * load it as `fuseeng check` does, then plan it with every shipped policy
 * and, for each plan, check its legality from scratch (fe_plan_check, the
 * one owner of the rules), simulate it, write it as a plan file and read
 * that back for the model (what `run --plan` does), and execute it on the
 * CPU kernels against the unfused reference with the tolerances of
 * `run --execute`. Every few seeds the timing paths of `bench`, `profile`
 * and `run --execute` run too, and a profile written by them is read back
 * and planned with.
 *
 * The rule under test: whatever `check` accepts, every command executes.
 * And no shipped policy's plan simulates faster than optimal.lua's, the
 * optimum under the cost model.
 * A failure prints the seed, the policy, the stage and the message, and
 * leaves the model in the repro directory; `--seed N` replays it. A crash
 * prints the same before the process dies (signal handler, or ASan's death
 * callback); UBSan ends the process without a word, but the model it was
 * on stays in the scratch directory ($TMPDIR/difftest.PID/difftest-N.json),
 * and -v prints each seed as it starts.
 *
 * --device cuda runs every plan on the GPU instead (the reference stays on
 * the CPU, core/exec/gpu_exec.h): the generated CUDA kernels against the
 * CPU's reference kernels on random graphs.
 *
 *   difftest [--seed N | --seeds A:B | --list FILE]... [--out DIR] [--tap]
 *            [--timing-every K] [--policy NAME]... [--max-nodes N] [--op OP] [--print] [-v]
 *            [--device cpu|cuda]
 *
 * --print writes the seeds' models to stdout instead of testing them.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "exec.h"
#include "compare.h"
#include "fuseeng_cli.h"
#include "cuda.h"
#include "gen.h"
#include "gpu_exec.h"
#include "choice.h"
#include "legality.h"

#define MAXPOL 32

typedef struct run {
    fe_engine *e, *eprof;          /* eprof plans with a freshly written profile */
    fe_policy *pol[MAXPOL], *prof_pol;
    int npol, ncombined;       /* pol[npol - ncombined ..] are combinations */
    const char *out;               /* repro directory */
    char tmp[512];                 /* scratch directory */
    fe_gen_opts gen;
    int timing_every, verbose, print, cuda;
    /* figures */
    long seeds, graphs, plans, executed, timed, refused, failures;
} run;

/* What is running, for the crash report. */
static volatile uint64_t cur_seed;
static const char *volatile cur_stage = "start";
static const char *volatile cur_policy = "-";
static const char *cur_out = ".";

static void crash_report(void)
{
    char buf[768];
    int n = snprintf(buf, sizeof buf, "\nCRASH seed=%llu policy=%s stage=%s: the process died; "
                     "model in %s/difftest-%llu.json; replay: difftest --seed %llu\n",
                     (unsigned long long)cur_seed, cur_policy, cur_stage, cur_out,
                     (unsigned long long)cur_seed, (unsigned long long)cur_seed);
    if (n > 0)
        (void)!write(2, buf, (size_t)n);
}

static void on_signal(int sig)
{
    crash_report();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Set by the sanitizer runtime when linked in (SANITIZE=1). */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) || bad ? -1 : 0;
}

/* Report one failure: seed, policy, stage, message, and the repro file. */
static void fail(run *r, uint64_t seed, const char *policy, const char *stage, const char *model,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void fail(run *r, uint64_t seed, const char *policy, const char *stage, const char *model,
                 const char *fmt, ...)
{
    char msg[2048], path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/difftest-%llu.json", r->out, (unsigned long long)seed);
    if (model && write_text(path, model))
        snprintf(path, sizeof path, "(could not write %s/difftest-%llu.json: %s)", r->out,
                 (unsigned long long)seed, strerror(errno));
    printf("FAIL seed=%llu policy=%s stage=%s: %s\n     repro: %s; replay: difftest --seed %llu%s%s\n",
           (unsigned long long)seed, policy ? policy : "-", stage, msg, path,
           (unsigned long long)seed, r->gen.only_op ? " --op " : "",
           r->gen.only_op ? r->gen.only_op : "");
    fflush(stdout);
    r->failures++;
}

/* Names of the shipped policies (the .lua files in policies/), sorted. */
static int list_policies(const char *home, char names[][64], int max)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/policies", home);
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d)
        return -1;
    while ((de = readdir(d)) && n < max) {
        size_t len = strlen(de->d_name);
        if (len > 4 && len < 60 && !strcmp(de->d_name + len - 4, ".lua")) {
            memcpy(names[n], de->d_name, len - 4);
            names[n++][len - 4] = '\0';
        }
    }
    closedir(d);
    qsort(names, (size_t)n, 64, (int (*)(const void *, const void *))strcmp);
    return n;
}

static fe_policy *find_policy(run *r, const char *name)
{
    for (int i = 0; i < r->npol; i++)
        if (!strcmp(fe_policy_name(r->pol[i]), name))
            return r->pol[i];
    return NULL;
}

static int setup(run *r, char **only, int nonly)
{
    fe_error err = {0};
    fe_engine_options eo = {.bench_budget = 0.02};
    char names[MAXPOL][64];
    if (!(r->e = fe_engine_new(&eo, &err)) || !(r->eprof = fe_engine_new(&eo, &err))) {
        fprintf(stderr, "difftest: %s\n", err.message);
        return -1;
    }
    /* ctx:bench measures each item for this long: enough to run it, as the
     * tester wants the paths, not the figures */
    r->e->pl->bench_item = 0.001;
    int n = list_policies(fe_engine_home(r->e), names, MAXPOL);
    if (n <= 0) {
        fprintf(stderr, "difftest: no policies in %s/policies\n", fe_engine_home(r->e));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int want = !nonly;
        for (int k = 0; k < nonly; k++)
            want |= !strcmp(only[k], names[i]);
        if (!want)
            continue;
        if (!(r->pol[r->npol] = fe_engine_load_policy(r->e, names[i], &err))) {
            fprintf(stderr, "difftest: policy %s: %s\n", names[i], err.message);
            return -1;
        }
        r->npol++;
    }
    /* the combinators over pairs of the shipped policies, as --combine makes them */
    static const char *const combos[][3] = {
        {"all", "static_rules", "memory_aware"}, {"any", "gcu_afe", "static_rules"},
        {"chain", "profile_lookup", "gcu_tlf"}, {"vote", "memory_aware", "fuse_all"}};
    for (int k = 0; k < 4 && !nonly && r->npol < MAXPOL; k++) {
        fe_policy *two[2] = {find_policy(r, combos[k][1]), find_policy(r, combos[k][2])};
        if (!two[0] || !two[1])
            continue;   /* a shipped policy renamed: the combination goes */
        if (!(r->pol[r->npol] = fe_engine_combine(r->e, combos[k][0], two, 2, &err))) {
            fprintf(stderr, "difftest: combine %s: %s\n", combos[k][0], err.message);
            return -1;
        }
        r->ncombined++, r->npol++;
    }
    if (!(r->prof_pol = fe_engine_load_policy(r->eprof, "profile_lookup", &err))) {
        fprintf(stderr, "difftest: %s\n", err.message);
        return -1;
    }
    return 0;
}

/* Execute plan p against the reference ref in session ex. */
static void execute(run *r, uint64_t seed, const char *pname, fe_exec *ex, const fe_exec_result *ref,
                    const fe_plan *p, const char *model)
{
    fe_error err = {0};
    fe_exec_result *got = NULL;
    fe_cmp cmp;
    const fe_graph *g = p->g;
    cur_stage = "execute";
    if (fe_exec_plan(ex, p, &got, &err) != FE_OK) {
        fail(r, seed, pname, "execute", model, "%s", err.message);
        return;
    }
    cur_stage = "compare";
    /* the card's results against the CPU's: another device's floor */
    if (fe_exec_compare_floor(g, ref, got, -1, r->cuda ? FE_CMP_DEVICE_ATOL : 0, &cmp, &err) !=
        FE_OK) {
        fail(r, seed, pname, "compare", model, "%s", err.message);
    } else {
        for (int i = 0; i < cmp.n; i++) {
            const fe_cmp_item *it = &cmp.items[i];
            if (it->ok)
                continue;
            fail(r, seed, pname, "compare", model, "output '%s' (%s) has %lld element%s outside "
                 "tolerance (rtol %.0e; worst at index %lld: plan %.9g, reference %.9g)",
                 fe_tensor_name(g, fe_graph_tensor(g, it->tensor)),
                 fe_dtype_name(fe_graph_tensor(g, it->tensor)->dtype), (long long)it->bad,
                 it->bad == 1 ? "" : "s", it->rtol, (long long)it->worst, it->worst_got,
                 it->worst_ref);
            break;
        }
        fe_cmp_free(&cmp);
    }
    r->executed++;
    fe_exec_result_free(got);
}

/* Plan p run again with every kernel choice forced on all its groups, then
 * with TLF splits of several sizes: what a policy's kernel and split hooks
 * may ask for. The plan is restored afterwards. */
static void variants(run *r, uint64_t seed, const char *pname, fe_exec *ex,
                     const fe_exec_result *ref, fe_plan *p, const char *model)
{
    static const int32_t splits[] = {2, 3, 7, 64, 100000};
    int32_t *keep = malloc(sizeof(int32_t) * 2 * (size_t)(p->ngroups + 1));
    char label[160];
    if (!keep)
        return;
    for (int i = 0; i < p->ngroups; i++)
        keep[2 * i] = p->groups[i].kernel, keep[2 * i + 1] = p->groups[i].split;
    for (int c = 1; c <= FE_K_NCHOICES; c++) {
        for (int i = 0; i < p->ngroups; i++) {
            p->groups[i].kernel = c < FE_K_NCHOICES ? c : 0;
            p->groups[i].split = c < FE_K_NCHOICES ? keep[2 * i + 1]
                                                   : splits[(seed + (uint64_t)i) % 5];
        }
        snprintf(label, sizeof label, "%s+%s", pname,
                 c < FE_K_NCHOICES ? fe_k_choice_name(c) : "splits");
        cur_policy = label;
        execute(r, seed, label, ex, ref, p, model);
    }
    for (int i = 0; i < p->ngroups; i++)
        p->groups[i].kernel = keep[2 * i], p->groups[i].split = keep[2 * i + 1];
    cur_policy = pname;
    free(keep);
}

/* Whether group k of p and of q hold the same nodes, in the same order. */
static int same_group(const fe_plan *p, const fe_plan *q, int k)
{
    int n = fe_plan_group_size(p, k);
    if (fe_plan_group_size(q, k) != n)
        return 0;
    for (int j = 0; j < n; j++)
        if (strcmp(fe_plan_group_node(q, k, j), fe_plan_group_node(p, k, j)))
            return 0;
    return 1;
}

/* The plan written as a plan file and read back for the model file. */
static void plan_file(run *r, uint64_t seed, const char *pname, const fe_plan *p,
                      const char *mpath, const char *model)
{
    fe_error err = {0};
    char path[600];
    cur_stage = "plan-file";
    snprintf(path, sizeof path, "%s/plan.json", r->tmp);
    char *json = fe_plan_to_json(p, &err);
    if (!json || write_text(path, json)) {
        fail(r, seed, pname, "plan-file", model, "cannot write the plan: %s", err.message);
        fe_free(json);
        return;
    }
    fe_free(json);
    fe_saved_plan *s = fe_saved_plan_read(r->e, path, mpath, NULL, &err);
    if (!s) {
        fail(r, seed, pname, "plan-file", model, "the plan read back: %s", err.message);
        return;
    }
    const fe_plan *q = fe_saved_plan_plan(s);
    int np = fe_plan_groups(p), nq = fe_plan_groups(q), k = 0;
    while (k < np && k < nq && same_group(p, q, k))
        k++;
    if (k < np || k < nq)
        fail(r, seed, pname, "plan-file", model, "the plan read back has other groups: %d and %d "
             "groups; group %d holds '%s' written, '%s' read back", np, nq, k,
             k < np ? fe_plan_group_node(p, k, 0) : "-", k < nq ? fe_plan_group_node(q, k, 0) : "-");
    fe_saved_plan_free(s);
}

/* The bench / profile / run --execute timing paths on plan p, and a
 * profile written from them planned with by profile_lookup. */
static void timing(run *r, uint64_t seed, const char *pname, const fe_plan *p, fe_model *m,
                   const char *mpath, const char *model, int refused)
{
    fe_error err = {0};
    char path[600];
    cur_stage = "timing";
    fe_timing_options to = {.seed = seed, .budget = 0.001, .totals = 1};
    fe_timing *t = fe_plan_time(p, &to, &err);
    char *txt = NULL, *js = NULL;
    if (refused) {   /* bench and profile refuse up front too, naming the node */
        if (t || err.code != FE_EINPUT || !strstr(err.message, "node '"))
            fail(r, seed, pname, "timing", model, "a custom op without a kernel: %s",
                 t ? "timed" : err.message);
        fe_timing_free(t);
        t = NULL;
        goto execute;
    }
    txt = t ? fe_timing_format(t, pname, FE_FORMAT_TEXT, &err) : NULL;
    js = txt ? fe_timing_format(t, pname, FE_FORMAT_JSON, &err) : NULL;
    snprintf(path, sizeof path, "%s/profile.json", r->tmp);
    if (!js || fe_timing_write_profile(t, path, NULL, &err) != FE_OK) {
        fail(r, seed, pname, "timing", model, "%s", err.message);
        goto out;
    }
    cur_stage = "profile";
    fe_plan *q = NULL;
    if (fe_engine_set_profile(r->eprof, path, &err) != FE_OK ||
        !(q = fe_policy_plan(r->prof_pol, m, NULL, &err)) || fe_plan_check(q, &err) != FE_OK) {
        fail(r, seed, "profile_lookup", "profile", model, "with the profile just written: %s",
             err.message);
        fe_plan_free(q);
        goto out;
    }
    fe_plan_free(q);
    cur_stage = "ab";
    const char *models[1] = {mpath};
    fe_ab_options ao = {.nmodels = 1, .models = models, .npolicies = r->npol - r->ncombined,
                        .policies = r->pol};
    fe_ab *ab = fe_engine_ab(r->e, &ao, &err);
    for (int f = FE_FORMAT_TEXT; ab && f <= FE_FORMAT_SVG; f++) {
        char *t2 = fe_ab_format(ab, f, &err);
        if (!t2) {
            fe_ab_free(ab);
            ab = NULL;
        }
        fe_free(t2);
    }
    if (!ab)
        fail(r, seed, "(all)", "ab", model, "%s", err.message);
    fe_ab_free(ab);
execute:
    cur_stage = "run-execute";
    fe_execute_options xo = {.seed = seed, .budget = 0.001};
    fe_result *x = fe_plan_execute(p, &xo, &err);
    char *xt = x ? fe_result_format(x, FE_FORMAT_TEXT, &err) : NULL;
    if (refused) {   /* refused up front, naming the node */
        if (x || err.code != FE_EINPUT || !strstr(err.message, "node '"))
            fail(r, seed, pname, "run-execute", model, "a custom op without a kernel: %s",
                 x ? "executed" : err.message);
    } else if (!xt || fe_result_check(x, &err) != FE_OK) {
        fail(r, seed, pname, "run-execute", model, "%s", err.message);
    }
    fe_free(xt);
    fe_result_free(x);
    r->timed++;
out:
    fe_free(txt);
    fe_free(js);
    fe_timing_free(t);
}

static void one_seed(run *r, uint64_t seed)
{
    static const char *const machines[] = {"gcu", "gcu_big", "host"};
    fe_error err = {0};
    char mpath[600];
    int refused = 0;
    cur_seed = seed;
    cur_policy = "-";
    cur_stage = "generate";
    r->seeds++;
    if (r->verbose)
        fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
    char *model = fe_gen_model(seed, &r->gen, &refused);
    if (!model) {
        fail(r, seed, NULL, "generate", NULL, "out of memory");
        return;
    }
    if (r->print) {
        printf("%s\n", model);
        free(model);
        return;
    }
    snprintf(mpath, sizeof mpath, "%s/difftest-%llu.json", r->tmp, (unsigned long long)seed);
    if (write_text(mpath, model)) {
        fail(r, seed, NULL, "generate", model, "cannot write %s", mpath);
        free(model);
        return;
    }
    /* check: the command's own calls */
    cur_stage = "check";
    fe_model *m = fe_model_load_dims(mpath, 0, NULL, NULL, &err);
    char *sum = m ? fe_model_format(m, FE_FORMAT_TEXT, &err) : NULL;
    char *sumj = sum ? fe_model_format(m, FE_FORMAT_JSON, &err) : NULL;
    fe_free(sum);
    fe_free(sumj);
    if (!sumj) {
        fail(r, seed, NULL, "check", model, "check refuses a generated model: %s", err.message);
        goto out;
    }
    r->graphs++;
    if (fe_engine_set_machine(r->e, machines[seed % 3], &err) != FE_OK) {
        fail(r, seed, NULL, "machine", model, "%s", err.message);
        goto out;
    }
    const fe_graph *g = fe_api_graph(m);
    fe_exec *ex = NULL;
    fe_exec_result *ref = NULL;
    cur_stage = "reference";
    if (fe_exec_executable(g, &err) != FE_OK) {
        if (!refused || err.code != FE_EINPUT || !strstr(err.message, "node '"))
            fail(r, seed, NULL, "executable", model, "%s", err.message);
        else
            r->refused++;
    } else if (refused) {
        fail(r, seed, NULL, "executable", model, "a custom op without a kernel was not refused");
    } else {
        fe_exec_opts xo = {.seed = seed};
        if (!(ex = fe_exec_new(g, &xo, &err)) || fe_exec_reference(ex, &ref, &err) != FE_OK ||
            (r->cuda && fe_gpu_exec_attach(ex, &err) != FE_OK)) {
            fail(r, seed, NULL, "reference", model, "%s", err.message);
            fe_exec_free(ex);
            ex = NULL;
        }
    }
    int timed = r->timing_every > 0 && seed % (uint64_t)r->timing_every == 0;
    /* Each shipped policy's simulated time: none may beat optimal.lua's. */
    double sim_s[MAXPOL];
    int optimal = -1;
    for (int i = 0; i < r->npol; i++) {
        sim_s[i] = -1;
        if (i < r->npol - r->ncombined && !strcmp(fe_policy_name(r->pol[i]), "optimal"))
            optimal = i;
    }
    for (int i = 0; i < r->npol; i++) {
        if (i >= r->npol - r->ncombined && !timed)
            continue;
        const char *pname = fe_policy_name(r->pol[i]);
        fe_plan_stats st;
        cur_policy = pname;
        cur_stage = "plan";
        err.code = 0;
        fe_plan *p = fe_policy_plan(r->pol[i], m, &st, &err);
        if (!p) {
            fail(r, seed, pname, "plan", model, "%s", err.message);
            continue;
        }
        r->plans++;
        if (st.fault[0])
            fail(r, seed, pname, "plan", model, "the policy fell back to unfused: %s", st.fault);
        cur_stage = "legality";
        if (fe_plan_check(p, &err) != FE_OK) {
            fail(r, seed, pname, "legality", model, "%s", err.message);
            fe_plan_free(p);
            continue;
        }
        cur_stage = "simulate";
        fe_report *rep = fe_engine_simulate(r->e, p, &err);
        char *rt = rep ? fe_report_format(rep, NULL, FE_FORMAT_TEXT | FE_WITH_GROUPS, &err) : NULL;
        char *pj = rt ? fe_plan_format(p, &st, rep, NULL, FE_FORMAT_JSON | FE_WITH_VERSUS |
                                       FE_WITH_GROUPS, &err) : NULL;
        /* every other form the commands print: sim --json, --trace, --dot,
         * --explain, --stats */
        static const int forms[][2] = {{0, FE_FORMAT_JSON}, {0, FE_FORMAT_TRACE},
                                       {1, FE_FORMAT_DOT}, {1, FE_FORMAT_DECISIONS},
                                       {1, FE_FORMAT_TEXT | FE_WITH_STATS}};
        for (int f = 0; pj && f < 5; f++) {
            char *t = forms[f][0] ? fe_plan_format(p, &st, NULL, NULL, forms[f][1], &err)
                                  : fe_report_format(rep, NULL, forms[f][1], &err);
            if (!t) {
                fe_free(pj);
                pj = NULL;
            }
            fe_free(t);
        }
        if (!pj)
            fail(r, seed, pname, "simulate", model, "%s", err.message);
        if (rep && i < r->npol - r->ncombined) {
            fe_figures fig;
            fe_report_figures(rep, 0, &fig);
            sim_s[i] = fig.time_s;
        }
        fe_free(rt);
        fe_free(pj);
        fe_report_free(rep);
        plan_file(r, seed, pname, p, mpath, model);
        if (ex)
            execute(r, seed, pname, ex, ref, p, model);
        if (ex && (!strcmp(pname, "fuse_all") || !strcmp(pname, "gcu_tlf")))
            variants(r, seed, pname, ex, ref, p, model);
        if ((ex || refused) && timed && (!strcmp(pname, "fuse_all") || i == 0))
            timing(r, seed, pname, p, m, mpath, model, refused);
        fe_plan_free(p);
    }
    cur_policy = "optimal";
    cur_stage = "optimum";
    for (int i = 0; optimal >= 0 && sim_s[optimal] >= 0 && i < r->npol - r->ncombined; i++)
        if (sim_s[i] >= 0 && sim_s[i] < sim_s[optimal] * (1 - 1e-9))
            fail(r, seed, "optimal", "optimum", model, "the optimal plan simulates at %.6g us, "
                 "slower than %s's %.6g us", sim_s[optimal] * 1e6, fe_policy_name(r->pol[i]),
                 sim_s[i] * 1e6);
    fe_exec_result_free(ref);
    fe_exec_free(ex);
out:
    fe_model_free(m);
    unlink(mpath);
    free(model);
}

static int parse_range(const char *s, uint64_t *a, uint64_t *b)
{
    char *end;
    errno = 0;
    *a = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    if (*end == ':') {
        const char *t = end + 1;
        *b = strtoull(t, &end, 10);
        if (end == t || errno || *b < *a)
            return -1;
    } else {
        *b = *a;
    }
    return *end ? -1 : 0;
}

/* Seeds listed in file, one per line, each with "--op OP" after it where
 * it found its bug focused on OP; "#" starts a comment. */
static int run_list(run *r, const char *file)
{
    FILE *f = fopen(file, "r");
    char line[512], op[64];
    int ln = 0;
    if (!f) {
        fprintf(stderr, "difftest: %s: %s\n", file, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char *h = strchr(line, '#'), *end, rest[2];
        ln++;
        if (h)
            *h = '\0';
        unsigned long long s = strtoull(line, &end, 10);
        int n = sscanf(end, " --op %63s %1s", op, rest);
        if (end == line && sscanf(line, " %1s", rest) < 1)
            continue;   /* blank or a comment */
        if (end == line || (n != 1 && sscanf(end, " %1s", rest) == 1)) {
            fprintf(stderr, "difftest: %s:%d: expected a seed, then --op OP or nothing\n", file, ln);
            fclose(f);
            return -1;
        }
        const char *all = r->gen.only_op;
        if (n == 1)
            r->gen.only_op = op;
        one_seed(r, s);
        r->gen.only_op = all;
    }
    fclose(f);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: difftest [--seed N | --seeds A:B | --list FILE]... [--out DIR] [--tap]\n"
                    "                [--timing-every K] [--policy NAME]... [--max-nodes N] [--op OP] [--print] [-v]\n"
                    "                [--device cpu|cuda]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static run r;
    const char *lists[16], *only[MAXPOL];
    uint64_t from[16], to[16];
    int nlists = 0, nranges = 0, nonly = 0, tap = 0;
    r.out = ".";
    r.timing_every = 25;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if ((!strcmp(a, "--seed") || !strcmp(a, "--seeds")) && v && nranges < 16) {
            if (parse_range(v, &from[nranges], &to[nranges]))
                return usage();
            nranges++, i++;
        } else if (!strcmp(a, "--list") && v && nlists < 16) {
            lists[nlists++] = v, i++;
        } else if (!strcmp(a, "--out") && v) {
            r.out = v, i++;
        } else if (!strcmp(a, "--policy") && v && nonly < MAXPOL) {
            only[nonly++] = v, i++;
        } else if (!strcmp(a, "--timing-every") && v) {
            r.timing_every = atoi(v), i++;
        } else if (!strcmp(a, "--max-nodes") && v) {
            r.gen.max_nodes = atoi(v), i++;
        } else if (!strcmp(a, "--op") && v) {
            r.gen.only_op = v, i++;
        } else if (!strcmp(a, "--device") && v && (!strcmp(v, "cpu") || !strcmp(v, "cuda"))) {
            r.cuda = !strcmp(v, "cuda"), i++;
        } else if (!strcmp(a, "--tap")) {
            tap = 1;
        } else if (!strcmp(a, "--print")) {
            r.print = 1;
        } else if (!strcmp(a, "-v")) {
            r.verbose = 1;
        } else {
            return usage();
        }
    }
    if (!nranges && !nlists)
        return usage();
    if (r.cuda) {   /* a missing GPU is said once, up front */
        fe_error err = {0};
        if (fe_cuda_open(&err) != FE_OK) {
            fprintf(stderr, "difftest: %s\n", err.message);
            return 2;
        }
    }
    cur_out = r.out;
    mkdir(r.out, 0777);
    snprintf(r.tmp, sizeof r.tmp, "%s/difftest.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    if (mkdir(r.tmp, 0700)) {
        fprintf(stderr, "difftest: cannot make %s: %s\n", r.tmp, strerror(errno));
        return 1;
    }
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
        signal(sigs[k], on_signal);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(crash_report);
    if (!r.print && setup(&r, (char **)only, nonly))
        return 1;
    double t0 = fe_clock_s();
    for (int i = 0; i < nlists; i++)
        if (run_list(&r, lists[i]))
            return 1;
    for (int i = 0; i < nranges; i++)
        for (uint64_t s = from[i]; s <= to[i]; s++)
            one_seed(&r, s);
    double secs = fe_clock_s() - t0;
    char summary[512];
    snprintf(summary, sizeof summary, "%ld seeds, %ld graphs x %d policies (+%d combined): %ld plans checked, "
             "%ld executed, %ld timed, %ld refused by design (custom ops without a kernel), "
             "%ld failures, %.1f s", r.seeds, r.graphs, r.npol - r.ncombined, r.ncombined, r.plans, r.executed, r.timed,
             r.refused, r.failures, secs);
    if (r.print)
        ;
    else if (tap)
        printf("%s 1 - difftest: %s\n1..1\n", r.failures ? "not ok" : "ok", summary);
    else
        printf("%s\n", summary);
    for (int i = 0; i < r.npol; i++)
        fe_policy_free(r.pol[i]);
    fe_policy_free(r.prof_pol);
    fe_engine_free(r.e);
    fe_engine_free(r.eprof);
    char path[600];
    snprintf(path, sizeof path, "%s/plan.json", r.tmp);
    unlink(path);
    snprintf(path, sizeof path, "%s/profile.json", r.tmp);
    unlink(path);
    rmdir(r.tmp);
    return r.failures ? 1 : 0;
}
