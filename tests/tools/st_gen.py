"""st_gen.py: safetensors files for the CLI tests (tests/cli/weights.sh),
written with the standard library only, so that the format is checked
against an implementation other than ours.

  st_gen.py MODEL ROLE OUT [--seed N] [--dim K=V] [--drop NAME] [--extra NAME]
            [--dtype NAME=F64] [--shape NAME=2,3]
      every tensor of kind ROLE (weight or input) of MODEL at its dims,
      seeded uniform values (batch-norm running variances in [0.5, 1.5]),
      with the mutations asked for (the bad-file classes)
  st_gen.py --perturb IN OUT NAME
      IN with output NAME's first element changed by 10% of the largest value
"""
import json
import random
import struct
import sys

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I8": 1, "BOOL": 1}
OURS = {"f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32", "i8": "I8",
        "bool": "BOOL"}
PACK = {"F64": "d", "F32": "f", "F16": "e", "I64": "q", "I32": "i", "I8": "b", "BOOL": "?"}


def write(path, tensors):
    """tensors: list of (name, dtype, shape, raw bytes)."""
    header, off, blobs = {}, 0, []
    for name, dt, shape, raw in tensors:
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = []
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out.append((name, e["dtype"], e["shape"], data[base + b:base + end]))
    return out


def values(name, dt, count, rng):
    if dt == "BF16":
        vals = [rng.uniform(-0.5, 0.5) for _ in range(count)]
        return b"".join(struct.pack("<f", v)[2:] for v in vals)
    if dt in ("I64", "I32", "I8"):
        return struct.pack("<%d%s" % (count, PACK[dt]), *[0] * count)
    if dt == "BOOL":
        return struct.pack("<%d?" % count, *[True] * count)
    lo, hi = (0.5, 1.5) if "running_var" in name else (-0.5, 0.5)
    return struct.pack("<%d%s" % (count, PACK[dt]), *[rng.uniform(lo, hi) for _ in range(count)])


def generate(argv):
    model, role, out = argv[:3]
    opts = {"--seed": "1", "--dim": [], "--drop": [], "--extra": [], "--dtype": [], "--shape": []}
    i = 3
    while i < len(argv):
        key, val = argv[i], argv[i + 1]
        if isinstance(opts[key], list):
            opts[key].append(val)
        else:
            opts[key] = val
        i += 2
    m = json.load(open(model))
    dims = dict(m.get("dims", {}))
    for kv in opts["--dim"]:
        k, v = kv.split("=")
        dims[k] = int(v)
    dtypes = dict(kv.split("=") for kv in opts["--dtype"])
    shapes = {k: [int(x) for x in v.split(",")] for k, v in
              (kv.split("=") for kv in opts["--shape"])}
    rng = random.Random(int(opts["--seed"]))
    tensors = []
    for name, t in m["tensors"].items():
        if t.get("kind") != role or name in opts["--drop"]:
            continue
        shape = shapes.get(name, [dims[d] if isinstance(d, str) else d for d in t["shape"]])
        dt = dtypes.get(name, OURS[t["dtype"]])
        count = 1
        for d in shape:
            count *= d
        tensors.append((name, dt, shape, values(name, dt, count, rng)))
    for name in opts["--extra"]:
        tensors.append((name, "F32", [1], struct.pack("<f", 1.0)))
    write(out, tensors)


def perturb(src, dst, name):
    tensors = read(src)
    for k, (n, dt, shape, raw) in enumerate(tensors):
        if n == name:
            assert dt == "F32"
            vals = list(struct.unpack("<%df" % (len(raw) // 4), raw))
            vals[0] += 0.1 * max(abs(v) for v in vals)
            tensors[k] = (n, dt, shape, struct.pack("<%df" % len(vals), *vals))
    write(dst, tensors)


if __name__ == "__main__":
    if sys.argv[1] == "--perturb":
        perturb(*sys.argv[2:5])
    else:
        generate(sys.argv[1:])
