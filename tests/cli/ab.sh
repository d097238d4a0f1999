# ab.sh: `fuseeng ab`, policies compared on models.
. tests/lib.sh
A="examples/models/llama2_7b_layer.json examples/models/resnet50_bottleneck.json"
expect_ok "ab compares and stars the fastest" '^\* fuse_all +[0-9]+' \
    "$FUSEENG" ab $A --policy no_fusion --policy fuse_all
expect_ok "ab --csv" '^llama2-7b-layer,fuse_all,7,3,' "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --csv
expect_ok "ab --json" '"speedup"' "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --json
expect_ok "ab --dim applies to the models that have the dim" 'llama2-7b-layer \(unfused ' \
    "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --dim S=512
expect_ok "ab --param applies to the policies that have it" 'static_rules\{max_graph_size=1\}' \
    "$FUSEENG" ab $A --policy fuse_all --policy static_rules --param max_graph_size=1
check "ab --svg writes a chart" "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --svg "$T/ab.svg"
if grep -q '^<svg' "$T/ab.svg" && grep -q '</svg>' "$T/ab.svg"; then ok "the chart is SVG"; else not_ok "the chart is SVG"; fi
expect_fail "ab needs two policies" 2 "at least two --policy" "$FUSEENG" ab $A --policy fuse_all
expect_fail "ab --param nobody has" 2 "no policy given has that parameter" \
    "$FUSEENG" ab $A --policy fuse_all --policy no_fusion --param margin=1
expect_fail "ab on a bad model" 2 "nosuch.json: cannot open" "$FUSEENG" ab "$T/nosuch.json" --policy fuse_all --policy no_fusion

# ---- suites ----
G=examples/models/gpt2_block.json R=examples/models/resnet50_bottleneck.json L=examples/models/llama2_7b_layer.json
printf '{"models": ["%s", "%s"], "policies": ["fuse_all", "gcu_tlf"], "machines": ["gcu", "gcu_big"]}\n' "$G" "$R" >"$T/min.json"
expect_ok "a suite in its minimal form: models x machines" '^resnet50-bottleneck on gcu_big \(unfused' \
    "$FUSEENG" ab --suite "$T/min.json"
expect_ok "the summary tallies each policy against the baseline" '^  gcu_tlf +[0-9.]+x +[0-9]+ +[0-9]+ +0 +0$' \
    "$FUSEENG" ab --suite "$T/min.json"
cat >"$T/rich.json" <<JSON
{"models": [{"file": "$L", "dims": {"S": [64, 128]}}, "examples/models/res*.json"],
 "policies": ["no_fusion", {"policy": "static_rules", "params": {"max_graph_size": 3}, "name": "sr3"},
              {"combine": "vote", "of": ["fuse_all", "gcu_tlf", "memory_aware"]}],
 "dims": {"B": 1}}
JSON
expect_ok "per-model dim sweeps name their rows" '^llama2-7b-layer S=128 \(unfused' "$FUSEENG" ab --suite "$T/rich.json"
expect_ok "a parameterised policy is a column under its name" '^  sr3 ' "$FUSEENG" ab --suite "$T/rich.json"
expect_ok "a combination is a column" 'vote\(fuse_all,gcu_tlf,memory_aware\)' "$FUSEENG" ab --suite "$T/rich.json"
printf 'return { models = { "%s" }, policies = { "fuse_all", "gcu_tlf" }, dims = { S = { 64, 128 } } }\n' "$G" >"$T/s.lua"
expect_ok "a suite written in Lua" '^gpt2-block S=64 \(unfused' "$FUSEENG" ab --suite "$T/s.lua"
expect_ok "--machine repeats and overrides the suite's" '^gpt2-block S=128 on gcu_big' \
    "$FUSEENG" ab --suite "$T/s.lua" --machine gcu --machine gcu_big
