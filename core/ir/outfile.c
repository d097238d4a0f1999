/* outfile.c: output files written whole or not at all (fe_outfile_*). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

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
        /* 0666 less the umask, as fopen would create the file. */
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int fe_outfile_open(fe_outfile *o, const char *path, const char *what, fe_error *err)
{
    struct stat st;
    o->f = NULL;
    o->path = path;
    o->what = what;
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
        o->tmp[0] = '\0';
        return fail(o, e, err);
    }
    return FE_OK;
}

int fe_outfile_commit(fe_outfile *o, fe_error *err)
{
    int e = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !e)
        e = errno ? errno : EIO;
    o->f = NULL;
    if (!e && o->tmp[0] && rename(o->tmp, o->dest) != 0)
        e = errno;
    if (e && o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
    return e ? fail(o, e, err) : FE_OK;
}

void fe_outfile_abort(fe_outfile *o)
{
    if (o->f)
        fclose(o->f);
    o->f = NULL;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
}

int fe_outfile_fail(fe_outfile *o, fe_error *err)
{
    int e = errno;
    fe_outfile_abort(o);
    return fail(o, e, err);
}
