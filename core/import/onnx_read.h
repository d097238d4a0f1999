/* onnx_read.h: reading an ONNX model file into protobuf-c messages, checked
 * for what the importer cannot take (opset, IR version, control flow,
 * external data) before any mapping starts.
 *
 * The initializers are unpacked one by one and the file's pages behind each
 * are dropped right after, so that reading a model holds its weights once
 * (the unpacked copies), not twice (file pages and copies): the import's
 * memory target is twice the file (docs/import.md).
 */
#ifndef FE_ONNX_READ_H
#define FE_ONNX_READ_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "onnx.pb-c.h"

/* The opsets of the default domain the op mapping knows. */
#define FE_ONNX_OPSET_MIN 9
#define FE_ONNX_OPSET_MAX 18

typedef struct fe_onnx {
    char *path;
    Onnx__ModelProto *model;        /* the model without its graph */
    Onnx__GraphProto *graph;        /* the graph without its initializers */
    Onnx__TensorProto **inits;      /* the initializers, unpacked one each */
    size_t ninits;
    int64_t opset;                  /* of the default domain */
    int64_t file_bytes;
} fe_onnx;

/* Read and check path; NULL with err (FE_EINPUT naming the file and, where
 * there is one, the node or tensor) on anything the importer cannot take.
 * Caller frees with fe_onnx_free. */
fe_onnx *fe_onnx_read(const char *path, fe_error *err);
void fe_onnx_free(fe_onnx *o);

/* The fe_dtype of an ONNX TensorProto.DataType, or -1; f64 maps to -1 too
 * (the importer converts f64 constants itself). */
int fe_onnx_dtype(int onnx_type);
/* The ONNX spelling of a TensorProto.DataType ("FLOAT", "DOUBLE", ...). */
const char *fe_onnx_dtype_name(int onnx_type);

#endif