expect_ok "--dim sweeps on the command line" '^gpt2-block S=128 on gcu_big' \
    "$FUSEENG" ab "$G" --policy fuse_all --policy 'vote(fuse_all,gcu_tlf)' --dim S=64,128 --machine gcu --machine gcu_big
cat >"$T/hates_conv.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "hates_conv", description = "test: fails on any model with a conv", driver = "greedy",
  decide = function(self, group, ctx)
    for _, n in ipairs(group.nodes) do
      if n.op == "conv2d" then error("no conv here") end
    end
    return true, "fine"
  end,
}
LUA
"$FUSEENG" ab "$G" "$R" --policy fuse_all --policy "$T/hates_conv.lua" >"$T/fail.out" 2>"$T/fail.err"
rc=$?
if [ $rc -eq 1 ] && grep -Eq 'hates_conv +FAILED: .*no conv here' "$T/fail.out" && grep -q '^fuseeng: 1 cell failed' "$T/fail.err"
then ok "a policy failing on one model fails its cell only (exit 1)"
else not_ok "a policy failing on one model fails its cell only (exit 1)" "exit $rc" "$(cat "$T/fail.err")"; fi
if grep -Eq '^  hates_conv +5\+1 +[0-9.]+ +1.000x' "$T/fail.out" && grep -Eq '^  hates_conv .* 1$' "$T/fail.out"
then ok "... the other rows complete and the summary counts the failure"
else not_ok "... the other rows complete and the summary counts the failure" "$(cat "$T/fail.out")"; fi
expect_ok "--md prints Markdown tables" '^\| gpt2-block on gcu \| \*\*gcu_tlf\*\* \|' "$FUSEENG" ab --suite "$T/min.json" --md
expect_ok "--csv has the new figures" '^gpt2-block,gcu_tlf,.*,gcu_big,,[0-9.]+,[0-9]+,[0-9]+,' "$FUSEENG" ab --suite "$T/min.json" --csv
expect_ok "--json has the summary" '"geomean": ' "$FUSEENG" ab --suite "$T/min.json" --json

# Bad suites: one clear error naming the file and the place, before any work.
bad() { printf '%s\n' "$2" >"$T/bad.json"; expect_fail "suite: $1" 2 "$3" "$FUSEENG" ab --suite "$T/bad.json"; }
bad "malformed JSON" '{"models": [' 'bad.json:[0-9]+:[0-9]+: '
bad "an unknown key" '{"models": ["'$G'"], "policies": ["fuse_all", "gcu_tlf"], "machine": ["gcu"]}' 'bad.json: machine: unknown key'
bad "no models" '{"models": [], "policies": ["fuse_all", "gcu_tlf"]}' 'bad.json: models: a non-empty list'
bad "one policy" '{"models": ["'$G'"], "policies": ["fuse_all"]}' 'bad.json: policies: a list of 2 to 64'
bad "a missing model" '{"models": ["'$G'", "nosuch.json"], "policies": ["fuse_all", "gcu_tlf"]}' 'bad.json: models\[1\]: nosuch.json: cannot open'
bad "a glob matching nothing" '{"models": ["nosuch/*.json"], "policies": ["fuse_all", "gcu_tlf"]}' "bad.json: models\[0\]: 'nosuch/\*.json' matches no file"
bad "an unknown machine" '{"models": ["'$G'"], "policies": ["fuse_all", "gcu_tlf"], "machines": ["gcu", "tpu9"]}' "bad.json: machines\[1\]: machine 'tpu9' not found"
bad "a bad dim value" '{"models": [{"file": "'$G'", "dims": {"S": [64, -2]}}], "policies": ["fuse_all", "gcu_tlf"]}' 'bad.json: models\[0\].dims.S\[1\]: a dim value is a positive integer'
bad "a dim the model lacks" '{"models": [{"file": "'$G'", "dims": {"Q": 3}}], "policies": ["fuse_all", "gcu_tlf"]}' "bad.json: models\[0\].dims: the model has no dim 'Q'"
bad "a policy that does not load" '{"models": ["'$G'"], "policies": ["fuse_all", "nosuchpol"]}' "bad.json: policies\[1\]: policy 'nosuchpol' not found"
bad "an unknown parameter" '{"models": ["'$G'"], "policies": ["fuse_all", {"policy": "static_rules", "params": {"zzz": 1}}]}' "bad.json: policies\[1\].params.zzz: policy 'static_rules' has no param 'zzz'"
bad "a bad combination" '{"models": ["'$G'"], "policies": ["fuse_all", {"combine": "maybe", "of": ["fuse_all"]}]}' "bad.json: policies\[1\].combine: unknown combinator 'maybe'"
bad "not an object" '[1, 2]' 'bad.json: the document: a suite is a JSON object'
echo 'return { models = { print } }' >"$T/bad.lua"
expect_fail "suite: a Lua suite returning a function" 2 'bad.lua: models\[0\]: a function cannot be data' "$FUSEENG" ab --suite "$T/bad.lua"
expect_fail "suite and models on the command line" 2 'not both' "$FUSEENG" ab --suite "$T/min.json" "$G" --policy fuse_all --policy gcu_tlf
expect_fail "--dim with a bad sweep" 2 "the command line: --dim: 'S=64,x'" "$FUSEENG" ab "$G" --policy fuse_all --policy gcu_tlf --dim S=64,x
# Suites parse dims with the engine's one parser (fe_dimarg_parse), as --dim does.
expect_fail "--dim sweep: an empty value" 2 "--dim: 'S=64,,128': value 2 is empty" "$FUSEENG" ab "$G" --policy fuse_all --policy gcu_tlf --dim S=64,,128
expect_fail "--dim: a value past 64 bits" 2 "--dim: 'S=99999999999999999999': the value must be a positive integer" \
    "$FUSEENG" ab "$G" --policy fuse_all --policy gcu_tlf --dim S=99999999999999999999
