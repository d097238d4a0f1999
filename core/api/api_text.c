/* api_text.c: results as text: strings written through a memory stream
 * (freed with fe_free), escaped text, and files written whole or not at
 * all. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "outfile.h"

/* text with its control characters escaped (fe_escape, lines kept): names
 * and reasons reach reports from input files and scripts, and a report is
 * printed on terminals. Takes text; NULL if out of memory. */
static char *escaped(char *text, fe_error *err)
{
    if (fe_control_at(text, 1) < 0)
        return text;
    char *out = fe_escape_dup(text, 1);
    if (!out)
        fe_error_set(err, FE_ENOMEM, "out of memory for a text result");
    free(text);
    return out;
}

char *fe_api_text(fe_api_writer write, const void *obj, const void *arg, int format,
                  fe_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        fe_error_set(err, FE_ENOMEM, "out of memory for a text result");
        return NULL;
    }
    int rc = write(obj, arg, format, f, err);
    int bad = fflush(f) != 0 || ferror(f);
    fclose(f);
    if (rc == FE_OK && (bad || !buf))
        rc = fe_error_set(err, FE_ENOMEM, "out of memory writing a text result");
    if (rc != FE_OK) {
        free(buf);
        return NULL;
    }
    return escaped(buf, err);
}

void fe_free(void *p)
{
    free(p);
}

size_t fe_escape(char *dst, size_t size, const char *src, int keep_lines)
{
    return fe_escape_into(dst, size, src, keep_lines);
}

void fe_error_prepend(fe_error *err, const char *text)
{
    if (text)
        fe_error_prefix(err, "%s", text);
}

int fe_write_file(const char *path, const char *what, const char *text, fe_error *err)
{
    if (fe_api_null(path, "fe_write_file", "the path", err) ||
        fe_api_null(text, "fe_write_file", "the text", err))
        return FE_EINPUT;
    fe_outfile out;
    if (fe_outfile_open(&out, path, what ? what : "the file", err) != FE_OK)
        return FE_EINPUT;
    if (fputs(text, out.f) == EOF)
        return fe_outfile_fail(&out, err);
    return fe_outfile_commit(&out, err);
}
