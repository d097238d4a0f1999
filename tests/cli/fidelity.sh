# fidelity.sh: fuseeng calibrate (a machine file measured here, each figure
# commented, that the simulator accepts) and fuseeng fidelity (simulated
# against measured plans: text, JSON, SVG), and their bad input.
. tests/lib.sh
M=examples/models/hub_conflict.json
fields="name description l2_bytes memory_bytes l2_bandwidth l3_bandwidth local_bandwidth
launch_us tile_us matrix_flops vector_flops registers reserved_registers elements_per_thread
link_bandwidth link_latency_us overlap"

# ---- calibrate ----
check "calibrate this CPU" "$FUSEENG" calibrate --budget 0.02 --name here -o "$T/here.lua"
missing=""
for f in $fields; do grep -Eq "^  $f = " "$T/here.lua" || missing="$missing $f"; done
[ -z "$missing" ] && ok "the machine file sets every field" || not_ok "the machine file sets every field" "missing:$missing"
uncommented=$(awk '/^  [a-z_0-9]+ = / && prev !~ /^  --/ && $1 != "name" && $1 != "description" {print $1} {prev = $0}' "$T/here.lua")
[ -z "$uncommented" ] && ok "every measured figure has a comment above it" ||
    not_ok "every measured figure has a comment above it" "uncommented: $uncommented"
grep -q 'memory sweep' "$T/here.lua" && ok "the memory sweep is in the notes" || not_ok "the memory sweep is in the notes" "$(head -30 "$T/here.lua")"
grep -Eq '^-- here\.lua: this CPU measured by fuseeng calibrate' "$T/here.lua" &&
    ok "the header names the file and the device" || not_ok "the header names the file and the device" "$(head -3 "$T/here.lua")"
expect_ok "the simulator takes the calibrated machine" 'machine here:' \
    "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/here.lua"
awk 'length > 92 {bad = 1} END {exit bad}' "$T/here.lua" && ok "its comment lines are wrapped" ||
    not_ok "its comment lines are wrapped" "$(awk 'length > 92' "$T/here.lua" | head -3)"
expect_ok "calibrate prints the file without -o" '^return \{' "$FUSEENG" calibrate --budget 0.01 --quiet

expect_fail "calibrate: a negative budget" 2 "--budget" "$FUSEENG" calibrate --budget -1
expect_fail "calibrate: an unknown option" 2 "unknown option '--fast'" "$FUSEENG" calibrate --fast
expect_fail "calibrate: a stray argument" 2 "unknown argument 'model.json'" "$FUSEENG" calibrate model.json
expect_fail "calibrate: a name that is no identifier" 2 "the name 'a b' is not" \
    "$FUSEENG" calibrate --name 'a b' --budget 0.01
expect_fail "calibrate: a bad device" 2 "--device" "$FUSEENG" calibrate --device tpu
expect_fail "calibrate: an output that cannot be written (said before measuring)" 2 "$T/no/such/dir/m.lua" \
    "$FUSEENG" calibrate --budget 0.01 -o "$T/no/such/dir/m.lua"
if cuda_probe; then
    skip "calibrate --device cuda without a GPU says what is missing" "a GPU answers here (tests/cli/cuda.sh calibrates it)"
else
    expect_fail "calibrate --device cuda without a GPU says what is missing" 2 \
        "libcuda|NVRTC|no CUDA|GPU" "$FUSEENG" calibrate --device cuda
fi

# ---- fidelity ----
P="--policy fuse_all --policy gcu_tlf --policy xla_priority --policy tvm_fuseops"
expect_ok "fidelity: text" 'mean rank correlation' \
    "$FUSEENG" fidelity "$M" --machine "$T/here.lua" $P --dim M=256 --dim N=256 --reps 5 \
    --budget 0.05 --svg "$T/f.svg"
grep -Eq '^  no_fusion ' "$T/out" && ok "no_fusion is the baseline" || not_ok "no_fusion is the baseline" "$(head -5 "$T/out")"
head -c 4 "$T/f.svg" | grep -q '<svg' && grep -q '<circle' "$T/f.svg" && ok "the scatter is an SVG with points" ||
    not_ok "the scatter is an SVG with points" "$(head -c 200 "$T/f.svg")"
expect_ok "fidelity: JSON" '"format": "fuseeng.fidelity/1"' \
    "$FUSEENG" fidelity "$M" --machine "$T/here.lua" $P --dim M=256 --dim N=256 --reps 5 --budget 0.05 --json
if /usr/bin/python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert s["models"] == 1 and s["plans"] >= 2, s
assert d["provenance"]["command"].startswith("fuseeng fidelity "), d["provenance"]
assert d["models"][0]["machine_file"].endswith("here.lua"), d["models"][0]
for key in ("mean_rho", "median_abs_rel_error", "pick_rate", "tied_models"):
    assert key in s, key
