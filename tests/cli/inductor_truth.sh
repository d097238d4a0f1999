# inductor_truth.sh: scripts/inductor_truth.py's parts that need no GPU nor
# torch.compile, on this host's torch: an aten node's provenance
# (meta["from_node"] chains, source_fn_stack) back to the traced graph's
# node, the split of a traced node's ops between an extern and a generated
# kernel, views left out, and a truth file written from kernel records shaped
# as the Scheduler hook makes them that fuseeng ab --against takes. The
# whole path (dynamo, Inductor) runs where torch >= 2 is installed
# (--selftest on the CPU); elsewhere that check is skipped by name.
. tests/lib.sh
PY=/usr/bin/python3
if ! "$PY" -c "import torch" 2>/dev/null; then
    skip "inductor_truth.py" "no torch for $PY"
    finish
    exit
fi

"$PY" - "$T" >"$T/py.out" 2>&1 <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, "scripts")
import torch, torch.nn as nn
import fx_trace, inductor_truth as IT
from model_json import model_json as _json
from fx_to_fuseeng import convert
d = sys.argv[1]

class NS:   # torch.fx.traceback.NodeSource's fields
    def __init__(self, name, graph_id, parents=()):
        self.name, self.graph_id, self.from_node = name, graph_id, list(parents)

# Provenance: the traced graph's name first (graph_id), then deeper names,
# then source_fn_stack; old-style (name, target) tuples too.
meta = {"from_node": [NS("addmm", 7, [NS("linear", 1)])], "source_fn_stack": [("fc", None)]}
assert IT.source_names(meta, 1) == ["linear", "addmm", "fc"], IT.source_names(meta, 1)
assert IT.source_names(meta) == ["linear", "addmm", "fc"]
assert IT.source_names({"from_node": [("relu_1", "aten.relu")]}) == ["relu_1"]
assert IT.source_names({}) == []

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(64, 128), nn.Linear(128, 64)
    def forward(self, x):
        h = torch.relu(self.fc1(x)).transpose(0, 1)
        return torch.softmax(self.fc2(h.transpose(0, 1)) * 0.5, dim=-1)

m = M().eval()
gm, _ = fx_trace.trace(m, {"x": torch.randn(8, 64)})
origin = {}
model, _, _ = convert(gm, "mlp", "test", m, origins=origin)
ops = {n["name"]: n["op"] for n in model["nodes"]}
by_fx = {}
for n in model["nodes"]:
    by_fx.setdefault(origin[n["name"]], []).append(n["name"])
assert origin["fc1.mm"] == "fc1" and origin["fc1"] == "fc1", origin
# F.linear is matmul + add: the extern kernel takes the matmul, a generated one the add.
assert IT.nodes_of_kernel("extern", ["fc1"], by_fx, ops) == ["fc1.mm"]
assert IT.nodes_of_kernel("triton", ["fc1", "relu"], by_fx, ops) == ["fc1", "relu"]
# A generated kernel whose origins are all library ops (a layout copy) computes none of ours.
assert IT.nodes_of_kernel("triton", ["fc2"], by_fx, ops) == ["fc2"]
assert IT.nodes_of_kernel("triton", ["fc2"], {"fc2": ["fc2.mm"]}, ops) == []
views = [n for n, op in ops.items() if op == "transpose"]
assert views, ops
assert IT.nodes_of_kernel("triton", ["relu", "transpose"], by_fx, ops) == ["relu"]
assert IT.nodes_of_kernel("triton", ["transpose"], by_fx, ops, keep_views=True) == [views[0]]

