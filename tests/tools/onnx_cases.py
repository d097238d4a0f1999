"""onnx_cases.py: tiny ONNX models for tests/cli/import.sh, one per mapped
operator family, each with inputs and the expected outputs (computed with
numpy and torch, not with the importer's own code) as safetensors files.

    /usr/bin/python3 tests/tools/onnx_cases.py OUTDIR

writes OUTDIR/NAME.onnx, NAME.in.safetensors, NAME.out.safetensors per case
and OUTDIR/cases.txt (one line per case: NAME and the import arguments), and
the bad models of the error tests (OUTDIR/bad_*.onnx).
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(15)
CASES = []


def st_write(path, tensors):
    """A safetensors file of name -> numpy array."""
    names = {np.dtype("float32"): "F32", np.dtype("int64"): "I64", np.dtype("bool"): "BOOL",
             np.dtype("float16"): "F16", np.dtype("int32"): "I32"}
    header, blobs, at = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        b = a.tobytes()
        header[name] = {"dtype": names[a.dtype], "shape": list(a.shape),
                        "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def vi(name, arr_or_shape, dtype=TensorProto.FLOAT):
    shape = arr_or_shape if isinstance(arr_or_shape, (list, tuple)) else list(arr_or_shape.shape)
    return helper.make_tensor_value_info(name, dtype, shape)


def case(name, nodes, inputs, outputs, inits=None, opset=14, args="", expect=None):
    """inputs: name -> array; outputs: name -> expected array (shape and dtype
    declared from it); inits: name -> array."""
    tdt = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int64"): TensorProto.INT64,
           np.dtype("bool"): TensorProto.BOOL, np.dtype("float16"): TensorProto.FLOAT16}
    g = helper.make_graph(
        nodes, name,
        [vi(k, v, tdt[v.dtype]) for k, v in inputs.items()],
        [vi(k, v, tdt[v.dtype]) for k, v in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    st_write(os.path.join(OUT, name + ".in.safetensors"), inputs)
    st_write(os.path.join(OUT, name + ".out.safetensors"), outputs)
    CASES.append((name, args))


def r(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def t(a):
    return torch.from_numpy(a)


N = helper.make_node
x = r(2, 3, 4)
xp = r(2, 3, 4, lo=0.5, hi=2.0)

# ---- elementwise ----
un = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Sin", "Cos", "Erf", "HardSwish"]
ref = {"Relu": F.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Exp": torch.exp,
       "Neg": torch.neg, "Abs": torch.abs, "Sin": torch.sin, "Cos": torch.cos, "Erf": torch.erf,
       "HardSwish": F.hardswish}
case("unary", [N(o, ["x"], ["y_" + o]) for o in un] +
     [N(o, ["p"], ["y_" + o]) for o in ("Log", "Sqrt", "Reciprocal")],
     {"x": x, "p": xp},
     dict([("y_" + o, ref[o](t(x)).numpy()) for o in un] +
          [("y_Log", np.log(xp)), ("y_Sqrt", np.sqrt(xp)), ("y_Reciprocal", 1 / xp)]))
case("activations",
     [N("HardSigmoid", ["x"], ["hs"]), N("HardSigmoid", ["x"], ["hs6"], alpha=1 / 6, beta=0.5),
      N("LeakyRelu", ["x"], ["lr"], alpha=0.1),
      N("Clip", ["x", "lo", "hi"], ["cl"]), N("Clip", ["x", "", "hi"], ["cl_hi"])],
     {"x": x},
     {"hs": np.clip(x * 0.2 + 0.5, 0, 1), "hs6": F.hardsigmoid(t(x)).numpy(),
      "lr": F.leaky_relu(t(x), 0.1).numpy(), "cl": np.clip(x, -0.5, 1.0),
      "cl_hi": np.minimum(x, 1.0)},
     {"lo": np.array(-0.5, np.float32), "hi": np.array(1.0, np.float32)})
b = r(4)
cm = rng.uniform(size=(2, 3, 4)) > 0.5
case("binary",
     [N("Add", ["x", "b"], ["add"]), N("Sub", ["two", "x"], ["rsub"]), N("Mul", ["x", "x"], ["mul"]),
      N("Div", ["x", "two"], ["div"]), N("Pow", ["p", "two"], ["pow"]),
      N("Max", ["x", "b"], ["max"]), N("Min", ["x", "b", "zero"], ["min"]),
      N("Sum", ["x", "b", "x"], ["sum"]), N("Mean", ["x", "b"], ["mean"]),
      N("Where", ["c", "x", "b"], ["where"]), N("Where", ["c", "x", "two"], ["where_s"])],
     {"x": x, "p": xp, "c": cm},
     {"add": x + b, "rsub": 2 - x, "mul": x * x, "div": x / 2, "pow": xp ** 2,
      "max": np.maximum(x, b), "min": np.minimum(np.minimum(x, b), 0), "sum": x + b + x,
      "mean": (x + b) / 2, "where": np.where(cm, x, b),
      "where_s": np.where(cm, x, 2).astype(np.float32)},
     {"b": b, "two": np.array(2.0, np.float32), "zero": np.array(0.0, np.float32)})
case("cast", [N("Cast", ["x"], ["h"], to=TensorProto.FLOAT16), N("Cast", ["h"], ["y"], to=TensorProto.FLOAT)],
     {"x": x}, {"y": x.astype(np.float16).astype(np.float32)})

# ---- shapes ----
x4 = r(2, 3, 4, 5)
case("reshape",
     [N("Reshape", ["x", "s1"], ["a"]), N("Transpose", ["a"], ["b"], perm=[1, 0, 2]),
      N("Flatten", ["x"], ["f"], axis=2), N("Unsqueeze", ["x", "ax0"], ["u"]),
      N("Squeeze", ["u", "ax0"], ["sq"]), N("Identity", ["sq"], ["id"]),
      N("Dropout", ["x"], ["dr"])],
     {"x": x4},
     {"b": x4.reshape(2, 3, 20).transpose(1, 0, 2), "f": x4.reshape(6, 20), "sq": x4,
      "id": x4, "dr": x4},
     {"s1": np.array([0, 3, -1], np.int64), "ax0": np.array([0], np.int64)})
e = r(3, 1)
S = {"st": np.array([1, 0], np.int64), "en": np.array([3, 100], np.int64),
     "ax": np.array([1, 3], np.int64), "sp": np.array([1, 2], np.int64),
     "st1": np.array([-1], np.int64), "en1": np.array([2], np.int64),
     "sz": np.array([2, 3], np.int64), "i0": np.array(-1, np.int64),
     "iv": np.array([4, 0, 1], np.int64), "es": np.array([2, 3, 4], np.int64),
     "pads": np.array([0, 0, 1, 2, 0, 0, 0, 1], np.int64),
     "pads2": np.array([0, 0, 0, 1, 0, 0, 0, 2], np.int64)}
case("slice_concat",
     [N("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
      N("Slice", ["x", "st1", "en1"], ["s1"]),
      N("Concat", ["x", "x"], ["cat"], axis=-1),
      N("Split", ["x", "sz"], ["sp1", "sp2"], axis=3),
      N("Gather", ["x", "i0"], ["g0"], axis=1), N("Gather", ["x", "iv"], ["gv"], axis=3),
      N("Expand", ["e", "es"], ["ex"]),
      N("Pad", ["x", "pads"], ["pd"]), N("Pad", ["x", "pads2"], ["pr"], mode="reflect")],
     {"x": x4, "e": e},
     {"s": x4[:, 1:3, :, 0:100:2], "s1": x4[1:2], "cat": np.concatenate([x4, x4], -1),
      "sp1": x4[..., :2], "sp2": x4[..., 2:], "g0": x4[:, -1], "gv": x4[..., [4, 0, 1]],
      "ex": np.broadcast_to(e, (2, 3, 4)).copy(),
      "pd": np.pad(x4, [(0, 0), (0, 0), (1, 0), (2, 1)]),
      "pr": np.pad(x4, [(0, 0), (0, 0), (0, 0), (1, 2)], mode="reflect")},
     S, opset=13)

# ---- neural-network ops ----
xi = r(2, 3, 9, 9)
w = r(4, 3, 3, 3) * 0.3
wb = r(4)
wg = r(6, 1, 3, 3) * 0.3
xg = r(1, 6, 8, 8)
case("conv",
     [N("Conv", ["x", "w", "wb"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
      N("Conv", ["x", "w"], ["c2"], pads=[0, 1, 2, 1], dilations=[2, 1]),
      N("Conv", ["x", "w"], ["c3"], auto_pad="SAME_UPPER", strides=[2, 2]),
      N("Conv", ["xg", "wg"], ["c4"], group=6, pads=[1, 1, 1, 1])],
     {"x": xi, "xg": xg},
     {"c1": F.conv2d(t(xi), t(w), t(wb), stride=2, padding=1).numpy(),
      "c2": F.conv2d(F.pad(t(xi), (1, 1, 0, 2)), t(w), dilation=(2, 1)).numpy(),
      "c3": F.conv2d(F.pad(t(xi), (1, 1, 1, 1)), t(w), stride=2).numpy(),
      "c4": F.conv2d(t(xg), t(wg), padding=1, groups=6).numpy()},
     {"w": w, "wb": wb, "wg": wg})
case("pool",
     [N("MaxPool", ["x"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
      N("MaxPool", ["x"], ["mpc"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
      N("AveragePool", ["x"], ["ap"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
      N("AveragePool", ["x"], ["api"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
      N("GlobalAveragePool", ["x"], ["gap"]), N("GlobalMaxPool", ["x"], ["gmp"])],
     {"x": xi},
     {"mp": F.max_pool2d(t(xi), 3, 2, 1).numpy(), "mpc": F.max_pool2d(t(xi), 2, 2, ceil_mode=True).numpy(),
      "ap": F.avg_pool2d(t(xi), 3, 2, 1, count_include_pad=False).numpy(),
      "api": F.avg_pool2d(t(xi), 3, 1, 1, count_include_pad=True).numpy(),
      "gap": xi.mean((2, 3), keepdims=True), "gmp": xi.max((2, 3), keepdims=True)})
a2, b2, c2 = r(5, 6), r(4, 6), r(4)
am, bm = r(2, 5, 6), r(6, 3)
case("gemm",
     [N("Gemm", ["a", "b", "c"], ["g"], transB=1, alpha=0.5, beta=2.0),
      N("Gemm", ["a", "bt"], ["g2"]), N("MatMul", ["am", "bm"], ["mm"]),
      N("MatMul", ["am", "v"], ["mv"])],
     {"a": a2, "am": am},
     {"g": 0.5 * a2 @ b2.T + 2 * c2, "g2": a2 @ b2.T, "mm": am @ bm, "mv": am @ bm[:, 0]},
     {"b": b2, "c": c2, "bt": np.ascontiguousarray(b2.T), "bm": bm, "v": np.ascontiguousarray(bm[:, 0])})
sc, bi, mu, va = r(3), r(3), r(3), r(3, lo=0.5, hi=2)
case("norm",
     [N("BatchNormalization", ["x", "sc", "bi", "mu", "va"], ["bn"], epsilon=1e-3),
      N("LayerNormalization", ["x", "lw", "lb"], ["ln"], axis=-2, epsilon=1e-5)],
     {"x": xi},
     {"bn": F.batch_norm(t(xi), t(mu), t(va), t(sc), t(bi), eps=1e-3).numpy(),
      "ln": F.layer_norm(t(xi), (9, 9), t(np.ones((9, 9), np.float32) * 0.5), t(np.zeros((9, 9), np.float32) + 0.1)).numpy()},
     {"sc": sc, "bi": bi, "mu": mu, "va": va, "lw": np.ones((9, 9), np.float32) * 0.5,
      "lb": np.zeros((9, 9), np.float32) + 0.1}, opset=17)
case("reduce",
     [N("ReduceMean", ["x"], ["rm"], axes=[-1]), N("ReduceSum", ["x", "ax"], ["rs"], keepdims=0),
      N("ReduceMax", ["x"], ["rx"], axes=[1, 2], keepdims=0), N("ReduceMin", ["x"], ["rn"]),
      N("Softmax", ["x"], ["sm"], axis=1), N("LogSoftmax", ["x"], ["lsm"])],
     {"x": x},
     {"rm": x.mean(-1, keepdims=True), "rs": x.sum(1), "rx": x.max((1, 2)),
      "rn": x.min(keepdims=True), "sm": F.softmax(t(x), 1).numpy(),
      "lsm": F.log_softmax(t(x), -1).numpy()},
     {"ax": np.array([1], np.int64)}, opset=13)
case("softmax11", [N("Softmax", ["x"], ["sm"], axis=1)], {"x": x},
     {"sm": F.softmax(t(x).reshape(2, 12), 1).reshape(2, 3, 4).numpy()}, opset=11)

# ---- Resize (matmuls by resampling matrices), as torch.onnx.export writes F.interpolate ----
xr = r(1, 2, 5, 7)
f32 = np.float32
case("resize",
     [N("Resize", ["x", "", "s2"], ["near"], mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
      N("Resize", ["x", "", "", "sz"], ["bil"], mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel"),
      N("Resize", ["x", "", "", "sz"], ["bil_ac"], mode="linear",
        coordinate_transformation_mode="align_corners"),
      N("Resize", ["x", "", "", "sz1"], ["near_sz"], mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
     {"x": xr},
     {"near": F.interpolate(t(xr), scale_factor=2, mode="nearest").numpy(),
      "bil": F.interpolate(t(xr), size=(9, 4), mode="bilinear", align_corners=False).numpy(),
      "bil_ac": F.interpolate(t(xr), size=(9, 4), mode="bilinear", align_corners=True).numpy(),
      "near_sz": F.interpolate(t(xr), size=(5, 3), mode="nearest").numpy()},
     {"s2": np.array([1, 1, 2, 2], f32), "sz": np.array([1, 2, 9, 4], np.int64),
      "sz1": np.array([1, 2, 5, 3], np.int64)}, opset=13)

# ---- Conv 1-D / 3-D and 1-D pooling (on the 2-D ops) ----
x1, w1, b1 = r(2, 4, 11), r(6, 2, 3), r(6)
x3, w3, b3 = r(1, 2, 5, 6, 7), r(4, 2, 3, 2, 3), r(4)
case("convnd",
     [N("Conv", ["x1", "w1", "b1"], ["c1"], group=2, strides=[2], pads=[1, 2], dilations=[2]),
      N("Conv", ["x3", "w3", "b3"], ["c3"], strides=[2, 1, 2], pads=[1, 0, 1, 1, 0, 1],
        dilations=[1, 2, 1]),
      N("MaxPool", ["x1"], ["mp1"], kernel_shape=[3], strides=[2], pads=[1, 1]),
      N("AveragePool", ["x1"], ["ap1"], kernel_shape=[2], strides=[2])],
     {"x1": x1, "x3": x3},
     {"c1": F.conv1d(F.pad(t(x1), (1, 2)), t(w1), t(b1), stride=2, dilation=2, groups=2).numpy(),
      "c3": F.conv3d(t(x3), t(w3), t(b3), stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1)).numpy(),
      "mp1": F.max_pool1d(t(x1), 3, 2, 1).numpy(), "ap1": F.avg_pool1d(t(x1), 2).numpy()},
     {"w1": w1, "b1": b1, "w3": w3, "b3": b3})

# ---- logical ops on bools, 3-D pools, cubic Resize, TopK (issue 37) ----
ma, mb = rng.uniform(size=(2, 3, 4)) > 0.5, rng.uniform(size=(3, 4)) > 0.5
case("logical",
     [N("Not", ["a"], ["not"]), N("And", ["a", "b"], ["and"]), N("Or", ["a", "b"], ["or"]),
      N("Xor", ["a", "b"], ["xor"]), N("Where", ["not", "x", "b0"], ["w"])],
     {"a": ma, "b": mb, "x": x},
     {"not": ~ma, "and": ma & mb, "or": ma | mb, "xor": ma ^ mb, "w": np.where(~ma, x, 0).astype(f32)},
     {"b0": np.array(0, f32)})
v5 = r(1, 2, 5, 7, 6)
case("pool3d",
     [N("MaxPool", ["v"], ["mp"], kernel_shape=[2, 3, 3], strides=[1, 2, 2], pads=[1, 1, 1, 1, 1, 1],
        dilations=[1, 2, 1]),
      N("MaxPool", ["v"], ["mpa"], kernel_shape=[2, 2, 2], pads=[0, 1, 0, 1, 0, 1]),
      N("AveragePool", ["v"], ["ap"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1],
        ceil_mode=1),
      N("AveragePool", ["v"], ["api"], kernel_shape=[3, 3, 3], strides=[2, 2, 2],
        pads=[1, 1, 1, 1, 1, 1], count_include_pad=1),
      N("GlobalAveragePool", ["v"], ["gap"]), N("GlobalMaxPool", ["v"], ["gmp"])],
     {"v": v5},
     {"mp": F.max_pool3d(t(v5), (2, 3, 3), (1, 2, 2), 1, dilation=(1, 2, 1)).numpy(),
      "mpa": F.max_pool3d(F.pad(t(v5), (0, 1, 1, 0, 0, 1), value=-np.inf), 2, 1).numpy(),
      "ap": F.avg_pool3d(t(v5), 3, 2, 1, ceil_mode=True, count_include_pad=False).numpy(),
      "api": F.avg_pool3d(t(v5), 3, 2, 1, count_include_pad=True).numpy(),
      "gap": v5.mean((2, 3, 4), keepdims=True), "gmp": v5.max((2, 3, 4), keepdims=True)})
case("resize_cubic",
     [N("Resize", ["x", "", "", "sz"], ["cub"], mode="cubic", cubic_coeff_a=-0.75,
        coordinate_transformation_mode="pytorch_half_pixel"),
      N("Resize", ["x", "", "", "sz"], ["cub_ac"], mode="cubic", cubic_coeff_a=-0.75,
        coordinate_transformation_mode="align_corners"),
      N("Resize", ["x", "", "s2"], ["cub_s"], mode="cubic", cubic_coeff_a=-0.75,
        coordinate_transformation_mode="pytorch_half_pixel")],
     {"x": xr},
     {"cub": F.interpolate(t(xr), size=(9, 4), mode="bicubic", align_corners=False).numpy(),
      "cub_ac": F.interpolate(t(xr), size=(9, 4), mode="bicubic", align_corners=True).numpy(),
      "cub_s": F.interpolate(t(xr), scale_factor=2, mode="bicubic").numpy()},
     {"s2": np.array([1, 1, 2, 2], f32), "sz": np.array([1, 2, 9, 4], np.int64)}, opset=13)


def cubic_ref(a, out, ctm, A, exclude):
    """ONNX's reference of a cubic Resize of a's last axis (onnx/backend/test/case/node/
    resize.py): edge-padded taps around the source coordinate, Keys' weights."""
    n = a.shape[-1]
    y = np.zeros(a.shape[:-1] + (out,), np.float64)
    for i in range(out):
        xo = (i + 0.5) * n / out - 0.5 if ctm == "half_pixel" else i * n / out
        f = int(np.floor(xo))
        w = []
        for d in (xo - f + 1, xo - f, 1 - (xo - f), 2 - (xo - f)):
            w.append(((A + 2) * d - (A + 3)) * d * d + 1 if d <= 1 else
                     ((A * d - 5 * A) * d + 8 * A) * d - 4 * A)
        taps = [f - 1 + j for j in range(4)]
        if exclude:
            w = [0 if not 0 <= k < n else wj for wj, k in zip(w, taps)]
            w = [wj / sum(w) for wj in w]
        for wj, k in zip(w, taps):
            y[..., i] += wj * a[..., min(max(k, 0), n - 1)]
    return y.astype(np.float32)