m = d["models"][0]
for p in m["plans"]:
    assert p["sim_ms"] > 0 and p["measured_ms"] > 0, p
    assert abs(p["rel_error"] - (p["sim_ms"] - p["measured_ms"]) / p["measured_ms"]) < 1e-9, p
PY
then ok "the JSON's figures hang together"; else not_ok "the JSON's figures hang together" "$(head -c 600 "$T/out")"; fi

expect_fail "fidelity: no model" 2 "missing MODEL" "$FUSEENG" fidelity --machine gcu
expect_fail "fidelity: an unknown --skip" 2 "--skip gcu_tfl: no such shipped policy" \
    "$FUSEENG" fidelity "$M" --skip gcu_tfl
expect_fail "fidelity: --policy with --skip" 2 "do not go together" \
    "$FUSEENG" fidelity "$M" --policy fuse_all --skip gcu_tlf
expect_fail "fidelity: only the baseline" 2 "besides no_fusion" \
    "$FUSEENG" fidelity "$M" --policy no_fusion
expect_fail "fidelity: a missing model file" 2 "nothere\.json" \
    "$FUSEENG" fidelity "$T/nothere.json" --policy fuse_all
printf '{"format": "fuseeng.model/1", "tensors": {' >"$T/broken.json"
expect_fail "fidelity: a broken model file" 2 "broken\.json" \
    "$FUSEENG" fidelity "$T/broken.json" --policy fuse_all
printf 'return { name = "bad", l2_bytes = 0 }\n' >"$T/bad.lua"
expect_fail "fidelity: a bad machine file" 2 "bad\.lua" \
    "$FUSEENG" fidelity "$M" --policy fuse_all --machine "$T/bad.lua"
expect_fail "fidelity: the output over the model" 2 "is also a model" \
    "$FUSEENG" fidelity "$M" --policy fuse_all --out "$M"
expect_fail "fidelity: a bad --reps" 2 "--reps" "$FUSEENG" fidelity "$M" --policy fuse_all --reps 0
# ---- measuring policies against the simulator ----
expect_ok "run --stats counts where ctx:bench and the simulator agree" \
    'the simulator agrees on [0-9]+ of [0-9]+ measured groups' \
    "$FUSEENG" run examples/models/gpt2_block.json --policy benchmark_fusion --machine "$T/here.lua" \
    --dim S=16 --stats --bench-budget 5
cat >"$T/simfields.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "simfields", driver = "greedy",
  decide = function(self, group, ctx)
    local m = ctx:bench(group)
    if m and m.sim_speedup then
      assert(m.sim_fused > 0 and m.sim_separate > 0, "sim figures")
      assert(math.abs(m.sim_speedup - m.sim_separate / m.sim_fused) < 1e-9, "sim speedup")
    end
    return false
  end }
LUA
check "ctx:bench returns the simulator's figures beside" \
    "$FUSEENG" run examples/bench/swiglu.json --policy "$T/simfields.lua" --dim T=64 --bench-budget 2

sim_us() { "$FUSEENG" run "$@" --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["sim_us"])'; }

# ---- library_us: a fixed cost per library call ----
grep -v '^  library_us = ' "$T/here.lua" >"$T/nolib.lua"
sed 's/^  overlap = true,/  overlap = true,\n  library_us = 100,/; s/name = "here"/name = "lib"/' "$T/nolib.lua" >"$T/lib.lua"
a=$(sim_us examples/bench/matmul.json --policy no_fusion --machine "$T/nolib.lua")
b=$(sim_us examples/bench/matmul.json --policy no_fusion --machine "$T/lib.lua")
/usr/bin/python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[2]) - float(sys.argv[1]) - 100) < 1e-6 else 1)" "$a" "$b" 2>/dev/null &&
    ok "library_us adds to each library call" || not_ok "library_us adds to each library call" "$a against $b"

# ---- machines that name their executor ----
# The shipped H200 names its executor: "plain" is it without, "h200x"
# without the thread count, "h200s" with a million threads to saturate.
grep -v '^  executor = \|^  saturating_threads = ' lua/machines/h200.lua | sed 's/name = "h200"/name = "plain"/' >"$T/plain.lua"
grep -v '^  saturating_threads = ' lua/machines/h200.lua | sed 's/name = "h200"/name = "h200x"/' >"$T/h200x.lua"
sed 's/^  executor = "cuda",/  executor = "cuda",\n  saturating_threads = 1000000,/; s/name = "h200x"/name = "h200s"/' "$T/h200x.lua" >"$T/h200s.lua"
# The CUDA back end runs SwiGLU as one kernel: the same price either way.
a=$(sim_us examples/bench/swiglu.json --policy fuse_all --machine "$T/plain.lua")
b=$(sim_us examples/bench/swiglu.json --policy fuse_all --machine "$T/h200x.lua")
[ -n "$a" ] && [ "$a" = "$b" ] && ok "a group the back end runs as one kernel is priced as on any machine" ||
    not_ok "a group the back end runs as one kernel is priced as on any machine" "$a against $b"
