# execute.sh: the CPU kernels from the command line: run --execute (every
# example model under every shipped policy equals the unfused reference),
# bench, profile, ab --measure and ctx:bench. Dims are lowered so that the
# whole file runs in well under a minute on two cores.
. tests/lib.sh
E=examples/models
B=examples/bench
Q="--budget 0.01"

# Each example model at a small size, with the dims it has.
models() {
    echo "$E/allreduce_epilogue.json --dim T=64"
    echo "$E/bert_base_layer.json --dim B=1 --dim S=32"
    echo "$E/gpt2_block.json --dim S=32"
    echo "$E/hub_conflict.json --dim M=64 --dim N=64"
    echo "$E/llama2_7b_layer.json --dim S=8"
    echo "$E/opu_convnet.json"
    echo "$E/resnet50_bottleneck.json"
}

# Fused = unfused within tolerance, for every model and shipped policy.
# benchmark_fusion times every candidate, so its runs may spend 3 s each
# measuring (candidates past that are not fused).
for p in no_fusion fuse_all static_rules profile_lookup gcu_afe gcu_tlf memory_aware benchmark_fusion; do
    extra=
    [ "$p" = benchmark_fusion ] && extra="--bench-budget 3"
    models | while read -r m dims; do
        # shellcheck disable=SC2086
        if "$FUSEENG" run $m $dims --policy $p $extra --execute $Q >"$T/out" 2>"$T/err" &&
            grep -Eq '^ +[^ ]+ .* ok$' "$T/out" && ! grep -q MISMATCH "$T/out"; then
            echo "ok"
        else
            echo "not ok $m $p: $(head -c 300 "$T/err")"
        fi
    done
done >"$T/matrix"
bad=$(grep -c '^not ok' "$T/matrix")
if [ "$bad" -eq 0 ] && [ "$(grep -c '^ok' "$T/matrix")" -eq 56 ]; then
    ok "7 example models x 8 policies: plan equals the unfused reference"
else
    not_ok "7 example models x 8 policies: plan equals the unfused reference" "$(grep '^not ok' "$T/matrix")"
fi

expect_ok "run --execute reports errors per output and times per group" \
    'executed +on this CPU .*plan [0-9.]+ ms, unfused [0-9.]+ ms' \
    "$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute $Q
# (fused, or op by op where AUTO's guard measured its ops faster: a
# sanitizer build slows the fused interpreter more than single ops)
grep -Eq '^ +0 +silu\+mul +2 +[0-9.]+ +(fused_rows|per_op: .* measured slower fused than its ops one by one)' "$T/out" &&
    ok "the group's measured time and kernel" ||
    not_ok "the group's measured time and kernel" "$(cat "$T/out")"
expect_ok "run --execute --json adds an executed summary" '"executed": \{' \
    "$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute --json $Q
grep -q '"ok": true' "$T/out" && grep -Eq '"max_rel": [0-9.e-]+' "$T/out" && ok "executed JSON: ok and max_rel" ||
    not_ok "executed JSON: ok and max_rel" "$(head -c 400 "$T/out")"

# Outside tolerance: the report, then exit 1 naming the output and element.
"$FUSEENG" run $B/chain6.json --dim T=64 --policy fuse_all --execute --rtol 1e-9 $Q >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q MISMATCH "$T/out" &&
    grep -Eq "output 'out' has [0-9]+ elements? outside tolerance \(rtol 1e-09; worst at index" "$T/err"; then
    ok "results outside --rtol: exit 1 and the worst element"
else
    not_ok "results outside --rtol: exit 1 and the worst element" "exit $rc" "$(head -c 400 "$T/err")"
fi
expect_fail "--rtol out of range" 2 '--rtol needs a relative tolerance in \(0, 1\)' \
    "$FUSEENG" run $B/swiglu.json --policy fuse_all --execute --rtol 2
expect_fail "--seed must be a positive integer" 2 '--seed needs a positive integer' \
    "$FUSEENG" run $B/swiglu.json --policy fuse_all --execute --seed -3
expect_fail "--budget must be seconds" 2 '--budget needs a number of seconds' \
    "$FUSEENG" run $B/swiglu.json --policy fuse_all --execute --budget soon

