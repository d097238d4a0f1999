#!/bin/sh
# user_kernels.sh: kernels registered at run time for custom nodes
# (docs/kernels.md, "Registering a kernel"): the example plugin
# examples/kernels/mish.c, built here, runs a hand-written custom node, an
# ONNX Mish node and torch's F.mish / nn.Mish kept whole by export_torch.py,
# inside fused plans, checked against values computed outside fuseeng
# (Python's math; PyTorch for the torch export), through --kernels and
# FUSEENG_KERNELS, and from a C program through fe_kernel_register. Then
# every way loading or running a plugin goes wrong: each is exit 2 naming
# the file or the node, with nothing on stdout.
. tests/lib.sh
CC=${CC:-cc}
PY=/usr/bin/python3
PLUG="$T/mish.so"
INC="-I core/include"

if ! $CC -shared -fPIC -O2 -Wall -Wextra -Werror $INC examples/kernels/mish.c -o "$PLUG" -lm \
        >"$T/cc.log" 2>&1; then
    not_ok "examples/kernels/mish.c builds as a plugin, warning-free" "$(head -c 600 "$T/cc.log")"
    finish
    exit $?
fi
ok "examples/kernels/mish.c builds as a plugin, warning-free"

# examples/kernels/mish_chain.json: mul, the custom node, add; S symbolic.
cp examples/kernels/mish_chain.json "$T/m.json"
# inputs in [-12, 12) and y = mish(2.5 x) + 1, in double, by Python's math
python3 - "$T" <<'PY' || not_ok "the test's inputs and expected outputs are written"
import math, random, struct, sys
sys.path.insert(0, "tests/tools")
from st_gen import write
t = sys.argv[1]
for s in (40, 7):
    rnd = random.Random(s)
    x = [rnd.uniform(-12, 12) for _ in range(3 * s)]
    y = [v * math.tanh(math.log1p(math.exp(v))) + 1 for v in (2.5 * u for u in x)]
    pack = lambda vs: struct.pack("<%df" % len(vs), *vs)
    write(f"{t}/x{s}.safetensors", [("x", "F32", [3, s], pack(x))])
    write(f"{t}/y{s}.safetensors", [("y", "F32", [3, s], pack(y))])
PY

for p in no_fusion fuse_all; do
    expect_ok "--kernels runs attrs.kernel 'mish' under $p, matching Python's values" \
        "y +.* ok$" "$FUSEENG" run "$T/m.json" --policy $p --execute --no-timing --kernels "$PLUG" \
        --inputs "$T/x40.safetensors" --expect "$T/y40.safetensors" --expect-rtol 1e-5
done
expect_ok "the kernel sees the node's dims as given (--dim S=7)" "y +.* ok$" \
    "$FUSEENG" run "$T/m.json" --dim S=7 --policy fuse_all --execute --no-timing \
    --kernels="$PLUG" --inputs "$T/x7.safetensors" --expect "$T/y7.safetensors" --expect-rtol 1e-5
expect_ok "FUSEENG_KERNELS=A::B loads each, empty entries skipped (profile)" "entries from 3 ops" \
    env FUSEENG_KERNELS="$PLUG::$PLUG" "$FUSEENG" profile "$T/m.json" -o "$T/prof.json" --budget 0.05
expect_ok "ab --measure times a plan with a registered kernel" "fuse_all" \
    "$FUSEENG" ab "$T/m.json" --policy no_fusion --policy fuse_all --measure --budget 0.05 \
    --kernels "$PLUG"

# without the plugin: the node names what it asks for
expect_fail "without the plugin, --execute names the kernel the node asks for" 2 \
    "node 'm' is a custom op asking for kernel 'mish', which no program registered" \
    "$FUSEENG" run "$T/m.json" --policy fuse_all --execute --no-timing

# the kernel refuses what it does not take: a check before any run
sed 's/"dtype": "f32"/"dtype": "f16"/g' "$T/m.json" >"$T/m16.json"
expect_fail "a kernel that refuses the dtypes is an error naming node, kernel and reason" 2 \
    "node 'm' \(custom\): the registered kernel 'mish' refused it: computes in f32 only \(got f16 -> f16\)" \
    "$FUSEENG" run "$T/m16.json" --policy fuse_all --execute --no-timing --kernels "$PLUG"