bad "a dim string without NAME=" '{"models": ["'$G'"], "dims": ["S"], "policies": ["fuse_all", "gcu_tlf"]}' "bad.json: dims\[0\]: 'S': expected NAME=V"
expect_fail "--policy with a broken combination" 2 "--policy: 'vote\(fuse_all': a combination is HOW" "$FUSEENG" ab "$G" --policy fuse_all --policy 'vote(fuse_all'

# ---- --diff ----
expect_ok "--diff lists the regions where two plans differ" '^region 1: A [0-9]+ groups? .* ms, B [0-9]+ groups? .* B - A [-+]' \
    "$FUSEENG" ab --diff no_fusion fuse_all "$L" --dim S=64
expect_ok "--diff gives the decisions behind each side" '^    decision fuse +\[.*\] by fuse_all: ' \
    "$FUSEENG" ab --diff no_fusion fuse_all "$L" --dim S=64
expect_ok "--diff --json" '"b_minus_a_ms": ' "$FUSEENG" ab --diff no_fusion fuse_all "$L" --dim S=64 --json
expect_ok "--diff of a policy with itself: nothing differs" '^0 regions differ$' "$FUSEENG" ab --diff fuse_all fuse_all "$G"
expect_fail "--diff needs A B MODEL" 2 'expects A B MODEL' "$FUSEENG" ab --diff fuse_all gcu_tlf

# ---- shards ----
cat >"$T/sweep.json" <<JSON
{"models": [{"file": "$L", "dims": {"S": [64, 128]}}, "$G", "$R"],
 "policies": ["no_fusion", "fuse_all", "gcu_tlf"], "machines": ["gcu", "gcu_big"]}
