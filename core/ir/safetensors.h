/* safetensors.h: reading and writing safetensors files, the weight format
 * of the PyTorch / Hugging Face ecosystem (github.com/huggingface/safetensors).
 *
 *   [8 bytes: N, little-endian] [N bytes: JSON header] [data buffer]
 *   header: {"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]},
 *            ..., "__metadata__": {"key": "value", ...}}
 *
 * Offsets are relative to the buffer's start. The reader maps the file and
 * validates all of it before handing anything out, so a caller can trust
 * every tensor: data inside the file, nbytes == elements * element size, no
 * two tensors sharing bytes, names unique. Every error names the file and,
 * where there is one, the tensor. The header is read with the pull reader
 * (jsonr.h). Tensor data may be unaligned in files from elsewhere (nothing
 * in the format requires alignment): copy it, do not cast it. The writer
 * aligns every tensor to its element size, as the reference writer does.
 *
 * Model files and safetensors files name tensors with the same strings: a
 * model's weights are `model.safetensors`, its inputs and expected outputs
 * are separate files (docs/formats.md).
 */
#ifndef FE_SAFETENSORS_H
#define FE_SAFETENSORS_H

#include <stdint.h>

#include "error.h"
#include "outfile.h"

/* One tensor of a safetensors file. data points into the file's mapping. */
typedef struct fe_st_tensor {
    const char *name;
    int dtype;              /* fe_dtype of graph.h (FE_F32 ...), or -1 for a dtype fuseeng has no type for */
    const char *st_dtype;   /* the file's spelling: "F32", "BF16", "F64", ... */
    int rank;
    int64_t shape[8];
    const void *data;
    int64_t nbytes;
} fe_st_tensor;

typedef struct fe_st_file fe_st_file;

/* Open and validate path (mmap); NULL with err (FE_EINPUT, or FE_ENOMEM)
 * naming path and what is wrong. Caller closes. */
fe_st_file *fe_st_open(const char *path, fe_error *err);
void fe_st_close(fe_st_file *f);
/* Tensors in header order; the pointers live until fe_st_close. */
int fe_st_count(const fe_st_file *f);
const fe_st_tensor *fe_st_at(const fe_st_file *f, int i);
const fe_st_tensor *fe_st_find(const fe_st_file *f, const char *name);  /* NULL if absent */
const char *fe_st_path(const fe_st_file *f);
/* The value of key in the header's "__metadata__", or NULL. */
const char *fe_st_meta(const fe_st_file *f, const char *key);

/* The file's spelling of a fuseeng dtype ("F32"), or NULL if dtype is not one. */
const char *fe_st_dtype_name(int dtype);

/* The "__metadata__" key of a weights file written by `fuseeng import`:
 * the stamp the model file records as its weights_stamp (formats.md). */
#define FE_WEIGHTS_STAMP_KEY "fuseeng.weights_stamp"

/* A writer collects tensors and writes them in one go at finish. */
typedef struct fe_st_writer fe_st_writer;
/* A writer for path (copied); NULL only when out of memory. Nothing is
 * created before fe_st_writer_finish. */
fe_st_writer *fe_st_writer_new(const char *path, fe_error *err);
/* Add a tensor; data is NOT copied and must stay valid until finish.
 * FE_OK, or FE_EINPUT naming the tensor (empty or duplicate name, unknown
 * dtype, rank over 8, negative dim, nbytes not elements * size). */
int fe_st_writer_add(fe_st_writer *w, const char *name, int dtype, int rank,
                     const int64_t *shape, const void *data, int64_t nbytes, fe_error *err);
/* Add a "__metadata__" entry (both strings copied). FE_OK or FE_EINPUT/FE_ENOMEM. */
int fe_st_writer_meta(fe_st_writer *w, const char *key, const char *value, fe_error *err);
/* Write header and data to a temporary file beside path and rename it into
 * place (no partial output on failure); frees w either way. */
int fe_st_writer_finish(fe_st_writer *w, fe_error *err);
/* The same without the rename: the file is written into o (opened here,
 * at w's path), and fe_outfile_commit or fe_outfile_commit_pair
 * (outfile.h) moves it into place. Frees w either way; on failure o is
 * aborted. */
int fe_st_writer_write(fe_st_writer *w, fe_outfile *o, fe_error *err);
void fe_st_writer_abort(fe_st_writer *w);   /* free without writing */

#endif
