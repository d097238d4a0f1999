# policy_gcu_dafe.sh: seed 004's DAFE: `run --dim NAME=v1,v2,...` plans each
# bucket (gcu_dafe decides it with gcu_tlf at the bucket's shapes), reports
# each bucket's figures and the groups that differ, and writes a dispatch
# table that `sim` and `run --plan` pick a bucket from by the model's value;
# bad bucket lists and tables that do not fit the model stop with status 2.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json
SW=examples/bench/swiglu.json
run() { "$FUSEENG" run "$@"; }

# The LLaMA-2 layer over S: every bucket's row is the single-value run's.
expect_ok "a row per bucket: serves, kernels, simulated and unfused ms, gain, tiled" \
    '^  S=128 +1\.\.128 +6 +8 +5\.564 +6\.002 +1\.08x +0$' \
    run "$M" --policy gcu_dafe --param dim=S --dim S=128,512,2048
grep -Eq '^  S=512 +129\.\.512 +6 +8 +8\.879 +10\.949 +1\.23x +2$' "$T/out" &&
grep -Eq '^  S=2048 +513\.\.2048 +7 +8 +33\.281 +47\.832 +1\.44x +5$' "$T/out" &&
    ok "S=512 and S=2048 rows match gcu_tlf's single runs" || not_ok "rows" "$(cat "$T/out")"
# The attention block is one group up to S=512 and two at 2048; SwiGLU's
# split grows with S.
if grep -A1 -F '  [scores, scores_scaled, scores_masked, probs]' "$T/out" | grep -q 'S=128: x1, S=512: x3, S=2048: -$' &&
   grep -A1 -F '  [scores, scores_scaled]' "$T/out" | grep -q 'S=128: -, S=512: -, S=2048: x32$' &&
   grep -A1 -F '  [gate_silu, swiglu]' "$T/out" | grep -q 'S=128: x1, S=512: x3, S=2048: x9$' &&
   grep -q '^groups that differ between buckets (6; ' "$T/out"; then
    ok "the groups that differ, with each bucket's split"
else
    not_ok "differing groups" "$(cat "$T/out")"
fi
expect_ok "reasons name the bucket" '^  fuse +\[gate_silu, swiglu\] +S=512: tiled x3: ' \
    run "$M" --policy gcu_dafe --param dim=S --dim S=128,512 --explain
expect_ok "every policy runs over buckets" '^  S=512 +129\.\.512 +9 +9 ' \
    run "$M" --policy gcu_afe --dim S=128,512
expect_ok "the same plan in every bucket is said once" '^groups +the same in every bucket$' \
    run "$SW" --policy gcu_dafe --param dim=T --dim T=2,8,32

# The dispatch table: each bucket's plan is the plan of a run at its value.
check "--plan-out writes the table" run "$M" --policy gcu_dafe --param dim=S --dim S=128,512,2048 \
    --plan-out "$T/d.json"
groups_of() { grep '"id": ' "$1" | sed 's/^ *//'; }
bucket_groups() {   # the group lines of bucket $2 of table $1
    awk -v b="\"bucket\": $2," '$0 ~ /"bucket": / { on = index($0, b) > 0 } on' "$1" | groups_of /dev/stdin
}
same=1
for s in 128 512 2048; do
    run "$M" --policy gcu_dafe --param dim=S --dim S=$s --plan-out "$T/s$s.json" >/dev/null
    [ "$(bucket_groups "$T/d.json" $s)" = "$(groups_of "$T/s$s.json")" ] || same=0
done
[ $same -eq 1 ] && ok "each bucket's plan equals the single run's at that value" ||
    not_ok "bucket plans" "$(head -c 600 "$T/d.json")"
grep -q '"format": "fuseeng.dispatch/1"' "$T/d.json" && grep -q '"serves": \[129, 512\]' "$T/d.json" &&
    ok "format and serves" || not_ok "format and serves"
expect_ok "sim picks the bucket that serves the model's value" \
    '^bucket +S=300 is served by bucket S=512 \(values 129\.\.512\), 2 of 3$' \
    "$FUSEENG" sim "$M" --plan "$T/d.json" --dim S=300
expect_ok "a value equal to a bucket is that bucket" '^bucket +S=128 is served by bucket S=128 \(values 1\.\.128\), 1 of 3$' \
    "$FUSEENG" sim "$M" --plan "$T/d.json" --dim S=128
expect_ok "without --dim, the model's value picks" \
    '^bucket +S=2048 \(the model.s\) is served by bucket S=2048 \(values 513\.\.2048\), 3 of 3$' \
    "$FUSEENG" sim "$M" --plan "$T/d.json"
expect_ok "sim --json says which bucket" '"bucket": \{"dim": "S", "value": 300, "bucket": 512, "serves": \[129, 512\]\}' \
    "$FUSEENG" sim "$M" --plan "$T/d.json" --dim S=300 --json
# run --plan --execute runs the picked bucket's plan on this CPU.
check "a SwiGLU table over T" run "$SW" --policy gcu_dafe --param dim=T --dim T=2,8,32 --plan-out "$T/sw.json"
expect_ok "run --plan TABLE --execute runs the bucket's plan" '^           out .* ok$' \
    run "$SW" --plan "$T/sw.json" --dim T=5 --execute --budget 0.01
