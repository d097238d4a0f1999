/* import.h: model import (import.c): an ONNX file becomes a
 * fuseeng.model/1 file and a safetensors file of its weights. The public
 * fe_import_onnx (core/api) calls it. */
#ifndef FE_IMPORT_H
#define FE_IMPORT_H

#include <stdint.h>

#include "error.h"

/* How fe_import_onnx_file writes its files; zeroed means the defaults. */
typedef struct fe_import_opts {
    const char *weights_out;          /* NULL: the model path with .safetensors for .json */
    int ndims;                        /* defaults of symbolic dims (else 1): */
    const char *const *dim_names;     /*   dim_names[i] = dim_values[i] */
    const int64_t *dim_values;
} fe_import_opts;

/* Import the ONNX model at path as a fuseeng.model/1 file at out and its
 * weights as a safetensors file, both written whole or neither. opt may be
 * NULL. *notes (if not NULL) gets the warnings and notes for the user, one
 * per line, or NULL; caller frees it, also after an error. FE_OK, or
 * FE_EINPUT naming the file and the node or tensor. */
int fe_import_onnx_file(const char *path, const char *out, const fe_import_opts *opt,
                        char **notes, fe_error *err);

#endif
