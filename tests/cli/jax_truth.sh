# jax_truth.sh: scripts/jax_truth.py's parts that need no JAX: the optimized
# HLO text read into kernels (hlo_fusions.py, on a module written here by hand
# in the HLO printer's syntax: a format fixture, not a compiler's output),
# a flat jaxpr mapped to fuseeng ops (jaxpr_fuseeng.py, on equations written
# here), the two joined into a truth file that fuseeng ab --against takes;
# malformed HLO is refused naming the line. The whole path (jax.jit on this
# host's device) runs where JAX is installed (--selftest); elsewhere that
# check is skipped by name.
. tests/lib.sh
PY=/usr/bin/python3

cat >"$T/mlp.hlo" <<'HLO'
HloModule jit_run, is_scheduled=true, entry_computation_layout={(f32[32,64]{1,0}, f32[64,128]{1,0}, f32[128]{0})->(f32[32]{0}, f32[4096]{0})}

%fused_computation (param_0.2: f32[128], param_1.3: f32[32,128]) -> f32[32,128] {
  %param_1.3 = f32[32,128]{1,0} parameter(1)
  %param_0.2 = f32[128]{0} parameter(0)
  %broadcast.5 = f32[32,128]{1,0} broadcast(f32[128]{0} %param_0.2), dimensions={1}, metadata={op_name="jit(run)/jit(main)/fe_1/broadcast_in_dim" source_file="/w/jax_models.py" source_line=20}
  %add.3 = f32[32,128]{1,0} add(f32[32,128]{1,0} %param_1.3, f32[32,128]{1,0} %broadcast.5), metadata={op_name="jit(run)/jit(main)/fe_2/add" source_file="/w/jax_models.py" source_line=20}
  %constant_1 = f32[] constant(0)
  %broadcast.6 = f32[32,128]{1,0} broadcast(f32[] %constant_1), dimensions={}
  ROOT %maximum.1 = f32[32,128]{1,0} maximum(f32[32,128]{1,0} %add.3, f32[32,128]{1,0} %broadcast.6), metadata={op_name="jit(run)/jit(main)/fe_3/max" source_file="/w/jax_models.py" source_line=20}
}

%region_0.7 (Arg_0.8: f32[], Arg_1.9: f32[]) -> f32[] {
  %Arg_0.8 = f32[] parameter(0)
  %Arg_1.9 = f32[] parameter(1)
  ROOT %add.10 = f32[] add(f32[] %Arg_0.8, f32[] %Arg_1.9), metadata={op_name="jit(run)/jit(main)/fe_4/reduce_sum"}
}

%fused_reduce (param_0.4: f32[32,128]) -> f32[32] {
  %param_0.4 = f32[32,128]{1,0} parameter(0)
  %constant_2 = f32[] constant(0)
  %reduce.1 = f32[32]{0} reduce(f32[32,128]{1,0} %param_0.4, f32[] %constant_2), dimensions={1}, to_apply=%region_0.7, metadata={op_name="jit(run)/jit(main)/fe_4/reduce_sum"}
  %constant_3 = f32[] constant(128)
  %broadcast.7 = f32[32]{0} broadcast(f32[] %constant_3), dimensions={}
  ROOT %divide.1 = f32[32]{0} divide(f32[32]{0} %reduce.1, f32[32]{0} %broadcast.7), metadata={op_name="jit(run)/jit(main)/fe_5/div"}
}

%fused_square (param_0.5: f32[32,128]) -> f32[128,32] {
  %param_0.5 = f32[32,128]{1,0} parameter(0)
  %multiply.2 = f32[32,128]{1,0} multiply(f32[32,128]{1,0} %param_0.5, f32[32,128]{1,0} %param_0.5), metadata={op_name="jit(run)/jit(main)/fe_6/integer_pow"}
  ROOT %transpose.1 = f32[128,32]{1,0} transpose(f32[32,128]{1,0} %multiply.2), dimensions={1,0}, metadata={op_name="jit(run)/jit(main)/fe_7/transpose"}
}

