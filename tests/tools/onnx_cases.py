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