x3r = r(2, 3, 6)
case("resize_cubic_onnx",
     [N("Resize", ["x", "", "sc"], ["half"], mode="cubic", cubic_coeff_a=-0.5),
      N("Resize", ["x", "", "sc"], ["asym_ex"], mode="cubic",
        coordinate_transformation_mode="asymmetric", exclude_outside=1)],
     {"x": x3r},
     {"half": cubic_ref(x3r, 9, "half_pixel", -0.5, False),
      "asym_ex": cubic_ref(x3r, 9, "asymmetric", -0.75, True)},
     {"sc": np.array([1, 1, 1.5], f32)}, opset=13)
xt = r(3, 5, 7)
xt[0, 1, 2] = xt[0, 1, 5]   # a tie: the lower index first (ONNX's rule)
order = np.argsort(-xt, axis=-1, kind="stable")[..., :3]
order_lo = np.argsort(xt, axis=1, kind="stable")[:, :2]
case("topk",
     [N("TopK", ["x", "k3"], ["vals", "idx"]), N("TopK", ["x", "k2"], ["lo", "lo_i"], axis=1, largest=0),
      N("TopK", ["x", "k3"], ["v0", "i0"], axis=0)],
     {"x": xt},
     {"vals": np.take_along_axis(xt, order, -1), "idx": order,
      "lo": np.take_along_axis(xt, order_lo, 1), "lo_i": order_lo,
      "v0": torch.topk(t(xt), 3, dim=0).values.numpy(),
      "i0": torch.topk(t(xt), 3, dim=0).indices.numpy()},
     {"k3": np.array([3], np.int64), "k2": np.array([2], np.int64)})