# plugins that go wrong
cat >"$T/bad.c" <<'C'
#include <string.h>
#include "fuseeng.h"
static int fails(const fe_kernel_call *c)
{
    if (c->check)
        return 0;   /* takes anything, then fails when it runs */
    strncpy(c->why, "the device it wanted is busy", c->why_size - 1);
    return 1;
}
int fuseeng_kernels(fe_kernel_register_fn reg, fe_error *err)
{
#ifdef REFUSE
    (void)reg;
    strcpy(err->message, "licence file missing");
    err->code = 2;
    return 1;
#else
    return reg("mish", fails, NULL, err) || reg("", fails, NULL, err);
#endif
}
C
echo 'int not_the_entry(void) { return 0; }' >"$T/noentry.c"
$CC -shared -fPIC $INC "$T/bad.c" -o "$T/bad.so" && $CC -shared -fPIC $INC -DREFUSE "$T/bad.c" -o "$T/refuse.so" &&
    $CC -shared -fPIC "$T/noentry.c" -o "$T/noentry.so" || not_ok "the bad plugins build"
echo "not an ELF file" >"$T/junk.so"

expect_fail "--kernels on a missing file names it" 2 "/no/such/plugin.so: cannot open this kernel plugin" \
    "$FUSEENG" run "$T/m.json" --policy fuse_all --execute --kernels /no/such/plugin.so
expect_fail "--kernels on a file that is not a library names it" 2 "junk.so: cannot open this kernel plugin" \
    "$FUSEENG" check "$T/m.json" --kernels "$T/junk.so"
expect_fail "--kernels without a path says what it needs" 2 "--kernels needs a plugin's path" \
    "$FUSEENG" check "$T/m.json" --kernels
expect_fail "a plugin without fuseeng_kernels is named" 2 "noentry.so: the plugin has no function fuseeng_kernels" \
    "$FUSEENG" check "$T/m.json" --kernels "$T/noentry.so"
expect_fail "a plugin whose fuseeng_kernels fails gives its reason" 2 "refuse.so: its fuseeng_kernels failed: licence file missing" \
    "$FUSEENG" check "$T/m.json" --kernels "$T/refuse.so"
expect_fail "a plugin registering an empty name is refused" 2 "bad.so: its fuseeng_kernels failed: a kernel's name must be 1 to 255 bytes" \
    "$FUSEENG" check "$T/m.json" --kernels "$T/bad.so"
expect_fail "FUSEENG_KERNELS with a missing file names it" 2 "/no/such.so: cannot open this kernel plugin" \
    env FUSEENG_KERNELS=/no/such.so "$FUSEENG" check "$T/m.json"
# bad.so registered "mish" before it failed on the empty name: the failing
# kernel is the one that runs, and its failure stops the run
cat >"$T/replace.c" <<'C'
#include <string.h>
#include "fuseeng.h"
static int fails(const fe_kernel_call *c)
{
    if (c->check)
        return 0;
    strncpy(c->why, "the device it wanted is busy", c->why_size - 1);
    return 1;
}
int fuseeng_kernels(fe_kernel_register_fn reg, fe_error *err) { return reg("mish", fails, NULL, err); }
C
$CC -shared -fPIC $INC "$T/replace.c" -o "$T/replace.so" || not_ok "replace.so builds"
expect_fail "a kernel failing at run time stops the run, naming node, kernel and reason" 2 \
    "node 'm' \(custom\): the registered kernel 'mish' failed: the device it wanted is busy" \
    "$FUSEENG" run "$T/m.json" --policy fuse_all --execute --no-timing --kernels "$PLUG" --kernels "$T/replace.so"

