/* progress.h: the one progress line of long work (bench, profile, ab
 * --measure, import of a large file): what is being done, how far, and an
 * estimate of the time left, redrawn in place on stderr when stderr is a
 * terminal, never otherwise, and never after fe_progress_quiet(1)
 * (--quiet). And Ctrl-C: work that can stop between steps asks
 * fe_progress_interrupted() and keeps what it finished. */
#ifndef FE_PROGRESS_H
#define FE_PROGRESS_H

#include <stdint.h>

typedef struct fe_progress {
    char what[64];         /* "bench: group", "ab: row" */
    int64_t total;
    double t0, drawn;      /* when it began, when it was last drawn */
    int on;                /* a line is on the terminal */
} fe_progress;

/* Never draw (1) or draw on a terminal (0, the default). Process-wide. */
void fe_progress_quiet(int quiet);

/* Begin work of total steps, named what. */
void fe_progress_begin(fe_progress *p, const char *what, int64_t total);
/* done steps are finished (item: the next one's name, or NULL); draws
 * nothing in the first half second, then at most ten times a second. */
void fe_progress_step(fe_progress *p, int64_t done, const char *item);
/* Clear the line. */
void fe_progress_end(fe_progress *p);

/* From now on the first Ctrl-C (SIGINT) only marks the process
 * interrupted, for work that stops between steps and keeps what it
 * finished; a second one ends the process as usual. */
void fe_progress_catch_interrupt(void);
/* Whether Ctrl-C was pressed since fe_progress_catch_interrupt. */
int fe_progress_interrupted(void);

#endif
