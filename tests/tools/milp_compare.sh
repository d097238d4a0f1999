#!/bin/sh
# milp_compare.sh: the two MILP solvers Debian offers, GLPK (the engine's,
# core/plan/milp.c) and CBC (milp_cbc.c, the same interface), on the covers
# the optimal plan solves: every example model and real export whole (groups
# of up to K nodes, 12 by default; hub_conflict at 8, as optimal.lua lowers
# it), and the first 200 windows of 64 nodes of the ~100k-node LLaMA model
# of the benchmarks. Run from the repository root after `make`; needs
# coinor-libcbc-dev, which the build does not (apt-get install
# coinor-libcbc-dev). docs/policy-guide.md ("Choosing the solver") has the
# figures of one run.
set -eu
BUILD=${BUILD:-build}
SHARED=${SHARED:-../shared}
K=${K:-12}
pkg-config --exists cbc || { echo "milp_compare.sh: install coinor-libcbc-dev first" >&2; exit 2; }
out=$BUILD/milp_compare
mkdir -p "$out"
inc=""
for d in core/ir kernels/vec kernels/ops kernels/group kernels/cpu kernels/gpu core/import core/plan \
         core/sim core/exec core/script core/api core/include; do
    inc="$inc -I$d"
done
cflags=$(pkg-config --cflags lua5.4 jansson)
libs="$(pkg-config --libs lua5.4 jansson libcrypto libprotobuf-c) $(cc -print-file-name=liblua5.4-lpeg.a) -ldnnl -lglpk -lm -ldl -lpthread"
# shellcheck disable=SC2086
cc -O2 -fopenmp $inc $cflags -o "$out/glpk" tests/tools/milp_compare.c "$BUILD/libfuseeng.a" $libs
# the library without its GLPK wrapper, and the CBC one in its place
cp "$BUILD/libfuseeng.a" "$out/nomilp.a"
ar d "$out/nomilp.a" milp.o
# shellcheck disable=SC2086
cc -O2 -fopenmp $inc $cflags $(pkg-config --cflags cbc) -o "$out/cbc" tests/tools/milp_compare.c \
    tests/tools/milp_cbc.c "$out/nomilp.a" $libs $(pkg-config --libs cbc)
[ -f "$BUILD/bench/llama_2500.json" ] ||
    lua5.4 examples/gen_models.lua --layers 2500 --compact --out "$BUILD/bench/llama_2500.json" >/dev/null
models=$(ls examples/models/*.json "$SHARED"/models/*.json 2>/dev/null | grep -v hub_conflict)
for s in glpk cbc; do
    # shellcheck disable=SC2086
    "$out/$s" "$K" 64 200 $models
    "$out/$s" 8 64 200 examples/models/hub_conflict.json
    "$out/$s" 12 64 200 "$BUILD/bench/llama_2500.json"
done
