/* outfile.c: output files written whole or not at all (fe_outfile_*),
 * alone or two together, and the removal of their temporary files when a
 * signal ends the process.
 *
 * The temporary files that exist are listed in a table of fixed slots
 * (path, state) that a signal handler can walk: registering claims a free
 * slot (0 -> 2, atomically, so that two threads never share one), copies
 * the path, then marks it in use (1); unregistering frees it (0). The
 * handler only unlinks slots in use, so it only ever sees whole paths. A
 * path registered for a file not yet created, or already renamed away,
 * costs the handler one failed unlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

/* ---- the table of temporary files ---- */

#define NSLOTS 16
static char slot_path[NSLOTS][PATH_MAX];
static volatile sig_atomic_t slot_used[NSLOTS];

/* Register o->tmp; its slot, or -1 when the table is full (the file is
 * then only removed by commit or abort, not by a signal). */
static int reg(const char *tmp)
{
    for (int i = 0; i < NSLOTS; i++)
        if (__sync_bool_compare_and_swap(&slot_used[i], 0, 2)) {
            memcpy(slot_path[i], tmp, strlen(tmp) + 1);
            slot_used[i] = 1;
            return i;
        }
    return -1;
}

static void unreg(fe_outfile *o)
{
    if (o->slot >= 0)
        slot_used[o->slot] = 0;
    o->slot = -1;
}

static const int trapped[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NTRAPPED ((int)(sizeof trapped / sizeof *trapped))
static struct sigaction old_action[NTRAPPED];
static int installed[NTRAPPED];

/* Async-signal-safe: unlink, sigaction, raise, and the previous handler. */
static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    int e = errno;
    for (int i = 0; i < NSLOTS; i++)
        if (slot_used[i] == 1)
            unlink(slot_path[i]);
    for (int i = 0; i < NTRAPPED; i++) {
        if (trapped[i] != sig)
            continue;
        struct sigaction *o = &old_action[i];
        if (o->sa_flags & SA_SIGINFO) {
            o->sa_sigaction(sig, info, ctx);
        } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
            o->sa_handler(sig);
        } else {
            /* The default action: end the process by this signal (it is
             * blocked while we run, so it arrives as we return). */
            sigaction(sig, o, NULL);
            installed[i] = 0;
            raise(sig);
        }
    }
    errno = e;
}

void fe_outfile_trap_signals(int on)
{
    for (int i = 0; i < NTRAPPED; i++) {
        if (on && !installed[i]) {
            struct sigaction a;
            memset(&a, 0, sizeof a);
            if (sigaction(trapped[i], NULL, &old_action[i]) != 0 ||
                (!(old_action[i].sa_flags & SA_SIGINFO) && old_action[i].sa_handler == SIG_IGN))
                continue;   /* an ignored signal stays ignored */
            a.sa_sigaction = on_signal;
            a.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&a.sa_mask);
            for (int k = 0; k < NTRAPPED; k++)
                sigaddset(&a.sa_mask, trapped[k]);
            installed[i] = sigaction(trapped[i], &a, NULL) == 0;
        } else if (!on && installed[i]) {
            sigaction(trapped[i], &old_action[i], NULL);
            installed[i] = 0;
        }
    }
}

static int fail(fe_outfile *o, int e, fe_error *err)
{
    return fe_error_set(err, FE_EINPUT, "%s: cannot write %s: %s", o->path, o->what,
                        strerror(e ? e : EIO));
}

/* Create a new temporary file beside dest; the descriptor or -1 (errno). */
static int create_tmp(fe_outfile *o)
{
    static unsigned serial;
    for (int attempt = 0; attempt < 100; attempt++) {
        int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld.%u", o->dest, (long)getpid(), serial++);
        if (n < 0 || (size_t)n >= sizeof o->tmp) {
            errno = ENAMETOOLONG;
            return -1;
        }
        /* Registered first: a signal may come as soon as it exists. */
        o->slot = reg(o->tmp);
        /* 0666 less the umask, as fopen would create the file. */
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        int e = errno;
        unreg(o);
        errno = e;
        if (e != EEXIST)
            return -1;
    }
    return -1;
}

int fe_outfile_open(fe_outfile *o, const char *path, const char *what, fe_error *err)
{
    struct stat st;
    o->f = NULL;
    o->path = path;
    o->what = what;
    o->slot = -1;
    o->dest[0] = o->tmp[0] = '\0';
    if (!path || !*path)
        return fe_error_set(err, FE_EINPUT, "no file name given for %s", what);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device, a pipe or a directory: no rename can stand in for it. */
        if (!(o->f = fopen(path, "w")))
            return fail(o, errno, err);
        return FE_OK;
    }
    /* Replace the file a symbolic link points to, not the link. */
    if (!realpath(path, o->dest) &&
        snprintf(o->dest, sizeof o->dest, "%s", path) >= (int)sizeof o->dest)
        return fail(o, ENAMETOOLONG, err);
    int fd = create_tmp(o);
    if (fd < 0) {
        int e = errno;
        o->tmp[0] = '\0';
        return fail(o, e, err);
    }
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        unreg(o);
        o->tmp[0] = '\0';
        return fail(o, e, err);
    }
    return FE_OK;
}

/* Flush and close o->f (syncing the temporary file to disk first when
 * sync); 0 or an errno value. */
static int close_file(fe_outfile *o, int sync)
{
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    if (!e && sync && o->tmp[0] && fsync(fileno(o->f)) != 0)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    return e;
}

/* Remove o's temporary file, if any. */
static void drop_tmp(fe_outfile *o)
{
    if (o->tmp[0])
        unlink(o->tmp);
    unreg(o);
    o->tmp[0] = '\0';
}

int fe_outfile_commit(fe_outfile *o, fe_error *err)
{
    int e = close_file(o, 0);
    if (!e && o->tmp[0] && rename(o->tmp, o->dest) != 0)
        e = errno;
    if (e)
        drop_tmp(o);
    unreg(o);
    o->tmp[0] = '\0';
    return e ? fail(o, e, err) : FE_OK;
}

int fe_outfile_commit_pair(fe_outfile *a, fe_outfile *b, void (*between)(void), fe_error *err)
{
    int ea = close_file(a, 1), eb = close_file(b, 1);
    if (ea || eb) {
        drop_tmp(a);
        drop_tmp(b);
        return fail(ea ? a : b, ea ? ea : eb, err);
    }
    sigset_t block, was;
    sigemptyset(&block);
    for (int i = 0; i < NTRAPPED; i++)
        sigaddset(&block, trapped[i]);
    sigprocmask(SIG_BLOCK, &block, &was);
    if (a->tmp[0] && rename(a->tmp, a->dest) != 0)
        ea = errno;
    if (!ea && between)
        between();
    if (!ea && b->tmp[0] && rename(b->tmp, b->dest) != 0)
        eb = errno;
    unreg(a);
    unreg(b);
    sigprocmask(SIG_SETMASK, &was, NULL);
    if (ea) {
        drop_tmp(a);
        drop_tmp(b);
        return fail(a, ea, err);
    }
    a->tmp[0] = '\0';
    if (eb) {
        drop_tmp(b);
        fail(b, eb, err);
        fe_error_prefix(err, "%s was replaced, but ", a->path);
        return FE_EINPUT;
    }
    b->tmp[0] = '\0';
    return FE_OK;
}

void fe_outfile_abort(fe_outfile *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    drop_tmp(o);
}

int fe_outfile_fail(fe_outfile *o, fe_error *err)
{
    int e = errno;
    fe_outfile_abort(o);
    return fail(o, e, err);
}
