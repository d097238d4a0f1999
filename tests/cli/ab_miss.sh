# ab_miss.sh: where a measured row's simulated best is not its measured best,
# ab --measure and fidelity say why: the two plans timed group by group, the
# groups they do not share held against their simulated prices, and the
# group mispriced most named with the term of its price. The machine here is
# the host with registers so few and spills so slow that the simulator
# prices a fused six-op chain far above the unfused one; on any CPU the
# fused chain reads and writes memory once instead of six times, so it is
# measured faster: the simulator must lose, and the miss must be the fused
# group's spills, overpriced.
. tests/lib.sh
PY=/usr/bin/python3
M=examples/bench/chain6.json
MACH=host:local_bandwidth=1e9,registers=4,reserved_registers=1
AB="ab $M --dim T=1024 --machine $MACH --policy no_fusion --policy fuse_all --measure --reps 7 --budget 0.05"

expect_ok "the row says why the simulated best lost, naming the group and the term" \
    "^  why no_fusion \(the simulated best\) lost to fuse_all: their plans differ in 7 groups, .*mispriced most: mul\+add\+relu\+mul\+tanh\+add \(6 nodes, fuse_all's plan\), simulated [0-9.]+ us \(mostly spills\), measured [0-9.]+ us \(overpriced [0-9.]+x\)$" \
    "$FUSEENG" $AB

"$FUSEENG" $AB --json >"$T/ab.json" 2>"$T/err"
if "$PY" - "$T/ab.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["rows"][0]
m = r["miss"]
assert r["ranks_agree"] is False and m["pick"] == r["sim_winner"] == "no_fusion", r
assert m["best"] == r["winner"] == "fuse_all", r
assert m["groups"] == 7 and m["nodes"] == 6 and m["plan"] == "fuse_all", m
assert m["term"] == "spills" and m["sim_us"] > m["meas_us"] > 0, m
# the named group is fuse_all's only group: its sums are its figures
assert abs(m["best_sim_ms"] * 1e3 - m["sim_us"]) < 1e-6 * m["sim_us"], m
assert abs(m["best_meas_ms"] * 1e3 - m["meas_us"]) < 1e-6 * m["meas_us"], m
# the unfused side: six groups priced as the unfused plan's own figures
pol = {c["policy"]: c for c in r["policies"]}
assert abs(m["pick_sim_ms"] - r["unfused_ms"]) < 1e-6 * r["unfused_ms"], (m, r["unfused_ms"])
assert m["pick_meas_ms"] > m["best_meas_ms"], m
assert m["text"].startswith("why no_fusion (the simulated best) lost to fuse_all"), m
PY
then ok "JSON: the row's miss, its sums the plans' own figures"
else not_ok "JSON: the row's miss" "$(cat "$T/err")" "$(head -c 800 "$T/ab.json")"; fi

expect_ok "Markdown: the miss under the tables" "^chain6: why no_fusion \(the simulated best\) lost to fuse_all" \
    "$FUSEENG" $AB --md
"$FUSEENG" $AB --html "$T/page.html" >/dev/null 2>"$T/err"
if grep -q "<li>why no_fusion (the simulated best) lost to fuse_all: .*mostly spills" "$T/page.html"; then
    ok "HTML: the miss in the notes"
else not_ok "HTML: the miss in the notes" "$(cat "$T/err")"; fi

# Where the simulator is right there is nothing to explain.
expect_ok "no miss where the simulated best is the measured best" "^\* fuse_all " \
    "$FUSEENG" ab $M --dim T=1024 --machine host --policy no_fusion --policy fuse_all --measure --reps 7 --budget 0.05
if grep -q "why \|warning: the simulator" "$T/out"; then
    not_ok "no why line when the ranks agree" "$(cat "$T/out")"
else ok "no why line when the ranks agree"; fi

# A shard carries the miss, and merge prints it back.
"$FUSEENG" $AB --shard 1/1 >"$T/part.json" 2>"$T/err" &&
"$FUSEENG" ab merge "$T/part.json" --json >"$T/merged.json" 2>>"$T/err"
if "$PY" - "$T/part.json" "$T/merged.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["rows"][0]["miss"]
m = json.load(open(sys.argv[2]))["rows"][0]["miss"]
assert p == m, (p, m)
PY
then ok "a shard file carries the miss and merge gives it back"
else not_ok "a shard file carries the miss" "$(cat "$T/err")"; fi
sed 's/"term": "spills"/"term": 3/' "$T/part.json" >"$T/bad.json"
expect_fail "a shard file with a mistyped miss" 2 'bad.json: rows\[0\]: a mistyped "miss"' \
    "$FUSEENG" ab merge "$T/bad.json"

# fidelity: the miss under its model, and the optimum counted.
"$FUSEENG" fidelity $M --dim T=1024 --machine "$MACH" --policy fuse_all --policy optimal \
    --reps 7 --budget 0.05 >"$T/fid.txt" 2>"$T/err"
if grep -Eq "^  why (no_fusion|optimal) \(the simulated best\) lost to fuse_all: .*\(mostly spills\)" "$T/fid.txt" &&
   grep -Eq "^  the optimum is the best    0 of 1 model \(0%\)$" "$T/fid.txt"; then
    ok "fidelity: the miss under the model; the optimum is not the measured best, counted"
else not_ok "fidelity: the miss and the optimum's line" "$(cat "$T/fid.txt" "$T/err")"; fi
"$FUSEENG" fidelity $M --dim T=1024 --machine "$MACH" --policy fuse_all --policy optimal \
    --reps 7 --budget 0.05 --json >"$T/fid.json" 2>"$T/err"
if "$PY" - "$T/fid.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s, m = d["summary"], d["models"][0]
assert s["optimal_models"] == 1 and s["optimal_best"] == 0, s
assert m["optimal_is_best"] is False and m["miss"]["best"] == "fuse_all", m
assert m["miss"]["term"] == "spills", m
PY
then ok "fidelity JSON: optimal_models, optimal_best, the model's miss"
else not_ok "fidelity JSON: the optimum and the miss" "$(cat "$T/err")" "$(head -c 800 "$T/fid.json")"; fi
"$FUSEENG" fidelity $M --dim T=1024 --machine host --policy fuse_all --policy gcu_tlf \
    --reps 5 --budget 0.05 >"$T/fid2.txt" 2>"$T/err"
if grep -q "the optimum is" "$T/fid2.txt"; then
    not_ok "fidelity without the optimal policy has no optimum line" "$(cat "$T/fid2.txt")"
else ok "fidelity without the optimal policy has no optimum line"; fi
finish