# A model too large for this machine is refused before anything is allocated.
expect_fail "a model larger than memory" 2 'executing the reference needs [0-9.]+ GiB .* lower the dims' \
    "$FUSEENG" run $B/swiglu.json --dim T=100000000 --policy fuse_all --execute
# An op without a kernel is named, with no half report.
no_kernel_model "$T/custom.json"
expect_fail "a custom op without a kernel" 2 "custom\.json: cannot execute: node 'odd' is a custom op \(aten 'aten::special_bessel_j0'\)" \
    "$FUSEENG" run "$T/custom.json" --policy fuse_all --execute

# A node of any arity runs: a concat of 100 inputs (DenseNet's are wide,
# and the importer takes any number), on the reference and on each
# policy's plan, against values computed in Python (the executor once
# refused nodes of more than 64 inputs).
cat >"$T/wide.py" <<'EOF'
import json, struct, sys
sys.path.insert(0, "tests/tools")
import st_gen
d = sys.argv[1]
xs = [("x%d" % i, [3, 1 + i % 3]) for i in range(100)]
width = sum(s[1] for _, s in xs)
tensors = {n: {"shape": s, "dtype": "f32", "kind": "input"} for n, s in xs}
tensors["c"] = {"shape": [3, width], "dtype": "f32", "kind": "activation"}
tensors["y"] = {"shape": [3, width], "dtype": "f32", "kind": "activation"}
json.dump({"format": "fuseeng.model/1", "name": "wide_concat", "tensors": tensors,
           "nodes": [{"name": "cat", "op": "concat", "inputs": [n for n, _ in xs],
                      "outputs": ["c"], "attrs": {"axis": 1}},
                     {"name": "act", "op": "relu", "inputs": ["c"], "outputs": ["y"]}],
           "outputs": ["y"]}, open(d + "/wide.json", "w"))
vals = {n: [((i * 7 + j * 3) % 11 - 5) / 4 for j in range(3 * s[1])] for i, (n, s) in enumerate(xs)}
pack = lambda v: struct.pack("<%df" % len(v), *v)
st_gen.write(d + "/wide_in.st", [(n, "F32", s, pack(vals[n])) for n, s in xs])
y = [max(0.0, v) for r in range(3) for n, s in xs for v in vals[n][r * s[1]:(r + 1) * s[1]]]
st_gen.write(d + "/wide_out.st", [("y", "F32", [3, width], pack(y))])
EOF
if /usr/bin/python3 "$T/wide.py" "$T" 2>"$T/err"; then
    for p in no_fusion fuse_all gcu_tlf; do
        expect_ok "run --execute: a concat of 100 inputs ($p) equals its values" \
            '^           plan      y .* ok$' \
            "$FUSEENG" run "$T/wide.json" --policy $p --execute --no-timing \
            --inputs "$T/wide_in.st" --expect "$T/wide_out.st"
    done
else
    not_ok "wide.py writes a concat of 100 inputs" "$(cat "$T/err")"
fi

# The plan and unfused timed in interleaved rounds: medians, the paired
# speedup and its interval, in text and JSON (lo <= speedup <= hi).
expect_ok "--execute times both plans in interleaved rounds" \
    'plan [0-9.]+ ms, unfused [0-9.]+ ms \(medians of [0-9]+ interleaved rounds\), [0-9.]+x \(95% interval [0-9.]+x to [0-9.]+x\)' \
    "$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute $Q
# executed.find(d): the "executed" object wherever it sits in a report
cat >"$T/executed.py" <<'EOF'
def find(d):
    if isinstance(d, dict):
        if "executed" in d:
            return d["executed"]
        for v in d.values():
            r = find(v)
            if r:
                return r
EOF
"$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute --json $Q >"$T/x.json" 2>"$T/err"
if PYTHONPATH="$T" /usr/bin/python3 -c '
import json, sys
from executed import find
x = find(json.load(open(sys.argv[1])))
lo, hi = x["speedup_interval"]
sys.exit(0 if lo <= x["speedup"] <= hi else 1)' "$T/x.json"; then
    ok "--execute --json: speedup within its interval"
else
    not_ok "--execute --json: speedup within its interval" "$(grep -A3 '"speedup"' "$T/x.json" | head -8)"
fi

