/* progress.c: the progress line and Ctrl-C (progress.h). One line on
 * stderr, rewritten with '\r' and cleared at the end, so that what the
 * command prints after it (stdout or stderr) starts on a clean line. The
 * estimate is the rate so far: elapsed x (total - done) / done. Work that
 * ends within half a second draws nothing. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "progress.h"

static int quiet;
static volatile sig_atomic_t interrupted;

void fe_progress_quiet(int q)
{
    quiet = q;
}

static int drawing(void)
{
    return !quiet && isatty(STDERR_FILENO);
}

void fe_progress_begin(fe_progress *p, const char *what, int64_t total)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->total = total;
    p->t0 = fe_clock_s();
    p->drawn = -1;
}

/* "1m 20s", "45s", "2h 5m" */
static void fmt_left(double s, char *buf, size_t size)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ldh %ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        snprintf(buf, size, "%ldm %02lds", t / 60, t % 60);
    else
        snprintf(buf, size, "%lds", t);
}

void fe_progress_step(fe_progress *p, int64_t done, const char *item)
{
    if (!drawing())
        return;
    double now = fe_clock_s();
    if (now - p->t0 < 0.5 || (p->drawn >= 0 && now - p->drawn < 0.1 && done < p->total))
        return;   /* quick work shows nothing; then ten redraws a second at most */
    p->drawn = now;
    char left[48] = "", name[48] = "";
    double el = now - p->t0;
    if (done > 0 && done < p->total && el > 0.5) {
        char t[32];
        fmt_left(el * (double)(p->total - done) / (double)done, t, sizeof t);
        snprintf(left, sizeof left, ", about %s left", t);
    }
    if (item)
        snprintf(name, sizeof name, " %s", item);
    fprintf(stderr, "\r\033[K%s %lld/%lld%s%s", p->what, (long long)(done < p->total ? done + 1 : done),
            (long long)p->total, name, left);
    fflush(stderr);
    p->on = 1;
}

void fe_progress_end(fe_progress *p)
{
    if (p->on && drawing()) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->on = 0;
}

static void on_sigint(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL);   /* a second Ctrl-C ends the process */
}

void fe_progress_catch_interrupt(void)
{
    interrupted = 0;
    signal(SIGINT, on_sigint);
}

int fe_progress_interrupted(void)
{
    return interrupted != 0;
}