grep -q 'note: .*sw.json is a dispatch table: T=5 runs the plan of bucket T=8' "$T/err" &&
    ok "and says which bucket" || not_ok "bucket note" "$(cat "$T/err")"
# A single value still makes a plain plan.
expect_ok "one value: a plain plan file" '"format": "fuseeng.plan/1"' run "$SW" --policy gcu_dafe --param dim=T --dim T=8 --json

# Bad bucket lists.
expect_fail "--dim B= (no value)" 2 "--dim B=: the value must be a positive integer" run "$M" --policy gcu_dafe --dim B=
expect_fail "--dim B=1,,8 (an empty value)" 2 "--dim B=1,,8: value 2 is empty; give positive integers" \
    run "$M" --policy gcu_dafe --dim B=1,,8
expect_fail "--dim B=1,8, (a trailing comma)" 2 "--dim B=1,8,: value 3 is empty" run "$M" --policy gcu_dafe --dim B=1,8,
expect_fail "--dim B=1,x" 2 "--dim B=1,x: value 2 is not a positive integer" run "$M" --policy gcu_dafe --dim B=1,x
expect_fail "--dim B=1,0" 2 "--dim B=1,0: value 2 is not a positive integer" run "$M" --policy gcu_dafe --dim B=1,0
expect_fail "--dim B=8,1 (decreasing)" 2 "--dim B=8,1: list the buckets in increasing order \(1 after 8\)" \
    run "$M" --policy gcu_dafe --dim B=8,1
expect_fail "--dim B=1,8,8 (a duplicate)" 2 "--dim B=1,8,8: 8 is given twice" run "$M" --policy gcu_dafe --dim B=1,8,8
expect_fail "two bucketed dims" 2 "only one dim may take several values \(B already does\)" \
    run "$M" --policy gcu_dafe --dim B=1,8 --dim S=1,2
expect_fail "the bucketed dim also given one value" 2 "--dim B is given twice" \
    run "$M" --policy gcu_dafe --dim B=1,8 --dim B=4
expect_fail "a dim the model lacks" 2 "bucket Q=1: .*--dim Q: the model has no dim 'Q'" \
    run "$M" --policy gcu_dafe --dim Q=1,8
expect_fail "--execute takes one plan" 2 "--execute takes one plan" run "$M" --policy gcu_dafe --dim B=1,8 --execute
expect_fail "buckets with --plan" 2 "give one or the other" run "$M" --plan "$T/d.json" --dim S=1,8
expect_fail "buckets are run's" 2 "several values of a dim go with 'fuseeng run' only" \
    "$FUSEENG" bench "$SW" --policy fuse_all --dim T=1,8
expect_ok "a model without gcu_dafe's dim: gcu_tlf's plan, reasons without a bucket" '^  fuse +\[silu, out\] +tiled x17: ' \
    run "$SW" --policy gcu_dafe --explain

# Tables that do not fit the model.
expect_fail "a value above the largest bucket" 2 "d\.json: no bucket serves S=4096: the largest bucket is S=2048" \
    "$FUSEENG" sim "$M" --plan "$T/d.json" --dim S=4096
expect_fail "a model without the table's dim" 2 "d\.json: the buckets are values of dim 'S', which model 'swiglu' does not have \(its dims: T\)" \
    "$FUSEENG" sim "$SW" --plan "$T/d.json"
sed 's/"name": "swiglu"/"name": "other"/' "$SW" >"$T/other.json"
expect_fail "a table for another model" 2 "sw\.json: the plan is for model 'swiglu', not 'other'" \
    "$FUSEENG" sim "$T/other.json" --plan "$T/sw.json" --dim T=4
bad() {   # bad NAME 'sed script' 'message': the table edited, then read
    sed "$2" "$T/d.json" >"$T/bad.json"
    expect_fail "$1" 2 "$3" "$FUSEENG" sim "$M" --plan "$T/bad.json" --dim S=100
}
bad "buckets out of order" 's/"bucket": 512,/"bucket": 100,/' 'bad\.json: bucket 1: "bucket" must be a positive integer above the bucket before it'
bad "serves that disagree" 's/"serves": \[129, 512\]/"serves": [1, 512]/' 'bad\.json: bucket 1: "serves" must be \[129, 512\]'
bad "a plan made at another value" '0,/"S": 512}/s//"S": 256}/' 'bad\.json: bucket 1: its plan was made at S=256, not at the bucket.s 512'
bad "no dim" 's/"dim": "S",/"dim": "",/' 'bad\.json: "dim" must name the dim the buckets are values of'
bad "a bucket without a plan" '0,/"format": "fuseeng.plan\/1"/s//"format": "x"/' 'bad\.json: bucket 0: "plan" must be a plan'
bad "a bucket's plan for another model" '0,/"model": "llama2-7b-layer",/s//"model": "x",/' 'bad\.json: bucket 0: its plan is for model .llama2-7b-layer., the table for .x.'
finish