# The ceiling: the unfused plan's time in library ops, from the same
# rounds, bounds any plan's gain (unfused / library ms); a model without
# library ops has none.
"$FUSEENG" run $B/matmul_bias_gelu.json --policy fuse_all --execute --json $Q >"$T/c.json" 2>"$T/err"
"$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute --json $Q >"$T/c0.json" 2>>"$T/err"
if PYTHONPATH="$T" /usr/bin/python3 -c '
import json, sys
from executed import find
x, y = (find(json.load(open(f))) for f in sys.argv[1:3])
u, lib, c = x["unfused"]["median_ms"], x["unfused_library_ms"], x["ceiling"]
assert 0 < lib and c >= 1 and abs(c - u / lib) <= 1e-6 * c, (u, lib, c)
assert y["ceiling"] is None and y["unfused_library_ms"] == 0, y
' "$T/c.json" "$T/c0.json"; then
    ok "--execute --json: the ceiling is unfused over its library ops' time, none without them"
else
    not_ok "--execute --json: the ceiling" "$(cat "$T/err"; grep -A2 ceiling "$T/c.json" "$T/c0.json" | head)"
fi
expect_ok "--execute prints the ceiling of a model with a matmul" \
    'ceiling +the unfused plan spends [0-9.]+ of its [0-9.]+ ms \([0-9]+%\) in library ops .* more than [0-9.]+x here' \
    "$FUSEENG" run $B/matmul_bias_gelu.json --policy fuse_all --execute $Q
if "$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute $Q 2>&1 | grep -q '^ceiling'; then
    not_ok "--execute: no ceiling line without library ops"
else
    ok "--execute: no ceiling line without library ops"
fi

# bench: groups, single ops, totals; JSON keys the issue names.
expect_ok "bench prints groups, single ops and totals" 'speedup +[0-9.]+x \(95% interval [0-9.]+x to [0-9.]+x' \
    "$FUSEENG" bench $B/swiglu.json --dim T=64 --policy fuse_all $Q
grep -q '^single ops' "$T/out" && grep -Eq '^ +silu +silu +0 ' "$T/out" && grep -q 'unfused, end to end' "$T/out" &&
    ok "bench: every op and both totals" || not_ok "bench: every op and both totals" "$(cat "$T/out")"
expect_ok "bench --json" '"format": "fuseeng.bench/1"' \
    "$FUSEENG" bench $B/add_rmsnorm.json --dim T=32 --policy fuse_all --json $Q
for k in nodes median_ms min_ms max_ms bytes separate_ms; do
    grep -q "\"$k\":" "$T/out" || miss="$miss $k"
done
grep -q '"totals": {' "$T/out" && grep -q '"unfused": {' "$T/out" && grep -q '"speedup_interval": \[' "$T/out" ||
    miss="$miss totals"
[ -z "$miss" ] && ok "bench --json: group keys and totals" || not_ok "bench --json: group keys and totals" "missing:$miss"
expect_ok "bench without a policy times every op alone" 'plan +unfused \(2 groups\)' \
    "$FUSEENG" bench $B/swiglu.json --dim T=16 $Q
"$FUSEENG" run $B/swiglu.json --dim T=16 --policy fuse_all --plan-out "$T/plan.json" >/dev/null
expect_ok "bench a saved plan" "plan +$T/plan.json \\(1 groups\\)" \
    "$FUSEENG" bench $B/swiglu.json --dim T=16 --plan "$T/plan.json" $Q
expect_fail "bench: --plan and --policy together" 2 'either --plan or --policy' \
    "$FUSEENG" bench $B/swiglu.json --plan "$T/plan.json" --policy fuse_all
expect_fail "bench: a bad model" 2 'nosuch\.json' "$FUSEENG" bench "$T/nosuch.json"

# profile: written, loadable, and profile_lookup finds its exact keys.
expect_ok "profile writes single and fused entries" 'wrote .*p\.json: [0-9]+ single and [1-9][0-9]* fused entries' \
    "$FUSEENG" profile $E/gpt2_block.json --dim S=16 --policy profile_lookup -o "$T/p.json" $Q
grep -q '"silu\|"gelu"' "$T/p.json" && grep -Eq '"[0-9a-f]{16}": "[a-z_+]+ [a-z0-9]+\[' "$T/p.json" &&
    ok "profile: compat keys, exact keys and their shapes" || not_ok "profile: compat keys, exact keys and their shapes" "$(head -c 600 "$T/p.json")"
