# policies_page.sh: `fuseeng policies --results`, and docs/policies.md says
# what it prints: the page's tables are the command's output (numbers
# within 1%, tests/tools/policies_page.sh --check). Bad input: no model, a
# --skip that names no policy, --policy with --skip, a model that does not
# load (exit 2, nothing printed); a policy that fails on one model is
# reported in its cell and the rest of the table completes (exit 1).
. tests/lib.sh
SHARED=${SHARED:-../shared}
M=examples/models/gpt2_block.json

if [ "${SANITIZE:-}" = 1 ]; then
    # optimal.lua's solves run under time limits, and an instrumented build
    # is slow enough to reach them: its plans, and the page's gap column, differ
    skip "docs/policies.md holds what fuseeng policies --results prints" "an instrumented (SANITIZE=1) build"
elif [ -d "$SHARED/models" ]; then
    if out=$(FUSEENG=$FUSEENG SHARED=$SHARED sh tests/tools/policies_page.sh --check 2>&1); then
        ok "docs/policies.md holds what fuseeng policies --results prints"
    else
        not_ok "docs/policies.md holds what fuseeng policies --results prints" "$out"
    fi
else
    skip "docs/policies.md holds what fuseeng policies --results prints" "no $SHARED/models"
fi

expect_ok "the list names every shipped policy" "^gcu_tlf +greedy +seed 004" "$FUSEENG" policies
expect_ok "--results: a row per policy, the unfused figures first" \
    "\| unfused \| 12\+6, [0-9.]+ ms \|" "$FUSEENG" policies --results "$M" --policy fuse_all
expect_ok "--results: source and description of each policy" \
    "\| .gcu_tlf. \| greedy \| seed 004, GCU AFE \+ TLF" "$FUSEENG" policies --results "$M" --skip benchmark_fusion
expect_ok "--machine changes the machine" "^Simulated on gcu_big " \
    "$FUSEENG" policies --results "$M" --policy gcu_tlf --machine gcu_big
grep -q "benchmark_fusion" "$T/out" && not_ok "--policy restricts the rows" "$(cat "$T/out")" || ok "--policy restricts the rows"

expect_fail "--results without a model" 2 "needs at least one model" "$FUSEENG" policies --results
expect_fail "a model without --results" 2 "need --results" "$FUSEENG" policies "$M"
expect_fail "--skip of no shipped policy" 2 "--skip fuse_everything: no such shipped policy" \
    "$FUSEENG" policies --results "$M" --skip fuse_everything
expect_fail "--policy with --skip" 2 "do not go together" \
    "$FUSEENG" policies --results "$M" --policy fuse_all --skip gcu_tlf
expect_fail "a model that does not load" 2 "nosuch.json" \
    "$FUSEENG" policies --results "$M" "$T/nosuch.json" --policy fuse_all
expect_fail "an unknown machine" 2 "machine" \
    "$FUSEENG" policies --results "$M" --policy fuse_all --machine nosuch

# A policy that fails on one model only: its cell says so, the rest completes.
cat >"$T/picky.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "picky", driver = "greedy",
  decide = function(self, group, ctx)
    if ctx.graph.name == "gpt2-block" then error("no gpt2 here") end
    return true, "fine"
  end,
}
LUA
"$FUSEENG" policies --results "$M" examples/models/hub_conflict.json --policy "$T/picky.lua" \
    --policy fuse_all >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -Eq '^\| .picky. \| error \[1\] \| [0-9]+\+[0-9]+, [0-9.]+x \|$' "$T/out" &&
   grep -q '^1\. picky on gpt2-block: .*no gpt2 here' "$T/out" &&
   grep -Eq '^\| .fuse_all. \| [0-9]+\+[0-9]+, [0-9.]+x \| [0-9]+\+[0-9]+, [0-9.]+x \|$' "$T/out"; then
    ok "a policy failing on one model: error in its cell, a note, the rest completes, exit 1"
else
    not_ok "a policy failing on one model: error in its cell, a note, the rest completes, exit 1" \
        "exit $rc" "$(cat "$T/out" "$T/err")"
fi
finish