# The embedding API: fe_kernel_register from a host program, no plugin.
cat >"$T/host.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "fuseeng.h"
static int calls;
static int twice(const fe_kernel_call *c)
{
    if (c->nin != 1 || c->nout != 1 || strcmp(c->in[0].dtype, "f32")) {
        snprintf(c->why, c->why_size, "f32, one in, one out");
        return 1;
    }
    if (c->check)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < c->in[0].rank; i++)
        n *= c->in[0].shape[i];
    for (int64_t i = 0; i < n; i++)
        ((float *)c->out[0].data)[i] = 2 * ((const float *)c->in[0].data)[i];
    calls += *(int *)c->user;
    return strstr(c->attrs, "\"kernel\":\"mish\"") ? 0 : (snprintf(c->why, c->why_size, "attrs %s", c->attrs), 1);
}
int main(int argc, char **argv)
{
    fe_error err;
    int one = 1;
    (void)argc;
    if (fe_kernel_register("mish", twice, &one, &err) || fe_kernel_register(NULL, twice, NULL, &err) != FE_EINPUT)
        return printf("register: %s\n", err.message), 1;
    fe_engine *e = fe_engine_new(NULL, &err);
    fe_model *m = e ? fe_model_load_file(argv[1], NULL, &err) : NULL;
    fe_policy *p = m ? fe_engine_load_policy(e, "fuse_all", &err) : NULL;
    fe_plan *plan = p && !fe_engine_use(e, p, &err) ? fe_engine_plan(e, m, &err) : NULL;
    fe_execute_options o = {0};
    o.no_timing = 1;
    fe_result *x = plan ? fe_plan_execute(plan, &o, &err) : NULL;
    if (!x || !fe_result_ok(x))
        return printf("failed: %s\n", x ? "outputs differ" : err.message), 1;
    printf("ran, kernel called %d times\n", calls);
    fe_result_free(x); fe_plan_free(plan); fe_policy_free(p); fe_model_free(m); fe_engine_free(e);
    return 0;
}
C
B=${BUILD:-build}
SAN=   # a sanitized library needs a sanitized program (ASan's runtime first)
[ "${SANITIZE:-}" = 1 ] && SAN="-fsanitize=address,undefined -fno-omit-frame-pointer"
if $CC $SAN $INC "$T/host.c" -o "$T/host" -L"$B" -lfuseeng -Wl,-rpath,"$PWD/$B" >"$T/cc.log" 2>&1; then
    # the plan and the reference each call it once, after their checks
    expect_ok "a host program's fe_kernel_register runs the node (plan and reference)" \
        "ran, kernel called 2 times" "$T/host" "$T/m.json"
else
    not_ok "a host program using fe_kernel_register builds" "$(head -c 600 "$T/cc.log")"
fi

# The importers' custom nodes, by the names they ask for.
if ! "$PY" -c 'import onnx, numpy' 2>/dev/null; then
    skip "an ONNX Mish node imports as custom and runs with the plugin" "no onnx or numpy for $PY"
    skip "an ONNX node of a user's domain keeps its attributes for its kernel (attrs.onnx_attrs)" "no onnx or numpy for $PY"
else
    "$PY" - "$T" <<'PY' || not_ok "the ONNX Mish model is written"
import sys, numpy as np, onnx
from onnx import helper, TensorProto as TP, numpy_helper
sys.path.insert(0, "tests/tools")
from st_gen import write
t = sys.argv[1]
g = helper.make_graph([helper.make_node("Mul", ["x", "k"], ["a"]),
                       helper.make_node("Mish", ["a"], ["m"]),
                       helper.make_node("Relu", ["m"], ["y"])], "mish_onnx",
                      [helper.make_tensor_value_info("x", TP.FLOAT, [2, 33])],
                      [helper.make_tensor_value_info("y", TP.FLOAT, [2, 33])],
                      [numpy_helper.from_array(np.array(3.0, np.float32), "k")],
                      value_info=[helper.make_tensor_value_info("m", TP.FLOAT, [2, 33])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), f"{t}/mish.onnx")
# an operator of a user's own domain, with attributes a kernel would read
g2 = helper.make_graph([helper.make_node("Scale", ["x"], ["y"], domain="com.example", factor=3.0,
                                         mode="fast", taps=[1, 2])], "own_op",
                       [helper.make_tensor_value_info("x", TP.FLOAT, [2, 33])],
                       [helper.make_tensor_value_info("y", TP.FLOAT, [2, 33])])