ENTRY %main.20 (Arg_0.1: f32[32,64], Arg_1.2: f32[64,128], Arg_2.3: f32[128]) -> (f32[32], f32[4096]) {
  %Arg_0.1 = f32[32,64]{1,0} parameter(0)
  %Arg_1.2 = f32[64,128]{1,0} parameter(1)
  %Arg_2.3 = f32[128]{0} parameter(2)
  %custom-call.1 = (f32[32,128]{1,0}, s8[4194304]{0}) custom-call(f32[32,64]{1,0} %Arg_0.1, f32[64,128]{1,0} %Arg_1.2), custom_call_target="__cublas$gemm", metadata={op_name="jit(run)/jit(main)/fe_0/dot_general" source_file="/w/jax_models.py" source_line=20}, backend_config={"operation_queue_id":"0","wait_on_operation_queues":[],"gemm_backend_config":{"alpha_real":1,"beta":0}}
  %get-tuple-element.1 = f32[32,128]{1,0} get-tuple-element((f32[32,128]{1,0}, s8[4194304]{0}) %custom-call.1), index=0
  %fusion = f32[32,128]{1,0} fusion(f32[128]{0} %Arg_2.3, f32[32,128]{1,0} %get-tuple-element.1), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(run)/jit(main)/fe_3/max"}
  %fusion.1 = f32[32]{0} fusion(f32[32,128]{1,0} %fusion), kind=kInput, calls=%fused_reduce, metadata={op_name="jit(run)/jit(main)/fe_5/div"}
  %fusion.2 = f32[128,32]{1,0} fusion(f32[32,128]{1,0} %fusion), kind=kLoop, calls=%fused_square
  %copy.3 = f32[128,32]{0,1} copy(f32[128,32]{1,0} %fusion.2), metadata={op_name="jit(run)/jit(main)/fe_8/reshape"}
  %bitcast.4 = f32[4096]{0} bitcast(f32[128,32]{0,1} %copy.3)
  ROOT %tuple.5 = (f32[32]{0}, f32[4096]{0}) tuple(f32[32]{0} %fusion.1, f32[4096]{0} %bitcast.4)
}
HLO
# The printer of newer XLA drops the %; a tuple result type holds spaces.
# XLA 0.11's printer also writes the stack-frame tables first, and a
# Triton GEMM is a kCustom fusion naming its backend kind.
cat >"$T/nopct.hlo" <<'HLO'
HloModule m, is_scheduled=true

FileNames
1 "/w/jax_models.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=26 end_line=26 column=4 end_column=33}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

