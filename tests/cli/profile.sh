# profile.sh: profile files (InfiniCore's plain form) and profile_lookup.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json
cat >"$T/infinicore.json" <<'JSON'
{"single": {"silu": 0.5, "mul": 0.4, "add": 0.3, "rms_norm": 0.6},
 "fused": {"silu+mul": 0.5, "add+rms_norm": 0.85, "mul+add": 0.1}}
JSON
expect_ok "separate > fused x (1 + margin): fuse" \
    'fuse +\[gate_silu, swiglu\] +separate 0\.9000 ms > fused 0\.5000 ms x \(1 \+ 0\.10\) \(compat key\)' \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/infinicore.json" --param margin=0.1 --explain
expect_ok "separate <= fused x (1 + margin): do not fuse" \
    'no +\[attn_residual, post_attention_layernorm\] +separate 0\.9000 ms <= fused 0\.8500 ms x \(1 \+ 0\.10\)' \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/infinicore.json" --param margin=0.1 --explain
expect_ok "missing data follows profile_fallback" \
    "no single time for op 'softmax'; profile_fallback = no_fuse" \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/infinicore.json" --param profile_fallback=no_fuse --explain
expect_ok "no profile: the fallback, said so" 'no profile loaded \(run with --profile FILE\); profile_fallback = fuse' \
    "$FUSEENG" run "$M" --policy profile_lookup --explain
expect_ok "InfiniCore's two stages combined" 'policy +all\(static_rules,profile_lookup\)' \
    "$FUSEENG" run "$M" --policy static_rules --policy profile_lookup --combine all --profile "$T/infinicore.json"
# run --stats holds the profile's verdicts against the simulator's: gcu
# fuses silu+mul and add+rms_norm (one pass over memory instead of two),
# so a profile that times them fused slower is counted as disagreeing,
# with both numbers.
expect_ok "--stats: the simulator agrees with the profile where it says fusing pays" \
    '^profile    the simulator agrees on 3 of 3 profiled groups \(100%\) that fusing is faster or not$' \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/infinicore.json" --stats
cat >"$T/slow.json" <<'JSON'
{"single": {"silu": 0.5, "mul": 0.4, "add": 0.3, "rms_norm": 0.6},
 "fused": {"silu+mul": 5.0, "add+rms_norm": 0.85, "mul+add": 0.1}}
JSON
expect_ok "--stats: a profiled group the simulator disagrees with, both numbers" \
    '^           differs: silu\+mul: measured 0\.18x, simulated [0-9.]+x$' \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/slow.json" --stats
if grep -q "^profile    the simulator agrees on 2 of 3 profiled groups (67%)" "$T/out"; then
    ok "--stats: the disagreement counted"
else not_ok "--stats: the disagreement counted" "$(grep -A2 '^profile' "$T/out")"; fi
printf '{"single": {"relu": "fast"}}' >"$T/bad.json"
expect_fail "a profile entry that is not a time" 2 'bad\.json: single\["relu"\] must be a time in ms' \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/bad.json"
printf '{"single": {"relu": 1}, "single": {}}' >"$T/dup.json"
expect_fail "a malformed profile" 2 'dup\.json:1:[0-9]+: duplicate object key' \
    "$FUSEENG" run "$M" --policy profile_lookup --profile "$T/dup.json"
expect_fail "a bad profile_fallback" 2 'param profile_fallback must be "fuse" or "no_fuse"' \
    "$FUSEENG" run "$M" --policy profile_lookup --param profile_fallback=maybe
finish
