/* main.c: the fuseeng command: dispatch to one of the commands below. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fuseeng_cli.h"

extern const fe_cmd fe_cmd_run, fe_cmd_ab, fe_cmd_sim, fe_cmd_bench, fe_cmd_profile, fe_cmd_check,
    fe_cmd_ops, fe_cmd_policies, fe_cmd_machines, fe_cmd_script, fe_cmd_import,
    fe_cmd_fidelity, fe_cmd_calibrate;

const fe_cmd *const fe_cli_commands[] = {
    &fe_cmd_run,
    &fe_cmd_ab,
    &fe_cmd_fidelity,
    &fe_cmd_calibrate,
    &fe_cmd_sim,
    &fe_cmd_bench,
    &fe_cmd_profile,
    &fe_cmd_check,
    &fe_cmd_import,
    &fe_cmd_ops,
    &fe_cmd_policies,
    &fe_cmd_machines,
    &fe_cmd_script,
    NULL,
};

static const fe_cmd *find(const char *name)
{
    for (int i = 0; fe_cli_commands[i]; i++)
        if (strcmp(fe_cli_commands[i]->name, name) == 0)
            return fe_cli_commands[i];
    return NULL;
}

/* " (did you mean 'run'?)" for a mistyped command, or "". */
static const char *near_command(const char *name, char *hint, size_t size)
{
    char list[512];
    size_t at = 0;
    list[0] = 0;
    for (int i = 0; fe_cli_commands[i] && at < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
                               fe_cli_commands[i]->name);
    return fe_did_you_mean(name, list, hint, size);
}

static void overview(FILE *f)
{
    fprintf(f, "fuseeng %s: a Lua-scriptable operator-fusion policy engine\n\n"
               "usage: fuseeng COMMAND [ARGS]\n\ncommands:\n", fe_version());
    for (int i = 0; fe_cli_commands[i]; i++)
        fprintf(f, "  %-10s %s\n", fe_cli_commands[i]->name, fe_cli_commands[i]->summary);
    fprintf(f, "\nfuseeng help COMMAND shows a command's options. Long work (bench, profile,\n"
               "ab --measure, calibrate, import of a large file) shows its progress and the\n"
               "time left on a terminal's stderr; --quiet, with any command, turns that off.\n"
               "--kernels PLUGIN.so (or FUSEENG_KERNELS=A.so:B.so), with any command, loads\n"
               "kernels for custom nodes (docs/kernels.md).\n"
               "Ctrl-C stops bench, profile and ab between steps and prints what was finished\n"
               "(exit status 130; a second Ctrl-C ends at once). Exit status: 0 ok, 1 runtime\n"
               "failure, 2 bad input or usage, 130 interrupted.\n");
}

static int help(int argc, char **argv)
{
    if (argc < 3) {
        overview(stdout);
        return 0;
    }
    const fe_cmd *c = find(argv[2]);
    if (!c) {
        char hint[96];
        fprintf(stderr, "fuseeng help: no command '%s'%s. Try 'fuseeng --help'.\n", argv[2],
                near_command(argv[2], hint, sizeof hint));
        return 2;
    }
    printf("%s", c->usage);
    return 0;
}

/* A report that could not be written (a full disk, a closed pipe) must
 * not pass for a success: check stdout once everything is printed. */
static int finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "fuseeng: writing to standard output failed: %s\n", strerror(errno));
        return rc ? rc : 1;
    }
    return rc;
}

/* Load one kernel plugin (--kernels PATH): 0, or 2 after saying why. */
static int load_kernels(const char *cmd, const char *path)
{
    fe_error err = {0};
    if (!path || !*path) {
        fprintf(stderr, "fuseeng %s: --kernels needs a plugin's path (a shared library "
                "exporting fuseeng_kernels; docs/kernels.md)\n", cmd);
        return 2;
    }
    if (fe_kernel_load(path, &err)) {
        fprintf(stderr, "fuseeng %s: %s\n", cmd, err.message);
        return 2;
    }
    return 0;
}

/* FUSEENG_KERNELS: plugins to load for every command, separated by ':'. */
static int env_kernels(const char *cmd)
{
    const char *list = getenv("FUSEENG_KERNELS");
    char path[4096];
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ":");
        if (len >= sizeof path) {
            fprintf(stderr, "fuseeng %s: FUSEENG_KERNELS: a path of %zu bytes (at most %zu)\n",
                    cmd, len, sizeof path - 1);
            return 2;
        }
        memcpy(path, p, len);
        path[len] = '\0';
        if (len && load_kernels(cmd, path))
            return 2;
        p += len + (p[len] == ':');
    }
    return 0;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        overview(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        overview(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("fuseeng %s (commit %s)\n", fe_version(), fe_build_commit());
        return 0;
    }
    if (strcmp(cmd, "help") == 0)
        return help(argc, argv);
    const fe_cmd *c = find(cmd);
    if (!c) {
        char hint[96];
        fprintf(stderr, "fuseeng: unknown command '%s'%s. Try 'fuseeng --help'.\n", cmd,
                near_command(cmd, hint, sizeof hint));
        return 2;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s", c->usage);
            return 0;
        }
    if (env_kernels(c->name))
        return 2;
    /* --quiet, for every command: no progress line (progress.h); --kernels
     * PLUGIN, for every command: kernels for custom nodes */
    int n = 2;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0) {
            fe_progress_set_quiet(1);
        } else if (strcmp(argv[i], "--kernels") == 0 || strncmp(argv[i], "--kernels=", 10) == 0) {
            const char *path = argv[i][9] == '=' ? argv[i] + 10 : i + 1 < argc ? argv[++i] : NULL;
            if (load_kernels(c->name, path))
                return 2;
        } else {
            argv[n++] = argv[i];
        }
    }
    argv[n] = NULL;
    return c->run(n - 1, argv + 1);
}

/* OpenMP's workers spin between parallel regions by default. Where cores
 * are shared with other work (CI, a laptop, a two-core VM) a spinning worker
 * competes for its core like any busy process, and each region then waits
 * for the scheduler: with one other busy process a 5 ms SwiGLU measured
 * 190 ms and a 7 us one 8 ms, which makes measurements (bench, profile,
 * ctx:bench) worthless. A sleeping worker is woken at once, for a few
 * microseconds per region. libgomp reads OMP_WAIT_POLICY only when it is
 * loaded, so unless the user chose a policy, set it and start again. Not
 * under valgrind, which would lose the new image. */
static void passive_workers(char **argv)
{
    const char *pre = getenv("LD_PRELOAD");
    if (getenv("OMP_WAIT_POLICY") || (pre && strstr(pre, "vgpreload")))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        execv("/proc/self/exe", argv);   /* on failure, go on as we are */
}

int main(int argc, char **argv)
{
    passive_workers(argv);
    /* The command line never hangs: a script stuck in one C call past its
     * time limit ends the process (see fe_watchdog). */
    fe_watchdog();
    return finish(dispatch(argc, argv));
}