# ---- ScatterND on constants folds (Swin's attention mask: mask[a:b, c:d] = k) ----
xm = r(4, 5)
mask = np.zeros((4, 5), f32)
mask[1:3, 2:] = 7
idx = np.array([[[i, j] for j in range(2, 5)] for i in range(1, 3)], np.int64)
case("scatternd",
     [N("ConstantOfShape", ["shp"], ["zeros"], value=numpy_helper.from_array(np.zeros(1, f32))),
      N("ScatterND", ["zeros", "idx", "upd"], ["m"]), N("Add", ["x", "m"], ["y"])],
     {"x": xm}, {"y": xm + mask},
     {"shp": np.array([4, 5], np.int64), "idx": idx, "upd": np.full((2, 3), 7, f32)})

# ---- folding: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, symbolic N ----
xs = r(2, 4, 6)
g = helper.make_graph(
    [N("Shape", ["x"], ["sh"]), N("Gather", ["sh", "zero"], ["n"], axis=0),
     N("Unsqueeze", ["n", "ax0"], ["n1"]), N("Concat", ["n1", "m1"], ["shape"], axis=0),
     N("Reshape", ["x", "shape"], ["flat"]), N("Relu", ["flat"], ["y"])],
    "fold", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 6])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 24])],
    [numpy_helper.from_array(np.array(0, np.int64), "zero"),
     numpy_helper.from_array(np.array([0], np.int64), "ax0"),
     numpy_helper.from_array(np.array([-1], np.int64), "m1")])
