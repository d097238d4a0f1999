# show_kernels.sh: run --show-kernels, what this CPU executes for each group
# (core/exec/show.c, kernels/cpu/fused_show.c).
. tests/lib.sh
B=examples/bench
M=examples/models/llama2_7b_layer.json

# The host line says what this build and machine use: the vector width the
# binary was built for and the threads OpenMP gives it.
expect_ok "the host line" '^kernels on this CPU: vectors of (8 floats \(AVX2\)|16 floats \(AVX-512\)), 1 thread, L2 [0-9]+ KiB per core' \
    env OMP_NUM_THREADS=1 "$FUSEENG" run $B/chain6.json --dim T=256 --policy fuse_all --show-kernels
# The 6-op chain tanh(relu(x*a+b)*c)+x fused into one program: every op of
# it appears as a statement, the inputs by their tensor names.
missing=
for op in fma relu mul tanh add; do grep -Eq "= $op\(" "$T/out" || missing="$missing $op"; done
if [ -z "$missing" ] && grep -q '^group 0 \[' "$T/out" && grep -Eq '^ +in[0-9]+ +x f32' "$T/out" &&
    grep -Eq '^ +out0 ' "$T/out"; then
    ok "a fused group lists its inputs, its ops and its output"
else
    not_ok "a fused group lists its inputs, its ops and its output" "$(head -c 1500 "$T/out")"
fi
expect_ok "a matmul group names its GEMM and its epilogue program" 'epilogue on each output block of the matmul' \
    "$FUSEENG" run $M --dim S=16 --policy gcu_tlf --show-kernels
listed=$(grep -c '^group [0-9]' "$T/out")
planned=$("$FUSEENG" run $M --dim S=16 --policy gcu_tlf --json | grep -c '"nodes": \[')
[ "$listed" -gt 0 ] && [ "$listed" -eq "$planned" ] && ok "every group listed once ($listed)" ||
    not_ok "every group listed once" "listed $listed, planned $planned"
# A group of reshapes is its input's memory: no kernel, no copy.
grep -A1 '^group [0-9]* \[q_view\]' "$T/out" | grep -q "view: its output is its input's memory" &&
    ok "a reshape group is a view" || not_ok "a reshape group is a view" "$(grep -A1 'q_view' "$T/out")"
# RoPE's group reads a concat: the operands' program writes its halves,
# the next program reads it.
grep -A40 '^group [0-9]* \[q_cos' "$T/out" >"$T/rope"
grep -q '^  fused_rows: 2 programs in turn' "$T/rope" && grep -q 'q_rot f16: part from offset 64, row strides 128' "$T/rope" &&
    ok "a group reading a concat runs as programs writing its parts" ||
    not_ok "a group reading a concat runs as programs writing its parts" "$(head -20 "$T/rope")"
# A group no fused kernel takes whole runs in fused parts around what no
# program runs, and says why: hub_conflict's log_softmax down the columns
# (its column reductions fuse, as programs in turn). AUTO's guards may run
# a part, or the whole group, op by op instead where that measures faster
# (a sanitizer build ran one part so); the line says so and keeps the
# reason.
"$FUSEENG" run examples/models/hub_conflict.json --policy gcu_tlf --show-kernels >"$T/hub" 2>&1
grep -A1 "^group [0-9]* \[b5_centered" "$T/hub" >"$T/hub4"
grep -Eq "^  (fused_rows: 3 parts in turn, .*whole, it does not fuse because |per_op: .*not fused because (it measured slower fused than its ops one by one: .*whole, it does not fuse because )?)node 'b6_logp' \(log_softmax\): only a softmax over the last axis" "$T/hub4" &&
    ok "a group in fused parts says why the whole does not fuse" ||
    not_ok "a group in fused parts says why the whole does not fuse" "$(cat "$T/hub4")"
# At 256 x 256 no guard times it (under a million elements): the parts
# always, each listed with its members and how it runs.
"$FUSEENG" run examples/models/hub_conflict.json --dim M=256 --dim N=256 --policy gcu_tlf --show-kernels >"$T/hub256" 2>&1
grep -A40 "^group [0-9]* \[b5_centered" "$T/hub256" >"$T/parts"
grep -q "^  fused_rows: 3 parts in turn, 12 ops in 2 fused parts around the members no fused program runs (log_softmax), each on its own kernel as the unfused plan runs it; whole, it does not fuse because node 'b6_logp'" "$T/parts" &&
    grep -q '^    part 1 of 3 \[b5_centered, b6_sq, mix_5\]: fused_rows: 3 ops' "$T/parts" &&
    grep -q '^    part 2 of 3 \[b6_logp\]: reference kernel: log_softmax' "$T/parts" &&
    grep -q '^    part 3 of 3 \[b6_col_min, .*\]: fused_rows: 3 programs in turn' "$T/parts" &&
    ok "a group in parts lists them" || not_ok "a group in parts lists them" "$(head -12 "$T/parts")"
# (group 0's, one program, at 256 x 256, where no guard times it: at full
# size AUTO may measure it slower fused than op by op, as a sanitizer build
# on a busy 2-vCPU Xeon did, and then it lists no program)
grep -q 'out[0-9]  b2_col_mean f32: a column mean of the whole domain' "$T/hub256" &&
    ok "a column reduction is an accumulated output" || not_ok "a column reduction is an accumulated output" \
    "$(grep -A12 '^group 0' "$T/hub256")"
# A group of a concat of its inputs and a pad (opu_convnet's) has nothing
# to fuse: op by op, with why, and what each of its members runs as (a
# kernel of its own, picked as the unfused plan would).
"$FUSEENG" run examples/models/opu_convnet.json --policy hdfg_opu --show-kernels >"$T/opu" 2>&1
grep -A3 '^group [0-9]* \[branch_concat, conv7_pad\]' "$T/opu" >"$T/cat"
grep -Eq "^  per_op: 2 ops run one by one \(concat, pad\).* not fused because node 'branch_concat' is concat" "$T/cat" &&
    grep -q '^    branch_concat: reference kernel: concat' "$T/cat" &&
    ok "a group run op by op says why and lists its members' kernels" ||
    not_ok "a group run op by op says why and lists its members' kernels" "$(cat "$T/cat")"
# Views of a group's inputs are strided loads: the heads of v (reshape, then
# transpose) are read from v_proj with their strides, no copy between.
expect_ok "a view of an input shows as a strided load" \
    'in0 +v_proj f16 viewed as v_heads \(offset 0, row strides [0-9,]+\): walks the columns' \
    "$FUSEENG" run $M --dim S=16 --policy fuse_all --show-kernels

# Bad uses: one message, exit 2, nothing on stdout.
expect_fail "--show-kernels with --json" 2 "--show-kernels prints text" \
    "$FUSEENG" run $M --policy fuse_all --show-kernels --json
expect_fail "--show-kernels with a dispatch table" 2 "takes one plan" \
    "$FUSEENG" run $M --policy fuse_all --dim S=8,16 --show-kernels
no_kernel_model "$T/custom.json"
expect_fail "an op no kernel runs" 2 "custom\.json: cannot execute: node 'odd' is a custom op" \
    "$FUSEENG" run "$T/custom.json" --policy fuse_all --show-kernels
finish
