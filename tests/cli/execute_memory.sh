# execute_memory.sh: run --execute prints the process's peak memory against
# the model's floor (inputs and weights + the unfused reference's live
# activations at peak, each tensor in its own dtype), on a model small
# enough to count by hand.
. tests/lib.sh

# x (input) and w (weight): 4x8 f16 each, 64 bytes, so 128 static bytes.
# a = x + w, then b = relu(a): at relu a and b are both live, 64 bytes
# each, and b is the output, so the activations peak at 128 bytes.
cat >"$T/m.json" <<'M'
{"format": "fuseeng.model/1", "name": "floor", "tensors": {
  "x": {"shape": [4, 8], "dtype": "f16", "kind": "input"},
  "w": {"shape": [4, 8], "dtype": "f16", "kind": "weight"}},
 "nodes": [{"name": "add", "op": "add", "inputs": ["x", "w"], "outputs": ["a"]},
           {"name": "relu", "op": "relu", "inputs": ["a"], "outputs": ["b"]}],
 "outputs": ["b"]}
M

expect_ok "run --execute prints the peak against the model's floor" \
    "process peak [0-9.]+ [KMG]i?B against the model's floor 256 B .*: [0-9.]+x" \
    "$FUSEENG" run "$T/m.json" --policy no_fusion --execute --no-timing

"$FUSEENG" run "$T/m.json" --policy no_fusion --execute --no-timing --json >"$T/out" 2>"$T/err"
if python3 - "$T/out" <<'P'
import json, sys
x = json.load(open(sys.argv[1]))["summary"]["executed"]
assert x["floor_bytes"] == 256, x["floor_bytes"]
assert x["static_bytes"] == 128, x["static_bytes"]
assert x["peak_rss_bytes"] > 1 << 20, x["peak_rss_bytes"]
assert abs(x["rss_over_floor"] - x["peak_rss_bytes"] / 256) < 1e-6 * x["rss_over_floor"]
P
then ok "executed JSON: floor_bytes counted by hand, peak_rss_bytes and their ratio"
else not_ok "executed JSON: floor_bytes counted by hand, peak_rss_bytes and their ratio" "$(head -c 600 "$T/out")"
fi

# A timed run says how many rounds ran; a fast model keeps at least 5
# and a 95% interval (the cut for slow passes: tests/test_paired.c).
"$FUSEENG" run "$T/m.json" --policy fuse_all --execute --json --budget 0.001 >"$T/out" 2>"$T/err"
if python3 - "$T/out" <<'P'
import json, sys
x = json.load(open(sys.argv[1]))["summary"]["executed"]
assert x["rounds"] >= 5 and x["interval_is_range"] is False, x
assert x["plan"]["reps"] == x["rounds"]
P
then ok "executed JSON: rounds and interval_is_range"
else not_ok "executed JSON: rounds and interval_is_range" "$(head -c 600 "$T/out")"
fi

echo "1..$n"
[ "$failures" -eq 0 ]