JSON
"$FUSEENG" ab --suite "$T/sweep.json" --json >"$T/whole.json"
mkdir -p "$T/parts"
for i in 1 2 3; do "$FUSEENG" ab --suite "$T/sweep.json" --shard $i/3 --out "$T/parts/$i.json"; done
"$FUSEENG" ab merge "$T"/parts/*.json --json >"$T/merged.json"
# Byte for byte but the provenance line (the command and date differ; each report says its own).
grep -v '^  "provenance": ' "$T/whole.json" >"$T/whole.np"
grep -v '^  "provenance": ' "$T/merged.json" >"$T/merged.np"
if cmp -s "$T/whole.np" "$T/merged.np" && [ -s "$T/whole.np" ] && grep -q '"command": "fuseeng ab merge ' "$T/merged.json"; then
    ok "3 shards merged equal the unsharded run, byte for byte but the provenance line"
else not_ok "3 shards merged equal the unsharded run" "$(diff "$T/whole.json" "$T/merged.json" | head -5)"; fi
expect_ok "merge prints the table by default" '^summary over 8 rows' "$FUSEENG" ab merge "$T"/parts/*.json
expect_fail "--shard 0/3" 2 '--shard 0/3: expected I/N' "$FUSEENG" ab --suite "$T/sweep.json" --shard 0/3
expect_fail "--shard 4/3" 2 '--shard 4/3: expected I/N' "$FUSEENG" ab --suite "$T/sweep.json" --shard 4/3
expect_fail "merge with a shard missing" 2 'shard 2/3 is missing' "$FUSEENG" ab merge "$T/parts/1.json" "$T/parts/3.json"
expect_fail "merge with a shard twice" 2 'are both shard 1/3: the shards overlap' "$FUSEENG" ab merge "$T/parts/1.json" "$T/parts/1.json" "$T/parts/2.json"
"$FUSEENG" ab --suite "$T/min.json" --shard 1/2 --out "$T/other.json"
expect_fail "merge of shards of different suites" 2 'shards of different suites' "$FUSEENG" ab merge "$T/parts/1.json" "$T/other.json"
"$FUSEENG" ab --suite "$T/sweep.json" --shard 1/2 --out "$T/half.json"
expect_fail "merge of shards of different splits" 2 'is shard 1/2 but .* is shard 2/3' "$FUSEENG" ab merge "$T/half.json" "$T/parts/2.json"
expect_fail "merge of a file that is no shard" 2 'whole.json: format: not a shard file' "$FUSEENG" ab merge "$T/whole.json"
sed 's/"index": 1,/"index": 0,/' "$T/parts/2.json" >"$T/wrong.json"
expect_fail "merge of a row in the wrong shard" 2 'wrong.json: rows\[0\]: the row belongs to another shard' "$FUSEENG" ab merge "$T/parts/1.json" "$T/wrong.json" "$T/parts/3.json"

# ---- --measure: interleaved rounds, intervals, "same" is never a win ----
B=examples/bench/swiglu.json
expect_ok "--measure interleaves rounds and gives an interval per ratio" \
    '^[* ] fuse_all +[0-9.]+ +[0-9.]+x  \[[0-9.]+, [0-9.]+\] +(faster|slower|same) +ok +[0-9]+$' \
    "$FUSEENG" ab "$B" --policy no_fusion --policy fuse_all --measure --reps 5
expect_ok "--measure: the baseline is the baseline" '^[* ] no_fusion +[0-9.]+ +1.000x  \[1.000, 1.000\] +baseline +ok +[0-9]+$' \
    "$FUSEENG" ab "$B" --policy no_fusion --policy fuse_all --measure --reps 5
expect_fail "--reps 0" 2 '--reps expects a whole number' "$FUSEENG" ab "$B" --policy no_fusion --policy fuse_all --measure --reps 0
# An interval holding 1 is "same" even when the median ratio is above 1:
# a measured shard edited to say so, merged, tallies no win.
"$FUSEENG" ab "$B" --policy no_fusion --policy fuse_all --measure --reps 5 --shard 1/1 --out "$T/m.json"
sed '/"policy": "fuse_all"/s/"cpu_ratio": [0-9.e+-]*, "cpu_ci": \[[0-9.e+-]*, [0-9.e+-]*\]/"cpu_ratio": 1.2, "cpu_ci": [0.95, 1.4]/' "$T/m.json" >"$T/m2.json"
expect_ok "an interval holding 1 is same, not a win" '"policy": "fuse_all", "geomean".*"cpu_wins": 0, "cpu_same": 1' \
    "$FUSEENG" ab merge "$T/m2.json" --json
sed '/"policy": "fuse_all"/s/"cpu_ratio": [0-9.e+-]*, "cpu_ci": \[[0-9.e+-]*, [0-9.e+-]*\]/"cpu_ratio": 1.2, "cpu_ci": [1.05, 1.4]/' "$T/m.json" >"$T/m3.json"
expect_ok "an interval above 1 is a win" '"policy": "fuse_all", "geomean".*"cpu_wins": 1, "cpu_same": 0' "$FUSEENG" ab merge "$T/m3.json" --json
# Measured figures win: a merged comparison whose measured best (gcu_tlf,
# made the fastest by hand) is not the simulator's (fuse_all, made the
# cheaper in simulation) stars the measured one and warns, in every format.
"$FUSEENG" ab examples/bench/swiglu.json --policy no_fusion --policy fuse_all --policy gcu_tlf \
    --measure --reps 3 --dim T=64 --shard 1/1 >"$T/truth.json" 2>/dev/null
if /usr/bin/python3 - "$T/truth.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
cells = d["rows"][0]["policies"]
sim = {"no_fusion": 3e-4, "fuse_all": 1e-4, "gcu_tlf": 2e-4}
meas = {"no_fusion": (3.0, [1, 1]), "fuse_all": (2.0, [1.4, 1.6]), "gcu_tlf": (1.0, [2.8, 3.2])}
for c in cells:
    c["time_s"] = sim[c["policy"]]
    c["sim_ms"] = sim[c["policy"]] * 1e3
    c["l3_bytes"] += len(c["policy"])   # three plans the simulator tells apart
    c["cpu_ms"], c["cpu_ci"] = meas[c["policy"]]
    c["cpu_ratio"] = 3.0 / c["cpu_ms"]
json.dump(d, open(p, "w"))
PY
then
    expect_ok "measured: the measured fastest is starred, the simulator's rank beside" \
        '^\* gcu_tlf +1\.000 +3\.000x .* ok +2$' "$FUSEENG" ab merge "$T/truth.json"
    grep -q '^  warning: the simulator (gcu) ranks fuse_all first; measured, gcu_tlf is faster' "$T/out" &&
        ok "measured: a row whose simulated best is not the measured best warns" ||
        not_ok "measured: a row whose simulated best is not the measured best warns" "$(cat "$T/out")"
    grep -q '^  best measured: gcu_tlf (3.000x); the simulator.s best: fuse_all' "$T/out" &&
        ok "measured: the summary names the best both ways" || not_ok "measured: the summary names the best both ways" "$(tail -8 "$T/out")"
    expect_ok "measured: JSON's winner is the measured one, with the simulator's beside" \
        '"winner": "gcu_tlf", "sim_winner": "fuse_all", "ranks_agree": false' \
        sh -c "\"$FUSEENG\" ab merge \"$T/truth.json\" --json | tr -d '\n' | sed 's/  */ /g'"
    "$FUSEENG" ab merge "$T/truth.json" --html "$T/truth.html" >/dev/null 2>&1
    grep -q 'warning: on .* the simulator ranks fuse_all first; measured, gcu_tlf is faster' "$T/truth.html" &&
        grep -q '<tr class="best"><td>gcu_tlf' "$T/truth.html" &&
        ok "measured: the page bolds the measured best and warns" ||
        not_ok "measured: the page bolds the measured best and warns" "$(grep -o 'warning[^<]*' "$T/truth.html" | head -2)"
else
    not_ok "measured: a comparison edited by hand" "python could not rewrite the shard file"
fi

finish
