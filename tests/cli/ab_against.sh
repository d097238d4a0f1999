# ab_against.sh: fuseeng ab --against TRUTH.json: every plan held against a
# compiler's kernels (a truth file, docs/formats.md): recall and precision of
# node pairs, checked here against the same measure computed from each plan
# file by brute force, the kernels that differ, in every output; bad truth
# files (malformed, another model's, unknown nodes, repeated nodes, two for
# one model) and --against with --shard are exit 2 naming file and place.
. tests/lib.sh
PY=/usr/bin/python3
M=examples/models/gpt2_block.json
SHA=$(sha256sum "$M" | cut -c1-64)

# A hand-written truth of the block (a format fixture, not a compiler's):
# 'gelu' in two kernels, as Inductor recomputes an inlined producer.
KERNELS='
  {"name": "k_ln1", "kind": "triton", "nodes": ["ln_1"]},
  {"name": "mm0", "kind": "extern", "nodes": ["c_attn"]},
  {"name": "k_soft", "kind": "triton", "nodes": ["scores_scaled", "scores_masked", "probs"]},
  {"name": "bmm0", "kind": "extern", "nodes": ["scores"]},
  {"name": "k_res_ln2", "kind": "triton", "nodes": ["attn_c_proj_bias", "attn_residual", "ln_2"]},
  {"name": "k_gelu", "kind": "triton", "nodes": ["c_fc_bias", "gelu"]},
  {"name": "k_out", "kind": "triton", "nodes": ["gelu", "mlp_c_proj_bias", "out"], "detail": "recomputes gelu"}'
truth() {   # truth FILE SHA [KERNELS]
    cat >"$1" <<JSON
{"format": "fuseeng.truth/1", "compiler": {"name": "inductor", "version": "fixture"},
 "model": {"file": "gpt2_block.json", "sha256": "$2"},
 "kernels": [${3:-$KERNELS}]}
JSON
}
truth "$T/t.json" "$SHA"

expect_ok "the table: the truth's facts under the row, recall and precision per policy, a summary" \
    "^agreement with the compilers' kernels" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy inductor_greedy --policy fuse_all --against "$T/t.json"
if grep -Eq "^  against inductor fixture \(.*t\.json\): 7 kernels, 13 nodes compared; left out: 16 model nodes in no kernel; in several kernels: 1$" "$T/out" &&
   grep -Eq "^    fuse_all +[01]\.[0-9]{3} +[01]\.[0-9]{3} +[0-9]+ of 7$" "$T/out" &&
   grep -Eq "^    k_soft \(triton\) \{scores_scaled, scores_masked, probs\} -> plan \{scores_scaled\} \{scores_masked\} \{probs\}$" "$T/out"; then
    ok "the table's truth lines and a differing kernel with both sides' groups"
else
    not_ok "the table's truth lines" "$(cat "$T/out")"
fi

for p in no_fusion inductor_greedy fuse_all; do
    "$FUSEENG" run "$M" --policy $p --json >"$T/plan-$p.json" || not_ok "plan $p"
done
"$FUSEENG" ab "$M" --policy no_fusion --policy inductor_greedy --policy fuse_all --against "$T/t.json" \
    --json >"$T/ab.json" 2>"$T/err"
if "$PY" - "$T/ab.json" "$T/t.json" "$T" <<'PY'
import itertools, json, sys
ab, truth, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
kernels = [k["nodes"] for k in truth["kernels"]]
u = {n for k in kernels for n in k}
tp = {frozenset(p) for k in kernels for p in itertools.combinations(k, 2)}
row = ab["rows"][0]
assert row["truth"]["nodes_compared"] == len(u), row["truth"]
for cell in row["policies"]:
    plan = json.load(open("%s/plan-%s.json" % (d, cell["policy"])))
    groups = [[n for n in g["nodes"] if n in u] for g in plan["groups"]]
    gp = {frozenset(p) for g in groups for p in itertools.combinations(g, 2)}
    t = cell["truth"]
    assert t["truth_pairs"] == len(tp) and t["plan_pairs"] == len(gp), (t, len(tp), len(gp))
    assert t["both_pairs"] == len(tp & gp), (t, len(tp & gp))
    want_r = len(tp & gp) / len(tp)
    want_p = len(tp & gp) / len(gp) if gp else None
    assert abs(t["recall"] - want_r) < 1e-12 and (t["precision"] == want_p or abs(t["precision"] - want_p) < 1e-12), t
    sets = [set(g) for g in groups if g]
    differ = [k["name"] for k in truth["kernels"] if set(k["nodes"]) not in sets]
    assert [x["kernel"] for x in t["differ"]] == differ, (t["differ"], differ)
    for x in t["differ"]:
        assert sorted(sum(x["plan"], [])) == sorted({n for g in groups for n in g
                                                    if set(g) & set(x["nodes"])}), x
s = {c["policy"]: c for c in ab["summary"]}
assert s["fuse_all"]["recall_mean"] == row["policies"][2]["truth"]["recall"], s
PY
then
    ok "JSON: recall, precision, pair counts and the differing kernels equal a brute-force count over the plan files"