# Only origins that compute lead to nodes: a view origin names what a kernel
# reads (the reshape of the previous bmm's output is an origin of the next
# bmm, gpt_block's extern4), not what it computes.
assert IT.aten_op("aten.reshape.default") == "reshape" and IT.aten_op("prims.view_of.default") == "view_of"
assert IT.aten_op("aten.mm") == "mm" and IT.aten_op("operator.getitem") == "getitem"
assert IT.is_view_target("aten.permute.default") and IT.is_view_target("aten.clone.default")
assert not IT.is_view_target("aten.bmm.default") and not IT.is_view_target("aten._to_copy.default")
ext = [("aten.mm.default", "fc2"), ("aten.reshape.default", "fc1"), ("aten.relu.default", "relu"), ("x", None)]
assert IT.nodes_of_kernel("extern", ["fc2", "fc1", "relu"], by_fx, ops) == ["fc2.mm", "fc1.mm"]   # the old rule
assert IT.kernel_nodes("extern", ext, by_fx, ops) == ["fc2.mm"], IT.kernel_nodes("extern", ext, by_fx, ops)
# The bias add inlined into the next mm's input leads to fc1, whose matmul
# another kernel computed: only the library call's origin counts.
ext2 = [("aten.add.Tensor", "fc1"), ("aten.mm.default", "fc2")]
assert IT.kernel_nodes("extern", ext2, by_fx, ops) == ["fc2.mm"], IT.kernel_nodes("extern", ext2, by_fx, ops)
# An extern call is one library op: the last in the aten graph (the
# earlier ones made its input: squeezenet's concat of two convolutions).
ext3 = [("aten.mm.default", "fc1", 3), ("aten.mm.default", "fc2", 8), ("aten.relu.default", "relu", 5)]
assert IT.kernel_nodes("extern", ext3, by_fx, ops) == ["fc2.mm"], IT.kernel_nodes("extern", ext3, by_fx, ops)
assert IT.kernel_nodes("extern", [t[:2] for t in ext3], by_fx, ops) == ["fc1.mm", "fc2.mm"]
gen = [("aten.relu.default", "relu"), ("aten.permute.default", "fc2"), ("aten.view.default", "fc1")]
assert IT.kernel_nodes("triton", gen, by_fx, ops) == ["relu"], IT.kernel_nodes("triton", gen, by_fx, ops)
# A kernel of views alone (a layout copy) takes them all: views of ours stay out unless kept.
assert IT.kernel_nodes("triton", [("aten.clone.default", "transpose")], by_fx, ops) == []
assert IT.kernel_nodes("triton", [("aten.clone.default", "transpose")], by_fx, ops, True) == [views[0]]
# An aten fallback (no library op among the computing origins) keeps its own.
assert IT.kernel_nodes("extern", [("aten.relu.default", "relu"), ("aten.view.default", "fc1")],
                       by_fx, ops) == ["relu"]

# Kernel records as the Scheduler hook keeps them; graph 1 is the traced one.
def o(name, target, via):
    return {"name": name, "target": target, "meta": {"from_node": [NS(name, 9, [NS(via, 1)])]}}
recs = [("extern", "extern0:buf0", "extern_kernels.mm", [o("mm", "aten.mm", "fc1")]),
        ("triton", "triton1:buf1", "SchedulerNode", [o("add", "aten.add", "fc1"), o("relu", "aten.relu", "relu")]),
        ("extern", "extern2:buf2", "extern_kernels.mm", [o("mm_1", "aten.mm", "fc2")]),
        ("triton", "triton3:buf3", "FusedSchedulerNode",
         [o("add_1", "aten.add", "fc2"), o("mul", "aten.mul", "mul"), o("amax", "aten.amax", "softmax")])]
dyn = {n.name for n in gm.graph.nodes}
kernels = []
for kind, name, detail, origins in recs:
    og = [(x["target"], next(c for c in IT.source_names(x["meta"], 1) if c in dyn)) for x in origins]
    kernels.append((name, kind, IT.kernel_nodes(kind, og, by_fx, ops), detail))
text = _json(model)
open(os.path.join(d, "mlp.json"), "w").write(text)
doc = IT.truth_doc(os.path.join(d, "mlp.json"), text, "inductor", "test", kernels, "cpu", "test")
assert IT.check_truth(doc, model) == [], IT.check_truth(doc, model)
open(os.path.join(d, "mlp.truth.json"), "w").write(IT.truth_json(doc))
# The origins side file lets --refilter re-derive a truth by today's rules:
# a truth written by the old rule (the view origin's fc1.mm in the fc2 bmm) is mended.
side = IT.origins_doc("mlp2.truth.json", False, by_fx, [
    {"name": "extern0:buf0", "kind": "extern", "detail": "extern_kernels.mm",
     "origins": [["mm_1", "aten.mm.default", "fc2", 9], ["view", "aten.reshape.default", "fc1", 5],
                 ["mm", "aten.mm.default", "fc1", 4]]},
    {"name": "triton1:buf1", "kind": "triton", "detail": "SchedulerNode",
     "origins": [["clone", "aten.clone.default", "transpose"]]}])
