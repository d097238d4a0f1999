# blas_limit.sh: under a small address-space limit (`ulimit -v`) commands
# run, and a matmul_blas run is refused with the numbers (exit 1) instead
# of hanging: OpenBLAS, which retries its 128 MiB buffers forever when they
# do not fit, is not linked but opened at its first use (kernels/ops/blas.c).
. tests/lib.sh

if ldd "$FUSEENG" 2>/dev/null | grep -q openblas; then
    not_ok "the command does not link OpenBLAS" "$(ldd "$FUSEENG" | grep openblas)"
else
    ok "the command does not link OpenBLAS"
fi

cat >"$T/mm.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "m",
 "tensors": {"a": {"shape": [64, 48], "dtype": "f32", "kind": "input"},
             "b": {"shape": [48, 32], "dtype": "f32", "kind": "weight"}},
 "nodes": [{"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
printf '{"format": "fuseeng.plan/1", "model": "m", "groups": [{"id": 0, "nodes": ["mm"], "kernel": "matmul_blas"}]}\n' \
    >"$T/mm.plan.json"

# Without a limit OpenBLAS loads and computes what the reference does.
expect_ok "matmul_blas runs without a limit" '^ +y .* ok$' \
    timeout 60 "$FUSEENG" run "$T/mm.json" --plan "$T/mm.plan.json" --execute --budget 0.01

# limited KIB CMD...: CMD under `ulimit -v KIB`, stopped after 30 s.
limited() {
    kib=$1; shift
    (ulimit -v "$kib" && exec timeout 30 "$@")
}

if [ "$SANITIZE" = 1 ]; then
    # ASan maps terabytes of shadow memory at start-up
    skip "commands under ulimit -v 350000" "ASan cannot run under an address-space limit"
    skip "matmul_blas under ulimit -v 350000" "ASan cannot run under an address-space limit"
    finish
    exit
fi

for m in gpt2_block llama2_7b_layer; do
    expect_ok "check $m under ulimit -v 350000" ': ok$' \
        limited 350000 "$FUSEENG" check examples/models/$m.json
done
expect_ok "run --execute (no BLAS) under ulimit -v 350000" '^ +y .* ok$' \
    limited 350000 "$FUSEENG" run "$T/mm.json" --policy fuse_all --execute --budget 0.01
expect_fail "matmul_blas under ulimit -v 350000: refused, exit 1, not a hang" 1 \
    "group 0: node 'mm' \\(matmul\\): matmul_blas: OpenBLAS needs about [0-9]+ MiB of address space .* limit \\(ulimit -v 350000\\) leaves [0-9]+ MiB.*raise the limit" \
    limited 350000 "$FUSEENG" run "$T/mm.json" --plan "$T/mm.plan.json" --execute --budget 0.01
finish