onnx.save(helper.make_model(g2, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("com.example", 1)]), f"{t}/own.onnx")
x = np.random.default_rng(3).uniform(-8, 8, (2, 33)).astype(np.float32)
a = 3.0 * x.astype(np.float64)
y = np.maximum(a * np.tanh(np.log1p(np.exp(a))), 0).astype(np.float32)
write(f"{t}/ox.safetensors", [("x", "F32", [2, 33], x.tobytes())])
write(f"{t}/oy.safetensors", [("y", "F32", [2, 33], y.tobytes())])
PY
    if "$FUSEENG" import "$T/mish.onnx" -o "$T/mish_onnx.json" >"$T/out" 2>"$T/err" &&
            grep -q '"onnx_op": *"Mish"' "$T/mish_onnx.json"; then
        expect_ok "an ONNX Mish node (attrs.onnx_op) runs with the plugin, matching numpy" "y +.* ok$" \
            "$FUSEENG" run "$T/mish_onnx.json" --policy fuse_all --execute --no-timing \
            --kernels "$PLUG" --inputs "$T/ox.safetensors" --expect "$T/oy.safetensors" --expect-rtol 1e-5
    else
        not_ok "an ONNX Mish node imports as custom and runs with the plugin" "$(head -c 600 "$T/err")"
    fi
    if "$FUSEENG" import "$T/own.onnx" -o "$T/own.json" >"$T/out" 2>"$T/err" &&
            tr -d ' \n' <"$T/own.json" | grep -q '"onnx_op":"com.example.Scale","onnx_attrs":{"factor":3.0,"mode":"fast","taps":\[1,2\]}'; then
        ok "an ONNX node of a user's domain keeps its attributes for its kernel (attrs.onnx_attrs)"
    else
        not_ok "an ONNX node of a user's domain keeps its attributes for its kernel (attrs.onnx_attrs)" \
            "$(head -c 300 "$T/err")" "$(grep -A3 onnx_op "$T/own.json" 2>/dev/null | head -c 300)"
    fi
fi

if ! "$PY" -c 'import torch' 2>/dev/null; then
    skip "F.mish and nn.Mish exported by export_torch.py run with the plugin" "no torch for $PY"
else
    cat >"$T/mishmods.py" <<'PY'
import torch
import torch.nn as nn
import torch.nn.functional as F

class Both(nn.Module):
    """F.mish (call_function) and an nn.Mish module kept whole (call_module)."""
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)
        self.act = nn.Mish()
    def forward(self, x):
        return self.act(self.lin(F.mish(x * 2.0)))
PY
    "$PY" - "$T" <<'PY' || not_ok "the torch Mish model's weights, inputs and outputs are written"
import sys, torch
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "scripts")
from mishmods import Both
from st_write import write
torch.manual_seed(0)
m = Both().eval()
x = torch.randn(4, 16) * 4
write(f"{sys.argv[1]}/tw.safetensors", {k: v for k, v in m.state_dict().items()})
write(f"{sys.argv[1]}/tx.safetensors", {"x": x})
write(f"{sys.argv[1]}/ty.safetensors", {"output": m(x).detach()})
PY
    if PYTHONPATH="$T" "$PY" scripts/export_torch.py mishmods.Both --input x=4x16 --leaf torch.nn.Mish \
            -o "$T/mish_fx.json" >"$T/out" 2>"$T/err" &&
            [ "$(grep -c '"op": *"custom"' "$T/mish_fx.json")" -eq 2 ]; then
        expect_ok "F.mish and nn.Mish exported by export_torch.py run with the plugin, matching PyTorch" \
            "output +.* ok$" "$FUSEENG" run "$T/mish_fx.json" --policy fuse_all --execute --no-timing \
            --kernels "$PLUG" --weights "$T/tw.safetensors" --inputs "$T/tx.safetensors" \
            --expect "$T/ty.safetensors" --expect-rtol 1e-5
    else
        not_ok "F.mish and nn.Mish exported by export_torch.py run with the plugin" \
            "$(head -c 600 "$T/err") $(grep -c '"custom"' "$T/mish_fx.json" 2>/dev/null) custom nodes"
    fi
fi

finish