gemm_computation (parameter_0: f32[8,8], parameter_1: f32[8,8]) -> f32[8,8] {
  parameter_0 = f32[8,8]{1,0} parameter(0)
  parameter_1 = f32[8,8]{1,0} parameter(1)
  exp.0 = f32[8,8]{1,0} exponential(parameter_0), metadata={op_name="jit(run)/fe_2/exp" stack_frame_id=1}
  ROOT dot = f32[8,8]{1,0} dot(exp.0, parameter_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(run)/fe_3/dot_general"}
}

fused_exp (p0: f32[8]) -> f32[8] {
  p0 = f32[8]{0} parameter(0)
  ROOT exponential.1 = f32[8]{0} exponential(p0), metadata={op_name="jit(run)/fe_0/exp"}
}

ENTRY main.3 (a: f32[8], b: f32[8,8]) -> (f32[8], f32[8]) {
  a = f32[8]{0} parameter(0)
  b = f32[8,8]{1,0} parameter(1)
  loop_exp_fusion = f32[8]{0} fusion(a), kind=kLoop, calls=fused_exp
  neg.2 = f32[8]{0} negate(a), metadata={op_name="jit(run)/fe_1/neg"}
  g = f32[8,8]{1,0} fusion(b, b), kind=kCustom, calls=gemm_computation, backend_config={"fusion_backend_config":{"kind":"__triton_nested_gemm_fusion"}}
  ROOT tuple.1 = (f32[8]{0}, f32[8]{0}) tuple(loop_exp_fusion, neg.2)
}
HLO

"$PY" - "$T" >"$T/py.out" 2>&1 <<'PY'
import json, os, sys
sys.path.insert(0, "scripts")
import hlo_fusions as H
from jaxpr_fuseeng import Eqn, Lit, convert
from jax_truth import kernels_to_nodes
from model_json import model_json
from truth_file import check_truth, truth_doc, truth_json
d = sys.argv[1]

ks = H.kernels(open(os.path.join(d, "mlp.hlo")).read())
got = [(k.name, k.kind, k.detail, H.equations(k.op_names)) for k in ks]
assert got == [("custom-call.1", "extern", "__cublas$gemm", [0]),
               ("fusion", "fusion", "kLoop", [1, 2, 3]),
               ("fusion.1", "fusion", "kInput", [4, 5]),
               ("fusion.2", "fusion", "kLoop", [6, 7]),
               ("copy.3", "copy", "", [8])], got
ks2 = H.kernels(open(os.path.join(d, "nopct.hlo")).read())
assert [(k.name, k.kind, k.detail, H.equations(k.op_names)) for k in ks2] == \
    [("loop_exp_fusion", "fusion", "kLoop", [0]), ("neg.2", "negate", "", [1]),
     ("g", "fusion", "kCustom __triton_nested_gemm_fusion", [2, 3])], ks2
assert H.equations(["jit(f)/fe_3/jit(_where)/fe_12/select_n", "jit(f)/fe_30x/add", "fe_7"]) == [7, 12]
for text, want in [("HloModule m\nENTRY e (a: f32[2]) -> f32[2] {\n  a = f32[2]{0} parameter(0)\n  what\n}\n",
                    "line 4: expected an instruction"),
                   ("HloModule m\n%c (a: f32[2]) -> f32[2] {\n}\n", "no ENTRY computation"),
                   ("HloModule m\nENTRY e (a: f32[2]) -> f32[2] {\n  f = f32[2]{0} fusion(a), calls=%nowhere\n}\n",
                    "computation nowhere, which the module does not define"),
                   ("HloModule m\nENTRY e (a: f32[2]) -> f32[2] {\n  a = f32[2]{0} parameter(0)\n",
                    "not closed")]:
    try:
        H.kernels(text)
        raise AssertionError("accepted: " + text)
    except H.HloError as e:
        assert want in str(e), (str(e), want)

# The flat equations the fixture's module was compiled from.
f32 = "float32"
eqns = [Eqn("dot_general", {"dimension_numbers": (((1,), (0,)), ((), ()))}, ["x", "w1"], [("v0", (32, 128), f32)]),
        Eqn("broadcast_in_dim", {"shape": (32, 128), "broadcast_dimensions": (1,)}, ["b1"], [("v1", (32, 128), f32)]),
        Eqn("add", {}, ["v0", "v1"], [("v2", (32, 128), f32)]),
        Eqn("max", {}, ["v2", Lit(0.0)], [("v3", (32, 128), f32)]),
        Eqn("reduce_sum", {"axes": (1,)}, ["v3"], [("v4", (32,), f32)]),
        Eqn("div", {}, ["v4", Lit(128.0)], [("v5", (32,), f32)]),
        Eqn("integer_pow", {"y": 2}, ["v3"], [("v6", (32, 128), f32)]),
        Eqn("transpose", {"permutation": (1, 0)}, ["v6"], [("v7", (128, 32), f32)]),
        Eqn("reshape", {"new_sizes": (4096,), "dimensions": None}, ["v7"], [("v8", (4096,), f32)])]
inputs = [("x", (32, 64), f32, "input"), ("w1", (64, 128), f32, "weight"), ("b1", (128,), f32, "weight")]
model, nodes_of, warns = convert("fixture", "test", inputs, eqns, ["v5", "v8"])
assert warns == [], warns
ops = {n["name"]: n["op"] for n in model["nodes"]}
assert nodes_of[1] == ["fe_1_broadcast_in_dim.r", "fe_1_broadcast_in_dim"], nodes_of[1]
assert ops["fe_0_dot_general"] == "matmul" and ops["fe_3_max"] == "maximum" and ops["fe_6_integer_pow"] == "mul"
assert [n for n in model["nodes"] if n["name"] == "fe_5_div"][0]["attrs"] == {"scalar": 128.0, "scalar_index": 1}
kernels, log = kernels_to_nodes(ks, nodes_of, ops)
assert [k[2] for k in kernels] == [["fe_0_dot_general"], ["fe_2_add", "fe_3_max"],
                                   ["fe_4_reduce_sum", "fe_5_div"], ["fe_6_integer_pow"], []], kernels
assert kernels[-1][3] == "views only", kernels[-1]
kv, _ = kernels_to_nodes(ks, nodes_of, ops, keep_views=True)
assert kv[1][2] == ["fe_1_broadcast_in_dim.r", "fe_1_broadcast_in_dim", "fe_2_add", "fe_3_max"], kv[1]
text = model_json(model)
open(os.path.join(d, "fixture.json"), "w").write(text)
doc = truth_doc(os.path.join(d, "fixture.json"), text, "xla", "fixture", kernels, "gpu", "test")
assert check_truth(doc, model) == []
open(os.path.join(d, "fixture.truth.json"), "w").write(truth_json(doc))

# float64 (a Python float JAX widened, as in jax_gpt2_block on JAX 0.11): f32
# with a note; the converts to and from it are aliases, so nothing is cast.
f64 = "float64"
e64 = [Eqn("convert_element_type", {"new_dtype": f64, "weak_type": False}, ["a"], [("c", (4,), f64)]),
       Eqn("mul", {}, ["c", Lit(0.5, (), f64)], [("m", (4,), f64)]),
       Eqn("mul", {}, ["m", "k"], [("m2", (4,), f64)]),
       Eqn("convert_element_type", {"new_dtype": f32, "weak_type": False}, ["m2"], [("r", (4,), f32)]),
       Eqn("exp", {}, ["r"], [("y", (4,), f32)])]
m64, n64, w64 = convert("f64", "test", [("a", (4,), f32, "input"), ("k", (4,), f64, "weight")], e64, ["y"])
assert {n["op"] for n in m64["nodes"]} == {"mul", "exp"}, m64["nodes"]
assert n64[0] == [] and n64[3] == [], n64
assert all(t["dtype"] == "f32" for t in m64["tensors"].values()), m64["tensors"]
assert len(w64) == 3 and all("float64; written as f32" in w for w in w64), w64

# keepdim: jnp.mean's reduce_sum and the broadcast_in_dim that puts the axis
# back are one reduction with keepdim, the reshape gone; a reduction read
# elsewhere too keeps its reshape
ek = [Eqn("reduce_sum", {"axes": (1,)}, ["a"], [("s", (8,), f32)]),
      Eqn("broadcast_in_dim", {"shape": (8, 1), "broadcast_dimensions": (0,)}, ["s"], [("sb", (8, 1), f32)]),
      Eqn("div", {}, ["sb", Lit(16.0)], [("m", (8, 1), f32)]),
      Eqn("sub", {}, ["a", "m"], [("d", (8, 16), f32)]),
      Eqn("reduce_max", {"axes": (-1,)}, ["d"], [("x", (8,), f32)]),
      Eqn("broadcast_in_dim", {"shape": (8, 1), "broadcast_dimensions": (0,)}, ["x"], [("xb", (8, 1), f32)]),
      Eqn("exp", {}, ["x"], [("e", (8,), f32)]),
      Eqn("sub", {}, ["d", "xb"], [("y", (8, 16), f32)])]
mk, nk, _ = convert("keep", "test", [("a", (8, 16), f32, "input")], ek, ["y", "e"])
byname = {n["name"]: n for n in mk["nodes"]}
assert byname["fe_0_reduce_sum"]["attrs"] == {"axes": [1], "keepdim": True}, byname["fe_0_reduce_sum"]
assert mk["tensors"]["fe_0_reduce_sum"]["shape"] == [8, 1] and nk[1] == [], (mk["tensors"], nk)
assert byname["fe_2_div"]["inputs"] == ["fe_0_reduce_sum"], byname["fe_2_div"]
assert "fe_1_broadcast_in_dim" not in mk["tensors"]
assert byname["fe_4_reduce_max"]["attrs"]["keepdim"] is False and nk[5] == ["fe_5_broadcast_in_dim"], nk

# a weight broadcast with 1s in front, read by a multiply, is the weight
# itself; read by a matmul too, it stays a reshape
el = [Eqn("broadcast_in_dim", {"shape": (1, 16), "broadcast_dimensions": (1,)}, ["g"], [("gb", (1, 16), f32)]),
      Eqn("mul", {}, ["a", "gb"], [("y", (8, 16), f32)]),
      Eqn("broadcast_in_dim", {"shape": (1, 16), "broadcast_dimensions": (1,)}, ["h"], [("hb", (1, 16), f32)]),
      Eqn("add", {}, ["y", "hb"], [("z", (8, 16), f32)]),
      Eqn("dot_general", {"dimension_numbers": (((1,), (0,)), ((), ()))}, ["hb", "w"], [("q", (1, 4), f32)])]
ml, nl, _ = convert("lead", "test", [("a", (8, 16), f32, "input"), ("g", (16,), f32, "weight"),
                                     ("h", (16,), f32, "weight"), ("w", (16, 4), f32, "weight")], el, ["z", "q"])
byname = {n["name"]: n for n in ml["nodes"]}
assert nl[0] == [] and byname["fe_1_mul"]["inputs"] == ["a", "g"], (nl, byname["fe_1_mul"])
assert nl[2] == ["fe_2_broadcast_in_dim"] and byname["fe_3_add"]["inputs"] == ["fe_1_mul", "fe_2_broadcast_in_dim"]
print("PASS")
PY
if grep -q "^PASS" "$T/py.out"; then
    ok "HLO kernels and op_names (with and without %), equations by fe_ scope, the jaxpr mapping, f64 as f32, keepdim, leading 1s, views left out"
else
    not_ok "hlo_fusions.py and jaxpr_fuseeng.py" "$(cat "$T/py.out")"
fi
expect_ok "the model from equations loads, and fuseeng ab --against takes the truth" \
    "^  against xla fixture \(.*fixture\.truth\.json\): 5 kernels, 6 nodes compared" \
    "$FUSEENG" ab "$T/fixture.json" --policy no_fusion --policy xla_priority --against "$T/fixture.truth.json"

# --refilter re-derives a committed truth from the HLO beside it: a kernel
# whose nodes were lost comes back as it was
cp tests/truth/jax_mlp.json tests/truth/jax_mlp.hlo.txt "$T/"
"$PY" - tests/truth/jax_mlp.truth.json "$T/jax_mlp.truth.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = next(k for k in d["kernels"] if k["nodes"])
k["nodes"] = []
json.dump(d, open(sys.argv[2], "w"))
PY
if "$PY" scripts/jax_truth.py --refilter "$T/jax_mlp.truth.json" >"$T/out" 2>"$T/err" &&
    grep -q ": 1 kernels changed" "$T/out" &&
    "$PY" -c 'import json, sys; a, b = (json.load(open(p))["kernels"] for p in sys.argv[1:]); sys.exit(a != b)' \
        tests/truth/jax_mlp.truth.json "$T/jax_mlp.truth.json"; then
    ok "jax_truth.py --refilter re-derives a truth's kernels from its HLO"
else
    not_ok "jax_truth.py --refilter re-derives a truth's kernels from its HLO" "$(cat "$T/out" "$T/err")"
fi
expect_fail "jax_truth.py --refilter without the HLO beside the truth names it" 2 "no jax_mlp.hlo.txt beside it" \
    sh -c "rm '$T/jax_mlp.hlo.txt' && '$PY' scripts/jax_truth.py --refilter '$T/jax_mlp.truth.json'"

if "$PY" -c "import jax" 2>/dev/null; then
    check "jax_truth.py --selftest (jax.jit on this host's device)" "$PY" scripts/jax_truth.py --selftest -o "$T/self"
else
    skip "jax_truth.py --selftest" "no JAX for $PY"
fi
finish
