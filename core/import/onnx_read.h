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

/* The longest name (of a node, a value, a dim) the importer takes: names
 * it makes up add a short suffix, and stay within FE_MAX_NAME. */
#define FE_ONNX_NAME_MAX 1024

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
 * Every string of the graph the importer reads is checked here, once: the
 * names of nodes, values, graph inputs and outputs, initializers and dims
 * (valid UTF-8, no control characters, at most FE_ONNX_NAME_MAX bytes;
 * present where ONNX requires them), a node's op_type and domain. After
 * it, no string field the importer reads is NULL.
 * Caller frees with fe_onnx_free. */
fe_onnx *fe_onnx_read(const char *path, fe_error *err);
void fe_onnx_free(fe_onnx *o);

/* NULL if s can be a name of the imported model, else why not, as a phrase
 * that starts with what (such as "output 0 name") and ends with the fix,
 * in buf: "... is not valid UTF-8 (byte 0xff at 1); rename it". */
const char *fe_onnx_bad_name(const char *s, const char *what, char *buf, size_t cap);

/* The fe_dtype of an ONNX TensorProto.DataType, or -1; f64 maps to -1 too
 * (the importer converts f64 constants itself). */
int fe_onnx_dtype(int onnx_type);
/* The ONNX spelling of a TensorProto.DataType ("FLOAT", "DOUBLE", ...). */
const char *fe_onnx_dtype_name(int onnx_type);

#endif
