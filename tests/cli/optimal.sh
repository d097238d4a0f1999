# optimal.sh: ctx:optimal and policies/optimal.lua from the command line.
# The optimum is never slower on the simulator than any shipped policy's
# plan (every example model on every shipped machine, the real exports on
# gcu); plans in windows are legal and the plan file records each window
# (proven, gap, applied); a time limit gives a plan with an honest gap;
# every kind of bad option or hook answer is an error naming the policy's
# line, exit 2, nothing on stdout. (Brute force against the solver:
# tests/test_optimal.c; random graphs: the difftest.)
. tests/lib.sh
SHARED=${SHARED:-../shared}
L=examples/models/llama2_7b_layer.json
PY=/usr/bin/python3

# ---- never slower than a shipped policy ----
pols=""
for f in policies/*.lua; do
    p=$(basename "$f" .lua)
    case $p in optimal|benchmark_fusion) ;; *) pols="$pols --policy $p" ;; esac
done
# dominates JSON LABEL: every row's optimal time is at most each policy's.
dominates() {
    "$PY" - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for r in d["rows"]:
    cells = {c["policy"]: c for c in r["policies"]}
    o = cells["optimal"].get("sim_ms")
    if o is None:
        bad.append("%s: optimal failed: %s" % (r["model"], cells["optimal"].get("error")))
        continue
    for name, c in cells.items():
        if c.get("sim_ms") is not None and c["sim_ms"] < o * (1 - 1e-9):
            bad.append("%s on %s: %s %.6f ms < optimal %.6f ms" % (r["model"], r["machine"], name, c["sim_ms"], o))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
machines=""
for f in lua/machines/*.lua; do machines="$machines --machine $(basename "$f" .lua)"; done
# shellcheck disable=SC2086
if "$FUSEENG" ab examples/models/*.json --policy optimal $pols $machines \
        --json >"$T/ab.json" 2>"$T/err" && out=$(dominates "$T/ab.json"); then
    ok "the optimum is never slower than a shipped policy: every example model, every shipped machine"
else
    not_ok "the optimum is never slower than a shipped policy: every example model, every shipped machine" \
        "$out" "$(head -c 600 "$T/err")"
fi
if [ -d "$SHARED/models" ]; then
    # shellcheck disable=SC2086
    if "$FUSEENG" ab "$SHARED"/models/*.json --policy optimal $pols --json >"$T/ab.json" 2>"$T/err" &&
       out=$(dominates "$T/ab.json"); then
        ok "the optimum is never slower than a shipped policy: the real exports"
    else
        not_ok "the optimum is never slower than a shipped policy: the real exports" "$out" \
            "$(head -c 600 "$T/err")"
    fi
else
    skip "the optimum is never slower than a shipped policy: the real exports" "no $SHARED/models"
fi

# ---- windows, and the plan file's record ----
"$FUSEENG" run "$L" --policy optimal --param whole=16 --param window=16 --plan-out "$T/w.json" \
    >"$T/out" 2>"$T/err"
if [ $? -eq 0 ] && grep -q "0 rejected by the engine" "$T/out" && "$PY" - "$T/w.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["optimal"]
s = o["solves"]
assert o["windows"] == 3 == len(s) and o["proven"] == 3 and not o["whole_graph"], o
assert [x["nodes"] for x in s] == [16, 16, 8], s
assert all(x["status"] == "optimal" and x["gap"] == 0 and x["applied"] and x["cost"] == "simulator"
           and x["bound_us"] == x["time_us"] for x in s), s
PY
then
    ok "windows of 16 nodes: a legal plan, each window proven optimal in the plan file"
else
    not_ok "windows of 16 nodes: a legal plan, each window proven optimal in the plan file" \
        "$(cat "$T/err")" "$(head -c 800 "$T/w.json")"
fi
check "sim takes the plan file back" "$FUSEENG" sim "$L" --plan "$T/w.json"

# A policy that changes what it got: the record says so.
cat >"$T/changed.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "changed", driver = "plan",
  plan = function(self, graph, ctx)
    local out = {}
    for _, g in ipairs(assert(ctx:optimal{ max_group = 6 }).groups) do
      if #g > 1 then out[#out + 1] = g end
    end
    table.remove(out, 1)
    return out
  end }
LUA
"$FUSEENG" run "$L" --policy "$T/changed.lua" --json >"$T/c.json" 2>"$T/err"
if "$PY" -c "import json,sys; o=json.load(open(sys.argv[1]))['optimal']; assert o['proven'] == 0 and not o['solves'][0]['applied'], o" "$T/c.json" 2>"$T/err2"; then
    ok "a plan that does not hold the solution: applied false, not counted as proven"
else
    not_ok "a plan that does not hold the solution: applied false, not counted as proven" \
        "$(cat "$T/err" "$T/err2")"
fi

# ---- the answer, the time limit, hooks that answer well ----
cat >"$T/answer.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "answer", driver = "plan",
  plan = function(self, graph, ctx)
    -- the simulator's answer is what the plan simulates at
    local r = assert(ctx:optimal{ max_group = 8 })
    assert(r.optimal and r.status == "optimal" and r.gap == 0 and r.bound == r.time, "not proven")
    assert(r.window == #graph and r.candidates > 0 and r.enumerated >= r.candidates - r.grown)
    local seen, sum = {}, 0
    for _, g in ipairs(r.groups) do
      for _, n in ipairs(g) do assert(not seen[n.index], "node twice"); seen[n.index] = true end
      sum = sum + ctx:simulate(g, { split = g.split }).time
    end
    for i = 1, #graph do assert(seen[i], "node " .. i .. " in no group") end
    assert(math.abs(sum - r.time) <= 1e-9 * r.time, ("groups sum to %g, time %g"):format(sum, r.time))
    -- a cost hook: every group costs its node count, so nodes alone are optimal
    local h = assert(ctx:optimal{ max_group = 3, cost = function(g) return #g end })
    assert(h.time == #graph and #h.groups == #graph, "hook costs: " .. h.time)
    -- hook candidates come in as well
    local c = assert(ctx:optimal{ max_group = 1, candidates = { { "gate_silu", "swiglu" } } })
    assert(c.candidates == #graph + 1)
    -- too many candidates: nil, why, "candidates"
    local none, why, kind = ctx:optimal{ max_candidates = 3 }
    assert(none == nil and kind == "candidates" and why:find("more than 3 candidate groups"), why)
    ctx:log("answers ok")
    return r.groups
  end }
LUA
expect_ok "the answer: a cover of the window, priced at its time; hook costs and candidates; nil when too many" \
    "answers ok" "$FUSEENG" run "$L" --policy "$T/answer.lua" --explain

cat >"$T/limit.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "limit", driver = "plan",
  plan = function(self, graph, ctx)
    local r, why, kind = ctx:optimal{ max_group = 8, grow = 0, time_limit = 0.15 }
    if not r then
      assert(kind == "time_limit", why)   -- a slow host: the enumeration was stopped
      ctx:log("limit: enumeration stopped")
      return {}
    end
    assert(r.bound <= r.time and r.gap >= 0 and math.abs(r.gap - (r.time - r.bound) / r.time) < 1e-12)
    assert(r.optimal == (r.status == "optimal") and (r.optimal or r.gap > 0 or r.bound == r.time))
    ctx:log("limit: " .. r.status)
    return r.groups
  end }
LUA
"$FUSEENG" run examples/models/hub_conflict.json --policy "$T/limit.lua" --explain --plan-out "$T/l.json" \
    >"$T/out" 2>"$T/err"
if [ $? -eq 0 ] && grep -q "limit: " "$T/out" && grep -q "0 rejected by the engine" "$T/out"; then
    ok "a time limit: the best plan found, legal, with gap = (time - bound) / time ($(grep -o 'limit: [a-z_ ]*' "$T/out" | head -n 1))"
else
    not_ok "a time limit: the best plan found, legal, with an honest gap" "$(cat "$T/err")" "$(head -c 600 "$T/out")"
fi

# cost = "profile": measured times, groups without one left out.
B=examples/models/resnet50_bottleneck.json
cat >"$T/prof.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "prof", driver = "plan",
  plan = function(self, graph, ctx)
    local r = assert(ctx:optimal{ cost = "profile", max_group = 6 })
    local alone = assert(ctx:optimal{ cost = "profile", max_group = 1 }).time
    assert(r.optimal and r.time <= alone * (1 + 1e-12) and r.candidates < r.enumerated,
           ("profile: %g s against %g s alone, %d of %d candidates"):format(r.time, alone, r.candidates, r.enumerated))
    ctx:log(("profile ok: %d fused groups priced"):format(r.candidates - #graph))
    return r.groups
  end }
LUA
if "$FUSEENG" profile "$B" --policy gcu_tlf -o "$T/prof.json" >/dev/null 2>"$T/err"; then
    "$FUSEENG" run "$B" --policy "$T/prof.lua" --profile "$T/prof.json" --explain --json >"$T/p.json" 2>"$T/err"
    if [ $? -eq 0 ] && grep -q "profile ok" "$T/p.json" &&
       "$PY" -c "import json,sys; s=json.load(open(sys.argv[1]))['optimal']['solves'][0]; assert s['cost'] == 'profile' and s['status'] == 'optimal', s" "$T/p.json"; then
        ok "cost = \"profile\": measured times, the groups the profile has no time for left out"
    else
        not_ok "cost = \"profile\": measured times" "$(cat "$T/err")"
    fi
else
    not_ok "cost = \"profile\": fuseeng profile" "$(cat "$T/err")"
fi
printf '{"single": {"relu": 0.01}, "fused": {}}\n' >"$T/thin.json"
printf 'local fe = require "fuseeng"\nreturn fe.policy { name = "thin", driver = "plan",\n  plan = function(self, graph, ctx)\n    return ctx:optimal{ cost = "profile" }.groups\n  end }\n' >"$T/thin.lua"
expect_fail "cost = \"profile\" without a node's single time" 2 \
    "thin.lua:4: .*the profile has no time for op 'conv2d' \(node 'conv1'\), and every node alone needs one" \
    "$FUSEENG" run "$B" --policy "$T/thin.lua" --profile "$T/thin.json"

# ---- bad input: exit 2, the policy's line, nothing on stdout ----
bad() {   # bad NAME 'regex' LUA-EXPRESSION-CALLING-ctx:optimal
    printf 'local fe = require "fuseeng"\nreturn fe.policy { name = "bad", driver = "plan",\n  plan = function(self, graph, ctx)\n    local r = %s\n    return {}\n  end }\n' "$3" >"$T/bad.lua"
    expect_fail "$1" 2 "bad.lua:4: .*$2" "$FUSEENG" run "$L" --policy "$T/bad.lua"
}
bad "max_group 0" "max_group must be an integer from 1 to 64, got 0" 'ctx:optimal{ max_group = 0 }'
bad "max_group 65" "max_group must be an integer from 1 to 64" 'ctx:optimal{ max_group = 65 }'
bad "max_group 2.5" "max_group must be an integer" 'ctx:optimal{ max_group = 2.5 }'
bad "max_group a string" "max_group must be an integer" 'ctx:optimal{ max_group = "8" }'
bad "an unknown option" "unknown option 'maxgroup'" 'ctx:optimal{ maxgroup = 8 }'
bad "options not a table" "options must be a table" 'ctx:optimal(8)'
bad "a negative time_limit" "time_limit must be a number of seconds above 0" 'ctx:optimal{ time_limit = -1 }'
bad "time_limit NaN" "time_limit must be a number of seconds above 0" 'ctx:optimal{ time_limit = 0/0 }'
bad "grow -1" "grow must be an integer from 0" 'ctx:optimal{ grow = -1 }'
bad "siblings not a boolean" "siblings must be true or false" 'ctx:optimal{ siblings = "yes" }'
bad "max_candidates 0" "max_candidates must be an integer from 1" 'ctx:optimal{ max_candidates = 0 }'
bad "an unknown cost" "cost must be \"simulator\", \"profile\" or a function" 'ctx:optimal{ cost = "magic" }'
bad "cost = profile without a profile" "needs a profile: run with --profile FILE" 'ctx:optimal{ cost = "profile" }'
bad "a cost hook returning a string" "cost \(.*bad.lua:4\) returned 'abc' .* a finite number >= 0" \
    'ctx:optimal{ cost = function(g) return "abc" end }'
bad "a cost hook returning nothing" "returned a nil" 'ctx:optimal{ cost = function(g) end }'
bad "a cost hook returning a negative time" "returned -1" 'ctx:optimal{ cost = function(g) return -1 end }'
bad "a cost hook returning infinity" "returned (inf|1e\+INF|.*inf)" 'ctx:optimal{ cost = function(g) return math.huge end }'
bad "a cost hook returning NaN" "returned .*nan" 'ctx:optimal{ cost = function(g) return 0/0 end }'
bad "a cost hook returning a bad split" "the split, must be nil or an integer from 1" \
    'ctx:optimal{ cost = function(g) return 1, 0 end }'
bad "a cost hook that fails" "hook failed here" 'ctx:optimal{ cost = function(g) error("hook failed here") end }'
bad "a candidate that is not convex" "candidates\[1\] is not a legal group: not convex" \
    'ctx:optimal{ candidates = { { "input_layernorm", "attn_residual" } } }'
bad "a candidate with two matmuls" "candidates\[1\] is not a legal group: one kernel holds at most one matmul" \
    'ctx:optimal{ candidates = { { "q_proj", "k_proj" } } }'
bad "a candidate outside the window" "candidates\[1\] holds node 'out', which is outside the window" \
    'ctx:optimal{ nodes = { 1, 2, 3 }, candidates = { { "out" } } }'
bad "a candidate naming no node" "candidates\[2\]: item 1 \('nosuch'\) is not a node" \
    'ctx:optimal{ candidates = { { 1 }, { "nosuch" } } }'
bad "a candidates hook returning no list" "candidates \(.*bad.lua:4\) returned 42" \
    'ctx:optimal{ candidates = function(w) return 42 end }'
bad "a window that is not convex" "nodes is not a window .*not convex" \
    'ctx:optimal{ nodes = { "input_layernorm", "attn_residual" } }'
bad "a window listing a node twice" "nodes lists node 'q_proj' twice" \
    'ctx:optimal{ nodes = { "q_proj", "q_proj" } }'
expect_fail "optimal.lua with min_group above max_group" 2 "min_group <= max_group" \
    "$FUSEENG" run "$L" --policy optimal --param max_group=2
finish
