/* api_import.c: fuseeng import, model import from ONNX (core/import does
 * the work). */
#include "api.h"
#include "import.h"

int fe_import_onnx(const char *path, const char *out, const fe_import_options *o, char **notes,
                   fe_error *err)
{
    fe_import_opts opts = {0};
    if (o)
        opts = (fe_import_opts){.weights_out = o->weights_out, .ndims = o->ndims,
                                .dim_names = o->dim_names, .dim_values = o->dim_values};
    return fe_import_onnx_file(path, out, &opts, notes, err);
}
