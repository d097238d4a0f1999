"""st_write.py: write a safetensors file from PyTorch tensors (no safetensors package).

The format (https://github.com/huggingface/safetensors): 8-byte little-endian
header length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets":
[begin, end]}, "__metadata__": {str: str}} padded with spaces to a multiple
of 8, then the tensors' bytes, offsets relative to the end of the header.
write_tmp() writes a temporary file beside path for the caller to rename
into place once all its outputs are ready; write() renames at once. Either
way a failure never leaves a partial file.
"""
import json
import os
import struct
import tempfile

import torch

ST_DTYPES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
             torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
             torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}


def _raw(t):
    """The tensor's bytes as a buffer (row-major, little-endian as on this host)."""
    t = t.detach().contiguous().cpu()
    if t.dtype in (torch.bfloat16, torch.float16):
        t = t.view(torch.int16)
    return memoryview(t.numpy()).cast("B")


def readable(path):
    """Give a mkstemp file the mode a plain open() would have (0666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def write(path, tensors, metadata=None):
    """Write tensors (dict name -> torch.Tensor) to path atomically."""
    os.replace(write_tmp(path, tensors, metadata), path)


def write_tmp(path, tensors, metadata=None):
    """Write tensors to a new temporary file beside path; returns its name."""
    header, bufs, off = {}, [], 0
    # Largest elements first: every tensor then starts at a multiple of its
    # element size (the header is padded to 8), so a reader can map it as is.
    order = sorted(tensors.items(), key=lambda kv: -kv[1].element_size())
    for name, t in order:
        if t.dtype not in ST_DTYPES:
            raise ValueError(f"tensor {name}: dtype {t.dtype} has no safetensors spelling")
        raw = _raw(t)
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + raw.nbytes]}
        bufs.append(raw)
        off += raw.nbytes
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".st-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(h)))
            f.write(h)
            for raw in bufs:
                f.write(raw)
        readable(tmp)
        return tmp
    except BaseException:
        os.unlink(tmp)
        raise