expect_ok "profile_lookup decides from the measured profile by exact key" '\(exact key\)' \
    "$FUSEENG" run $E/gpt2_block.json --dim S=16 --policy profile_lookup --profile "$T/p.json" --explain
expect_fail "profile needs -o" 2 'missing -o PROFILE' "$FUSEENG" profile $B/swiglu.json
expect_fail "profile: an unwritable file" 2 'nodir/p\.json' \
    "$FUSEENG" profile $B/swiglu.json --dim T=8 -o "$T/nodir/p.json" $Q

# Measurements run OpenMP's workers with passive waits unless the user
# chose (the command restarts itself with the setting: see core/cli/main.c).
expect_ok "bench runs passive workers by default" 'on this CPU: [0-9]+ threads?, passive waits' \
    env -u OMP_WAIT_POLICY "$FUSEENG" bench $B/swiglu.json --dim T=4 $Q
expect_ok "... and keeps the user's choice" 'on this CPU: [0-9]+ threads?, active waits' \
    env OMP_WAIT_POLICY=active "$FUSEENG" bench $B/swiglu.json --dim T=4 $Q

# A saved plan executes and is timed as it was made: at its dims and on its
# machine; a plan for another model is refused unless the user insists.
"$FUSEENG" run $E/gpt2_block.json --dim S=48 --policy fuse_all --machine gcu_big --plan-out "$T/p48.json" >/dev/null
expect_ok "run --plan --execute checks a saved plan against the reference" '^ +out +.* ok$' \
    "$FUSEENG" run $E/gpt2_block.json --plan "$T/p48.json" --execute $Q
grep -q '^machine gcu_big' "$T/out" && ok "run --plan takes the plan's machine" || not_ok "run --plan takes the plan's machine" "$(head -c 400 "$T/out")"
# (at S=48 the first group moves 7.3 MiB, mostly its weight; at the model's
# S=1024 it would move 19 MiB)
expect_ok "bench --plan runs at the plan's dims" '^ +0 +layer_norm\+matmul\+add +3 .* 7\.3[0-9]* MiB' \
    "$FUSEENG" bench $E/gpt2_block.json --plan "$T/p48.json" $Q
sed 's/"model": "[^"]*"/"model": "llama"/' "$T/p48.json" >"$T/pllama.json"
expect_fail "bench --plan refuses a plan made for another model" 2 "pllama\.json: the plan is for model 'llama', not 'gpt2-block'.*--ignore-model-name" \
    "$FUSEENG" bench $E/gpt2_block.json --plan "$T/pllama.json" $Q
expect_fail "--ignore-model-name without --plan" 2 "--ignore-model-name goes with --plan" \
    "$FUSEENG" profile $E/gpt2_block.json --ignore-model-name -o "$T/x.json"

# ab --measure: measured columns and a results check.
expect_ok "ab --measure adds measured time and a results check" 'cpu ms +ratio +95% CI +verdict +results' \
    "$FUSEENG" ab $B/swiglu.json $B/add_rmsnorm.json --dim T=32 --policy fuse_all --policy no_fusion --measure $Q
[ "$(grep -Ec ' ok +[0-9]+$' "$T/out")" -eq 4 ] && ok "ab --measure: every plan ok" || not_ok "ab --measure: every plan ok" "$(cat "$T/out")"
expect_ok "ab --measure --csv" 'model,policy,.*,cpu_ms,cpu_ratio,cpu_lo,cpu_hi,cpu_verdict,cpu_ok,cpu_max_rel' \
    "$FUSEENG" ab $B/swiglu.json --dim T=32 --policy fuse_all --policy no_fusion --measure --csv $Q

# --no-timing: the numbers are checked, nothing is timed.
"$FUSEENG" run $B/swiglu.json --dim T=64 --policy fuse_all --execute --no-timing >"$T/nt" 2>&1
if grep -q 'how each ran (not timed: --no-timing)' "$T/nt" && grep -qE '^ +out .* ok$' "$T/nt" &&
        ! grep -q 'interleaved rounds' "$T/nt"; then
    ok "run --execute --no-timing checks outputs and times nothing"
else
    not_ok "run --execute --no-timing checks outputs and times nothing" "$(cat "$T/nt")"
fi
expect_fail "--no-timing without --execute" 2 '--no-timing goes with --execute' \
    "$FUSEENG" run $B/swiglu.json --policy fuse_all --no-timing
