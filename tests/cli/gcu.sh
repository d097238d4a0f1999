# gcu.sh: the seed 004 policies (gcu_afe, gcu_tlf, memory_aware) on the
# simulated GCU: they plan every model; on the LLaMA-2 layer a longer sequence
# leaves AFE nothing to fuse and moves TLF from groups that fit the L2
# (S=128, 512) to tiled ones (every fused group and split at S=512, 2048 and
# 8192 is checked), TLF is never slower than AFE or unfused, the machine
# file changes the plan, reasons carry the numbers, and bad params stop the
# run. Every row of docs/policy-guide.md's GCU policies (seed 004) table is checked
# against what `fuseeng run` prints.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

# sim_us ARGS...: the plan's simulated time in microseconds, then the unfused
# one (the first and third "sim_us" of the plan file: simulated, unfused).
sim_us() {
    "$FUSEENG" run "$@" --json | sed -n 's/.*"sim_us": \([0-9.]*\).*/\1/p' | sed -n '1p;3p' | tr '\n' ' '
}
# le NAME A B: A <= B (floats).
le() {
    if awk -v a="$2" -v b="$3" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0) }'; then
        ok "$1"
    else
        not_ok "$1" "expected $2 <= $3"
    fi
}
# split_of NAME 'node list' SPLIT ARGS...: the plan gives that group that split.
split_of() {
    name=$1 nodes=$2 k=$3; shift 3
    expect_ok "$name" "\"nodes\": \[$nodes\], [^}]*\"split\": $k[,}]" "$FUSEENG" run "$@" --json
}

