#!/bin/sh
# deps.sh: install what fuseeng needs to build and test, or say what is missing.
#
# Each requirement is a pkg-config module (or a command, a library directory
# or a Python module of /usr/bin/python3) paired with the Debian package
# that provides it. On Debian/Ubuntu the missing packages are installed
# with apt-get (as root, or through sudo); elsewhere the script prints them and
# fails, so the build stops with a message instead of a cryptic compiler error.
set -eu

# module-or-command  debian-package
REQS="
pkg:lua5.4            liblua5.4-dev
pkg:lua5.4-lpeg       lua-lpeg-dev
pkg:jansson           libjansson-dev
pkg:libcrypto         libssl-dev
pkg:cmocka            libcmocka-dev
dir:openblas-openmp   libopenblas-openmp-dev
hdr:oneapi/dnnl/dnnl.h libdnnl-dev
hdr:glpk.h            libglpk-dev
cmd:pkg-config        pkg-config
cmd:luajit            luajit
cmd:lua5.4            lua5.4
cmd:valgrind          valgrind
cmd:chromium          chromium
cmd:clang             clang
clangomp:omp.h        libomp-dev
pkg:libprotobuf-c     libprotobuf-c-dev
cmd:protoc-c          protobuf-c-compiler
py:onnx               python3-onnx
py:torch              python3-torch
py:torchvision        python3-torchvision
py:halide             python3-halide
"

missing=""
check() {
    kind=${1%%:*}; name=${1#*:}
    case $kind in
        pkg) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$name" ;;
        cmd) command -v "$name" >/dev/null 2>&1 ;;
        # OpenBLAS's OpenMP build (Debian keeps it under /usr/lib/ARCH/NAME)
        dir) ls -d /usr/lib/*/"$name"/pkgconfig >/dev/null 2>&1 ;;
        hdr) [ -f /usr/include/"$name" ] ;;   # no .pc file (oneDNN, GLPK)
        # clang's own OpenMP header (tests/cli/warnings.sh compiles with clang)
        clangomp) command -v clang >/dev/null 2>&1 &&
            echo "#include <$name>" | clang -fopenmp -x c -fsyntax-only - >/dev/null 2>&1 ;;
        # Debian's Python modules belong to /usr/bin/python3, whatever
        # python3 comes first on PATH (the import tests and scripts use it;
        # the ONNX schema the importer is generated from ships with python3-onnx)
        py) [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $name" >/dev/null 2>&1 ;;
    esac
}

set -- $REQS
while [ $# -ge 2 ]; do
    check "$1" || missing="$missing $2"
    shift 2
done

[ -z "$missing" ] && exit 0

if command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "deps: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >&2
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
    exit 0
fi

echo "deps: missing packages (Debian names):$missing" >&2
echo "deps: install their equivalents with your package manager, then re-run make" >&2
exit 1
