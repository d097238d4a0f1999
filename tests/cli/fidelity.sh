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
finish