assert IT.kernels_from_origins(side, model) == [
    ("extern0:buf0", "extern", ["fc2.mm"], "extern_kernels.mm"),
    ("triton1:buf1", "triton", [], "SchedulerNode; computes no node of ours")], IT.kernels_from_origins(side, model)
# A kernel that reads a buffer another kernel stored does not compute that
# kernel's origins again (Inductor's gather_origins names a realized
# producer in its consumer too); one that reads the producer's inputs
# recomputes it, and keeps it.
rw = IT.origins_doc("x", False, by_fx, [
    {"name": "p", "kind": "triton", "detail": "", "reads": ["buf0"], "writes": ["buf1"],
     "origins": [["relu", "aten.relu.default", "relu", 3, ["addmm"]]]},
    {"name": "k", "kind": "triton", "detail": "", "reads": ["buf1"], "writes": ["buf2"],
     "origins": [["relu", "aten.relu.default", "relu", 3, ["addmm"]], ["mul", "aten.mul.Tensor", "mul", 9, ["addmm_1"]]]},
    {"name": "k2", "kind": "triton", "detail": "", "reads": ["buf0"], "writes": ["buf3"],
     "origins": [["relu", "aten.relu.default", "relu", 3, ["addmm"]], ["mul", "aten.mul.Tensor", "mul", 9, ["addmm_1"]]]}])
assert [k[2] for k in IT.kernels_from_origins(rw, model)] == [["relu"], ["mul"], ["relu", "mul"]], \
    IT.kernels_from_origins(rw, model)
old = IT.truth_doc(os.path.join(d, "mlp.json"), text, "inductor", "test; then inductor_truth.py --refilter",
                   [("extern0:buf0", "extern", ["fc1.mm", "fc2.mm"], "extern_kernels.mm"),
                    ("triton1:buf1", "triton", [], "SchedulerNode")], "cpu", "an older --refilter")
open(os.path.join(d, "mlp2.truth.json"), "w").write(IT.truth_json(old))
open(os.path.join(d, "mlp2.origins.json"), "w").write(IT.truth_json(side))
assert IT.refilter(os.path.join(d, "mlp2.truth.json")) == 1
again = json.load(open(os.path.join(d, "mlp2.truth.json")))
assert [k["nodes"] for k in again["kernels"]] == [["fc2.mm"], []], again
assert again["command"].endswith("--refilter") and IT.refilter(os.path.join(d, "mlp2.truth.json")) == 0
json.dump(dict(side, kernels=side["kernels"][:1]), open(os.path.join(d, "mlp2.origins.json"), "w"))
try:
    IT.refilter(os.path.join(d, "mlp2.truth.json"))
    raise AssertionError("a side file of other kernels was taken")
except ValueError as e:
    assert "lists other kernels" in str(e), e
bad = dict(doc, kernels=[{"name": "k", "kind": "triton", "nodes": ["nosuch", "nosuch"]}])
assert IT.check_truth(bad, model) == ["kernels[0]: a node twice", "kernels[0]: nosuch not in the model",
                                      "kernels[0]: nosuch not in the model"], IT.check_truth(bad, model)
print("PASS", [k[2] for k in kernels])
PY
if grep -q "^PASS" "$T/py.out"; then
    ok "provenance, the extern/generated split, view origins compute nothing, views left out, the origins side file refiltered, a truth written from kernel records"
else
    not_ok "inductor_truth.py's pure parts" "$(cat "$T/py.out")"
fi

expect_ok "fuseeng ab --against takes the truth the script wrote (and the model it wrote beside it)" \
    "^  against inductor test \(.*mlp\.truth\.json\): 4 kernels, 7 nodes compared" \
    "$FUSEENG" ab "$T/mlp.json" --policy no_fusion --policy inductor_greedy --against "$T/mlp.truth.json"

if "$PY" -c "import sys, torch; sys.exit(int(torch.__version__.split('.')[0]) < 2)" 2>/dev/null; then
    check "inductor_truth.py --selftest --device cpu (dynamo and Inductor on this host)" \
        "$PY" scripts/inductor_truth.py --selftest --device cpu -o "$T/self"
else
    skip "inductor_truth.py --selftest --device cpu" "torch $("$PY" -c 'import torch; print(torch.__version__)') has no torch.compile (torch >= 2 needed)"
fi
expect_fail "inductor_truth.py without torch.compile or a model: exit 2 and why" 2 "inductor_truth.py: " \
    "$PY" scripts/inductor_truth.py
finish
