/* api_text.c: results as text: strings written through a memory stream
 * (freed with fe_free) and files written whole or not at all. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "outfile.h"

int fe_api_text_open(fe_api_text *t, fe_error *err)
{
    t->buf = NULL;
    t->len = 0;
    if (!(t->f = open_memstream(&t->buf, &t->len)))
        return fe_error_set(err, FE_ENOMEM, "out of memory for a text result");
    return FE_OK;
}

char *fe_api_text_close(fe_api_text *t, fe_error *err)
{
    int bad = fflush(t->f) != 0 || ferror(t->f);
    fclose(t->f);
    t->f = NULL;
    if (bad || !t->buf) {
        free(t->buf);
        t->buf = NULL;
        fe_error_set(err, FE_ENOMEM, "out of memory writing a text result");
        return NULL;
    }
    return t->buf;
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