mo = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.save(mo, os.path.join(OUT, "fold.onnx"))
st_write(os.path.join(OUT, "fold.in.safetensors"), {"x": xs})
st_write(os.path.join(OUT, "fold.out.safetensors"), {"y": np.maximum(xs.reshape(2, 24), 0)})
CASES.append(("fold", "--dim N=2"))

# ---- folding of constant tables: rotary angles (Range, Einsum, Cos), a causal mask (Trilu) ----
x44 = r(4, 4)
ar = np.arange(4, dtype=np.float32)
case("tables",
     [N("Range", ["z", "n", "one"], ["ar"]), N("Einsum", ["ar", "ar"], ["outer"], equation="i,j->ij"),
      N("Cos", ["outer"], ["cos"]), N("ConstantOfShape", ["shp"], ["ones"],
                                         value=helper.make_tensor("v", TensorProto.BOOL, [1], [True])),
      N("Trilu", ["ones", "k1"], ["tri"]), N("Where", ["tri", "cos", "x"], ["y"])],
     {"x": x44}, {"y": np.where(np.triu(np.ones((4, 4), bool), 1), np.cos(np.outer(ar, ar)), x44)},
     {"z": np.array(0, np.float32), "n": np.array(4, np.float32), "one": np.array(1, np.float32),
      "shp": np.array([4, 4], np.int64), "k1": np.array(1, np.int64)})

