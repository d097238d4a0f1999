#!/bin/sh
# cuda_nvrtc.sh: every generated kernel compiles with NVRTC itself, for the
# H100 / H200's sm_90, with the options fuseeng gives it (kernels/gpu/
# cuda.c), on a machine with a CUDA toolkit and no GPU: NVRTC needs no
# driver. tests/tools/nvrtc_check.c, built here, compiles each source
# that FUSEENG_CUDA_DUMP wrote for the models cuda_clang.sh plans, and
# reports ptxas's registers and spill bytes; a kernel that spills fails
# (the generators size register arrays so that none should). Skipped by
# name where no NVRTC can be opened.
. tests/lib.sh
ARCH=${NVRTC_ARCH:-sm_90}
POLICIES="fuse_all inductor_greedy no_fusion"

models() {
    for f in examples/models/*.json "${SHARED:-../shared}"/models/*.json tests/cuda/*.json; do
        [ -f "$f" ] && echo "$f"
    done
}

why=""
if ! ${CC:-cc} -std=c11 -O2 -o "$T/nvrtc_check" tests/tools/nvrtc_check.c -ldl >"$T/cc.log" 2>&1; then
    why="tests/tools/nvrtc_check.c does not build: $(head -c 200 "$T/cc.log")"
elif ! "$T/nvrtc_check" "$ARCH" >/dev/null 2>"$T/probe"; then
    why=$(head -c 200 "$T/probe")
fi
if [ -n "$why" ]; then
    for f in $(models); do
        skip "nvrtc: $(basename "$f" .json): every generated kernel compiles for $ARCH" "$why"
    done
    skip "nvrtc: no generated kernel spills" "$why"
    finish
    exit $?
fi

: >"$T/all"
for f in $(models); do
    b=$(basename "$f" .json)
    name="nvrtc: $b: every generated kernel compiles for $ARCH"
    for p in $POLICIES; do
        FUSEENG_CUDA_DUMP="$T/dump/$b" "$FUSEENG" run "$f" --policy "$p" --show-kernels --device cuda \
            >/dev/null 2>"$T/err" || break
    done
    if [ -s "$T/err" ]; then
        not_ok "$name" "--show-kernels --device cuda failed: $(head -c 400 "$T/err")"
        continue
    fi
    ls "$T/dump/$b"/*.cu >"$T/files" 2>/dev/null
    # shellcheck disable=SC2046
    if "$T/nvrtc_check" "$ARCH" $(cat "$T/files") >"$T/out" 2>&1; then
        ok "$name ($(wc -l <"$T/files") kernels)"
    else
        not_ok "$name" "$(grep -A12 '^error' "$T/out" | head -c 1500)"
    fi
    cat "$T/out" >>"$T/all"
done

spills=$(awk '$1 == "ok" && $5 > 0' "$T/all")
if [ -z "$spills" ]; then
    ok "nvrtc: no generated kernel spills ($(awk '$1 == "ok"' "$T/all" | sort -u | wc -l) compiled)"
else
    not_ok "nvrtc: no generated kernel spills" "$(echo "$spills" | head -5)" \
        "$(for f in $(echo "$spills" | awk '{print $2}' | head -3); do head -1 "$f"; done)"
fi

finish
