# index_ranges.sh: random values of an integer input that reaches an index
# through other nodes are drawn in range (core/exec/ranges.c): BERT's
# token_type_ids, through an exported custom node into an embedding of 2
# rows, drew [0, 16) and stopped run --execute. Through a node whose values
# cannot be followed back the command refuses, naming the input and the
# fix (--inputs), and runs with the input's own values.
. tests/lib.sh

model() {   # model FILE ATEN KIND ARGS: ids -> custom ATEN -> embedding of 2 rows
    cat >"$1" <<JSON
{"format": "fuseeng.model/1", "name": "token-types",
 "tensors": {"token_type_ids": {"shape": [2, 8], "dtype": "i64", "kind": "$3"},
             "ids": {"shape": [2, 8], "dtype": "i64", "kind": "activation"},
             "types": {"shape": [2, 16], "dtype": "f32", "kind": "weight"},
             "h": {"shape": [2, 8, 16], "dtype": "f32", "kind": "input"}},
 "nodes": [{"name": "copy", "op": "custom", "inputs": ["token_type_ids"], "outputs": ["ids"],
            "attrs": {"aten": "$2", "pattern": "opaque", "args": $4}},
           {"name": "type_emb", "op": "embedding", "inputs": ["types", "ids"], "outputs": ["e"]},
           {"name": "add", "op": "add", "inputs": ["h", "e"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
}
model "$T/clone.json" aten.clone.default input '{}'
model "$T/buffer.json" aten.clone.default weight '{}'
model "$T/cumsum.json" aten.cumsum.default input '{"dim": 1}'
Q="--execute --budget 0.01"

for m in clone buffer; do
    for p in no_fusion fuse_all; do
        # shellcheck disable=SC2086
        expect_ok "$m.json: ids through a custom clone into 2 rows ($p)" '^ +y .* ok$' \
            "$FUSEENG" run "$T/$m.json" --policy $p $Q
    done
done
# shellcheck disable=SC2086
expect_fail "cumsum.json: refused, naming the input and --inputs" 2 \
    "cumsum.json: input 'token_type_ids' \\(i64\\) reaches the indices of node 'type_emb' \\(embedding\\) through node 'copy' \\(aten.cumsum.default\\).*give its values with --inputs" \
    "$FUSEENG" run "$T/cumsum.json" --policy fuse_all $Q
PY=$(command -v python3)
if [ -n "$PY" ] && "$PY" tests/tools/st_gen.py "$T/cumsum.json" input "$T/in.st"; then
    # shellcheck disable=SC2086
    expect_ok "cumsum.json: runs with --inputs (zeros: cumsum 0)" '^ +y .* ok$' \
        "$FUSEENG" run "$T/cumsum.json" --policy fuse_all $Q --inputs "$T/in.st"
else
    skip "cumsum.json with --inputs" "no python3 to write the file"
fi
finish