# ---- a table computed from a symbolic dim (arange(S)): built at the dim's value ----
xd = r(3, 4)
g = helper.make_graph(
    [N("Shape", ["x"], ["sh"]), N("Gather", ["sh", "zero"], ["s"], axis=0),
     N("Cast", ["s"], ["sf"], to=TensorProto.FLOAT), N("Range", ["z", "sf", "one"], ["ar"]),
     N("Unsqueeze", ["ar", "ax1"], ["col"]), N("Add", ["x", "col"], ["y"])],
    "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["S", 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["S", 4])],
    [numpy_helper.from_array(np.array(0, np.int64), "zero"),
     numpy_helper.from_array(np.array(0, np.float32), "z"),
     numpy_helper.from_array(np.array(1, np.float32), "one"),
     numpy_helper.from_array(np.array([1], np.int64), "ax1")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(OUT, "dyn.onnx"))
st_write(os.path.join(OUT, "dyn.in.safetensors"), {"x": xd})
st_write(os.path.join(OUT, "dyn.out.safetensors"), {"y": xd + np.arange(3, dtype=np.float32)[:, None]})
CASES.append(("dyn", "--dim S=3"))

# ---- custom fallback: an op we do not map, with a declared shape ----
case("custom", [N("Softplus", ["x"], ["sp"]), N("Relu", ["sp"], ["y"])], {"x": x},
     {"y": np.log1p(np.exp(x))})

# ---- valid models that used to crash or mislead the importer ----
# Concat of more inputs than a fixed array held (DenseNet's dense blocks), Split
# into more outputs and Sum of more inputs than 64, which the executors
# once refused to run.
xc = [r(2, 1, 3) for _ in range(100)]
xs70 = r(2, 210)
case("concat_many",
     [N("Concat", ["c%d" % i for i in range(20)], ["cat20"], axis=1),
      N("Concat", ["c%d" % i for i in range(100)], ["cat100"], axis=-1),
      N("Split", ["s"], ["sp%d" % i for i in range(70)], axis=1),
      N("Sum", ["sp%d" % i for i in range(70)], ["sum70"])],
     dict([("c%d" % i, a) for i, a in enumerate(xc)] + [("s", xs70)]),
     {"cat20": np.concatenate(xc[:20], 1), "cat100": np.concatenate(xc, -1),
      "sum70": xs70.reshape(2, 70, 3).sum(1)})
# Relu -> LeakyRelu: the emitter held names across a reallocation of its string table.
case("relu_leaky", [N("Relu", ["x"], ["r"]), N("LeakyRelu", ["r"], ["y"], alpha=0.2)],
     {"x": x}, {"y": np.maximum(x, 0)})
# A flip as torch.onnx.export writes it: Slice with ends INT64_MIN and step -1,
# on a constant (folded); INT64_MIN is not a symbolic dim.
kf, xf = r(4, 3), r(4, 3)
case("flip", [N("Slice", ["k", "st", "en", "ax", "sp"], ["kf"]), N("Add", ["x", "kf"], ["y"])],
     {"x": xf}, {"y": xf + kf[::-1]}, {"k": kf, "st": np.array([-1], np.int64),
                            "en": np.array([-(1 << 63)], np.int64), "ax": np.array([0], np.int64),
                            "sp": np.array([-1], np.int64)})
# A negative step on a tensor that is not constant: a gather of the indices.
case("slice_back", [N("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
     {"x": xf}, {"y": np.ascontiguousarray(xf[::-1, 2::-2])},
     {"st": np.array([-1, 2], np.int64), "en": np.array([-(1 << 63), -(1 << 63)], np.int64),
      "ax": np.array([0, 1], np.int64), "sp": np.array([-1, -2], np.int64)})
# A float constant cast to int64 out of int64's range saturates (C leaves it undefined).
case("cast_huge", [N("Cast", ["big"], ["bi"], to=TensorProto.INT64), N("Add", ["i", "bi"], ["y"])],
     {"i": np.array([-5, -1, 0], np.int64)}, {"y": np.array([(1 << 63) - 6, (1 << 63) - 2, (1 << 63) - 1], np.int64)},
     {"big": np.array(1e30, np.float32)})

with open(os.path.join(OUT, "cases.txt"), "w") as f:
    for name, args in CASES:
        f.write(f"{name} {args}\n".rstrip() + "\n")


# ---- bad models (tests/cli/import.sh checks each error) ----
def bad(name, nodes, inputs, outputs, inits=(), opset=14, domain_opsets=()):
    gr = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    mo = helper.make_model(gr, opset_imports=[helper.make_opsetid("", opset)] +
                           [helper.make_opsetid(d, v) for d, v in domain_opsets])
    onnx.save(mo, os.path.join(OUT, "bad_" + name + ".onnx"))


X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
bad("opset", [N("Relu", ["x"], ["y"])], [X], [Y], opset=7)
bad("domain", [N("FusedGemm", ["x"], ["y"], domain="com.microsoft", name="fused")], [X], [Y],
    domain_opsets=[("com.microsoft", 1)])
then = helper.make_graph([N("Relu", ["x"], ["t"])], "then", [], [vi("t", [2, 3])])
bad("if", [N("If", ["c"], ["y"], then_branch=then, else_branch=then, name="branch")],
    [helper.make_tensor_value_info("c", TensorProto.BOOL, []), X], [Y])
bad("dtype", [N("Cast", ["u"], ["y"], to=TensorProto.FLOAT, name="cast_u8")], [], [Y],
    [numpy_helper.from_array(np.zeros((2, 3), np.uint8), "u8_weight")])
ext = numpy_helper.from_array(np.zeros((2, 3), np.float32), "w_ext")
ext.ClearField("raw_data")
ext.data_location = TensorProto.EXTERNAL
ext.external_data.add(key="location", value="weights.bin")
bad("external", [N("Add", ["x", "w_ext"], ["y"])], [X], [Y], [ext])
bad("shape", [N("Relu", ["x"], ["y"], name="act")], [X],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
bad("noshape", [N("NonZero", ["x"], ["y"], name="nz")], [X],
    [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
bad("reshape", [N("Reshape", ["x", "s"], ["y"], name="rs")], [X], [Y],
    [numpy_helper.from_array(np.array([4, -1], np.int64), "s")])
X4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])
Y4 = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6, 6])
sc2 = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
bad("resize_area", [N("Resize", ["x", "", "sc"], ["y"], mode="area", name="rz")], [X4], [Y4], [sc2])
X5 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4, 4])
bad("pool3d_asym", [N("AveragePool", ["x"], ["y"], kernel_shape=[2, 2, 2], pads=[0, 0, 0, 1, 1, 1],
                      name="ap3")], [X5],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4, 4])])