for p in gcu_afe gcu_tlf memory_aware; do
    for m in examples/models/*.json "$SHARED"/models/*.json; do
        [ -f "$m" ] || continue
        expect_ok "$p plans $(basename "$m")" '^kernels +[0-9]+ -> [0-9]+' "$FUSEENG" run "$m" --policy "$p"
    done
done

# AFE: at S=2048 the only candidates that fit the 16 MiB L2 are RoPE's
# slice+neg pairs, and a slice is a view (free alone, an alias fused), so
# fusing them gains nothing; at S=8192 every candidate of real work waits
# for TLF, and the view pairs gain nothing.
expect_ok "gcu_afe at S=2048 fuses nothing" \
    '^kernels +40 -> 19 \(\+9 extern; 12 view groups launch nothing; 0 fused groups' "$FUSEENG" run "$M" --policy gcu_afe
expect_ok "gcu_afe at S=8192 fuses nothing" '^kernels +40 -> 19 \(\+9 extern; 12 view groups launch nothing; 0 fused groups' \
    "$FUSEENG" run "$M" --policy gcu_afe --dim S=8192
expect_ok "... every candidate of real work waits for TLF" '^reasons +38  waiting for TLF( \.\.\.)?$' \
    "$FUSEENG" run "$M" --policy gcu_afe --dim S=8192
expect_ok "gcu_afe's reason shows working set, L2, both times and the benefit" \
    '^  no +\[q_x2, q_neg_x2\] +no benefit: working set 8\.0 MiB <= L2 16\.0 MiB; apart 194\.8 us \(2 kernels\), fused 194\.8 us, benefit 0\.0 us <= margin 0\.0 us$' \
    "$FUSEENG" run "$M" --policy gcu_afe --explain
expect_ok "gcu_afe's refusal shows the working set" \
    '^  no +\[gate_silu, swiglu\] +waiting for TLF: working set 129\.0 MiB > L2 16\.0 MiB$' \
    "$FUSEENG" run "$M" --policy gcu_afe --explain

# TLF: seed 004's two regimes. A fused group whose memory peak fits the
# 16 MiB L2 runs whole (AFE); a larger one is tiled, split = ceil(peak /
# L2) (TLF). Views (reshape, transpose, slice) are free and fuse for
# nothing, so the fused groups hold real work only. At S=512 two of the
# four fused groups fit (RoPE, residual + norm) and two are tiled; at
# S=2048 none fits, all five are tiled, and the attention block is two
# groups (as one it would need 64 tiles and lose to the two apart); at
# S=8192 the same five groups are tiled harder: ~4x the tiles where
# activations grow with S (SwiGLU 129 MiB -> 9 tiles, 516 MiB -> 33), 16x
# for the S x S scores. S=128 is all AFE: every fused group fits.
expect_ok "gcu_tlf at S=128: 6 kernels, nothing tiled" '^kernels +40 -> 6 \(\+8 extern; 8 view groups launch nothing; 4 fused groups holding 22 nodes; largest 14 nodes\)$' \
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=128
expect_ok "gcu_tlf at S=512: 6 kernels, 2 tiled" '^kernels +40 -> 6 \(\+8 extern; 8 view groups launch nothing; 4 fused groups holding 22 nodes; largest 14 nodes; 2 tiled\)' \
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=512
expect_ok "gcu_tlf at S=2048: 7 kernels, 5 tiled" '^kernels +40 -> 7 \(\+8 extern; 8 view groups launch nothing; 5 fused groups holding 22 nodes; largest 14 nodes; 5 tiled\)' \
    "$FUSEENG" run "$M" --policy gcu_tlf
expect_ok "gcu_tlf at S=8192: 7 kernels, 5 tiled" '^kernels +40 -> 7 \(\+8 extern; 8 view groups launch nothing; 5 fused groups holding 22 nodes; largest 14 nodes; 5 tiled\)' \
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=8192
ROPE='"q_cos", "q_x1", [^]]*, "k_rope"'
ATTN='"scores", "scores_scaled", "scores_masked", "probs"'
# splits S 'GROUP=SPLIT;...': the gcu_tlf plan at S has exactly these fused
# groups (node lists as the plan file writes them) with these splits.
splits() {
    S=$1
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=$S --json >"$T/splits.json"
    fused=$(grep -c '"nodes": \["[^"]*", ' "$T/splits.json")
    expected=0
    rest=$2
    while [ -n "$rest" ]; do
        item=${rest%%;*}; rest=${rest#"$item"}; rest=${rest#;}
        nodes=${item%=*} k=${item##*=}
        expected=$((expected + 1))
        if grep -Eq "\"nodes\": \[$nodes\], [^}]*\"split\": $k[,}]" "$T/splits.json"; then
            ok "gcu_tlf at S=$S: [$(echo "$nodes" | cut -c1-40)] split $k"
        else
            not_ok "gcu_tlf at S=$S: [$nodes] split $k" "$(grep -E "\"nodes\": \[$nodes\]" "$T/splits.json" | cut -c1-300)"
        fi
    done
    if [ "$fused" -eq "$expected" ]; then
        ok "gcu_tlf at S=$S: $fused fused groups, no others"
    else
        not_ok "gcu_tlf at S=$S: $fused fused groups, expected $expected"
    fi
}
splits 512 "$ROPE=1;$ATTN=3;\"attn_residual\", \"post_attention_layernorm\"=1;\"gate_silu\", \"swiglu\"=3"
splits 2048 "$ROPE=4;\"scores\", \"scores_scaled\"=32;\"scores_masked\", \"probs\"=33;\"attn_residual\", \"post_attention_layernorm\"=3;\"gate_silu\", \"swiglu\"=9"
splits 8192 "$ROPE=13;\"scores\", \"scores_scaled\"=512;\"scores_masked\", \"probs\"=520;\"attn_residual\", \"post_attention_layernorm\"=12;\"gate_silu\", \"swiglu\"=33"
expect_ok "at S=512 the attention block fits as one tiled group" '^  fuse +\[scores, scores_scaled, scores_masked, probs\] +tiled x3: ' \
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=512 --explain
expect_ok "at S=512 a group that fits runs whole" '^  fuse +\[attn_residual, post_attention_layernorm\] +fits L2: working set 12\.0 MiB <= L2 16\.0 MiB' \
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=512 --explain
# At S=2048 the four-op attention block could tile (x64) but loses (the
# refusal is checked below); at S=8192 no tile of it fits at all: the
# operands every tile reads whole (k of q k^T, 64 MiB) alone exceed the L2.
expect_ok "at S=8192 no tile of the attention block fits" \
    '^  no +\[scores, scores_scaled, scores_masked, probs\] +no tile fits: working set 8\.1 GiB > L2 16\.0 MiB, tile 72\.0 MiB > L2 at x520 \(untiled operands fill the L2\)$' \
    "$FUSEENG" run "$M" --policy gcu_tlf --dim S=8192 --explain
expect_ok "gcu_tlf's reason shows the split, sizes, both times and the benefit" \
    '^  fuse +\[gate_silu, swiglu\] +tiled x9: working set 129\.0 MiB > L2 16\.0 MiB, tile 14\.3 MiB; apart 2\.508 ms \(2 kernels\), fused 1\.606 ms, benefit 902\.8 us$' \
    "$FUSEENG" run "$M" --policy gcu_tlf --explain
expect_ok "gcu_tlf refuses a matmul whose weight fills the L2" \
    '^  no +\[gate_proj, gate_silu\] +no tile fits: working set 145\.0 MiB > L2 16\.0 MiB, tile 91\.9 MiB > L2 at x10 \(untiled operands fill the L2\)$' \
    "$FUSEENG" run "$M" --policy gcu_tlf --explain
expect_ok "gcu_tlf refuses a tiling that loses to the two groups apart" \
    '^  no +\[scores, scores_scaled, scores_masked, probs\] +no benefit tiled x64: .*apart 10\.806 ms \(2 kernels\), fused 11\.239 ms, benefit -433\.6 us <= margin 0\.0 us$' \
    "$FUSEENG" run "$M" --policy gcu_tlf --explain
split_of "--param split=16 forces the split" '"gate_silu", "swiglu"' 16 "$M" --policy gcu_tlf --param split=16

# TLF is never slower than AFE, nor than unfused, on any model.
for m in examples/models/*.json "$SHARED"/models/*.json; do
    [ -f "$m" ] || continue
    set -- $(sim_us "$m" --policy gcu_afe) $(sim_us "$m" --policy gcu_tlf)
    le "gcu_tlf <= gcu_afe on $(basename "$m") ($3 vs $1 us)" "$3" "$1"
    le "gcu_tlf <= unfused on $(basename "$m") ($3 vs $4 us)" "$3" "$4"
done
for d in 2048 8192; do
    set -- $(sim_us "$M" --policy gcu_afe --dim S=$d) $(sim_us "$M" --policy gcu_tlf --dim S=$d)
    le "gcu_tlf <= gcu_afe on LLaMA at S=$d ($3 vs $1 us)" "$3" "$1"
done
# row POLICY S KERNELS TIME_MS SPEEDUP TILED [OVERFLOWING]: one row of the
# that table, as `fuseeng run MODEL --policy POLICY --dim S=S` prints it.
row() {
    name="policy-guide row: $1 at S=$2: $3 kernels, $4 ms, $5x, $6 tiled${7:+, $7 overflowing}"
    "$FUSEENG" run "$M" --policy "$1" --dim S="$2" >"$T/row.txt"
    if grep -Eq "^kernels +19 +$3 " "$T/row.txt" &&
       grep -Eq "^time +[0-9.]+ ms +$(echo "$4" | sed 's/\./\\./') ms $(echo "$5" | sed 's/\./\\./')x faster$" "$T/row.txt" &&
       grep -Eq "^tiled groups +0 +$6$" "$T/row.txt" &&
       grep -Eq "^overflowing groups +0 +${7:-0}$" "$T/row.txt"; then
        ok "$name"
    else
        not_ok "$name" "$(grep -E '^(kernels|time|tiled|overflowing)' "$T/row.txt")"
    fi
}
row no_fusion 512 19 10.949 1.00 0
row gcu_afe 512 9 10.133 1.08 0
row gcu_tlf 512 6 8.879 1.23 2
row memory_aware 512 7 9.019 1.21 1 4
row no_fusion 2048 19 47.832 1.00 0
row gcu_afe 2048 19 47.832 1.00 0
row gcu_tlf 2048 7 33.281 1.44 5
row memory_aware 2048 8 33.963 1.41 3 4
row no_fusion 8192 19 468.851 1.00 0
row gcu_afe 8192 19 468.851 1.00 0
row gcu_tlf 8192 7 282.956 1.66 5
row memory_aware 8192 8 285.806 1.64 3 4

# The machine decides: gcu_big's 50 MiB L2 holds what gcu's 16 MiB does not.
expect_ok "gcu_afe on gcu_big fuses 16 nodes" '^kernels +40 -> 9 \(\+9 extern; 8 view groups launch nothing; 2 fused groups holding 16 nodes' \
    "$FUSEENG" run "$M" --policy gcu_afe --machine gcu_big
expect_ok "gcu_tlf on gcu_big: 6 kernels" '^kernels +40 -> 6 \(\+6 extern' "$FUSEENG" run "$M" --policy gcu_tlf --machine gcu_big
split_of "gcu_tlf tiles the RoPE group x4 on gcu" '"q_cos", "q_x1", [^]]*' 4 "$M" --policy gcu_tlf
split_of "... and runs it whole on gcu_big" '"q_cos", "q_x1", [^]]*' 1 "$M" --policy gcu_tlf --machine gcu_big

# memory_aware: no L2 gate, so it fuses what gcu_tlf refuses, and says so.
expect_ok "memory_aware fuses a matmul over the L2, with the numbers" \
    '^  fuse +\[gate_proj, gate_silu\] +saves time: L3 0 B saved; apart 4\.134 ms \(2 kernels\), fused 4\.124 ms over L2 \(tile 145\.0 MiB\), benefit 10\.0 us$' \
    "$FUSEENG" run "$M" --policy memory_aware --explain
expect_ok "memory_aware's reason shows the bytes saved" \
    '^  fuse +\[q_cos, q_x1, q_x2, q_neg_x2, q_rot, q_rot_sin, q_rope\] +saves time: L3 8\.0 MiB saved; apart 614\.6 us \(2 kernels\), fused 530\.7 us tiled x4, benefit 83\.9 us$' \
    "$FUSEENG" run "$M" --policy memory_aware --explain
expect_ok "memory_aware at S=2048: 8 kernels" '^kernels +40 -> 8 \(\+3 extern' "$FUSEENG" run "$M" --policy memory_aware
expect_ok "a 20 ms margin stops every fusion" '^kernels +40 -> 19 \(\+9 extern; 12 view' \
    "$FUSEENG" run "$M" --policy memory_aware --param margin_us=20000
expect_ok "... and the reason names the margin" 'no benefit: .*benefit 5\.347 ms <= margin 20\.000 ms$' \
    "$FUSEENG" run "$M" --policy memory_aware --param margin_us=20000 --explain

# In a combination another policy may veto; gcu_tlf still prices exactly
# the two groups being merged (group.parts), not a stale record.
expect_ok "gcu_tlf in a combination prices the two groups merged" 'gcu_tlf: yes \(tiled x4: .*\(2 kernels\)' \
    "$FUSEENG" run "$M" --policy gcu_tlf --policy static_rules --combine all --explain

expect_fail "a margin that is not a number" 2 "param 'margin_us' of policy 'gcu_afe' is a number; 'lots' is not" \
    "$FUSEENG" run "$M" --policy gcu_afe --param margin_us=lots
expect_fail "a split that is not an integer" 2 "param 'split' of policy 'gcu_tlf' is an integer; '2\.5' is not" \
    "$FUSEENG" run "$M" --policy gcu_tlf --param split=2.5
expect_fail "a negative split" 2 "gcu_tlf\.lua:[0-9]+: param split must be 0 \(the seed's split\) to 16777216, not -1" \
    "$FUSEENG" run "$M" --policy gcu_tlf --param split=-1
expect_fail "a misspelt param" 2 "has no param 'spilt'" \
    "$FUSEENG" run "$M" --policy gcu_tlf --param spilt=4
finish