# ctx:bench and benchmark_fusion: measured decisions, cache, budget.
expect_ok "benchmark_fusion decides from measurements" '(fuse|no) +\[silu, out\] +measured [0-9.]+x \(separate [0-9.]+ ms, fused [0-9.]+ ms, fused_rows\)' \
    "$FUSEENG" run $B/swiglu.json --dim T=256 --policy benchmark_fusion --explain
cat >"$T/cache.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "cache", driver = "greedy",
  decide = function(self, group, ctx)
    local a = ctx:bench(group)
    local b = ctx:bench(group)
    local c = ctx:bench(group, { kernel = "per_op" })
    ctx:log(("first cached=%s second cached=%s per_op kernel=%s fused_kernel=%s bytes=%d"):format(
      tostring(a.cached), tostring(b.cached), c.kernel, tostring(c.fused_kernel), a.bytes))
    return true
  end,
}
LUA
expect_ok "ctx:bench caches per exact key and kernel" 'first cached=false second cached=true per_op kernel=per_op fused_kernel=false bytes=528384' \
    "$FUSEENG" run $B/swiglu.json --dim T=4 --policy "$T/cache.lua" --explain
# A group of views runs no kernel in a plan, so ctx:bench says it costs
# nothing (not the time of a copy) and moves no bytes.
cat >"$T/views.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "views",
 "tensors": {"x": {"shape": [64, 256], "dtype": "f32", "kind": "input"}},
 "nodes": [{"name": "r1", "op": "reshape", "inputs": ["x"], "outputs": ["a"], "attrs": {"shape": [64, 16, 16]}},
           {"name": "r2", "op": "reshape", "inputs": ["a"], "outputs": ["b"], "attrs": {"shape": [1024, 16]}},
           {"name": "act", "op": "relu", "inputs": ["b"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
cat >"$T/views.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "views", driver = "greedy",
  decide = function(self, group, ctx)
    local r = ctx:bench(group)
    ctx:log(("fused=%g separate=%g speedup=%g bytes=%d how=%s"):format(
      r.fused, r.separate, r.speedup, r.bytes, r.how))
    return false
  end,
}
LUA
expect_ok "ctx:bench: a group of views costs nothing" \
    'fused=0 separate=0 speedup=1 bytes=0 how=view: its output is its input.s memory' \
    "$FUSEENG" run "$T/views.json" --policy "$T/views.lua" --explain
# A candidate holding an op without a kernel is not measured: nil and why.
cat >"$T/nokernel.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "nokernel",
 "tensors": {"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"},
             "y": {"shape": [4, 8], "dtype": "f32", "kind": "activation"}},
 "nodes": [{"name": "c", "op": "custom", "inputs": ["x"], "outputs": ["y"],
            "attrs": {"aten": "aten::special_bessel_j0", "pattern": "elemwise"}},
           {"name": "r", "op": "relu", "inputs": ["y"], "outputs": ["z"]}],
 "outputs": ["z"]}
JSON
expect_ok "ctx:bench on an op without a kernel returns nil and why" \
    "no +\[c, r\] +not measured: node 'c' is a custom op \(aten 'aten::special_bessel_j0'\) that fuseeng cannot execute" \
    "$FUSEENG" run "$T/nokernel.json" --policy benchmark_fusion --explain
cat >"$T/budget.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "budget", driver = "greedy",
  decide = function(self, group, ctx)
    local m, why = ctx:bench(group)
    ctx:log(m and "measured" or ("unmeasured: " .. why))
    return false
  end,
}
LUA
expect_ok "ctx:bench past the run's budget returns nil and why" 'unmeasured: this run has spent its 1e-09 s measuring budget' \
    "$FUSEENG" run $E/gpt2_block.json --dim S=64 --policy "$T/budget.lua" --bench-budget 1e-9 --explain
cat >"$T/badbench.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "badbench", driver = "greedy",
  decide = function(self, group, ctx) return ctx:bench(group, { kernel = "warp_drive" }) end,
}
LUA
expect_fail "ctx:bench with an unknown kernel" 2 "badbench\.lua:4: bench: unknown kernel 'warp_drive' \(choices: auto" \
    "$FUSEENG" run $B/swiglu.json --dim T=4 --policy "$T/badbench.lua"
finish