bad("pool3d_pads", [N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], pads=[2, 0, 0, 2, 0, 0],
                      name="mp3")], [X5],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 7, 3, 3])])
bad("topk_k", [N("TopK", ["x", "k"], ["y", "i"], name="tk")], [X],
    [Y, helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3])],
    [numpy_helper.from_array(np.array([4], np.int64), "k")])
bad("topk_dyn", [N("TopK", ["x", "kx"], ["y", "i"], name="tk")],
    [X, helper.make_tensor_value_info("kx", TensorProto.INT64, [1])],
    [Y, helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3])])
bad("resize_crop", [N("Resize", ["x", "", "sc"], ["y"], mode="linear", name="rz",
                      coordinate_transformation_mode="tf_crop_and_resize")], [X4], [Y4], [sc2])
bad("resize_channels", [N("Resize", ["x", "", "scc"], ["y"], name="rz")], [X4],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 3])],
    [numpy_helper.from_array(np.array([1, 2, 1, 1], np.float32), "scc")])
bad("resize_int", [N("Resize", ["x", "", "sc"], ["y"], name="rz")],
    [helper.make_tensor_value_info("x", TensorProto.INT64, [1, 2, 3, 3])],
    [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 2, 6, 6])], [sc2])
bad("scatternd_range", [N("ScatterND", ["d", "i", "u"], ["m"], name="sc"), N("Add", ["x", "m"], ["y"])],
    [X], [Y], [numpy_helper.from_array(np.zeros((2, 3), np.float32), "d"),
               numpy_helper.from_array(np.array([[5]], np.int64), "i"),
               numpy_helper.from_array(np.zeros((1, 3), np.float32), "u")])
bad("conv3d_pads", [N("Conv", ["x", "w"], ["y"], pads=[1, 1], name="c3")],
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 1, 2, 2])],
    [numpy_helper.from_array(np.zeros((2, 2, 3, 3, 3), np.float32), "w")])


# ---- hostile models (tests/cli/import_hostile.sh): one per class of bad input the
# importer must refuse with one message naming the file, the node and the fix
# (exit 2, nothing written), and valid models that used to crash it. Each bad
# one is OUTDIR/h_NAME.onnx with a line "NAME<TAB>regex" in hostile.txt: the
# regex (ERE) the error must match. None is checked with onnx.checker.
HOSTILE = []
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def raw_model(nodes, inputs, outputs, inits=(), opset=14, producer=None):
    mo = helper.make_model(helper.make_graph(nodes, "h", inputs, outputs, list(inits)),
                           opset_imports=[helper.make_opsetid("", opset)])
    mo.ir_version = 8
    if producer is not None:
        mo.producer_name = producer
    return mo


def hostile(name, mo, expect, patch=None):
    """mo: a ModelProto; patch: (placeholder bytes, same-length replacement) applied to
    the serialized file, for bytes protobuf's Python API will not set (bad UTF-8)."""
    data = mo.SerializeToString()
    if patch:
        assert len(patch[0]) == len(patch[1]) and patch[0] in data
        data = data.replace(patch[0], patch[1])
    with open(os.path.join(OUT, "h_" + name + ".onnx"), "wb") as f:
        f.write(data)
    HOSTILE.append((name, expect))


