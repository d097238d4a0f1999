# valgrind.sh: the quick set of tests/valgrind/run.sh (one case per command,
# an execution, error paths, C tests) under memcheck on the portable build;
# `make valgrind` runs the full set. It builds what it runs in the portable
# tree (the library and the command, about 30 s the first time), never the
# sanitizer tree: ASan's and valgrind's allocators cannot both replace malloc,
# and memcheck sees what ASan does not (reads of uninitialised memory), so
# `make test SANITIZE=1` runs it on the plain portable build as well.
if ! command -v valgrind >/dev/null 2>&1; then
    echo "ok 1 - valgrind # SKIP valgrind is not installed (scripts/deps.sh installs it)"
    echo "1..1"
    exit 0
fi
ARCH=${PORTABLE_ARCH:-x86-64}
PB=build/portable
[ "$ARCH" = x86-64 ] || PB=build/portable-$ARCH
# C tests that run in seconds under memcheck and cover the kernels
VG_TESTS="test_kern_ops test_kern_convert"
targets="$PB/fuseeng"
for t in $VG_TESTS; do targets="$targets $PB/tests/$t"; done
log=$(mktemp)
# shellcheck disable=SC2086
if ! MAKEFLAGS= make -s -j2 PORTABLE=1 PORTABLE_ARCH="$ARCH" SANITIZE= $targets >"$log" 2>&1; then
    echo "not ok 1 - make PORTABLE=1 $targets"
    sed 's/^/# /' "$log" | tail -n 30
    echo "1..1"
    rm -f "$log"
    exit 1
fi
rm -f "$log"
BUILD=$PB VG_TESTS=$VG_TESTS exec sh tests/valgrind/run.sh quick