# hub_conflict whole: row ops beside column reductions are several kernels
# on the card, their values through memory: dearer than one kernel.
printf '{"format": "fuseeng.plan/1", "groups": [{"nodes": [' >"$T/whole.json"
"$FUSEENG" run "$M" --policy no_fusion --json | grep -o '"nodes": \["[^"]*"\]' |
    sed 's/"nodes": \[//; s/\]$//' | paste -sd, - >>"$T/whole.json"
printf ']}]}\n' >>"$T/whole.json"
a=$("$FUSEENG" sim "$M" --plan "$T/whole.json" --machine "$T/plain.lua" --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["plan"]["time_us"])' 2>/dev/null)
b=$("$FUSEENG" sim "$M" --plan "$T/whole.json" --machine "$T/h200x.lua" --ignore-model-name --json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["plan"]["time_us"])' 2>/dev/null)
/usr/bin/python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b > 2 * a else 1)" "$a" "$b" 2>/dev/null &&
    ok "a group the back end splits is priced as its kernels ($a -> $b us)" ||
    not_ok "a group the back end splits is priced as its kernels" "$a against $b"
# A lone transpose is a view to the simulator (no launch) but a strided
# copy on the card, whose next kernel reads it dense: with the executor it
# is a kernel, a launch and its bytes read and written once.
cat >"$T/tr.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "tr",
 "tensors": {"x": {"shape": [1024, 1024], "dtype": "f32", "kind": "input"},
             "y": {"shape": [1024, 1024], "dtype": "f32", "kind": "activation"},
             "z": {"shape": [1024, 1024], "dtype": "f32", "kind": "activation"}},
 "nodes": [{"name": "t", "op": "transpose", "inputs": ["x"], "outputs": ["y"], "attrs": {"perm": [1, 0]}},
           {"name": "r", "op": "relu", "inputs": ["y"], "outputs": ["z"]}],
 "outputs": ["z"]}
JSON
"$FUSEENG" run "$T/tr.json" --policy no_fusion --json >"$T/trplan.json" 2>"$T/err"
"$FUSEENG" sim "$T/tr.json" --plan "$T/trplan.json" --machine "$T/plain.lua" --json >"$T/trp.json" 2>>"$T/err"
"$FUSEENG" sim "$T/tr.json" --plan "$T/trplan.json" --machine "$T/h200x.lua" --ignore-model-name --json >"$T/trx.json" 2>>"$T/err"
if /usr/bin/python3 - "$T/trp.json" "$T/trx.json" "$T/h200x.lua" <<'PY'
import json, re, sys
p, x = (json.load(open(f))["plan"] for f in sys.argv[1:3])
text = open(sys.argv[3]).read()
fig = lambda k: float(re.search(r"^  %s = ([0-9.e+]+)," % k, text, re.M).group(1))
assert (p["kernels"], p["views"], x["kernels"], x["views"]) == (1, 1, 2, 0), (p, x)
want = fig("launch_us") + 2 * 4 * 1024 * 1024 / fig("l3_bandwidth") * 1e6
got = x["time_us"] - p["time_us"]
assert abs(got - want) < 1e-6 * want, (got, want)
PY
then ok "a lone transpose the back end copies is priced as a copy kernel"
else not_ok "a lone transpose the back end copies is priced as a copy kernel" "$(cat "$T/err")" "$(head -c 600 "$T/trx.json")"; fi
# Starved kernels: needing a million threads in flight slows every kernel
# that runs fewer, and nothing that runs more.
c=$(sim_us "$M" --policy no_fusion --machine "$T/h200s.lua")
d=$(sim_us "$M" --policy no_fusion --machine "$T/h200x.lua")
/usr/bin/python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$c" "$d" 2>/dev/null &&
    ok "kernels below saturating_threads are slower" || not_ok "kernels below saturating_threads are slower" "$c against $d"
sed 's/executor = "cuda"/executor = "tpu"/' "$T/h200x.lua" >"$T/tpu.lua"
expect_fail "an unknown executor" 2 "tpu\.lua: .*executor 'tpu' is not one the simulator knows" \
    "$FUSEENG" run "$M" --policy no_fusion --machine "$T/tpu.lua"
sed 's/^  overlap = true,/  overlap = true,\n  saturating_threads = 4096,/' "$T/plain.lua" >"$T/sat.lua"
expect_fail "saturating_threads without an executor" 2 "saturating_threads needs an executor" \
    "$FUSEENG" run "$M" --policy no_fusion --machine "$T/sat.lua"
finish