F32 = TensorProto.FLOAT
X4 = helper.make_tensor_value_info("x", F32, [1, 1, 4, 4])
W4 = numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
Y4 = helper.make_tensor_value_info("y", F32, None)
X2 = helper.make_tensor_value_info("x", F32, [2, 3])
Y2 = helper.make_tensor_value_info("y", F32, [2, 3])
NODE = r"node '%s' \(%s, #%d\): "

# Attributes: one check of type and integer range for every attribute.
for nm, attrs, msg in [
        ("conv_stride0", {"strides": [0, 0]}, "attribute 'strides' item 0 is 0; it must be 1 to 2147483647"),
        ("conv_dilation0", {"dilations": [1, 0]}, "attribute 'dilations' item 1 is 0; it must be 1 to"),
        ("conv_pads_neg", {"pads": [-1, 0, 0, 0]}, "attribute 'pads' item 0 is -1; it must be 0 to"),
        ("conv_pads_huge", {"pads": [I64_MAX, 0, 0, 0]}, "attribute 'pads' item 0 is 9223372036854775807"),
        ("conv_group0", {"group": 0}, "attribute 'group' is 0; it must be 1 to"),
        ("conv_strides_float", {"strides": [1.0, 1.0]}, "attribute 'strides' is FLOATS; it must be INTS")]:
    hostile(nm, raw_model([N("Conv", ["x", "w"], ["y"], name="c", **attrs)], [X4], [Y4], [W4]),
            NODE % ("c", "Conv", 0) + msg)
hostile("pool_kernel0", raw_model([N("MaxPool", ["x"], ["y"], name="p", kernel_shape=[0, 3])], [X4], [Y4]),
        NODE % ("p", "MaxPool", 0) + "attribute 'kernel_shape' item 0 is 0; it must be 1 to")
hostile("axis_float", raw_model([N("Concat", ["x", "x"], ["y"], name="cat", axis=1e30)], [X2], [Y4]),
        NODE % ("cat", "Concat", 0) + "attribute 'axis' is FLOAT; it must be INT")
hostile("axis_range", raw_model([N("Concat", ["x", "x"], ["y"], name="cat", axis=I64_MIN)], [X2], [Y4]),
        NODE % ("cat", "Concat", 0) + "attribute 'axis' is -9223372036854775808; a rank-2 input takes -2 to 1")
hostile("keepdims", raw_model([N("ReduceSum", ["x"], ["y"], name="rs", keepdims=7)], [X2], [Y4], opset=11),
        NODE % ("rs", "ReduceSum", 0) + "attribute 'keepdims' is 7; it must be 0 to 1")
hostile("perm_dup", raw_model([N("Transpose", ["x"], ["y"], name="t", perm=[0, 0])], [X2], [Y4]),
        NODE % ("t", "Transpose", 0) + r"attribute 'perm' \[0, 0\] is not a permutation of 0 to 1")
hostile("perm_dup_const", raw_model([N("Transpose", ["k"], ["kt"], name="t", perm=[1, 1]),
                                     N("Add", ["x", "kt"], ["y"])], [X2], [Y4],
                                    [numpy_helper.from_array(np.ones((3, 2), np.float32), "k")]),
        NODE % ("t", "Transpose", 0) + r"attribute 'perm' \[1, 1\] is not a permutation of 0 to 1")

# Dims: sizes 1 to 2^40 (and dim names), checked where a shape comes in.
for nm, dim in [("dim_int64min", I64_MIN), ("dim_zero", 0), ("dim_neg", -3), ("dim_huge", 1 << 41)]:
    hostile(nm, raw_model([N("Relu", ["x"], ["y"])],
                          [helper.make_tensor_value_info("x", F32, [dim, 3])], [Y4]),
            r"graph input 'x' dim 0 is %d; dims must be 1 to 1099511627776" % dim)
hostile("const_of_shape_neg", raw_model(
    [N("ConstantOfShape", ["s"], ["k"], name="cs"), N("Add", ["x", "k"], ["y"])], [X2], [Y4],
    [numpy_helper.from_array(np.array([-2, -3], np.int64), "s")]),
    NODE % ("cs", "ConstantOfShape", 0) + "the shape input dim 0 is -2; dims must be 1 to 1099511627776")
hostile("range_huge", raw_model(
    [N("Range", ["a", "b", "d"], ["k"], name="rg"), N("Add", ["x", "k"], ["y"])], [X2], [Y4],
    [numpy_helper.from_array(np.array(0, np.float32), "a"),
     numpy_helper.from_array(np.array(3e38, np.float32), "b"),
     numpy_helper.from_array(np.array(1e-30, np.float32), "d")]),
    NODE % ("rg", "Range", 0) + "Range of .* elements")

# Inputs and outputs: each op's count and required inputs checked before any
# mapping or folding; optional ones read through one accessor.
for nm, node, msg in [
        ("no_inputs", N("Relu", [], ["y"], name="r"), NODE % ("r", "Relu", 0) + "takes 1 input, has 0"),
        ("conv_one_input", N("Conv", ["x"], ["y"], name="c"), NODE % ("c", "Conv", 0) + "takes 2 to 3 inputs, has 1"),
        ("gather_one_input", N("Gather", ["x"], ["y"], name="g"), NODE % ("g", "Gather", 0) + "takes 2 inputs, has 1"),
        ("sum_gap", N("Sum", ["x", "", "x"], ["y"], name="s"),
         NODE % ("s", "Sum", 0) + "input 1 is missing \\(an empty name\\); Sum needs it"),
        ("where_gap", N("Where", ["x", "x", ""], ["y"], name="w"),
         NODE % ("w", "Where", 0) + "input 2 is missing \\(an empty name\\); Where needs it"),
        ("bn_gap", N("BatchNormalization", ["x", "x", "", "x", "x"], ["y"], name="bn"),
         NODE % ("bn", "BatchNormalization", 0) + "input 2 is missing"),
        ("no_outputs", N("Relu", ["x"], [], name="r"), NODE % ("r", "Relu", 0) + "has no outputs"),
        ("output_empty", N("Relu", ["x"], [""], name="r"), NODE % ("r", "Relu", 0) + "output 0 is missing")]:
    hostile(nm, raw_model([node], [X2], [Y4]), msg)
