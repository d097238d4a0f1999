# check_bad_input.sh: every class of bad model file gets exit 2 and one clear
# message naming the file and the place, never a crash or partial output.
. tests/lib.sh

# model NAME 'nodes' 'tensors' ['outputs' ['dims']]: write a small model file.
model() {
    cat >"$T/$1.json" <<JSON
{"format": "fuseeng.model/1", "name": "$1",
 "dims": {${5:-}},
 "tensors": {${3}},
 "nodes": [${2}],
 "outputs": [${4:-\"y\"}]}
JSON
}
X='"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"}'
RELU='{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}'

model good "$RELU" "$X"
expect_ok "a minimal model is accepted" 'ok' "$FUSEENG" check "$T/good.json"

printf '{"format": "fuseeng.model/1",\n "nodes": [ {"name": "a",, } ]}' >"$T/syntax.json"
expect_fail "malformed JSON names line:column" 2 'syntax\.json:2:[0-9]+: malformed JSON' \
    "$FUSEENG" check "$T/syntax.json"

printf '' >"$T/empty_file.json"
expect_fail "an empty file" 2 'empty_file\.json:1:1: the file is empty' "$FUSEENG" check "$T/empty_file.json"

printf '[1, 2]' >"$T/array.json"
expect_fail "a top-level array" 2 'array\.json:1:1: expected a JSON object' "$FUSEENG" check "$T/array.json"

sed 's#fuseeng.model/1#onnx/1#' "$T/good.json" >"$T/format.json"
expect_fail "wrong format" 2 'format\.json:1:[0-9]+: "format" is "onnx/1"; expected "fuseeng.model/1"' \
    "$FUSEENG" check "$T/format.json"

printf '{"nodes": [], "outputs": []}' >"$T/noformat.json"
expect_fail "missing format" 2 'noformat\.json:1:1: missing "format"' "$FUSEENG" check "$T/noformat.json"

printf '{"format": "fuseeng.model/1", "tensors": {}, "outputs": ["y"]}' >"$T/nonodes.json"
expect_fail "missing nodes" 2 'missing "nodes"' "$FUSEENG" check "$T/nonodes.json"

model noshape "$RELU" '"x": {"dtype": "f32", "kind": "input"}'
expect_fail "tensor without shape" 2 "noshape\.json:3:[0-9]+: tensor 'x': \"shape\" is missing" \
    "$FUSEENG" check "$T/noshape.json"

model shapetype "$RELU" '"x": {"shape": "4x8", "dtype": "f32", "kind": "input"}'
expect_fail "wrongly typed shape" 2 "tensor 'x': \"shape\" is a string; expected a list" \
    "$FUSEENG" check "$T/shapetype.json"

model inputstype '{"name": "r", "op": "relu", "inputs": "x", "outputs": ["y"]}' "$X"
expect_fail "wrongly typed inputs" 2 "inputstype\.json:4:[0-9]+: node 'r': \"inputs\" is a string" \
    "$FUSEENG" check "$T/inputstype.json"

model noop '{"name": "r", "inputs": ["x"], "outputs": ["y"]}' "$X"
expect_fail "node without op" 2 "node 'r': \"op\" is missing" "$FUSEENG" check "$T/noop.json"

model unknownop '{"name": "r", "op": "frobnicate", "inputs": ["x"], "outputs": ["y"]}' "$X"
expect_fail "unknown op lists the known ones" 2 \
    "unknownop\.json:4: node 'r' has unknown op 'frobnicate'; known ops are: relu, .*matmul.*custom" \
    "$FUSEENG" check "$T/unknownop.json"

model unknownref '{"name": "r", "op": "relu", "inputs": ["z"], "outputs": ["y"]}' "$X"
expect_fail "unknown tensor reference" 2 "node 'r' input 0 'z' is not a declared tensor and no node produces it" \
    "$FUSEENG" check "$T/unknownref.json"

model dupnode "$RELU, {\"name\": \"r\", \"op\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y2\"]}" "$X"
expect_fail "duplicate node names" 2 "dupnode\.json:4: node 'r' is defined twice \(first at line 4\)" \
    "$FUSEENG" check "$T/dupnode.json"

cat >"$T/duptensor.json" <<'JSON'
{"format": "fuseeng.model/1",
 "tensors": {"x": {"shape": [4], "dtype": "f32", "kind": "input"},
             "x": {"shape": [4], "dtype": "f32", "kind": "input"}},
 "nodes": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
expect_fail "duplicate tensor names" 2 "duptensor\.json:3: tensor 'x' is declared twice \(first at line 2\)" \
    "$FUSEENG" check "$T/duptensor.json"

model twice "$RELU, {\"name\": \"r2\", \"op\": \"neg\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}" "$X"
expect_fail "a tensor produced twice" 2 "tensor 'y' is produced twice: by node 'r' \(line 4\) and by node 'r2'" \
    "$FUSEENG" check "$T/twice.json"

model cycle '{"name": "a", "op": "add", "inputs": ["x", "c"], "outputs": ["a"]},
  {"name": "b", "op": "relu", "inputs": ["a"], "outputs": ["b"]},
  {"name": "c", "op": "neg", "inputs": ["b"], "outputs": ["c"]},
  {"name": "r", "op": "relu", "inputs": ["c"], "outputs": ["y"]}' "$X"
expect_fail "a cycle names its nodes" 2 "cycle\.json:[0-9]+: the graph has a cycle through 3 nodes: (a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c)" \
    "$FUSEENG" check "$T/cycle.json"

model selfloop '{"name": "a", "op": "add", "inputs": ["x", "a"], "outputs": ["a"]}' "$X" '"a"'
expect_fail "a self loop" 2 "cycle through 1 node: a -> a" "$FUSEENG" check "$T/selfloop.json"

model bcast '{"name": "s", "op": "add", "inputs": ["x", "w"], "outputs": ["y"]}' \
    "$X, \"w\": {\"shape\": [3], \"dtype\": \"f32\", \"kind\": \"weight\"}"
expect_fail "broadcast mismatch" 2 "node 's' \(add\): operands \[4,8\] and \[3\] do not broadcast" \
    "$FUSEENG" check "$T/bcast.json"

model inner '{"name": "mm", "op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]}' \
    "$X, \"w\": {\"shape\": [7, 5], \"dtype\": \"f32\", \"kind\": \"weight\"}"
expect_fail "matmul inner-dimension mismatch" 2 "node 'mm' \(matmul\): inner dimensions differ: a is \[4,8\] \(K=8\), b is \[7,5\] \(K=7\)" \
    "$FUSEENG" check "$T/inner.json"

model dtype "$RELU" '"x": {"shape": [4, 8], "dtype": "float16", "kind": "input"}'
expect_fail "unknown dtype" 2 "tensor 'x' has unknown dtype 'float16'; expected one of f32 f16 bf16" \
    "$FUSEENG" check "$T/dtype.json"

model kind "$RELU" '"x": {"shape": [4, 8], "dtype": "f32", "kind": "param"}'
expect_fail "unknown tensor kind" 2 "tensor 'x' has kind 'param'; expected \"input\", \"weight\" or \"activation\"" \
    "$FUSEENG" check "$T/kind.json"

model unkdim "$RELU" '"x": {"shape": ["B", 8], "dtype": "f32", "kind": "input"}'
expect_fail "unknown dim" 2 "tensor 'x' uses dim 'B', which \"dims\" does not declare" \
    "$FUSEENG" check "$T/unkdim.json"

model zerodim "$RELU" '"x": {"shape": ["B", 8], "dtype": "f32", "kind": "input"}' '"y"' '"B": 0'
expect_fail "non-positive dim" 2 "dim 'B' is 0; dims must be positive integers" "$FUSEENG" check "$T/zerodim.json"

model negsize "$RELU" '"x": {"shape": [4, -8], "dtype": "f32", "kind": "input"}'
expect_fail "non-positive size" 2 "tensor 'x' dim 1 is -8; sizes must be positive" "$FUSEENG" check "$T/negsize.json"

expect_fail "--dim names an unknown dim" 2 "--dim Q: the model has no dim 'Q'" \
    "$FUSEENG" check "$T/good.json" --dim Q=4
expect_fail "--dim needs NAME=V" 2 "--dim Q: expected NAME=V" "$FUSEENG" check "$T/good.json" --dim Q

model numel "$RELU" '"x": {"shape": [4294967296, 4294967296], "dtype": "f32", "kind": "input"}'
expect_fail "element count overflows 64 bits" 2 "tensor 'x' has more elements than fit in 64 bits" \
    "$FUSEENG" check "$T/numel.json"

model bytes "$RELU" '"x": {"shape": [4294967296, 1073741823, 2], "dtype": "i64", "kind": "input"}'
expect_fail "byte size overflows 64 bits" 2 "tensor 'x' \([0-9]+ elements of i64\) has a byte size that overflows 64 bits" \
    "$FUSEENG" check "$T/bytes.json"

model inferoverflow '{"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}' \
    '"a": {"shape": [4294967296, 2], "dtype": "f32", "kind": "input"}, "b": {"shape": [2, 4294967296], "dtype": "f32", "kind": "input"}'
expect_fail "an inferred size that overflows" 2 "tensor 'y' has more elements than fit in 64 bits" \
    "$FUSEENG" check "$T/inferoverflow.json"

model noproducer "$RELU" "$X" '"y", "x"'
expect_fail "an output nothing produces" 2 "output 'x' is not produced by any node \(it is a graph input or weight\)" \
    "$FUSEENG" check "$T/noproducer.json"
model nooutput "$RELU" "$X" '"nowhere"'
expect_fail "an output that does not exist" 2 "output 'nowhere' is not produced by any node" \
    "$FUSEENG" check "$T/nooutput.json"

model emptygraph "" "$X"
expect_fail "an empty graph" 2 "emptygraph\.json: the model has no nodes" "$FUSEENG" check "$T/emptygraph.json"

model declared "$RELU" "$X, \"y\": {\"shape\": [8, 4], \"dtype\": \"f32\"}"
expect_fail "declared shape disagrees with inference" 2 "node 'r' \(relu\) output 'y' is declared \[8,4\] f32 but the op produces \[4,8\] f32" \
    "$FUSEENG" check "$T/declared.json"

model customout '{"name": "c", "op": "custom", "inputs": ["x"], "outputs": ["y"], "attrs": {"pattern": "opaque"}}' "$X"
expect_fail "custom outputs must be declared" 2 "node 'c' \(custom\) output 'y' must be declared" \
    "$FUSEENG" check "$T/customout.json"

model arity '{"name": "r", "op": "relu", "inputs": ["x", "x"], "outputs": ["y"]}' "$X"
expect_fail "wrong number of inputs" 2 "node 'r' \(relu\) takes 1 input; it has 2" "$FUSEENG" check "$T/arity.json"

model rank9 "$RELU" '"x": {"shape": [1,1,1,1,1,1,1,1,1], "dtype": "f32", "kind": "input"}'
expect_fail "too many dims" 2 "rank9\.json:3:[0-9]+: tensor 'x' has more than 8 dims; at most 8 are supported" "$FUSEENG" check "$T/rank9.json"

# Deep nesting: 100000 nested arrays inside an attribute.
{ printf '{"format": "fuseeng.model/1", "tensors": {%s}, "nodes": [{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"deep": ' "$X"
  i=0; while [ $i -lt 2000 ]; do printf '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['; i=$((i + 1)); done
  printf '}}]}'; } >"$T/deep.json"
expect_fail "deep nesting" 2 "deep\.json:1:[0-9]+: malformed JSON: maximum nesting depth \(512\) reached" "$FUSEENG" check "$T/deep.json"

# A 10 MB node name.
{ printf '{"format": "fuseeng.model/1", "tensors": {%s}, "nodes": [{"name": "' "$X"
  head -c 10485760 /dev/zero | tr '\0' 'n'
  printf '", "op": "relu", "inputs": ["x"], "outputs": ["y"]}], "outputs": ["y"]}'; } >"$T/huge.json"
expect_fail "a huge string" 2 "huge\.json:1: a node name is 10485760 bytes long; names are limited to 4096 bytes" \
    "$FUSEENG" check "$T/huge.json"

printf '%s\n{"extra": 1}' "$(cat "$T/good.json")" >"$T/trailing.json"
expect_fail "data after the model" 2 "trailing\.json:6:1: unexpected data after the model object" \
    "$FUSEENG" check "$T/trailing.json"

expect_fail "a missing file" 2 "nosuch\.json: cannot open the model: No such file" "$FUSEENG" check "$T/nosuch.json"
expect_fail "a directory" 2 "must be a regular file, and this is a directory" "$FUSEENG" check "$T"

model attrdup '{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"a": 1, "a": 2}}' "$X"
expect_fail "duplicate attribute keys" 2 "attrdup\.json:4: node 'r' has attribute 'a' twice" "$FUSEENG" check "$T/attrdup.json"

# Attributes are typed by the op registry: a wrong type is an error, not the default.
model attrtype '{"name": "r", "op": "sum", "inputs": ["x"], "outputs": ["y"], "attrs": {"keepdim": "true"}}' "$X"
expect_fail "a wrongly typed attribute" 2 "attrtype\.json:4: node 'r' \(sum\): attrs\.keepdim is \"true\"; expected true or false" \
    "$FUSEENG" check "$T/attrtype.json"
model attrchoice '{"name": "r", "op": "gelu", "inputs": ["x"], "outputs": ["y"], "attrs": {"approximate": "banana"}}' "$X"
expect_fail "an attribute outside its choices" 2 "attrs\.approximate is \"banana\"; expected one of none\|tanh" \
    "$FUSEENG" check "$T/attrchoice.json"
model attrsym '{"name": "r", "op": "pad", "inputs": ["x"], "outputs": ["y"], "attrs": {"pads": [-9223372036854775807, 0]}}' "$X"
expect_fail "a list item in the range reserved for dim names" 2 "node 'r' attrs\.pads item 0 is -9223372036854775807, too negative" \
    "$FUSEENG" check "$T/attrsym.json"
model attrdim '{"name": "r", "op": "reshape", "inputs": ["x"], "outputs": ["y"], "attrs": {"shape": ["Q", -1]}}' "$X"
expect_fail "a reshape naming an undeclared dim" 2 "node 'r' \(reshape\): attrs\.shape uses dim 'Q', which \"dims\" does not declare" \
    "$FUSEENG" check "$T/attrdim.json"

# Unknown fields are errors (a misspelt "attrs" would drop what it holds).
model nodefield '{"name": "r", "op": "relu", "inputs": ["x"], "outputs": ["y"], "atrs": {}}' "$X"
expect_fail "an unknown node field, with a suggestion" 2 "nodefield\.json:4:[0-9]+: node 'r' has an unknown field \"atrs\" \(did you mean \"attrs\"\?\)" \
    "$FUSEENG" check "$T/nodefield.json"
model tensorfield "$RELU" '"x": {"shape": [4, 8], "dtype": "f32", "knid": "input"}'
expect_fail "an unknown tensor field" 2 "tensor 'x' has an unknown field \"knid\" \(did you mean \"kind\"\?\)" \
    "$FUSEENG" check "$T/tensorfield.json"
model emptyname '{"name": "", "op": "relu", "inputs": ["x"], "outputs": ["y"]}' "$X"
expect_fail "an empty node name" 2 "emptyname\.json:4: a node name is empty" "$FUSEENG" check "$T/emptyname.json"

# Counts that overflow 64 bits only in FLOPs or in the model's totals.
model flopover '{"name": "m", "op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}' \
    '"a": {"shape": [2147483648, 2147483648], "dtype": "i8", "kind": "input"}, "b": {"shape": [2147483648, 2], "dtype": "i8", "kind": "input"}'
expect_fail "FLOPs that overflow 64 bits" 2 "node 'm' \(matmul\): its FLOP or byte count, or the model's total up to it, overflows 64 bits" \
    "$FUSEENG" check "$T/flopover.json"
model totalover '{"name": "r", "op": "relu", "inputs": ["x1"], "outputs": ["y"]}' \
    '"x1": {"shape": [576460752303423488], "dtype": "i64", "kind": "input"}, "x2": {"shape": [576460752303423488], "dtype": "i64", "kind": "input"}'
expect_fail "tensor bytes that overflow 64 bits in total" 2 "tensor 'x2': the model's tensors add up to more bytes than fit in 64 bits" \
    "$FUSEENG" check "$T/totalover.json"
model padover '{"name": "r", "op": "pad", "inputs": ["x"], "outputs": ["y"], "attrs": {"pads": [9223372036854775807, 9223372036854775807]}}' "$X"
expect_fail "a pad that overflows 64 bits" 2 "node 'r' \(pad\): padded size of axis 1 overflows 64 bits" "$FUSEENG" check "$T/padover.json"
model crop '{"name": "r", "op": "pad", "inputs": ["x"], "outputs": ["y"], "attrs": {"pads": [-2, -1]}}' "$X"
expect_ok "negative pads crop, as torch's constant padding does" 'y +\[4,5\]|ok' "$FUSEENG" check "$T/crop.json"
model cropall '{"name": "r", "op": "pad", "inputs": ["x"], "outputs": ["y"], "attrs": {"pads": [-4, -4]}}' "$X"
expect_fail "a crop that leaves nothing" 2 "crops axis 1 of \[4,8\] to 0 elements" "$FUSEENG" check "$T/cropall.json"

# A cycle through long names: the message is cut, never overruns.
n1=$(head -c 1000 /dev/zero | tr '\0' 'a'); n2=$(head -c 1000 /dev/zero | tr '\0' 'b')
model longcycle "{\"name\": \"$n1\", \"op\": \"relu\", \"inputs\": [\"t2\"], \"outputs\": [\"t1\"]}, {\"name\": \"$n2\", \"op\": \"relu\", \"inputs\": [\"t1\"], \"outputs\": [\"t2\"]}" "$X" '"t1"'
expect_fail "a cycle through 1000-byte names" 2 "the graph has a cycle through 2 nodes: ([ab]){60}\.\.\. -> [ab]{60}\.\.\. -> [ab]{60}\.\.\." \
    "$FUSEENG" check "$T/longcycle.json"

# A report that cannot be written is a failure.
if [ -w /dev/full ]; then
    "$FUSEENG" check "$T/good.json" >/dev/full 2>"$T/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q 'writing to standard output failed' "$T/err"; then ok "a full disk on stdout"
    else not_ok "a full disk on stdout" "exit $rc" "$(cat "$T/err")"; fi
else
    skip "a full disk on stdout" "no /dev/full"
fi

expect_fail "usage: no model" 2 "missing MODEL" "$FUSEENG" check
expect_fail "usage: unknown option" 2 "unknown option '--frob'" "$FUSEENG" check "$T/good.json" --frob
expect_fail "usage: unknown command" 2 "unknown command 'frob'" "$FUSEENG" frob
expect_fail "bench_kernels: unknown workload" 2 "no workload 'chian6' \\(swiglu" \
    "$BUILD/bench/bench_kernels" 0.2 chian6

finish
