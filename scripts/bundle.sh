#!/bin/sh
# bundle.sh BINARY DIR: a relocatable copy of fuseeng for a machine with no
# package registry (a GPU node): DIR/bin/fuseeng (a wrapper), the binary,
# every shared library it needs except the C library's own (ldd's list,
# GLPK and its SuiteSparse and GMP libraries among them, plus OpenBLAS,
# which the engine opens at run time), the Lua files, the
# policies and the example models. Any x86-64 Linux with glibc at least as
# new as this machine's runs it: build the binary with `make PORTABLE=1`
# so that it needs no particular CPU. CUDA is not bundled: the GPU node's
# driver, NVRTC and cuBLAS are found at run time (docs/cuda.md).
set -eu
bin=$1 out=$2
[ -x "$bin" ] || { echo "bundle.sh: $bin is not an executable (make PORTABLE=1 first)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$bin" "$out/bin/fuseeng.bin"
# the C library's own stay: they must match the kernel's loader
ldd "$bin" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*) ;;
        *) cp -L "$lib" "$out/lib/" ;;
    esac
done
blas=$(ls /usr/lib/*/openblas-openmp/libopenblas.so.0 2>/dev/null | head -n 1 || true)
[ -n "$blas" ] && cp -L "$blas" "$out/lib/"
cp -R "$root/lua" "$root/policies" "$out/"
mkdir -p "$out/examples" && cp -R "$root/examples/models" "$out/examples/"
cat >"$out/bin/fuseeng" <<'SH'
#!/bin/sh
# fuseeng from a bundle (scripts/bundle.sh): its own libraries first.
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/fuseeng.bin" "$@"
SH
chmod +x "$out/bin/fuseeng"
echo "bundle.sh: $out ($(du -sh "$out" | cut -f1)); run $out/bin/fuseeng"