for nm, node, msg in [
        ("range_two", N("Range", ["a", "a"], ["k"], name="rg"), NODE % ("rg", "Range", 0) + "takes 3 inputs, has 2"),
        ("einsum_gap", N("Einsum", ["a", ""], ["k"], name="e", equation="i,j->ij"),
         NODE % ("e", "Einsum", 0) + "input 1 is missing")]:
    hostile(nm, raw_model([node, N("Add", ["x", "k"], ["y"])], [X2], [Y4],
                          [numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "a")]), msg)
nt = N("Relu", ["x"], ["y"], name="r")
nt.ClearField("op_type")
hostile("null_op_type", raw_model([nt], [X2], [Y4]), r"node 'r' \(#0\) has no op_type")
yo = helper.make_tensor_value_info("y", F32, [2, 3])
yo.ClearField("name")
hostile("null_output_name", raw_model([N("Relu", ["x"], ["y"])], [X2], [yo]), "graph output 0 has no name")
ni = helper.make_tensor_value_info("x", F32, [2, 3])
ni.ClearField("name")
hostile("null_input_name", raw_model([N("Relu", ["x"], ["y"])], [ni], [Y2]), "graph input 0 has no name")

# Names: valid UTF-8, no control characters, at most 1024 bytes, checked in one place.
hostile("ctrl_name", raw_model([N("Relu", ["x"], ["y\x1b[31m"], name="r")], [X2], [Y4]),
        NODE % ("r", "Relu", 0) + r"output 0 name 'y\\x1b\[31m' has control character 0x1b at byte 1")
hostile("long_name", raw_model([N("Relu", ["x"], ["y" * 5000], name="r")], [X2], [Y4]),
        NODE % ("r", "Relu", 0) + "output 0 name is 5000 bytes long; names are limited to 1024 bytes")
hostile("bad_utf8", raw_model([N("Relu", ["x"], ["y"], name="r"), N("Relu", ["y"], ["zQQ"], name="r2")],
                              [X2], [Y4]),
        NODE % ("r2", "Relu", 1) + "output 0 name is not valid UTF-8 \\(byte 0xff at 1\\)",
        patch=(b"zQQ", b"z\xff\xfe"))
hostile("bad_utf8_node", raw_model([N("Relu", ["x"], ["y"], name="nQQ")], [X2], [Y4]),
        r"node #0 \(Relu\): its name is not valid UTF-8 \(byte 0xc3 at 1\)", patch=(b"nQQ", b"n\xc3\x28"))
hostile("bad_utf8_dim", raw_model([N("Relu", ["x"], ["y"])],
                                  [helper.make_tensor_value_info("x", F32, ["BQQ", 3])], [Y4]),
        r"graph input 'x' dim 0 name is not valid UTF-8 \(byte 0xff at 1\)", patch=(b"BQQ", b"B\xff\xff"))
hostile("empty_graph", raw_model([], [X2], []), "the graph has no nodes")
hostile("output_twice", raw_model([N("Relu", ["x"], ["y"])], [X2], [Y2, Y2]), "graph output 'y' is listed twice")
hostile("output_is_input", raw_model([N("Relu", ["x"], ["y"])], [X2], [Y2, X2]),
        "graph output 'x' is a graph input")

# Arithmetic: int64 overflow in constant folding, float -> int out of range, Einsum letters.
hostile("fold_overflow", raw_model(
    [N("Add", ["a", "b"], ["s"], name="add"), N("Reshape", ["x", "s"], ["y"])], [X2], [Y4],
    [numpy_helper.from_array(np.array([I64_MAX], np.int64), "a"),
     numpy_helper.from_array(np.array([1], np.int64), "b")]),
    NODE % ("add", "Add", 0) + "int64 overflow folding constants \\(9223372036854775807 \\+ 1\\)")
hostile("fold_mul_overflow", raw_model(
    [N("Mul", ["a", "b"], ["s"], name="mul"), N("Reshape", ["x", "s"], ["y"])], [X2], [Y4],
    [numpy_helper.from_array(np.array([1 << 62], np.int64), "a"),
     numpy_helper.from_array(np.array([4], np.int64), "b")]),
    NODE % ("mul", "Mul", 0) + "int64 overflow folding constants \\(4611686018427387904 \\* 4\\)")
hostile("fold_div_zero", raw_model(
    [N("Div", ["a", "b"], ["s"], name="div"), N("Reshape", ["x", "s"], ["y"])], [X2], [Y4],
    [numpy_helper.from_array(np.array([6], np.int64), "a"),
     numpy_helper.from_array(np.array([0], np.int64), "b")]),
    NODE % ("div", "Div", 0) + "integer division by zero folding constants")
hostile("einsum_letter", raw_model(
    [N("Einsum", ["a", "a"], ["k"], name="e", equation="i,j->i\u00e4"), N("Add", ["x", "k"], ["y"])],
    [X2], [Y4], [numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "a")]),
    NODE % ("e", "Einsum", 0) + "equation has byte 0xc3 at 6, which is not a letter")

with open(os.path.join(OUT, "hostile.txt"), "w") as f:
    for name, expect in HOSTILE:
        f.write(f"{name}\t{expect}\n")
