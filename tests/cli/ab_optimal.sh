# ab_optimal.sh: fuseeng ab --optimal: every row's optimum (policies/optimal.lua)
# and each cell's gap to it, in the table, JSON, CSV, Markdown and HTML; the
# gap is (time - optimum) / optimum of the figures printed beside it; shards
# merge to what one run prints; --optimal where it means nothing is a usage
# error (exit 2).
. tests/lib.sh
PY=/usr/bin/python3
M1=examples/models/gpt2_block.json
M2=examples/models/bert_base_layer.json

expect_ok "the table: the optimum beside the unfused time, a gap column, a gap in the summary" \
    "^gpt2-block \(unfused [0-9.]+ ms simulated; optimal [0-9.]+ ms, proven\)" \
    "$FUSEENG" ab "$M1" "$M2" --policy no_fusion --policy gcu_tlf --optimal
if grep -Eq "^ +policy +kernels .* plan ms +gap$" "$T/out" &&
   grep -Eq "^[* ] gcu_tlf .* \+[0-9]+\.[0-9]%$" "$T/out" &&
   grep -Eq "^  gcu_tlf +[0-9.]+x( +[0-9]+){4} +\+[0-9.]+%$" "$T/out"; then
    ok "the table's gap columns"
else
    not_ok "the table's gap columns" "$(cat "$T/out")"
fi

"$FUSEENG" ab "$M1" "$M2" --policy no_fusion --policy gcu_tlf --optimal --json >"$T/ab.json" 2>"$T/err"
if "$PY" - "$T/ab.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    o = r["optimal"]
    assert o["proven"] and o["windows"] == 1 and o["gap_bound"] == 0, o
    for c in r["policies"]:
        want = (c["sim_ms"] - o["sim_ms"]) / o["sim_ms"] * 100
        assert abs(c["gap_pct"] - want) < 1e-9 and c["gap_pct"] >= 0, (c, o)
for s in d["summary"]:
    assert s["gap_pct"] >= 0, s
PY
then
    ok "JSON: the row's optimum, each cell's gap_pct = (sim_ms - optimum) / optimum, the summary's"
else
    not_ok "JSON: the row's optimum and each cell's gap" "$(cat "$T/err")" "$(head -c 800 "$T/ab.json")"
fi

expect_ok "CSV: optimal_ms and gap_pct columns, after error" \
    "^gpt2-block,gcu_tlf,([^,]*,){15}[0-9.]+,[0-9.]+," \
    "$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf --optimal --csv
grep -q ",error,optimal_ms,gap_pct," "$T/out" && ok "CSV header" || not_ok "CSV header" "$(head -n 1 "$T/out")"
expect_ok "Markdown: a gap column, the optimum of each row, the summary's gap" \
    "^\| gpt2-block \| \*\*gcu_tlf\*\* \|.* \| \+[0-9.]+% \|$" \
    "$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf --optimal --md
grep -q "^gpt2-block: optimal [0-9.]* ms, proven" "$T/out" && grep -q "| gap to optimal |$" "$T/out" &&
    ok "Markdown: the row's optimum and the summary column" || not_ok "Markdown notes" "$(cat "$T/out")"
"$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf --optimal --html "$T/ab.html" >/dev/null 2>"$T/err"
if [ "$(grep -c "<th>gap to optimal</th>" "$T/ab.html")" -eq 2 ] && grep -q "optimal [0-9.]* ms, proven" "$T/ab.html"; then
    ok "HTML: the gap in the row's table and the summary, the optimum in the heading"
else
    not_ok "HTML: the gap columns" "$(cat "$T/err")"
fi

# Shards merge to the one run's bytes.
"$FUSEENG" ab "$M1" "$M2" --policy no_fusion --policy gcu_tlf --optimal --shard 1/2 >"$T/p1.json" &&
"$FUSEENG" ab "$M1" "$M2" --policy no_fusion --policy gcu_tlf --optimal --shard 2/2 >"$T/p2.json" &&
"$FUSEENG" ab merge "$T/p1.json" "$T/p2.json" --json >"$T/merged.json"
grep -v '^  "provenance": ' "$T/merged.json" >"$T/merged.np"
grep -v '^  "provenance": ' "$T/ab.json" >"$T/ab.np"
if [ -s "$T/ab.np" ] && cmp -s "$T/merged.np" "$T/ab.np"; then
    ok "shards with --optimal merge to what one run prints, but the provenance line"
else
    not_ok "shards with --optimal merge to what one run prints" "$(diff "$T/merged.np" "$T/ab.np" | head -n 20)"
fi
sed 's/"proven": true/"proven": 3/' "$T/p1.json" >"$T/bad.json"
expect_fail "a shard file with a mistyped optimum" 2 "bad.json.*mistyped \"optimal\"" \
    "$FUSEENG" ab merge "$T/bad.json" "$T/p2.json"
expect_fail "--optimal with merge" 2 "merge takes shard files and output options only" \
    "$FUSEENG" ab merge "$T/p1.json" "$T/p2.json" --optimal
expect_fail "--optimal with --diff" 2 "--diff A B MODEL takes" \
    "$FUSEENG" ab --diff no_fusion gcu_tlf "$M1" --optimal
# --param reaches the optimum too: groups of one node, never grown, are
# the unfused plan, so the optimum is the unfused time; a parameter only the
# optimum has is not "no policy has it", and a bad value names the optimum.
expect_ok "--param reaches the optimum (one-node groups: the optimum is the unfused time)" \
    "^gpt2-block \(unfused ([0-9.]+) ms simulated; optimal \1 ms, proven\)" \
    "$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf --optimal \
    --param max_group=1 --param min_group=1 --param grow=0
expect_fail "--param only the optimum has, without --optimal" 2 "time_limit=3: no policy given has that parameter" \
    "$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf --param time_limit=3
expect_fail "--param with a bad value for the optimum" 2 "the optimum \(--optimal\): param 'max_group'" \
    "$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf --optimal --param max_group=x
expect_ok "without --optimal nothing changes: no gap column" "^  policy +kernels .* plan ms$" \
    "$FUSEENG" ab "$M1" --policy no_fusion --policy gcu_tlf
finish
