# embedding.sh: the public API from C (examples/embed.c, linked against
# libfuseeng.so) and from LuaJIT's FFI (examples/ffi_demo.lua).
. tests/lib.sh

expect_ok "examples/embed: plan, swap, combine, buffer policy" \
    'fuse_all .* kernels' "$BUILD/examples/embed" examples/models/llama2_7b_layer.json
expect_fail "examples/embed: a bad model fails with exit 2" 2 'nosuch.json: cannot open' \
    "$BUILD/examples/embed" "$T/nosuch.json"

if [ "${SANITIZE:-}" = 1 ]; then
    skip "LuaJIT FFI drives libfuseeng.so" "LuaJIT cannot load a sanitizer-instrumented library"
elif ! command -v luajit >/dev/null 2>&1; then
    skip "LuaJIT FFI drives libfuseeng.so" "luajit is not installed"
else
    expect_ok "LuaJIT FFI drives libfuseeng.so (fuseeng.h block through ffi.cdef)" '^ok$' \
        luajit examples/ffi_demo.lua . "$BUILD/libfuseeng.so"
fi
finish