else
    not_ok "JSON: the measure against a brute-force count" "$(cat "$T/err")" "$(head -c 800 "$T/ab.json")"
fi

"$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/t.json" --csv >"$T/ab.csv" 2>"$T/err"
if "$PY" - "$T/ab.csv" "$T/ab.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ab = json.load(open(sys.argv[2]))
want = {c["policy"]: c["truth"] for c in ab["rows"][0]["policies"]}
for r in rows:
    t = want[r["policy"]]
    assert r["recall"] == "%.3f" % t["recall"], (r, t)
    assert int(r["kernels_differ"]) == t["kernels_differ"], (r, t)
    assert r["differ"].count(" -> plan ") == t["kernels_differ"], r["differ"]
PY
then
    ok "CSV: recall, precision, kernels_differ and the differing kernels on each line"
else
    not_ok "CSV columns" "$(cat "$T/err")" "$(head -c 800 "$T/ab.csv")"
fi

expect_ok "Markdown: an agreement table, the differing kernels per policy, the summary" \
    "^\| gpt2-block \| fuse_all \| [01]\.[0-9]{3} \| [01]\.[0-9]{3} \| [0-9]+ of 7 \|$" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/t.json" --md
if grep -q "^  - k_soft (triton) {scores_scaled, scores_masked, probs} -> plan" "$T/out" &&
   grep -Eq "^\| fuse_all \| [01]\.[0-9]{3} \| [01]\.[0-9]{3} \| [-0-9.]+ \| [-0-9.]+ \|$" "$T/out"; then
    ok "Markdown: differing kernels and the summary"
else
    not_ok "Markdown: differing kernels and the summary" "$(cat "$T/out")"
fi

check "HTML: the page" "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/t.json" \
    --html "$T/p.html"
if grep -q "<h2>Agreement with the compilers' kernels</h2>" "$T/p.html" &&
   grep -q "<li>k_soft (triton) {scores_scaled, scores_masked, probs} -&gt; plan" "$T/p.html"; then
    ok "HTML: the agreement tables and the differing kernels"
else
    not_ok "HTML: the agreement" "$(grep -c . "$T/p.html") lines"
fi

# A model without a truth among models with one: its row says so, the rest compare.
expect_ok "a model with no truth file among the rows: said in its row" \
    "^  no truth file for this model$" \
    "$FUSEENG" ab "$M" examples/models/bert_base_layer.json --policy no_fusion --policy fuse_all \
    --against "$T/t.json"

# Bad input: exit 2, the file and the place named, nothing on stdout.
printf '{"format": "fuseeng.truth/1",\n "kernels": [}\n' >"$T/syntax.json"
expect_fail "malformed JSON: file:line:column" 2 "syntax\.json:2:[0-9]+: " \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/syntax.json"
sed 's/fuseeng.truth\/1/fuseeng.model\/1/' "$T/t.json" >"$T/fmt.json"
expect_fail "another format" 2 "fmt\.json: format: expected \"fuseeng\.truth/1\"" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/fmt.json"
truth "$T/other.json" "$(printf '%064d' 7)"
expect_fail "the hash of another model" 2 "other\.json: model\.sha256: 0000000000.*none of the models.*gpt2_block\.json" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/other.json"
truth "$T/short.json" "abc"
expect_fail "a hash that is no SHA-256" 2 "short\.json: model\.sha256: 'abc' is not 64" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/short.json"
truth "$T/unknown.json" "$SHA" '{"name": "k", "kind": "triton", "nodes": ["ln_1"]},
  {"name": "k2", "kind": "triton", "nodes": ["add_7", "nosuch"]}'
expect_fail "a node the model lacks: kernels[i].nodes[j]" 2 \
    "unknown\.json: kernels\[1\]\.nodes\[0\]: node 'add_7' is not in the model .*gpt2_block\.json" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/unknown.json"
truth "$T/twice.json" "$SHA" '{"name": "k", "kind": "triton", "nodes": ["ln_1", "ln_1"]}'
expect_fail "a node twice in one kernel" 2 "twice\.json: kernels\[0\]\.nodes\[1\]: node 'ln_1' twice" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/twice.json"
truth "$T/kind.json" "$SHA" '{"name": "k", "nodes": ["ln_1"]}'
expect_fail "a kernel without a kind" 2 "kind\.json: kernels\[0\]: \"name\" and \"kind\" must be" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/kind.json"
truth "$T/key.json" "$SHA" '{"name": "k", "kind": "triton", "nodes": [], "node": 1}'
expect_fail "an unknown key in a kernel" 2 "key\.json: kernels\[0\]\.node: unknown key" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/key.json"
cp "$T/t.json" "$T/t2.json"
expect_fail "two truth files for one model" 2 "t\.json and .*t2\.json: two truth files for one model" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/t.json" --against "$T/t2.json"
expect_fail "--against with --shard" 2 "--against does not combine with --shard" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/t.json" --shard 1/2
expect_fail "a truth file that does not exist" 2 "nosuch\.json" \
    "$FUSEENG" ab "$M" --policy no_fusion --policy fuse_all --against "$T/nosuch.json"
finish
