/* infile.c: input files are regular files, opened without blocking. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "infile.h"

int fe_infile_open(const char *path, const char *what, size_t *size, fe_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fe_error_set(err, FE_EINPUT, "%s: cannot open %s: %s", path, what, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        fe_error_set(err, FE_EINPUT, "%s: cannot read %s: %s", path, what, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        const char *kind = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                           : S_ISSOCK(st.st_mode) ? "a socket" : "a device or special file";
        close(fd);
        fe_error_set(err, FE_EINPUT, "%s: %s must be a regular file, and this is %s", path, what,
                     kind);
        return -1;
    }
    /* Regular files never block; clear the flag for later readers anyway. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    *size = (size_t)st.st_size;
    return fd;
}

char *fe_infile_read(const char *path, const char *what, size_t max, size_t *len, fe_error *err)
{
    size_t n;
    int fd = fe_infile_open(path, what, &n, err);
    if (fd < 0)
        return NULL;
    if (n > max) {
        close(fd);
        fe_error_set(err, FE_EINPUT, "%s: %s is %zu bytes; at most %zu are read", path, what, n, max);
        return NULL;
    }
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        fe_error_set(err, FE_ENOMEM, "%s: out of memory reading %zu bytes", path, n);
        return NULL;
    }
    size_t got = 0;
    int bad = 0;   /* errno of a failed read; 0 if the file ended early */
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            bad = r < 0 ? errno : 0;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(buf);
        fe_error_set(err, FE_EINPUT, "%s: cannot read %s: %s", path, what,
                     bad ? strerror(bad) : "the file shrank while it was read");
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
