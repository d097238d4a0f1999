# embedding.sh: the public API from C (examples/embed.c, linked against
# libfuseeng.so), from LuaJIT's FFI (examples/ffi_demo.lua), and the complete
# C programs of docs/c-api.md (its ```c blocks), compiled and run here; and
# libfuseeng.so exporting every call of the public headers.
. tests/lib.sh

expect_ok "examples/embed: plan, swap, combine, buffer policy" \
    'fuse_all .* kernels' "$BUILD/examples/embed" examples/models/llama2_7b_layer.json
expect_ok "examples/embed: simulate, write and read back a plan file" \
    'plan file read back: [0-9]+ groups, same simulated time' \
    "$BUILD/examples/embed" examples/models/llama2_7b_layer.json
expect_ok "examples/embed: execute a plan against the unfused reference" \
    'executed at S=8 on this CPU: outputs equal the unfused reference' \
    "$BUILD/examples/embed" examples/models/llama2_7b_layer.json
expect_fail "examples/embed: a bad model fails with exit 2" 2 'nosuch.json: cannot open' \
    "$BUILD/examples/embed" "$T/nosuch.json"

# Every ```c block of docs/c-api.md is a complete program: compile it against
# the public header and libfuseeng.so as a user would, and run it.
san=
[ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined -fno-omit-frame-pointer"
lib=$(cd "$BUILD" && pwd)
awk -v dir="$T" '/^```c$/ { n++; f = dir "/doc" n ".c"; next }
                 /^```/ { f = ""; next }
                 f { print > f }' docs/c-api.md
found=0
for src in "$T"/doc*.c; do
    [ -f "$src" ] || continue
    found=$((found + 1))
    # shellcheck disable=SC2086
    if cc -std=c11 -Wall -Wextra -Werror $san -Icore/include -o "${src%.c}" "$src" \
        -L"$lib" -lfuseeng -Wl,-rpath,"$lib" 2>"$T/cc.err"; then
        expect_ok "docs/c-api.md: program $found compiles and runs" '^executed: ok$' "${src%.c}"
    else
        not_ok "docs/c-api.md: program $found compiles" "$(head -c 600 "$T/cc.err")"
    fi
done
[ "$found" -gt 0 ] && ok "docs/c-api.md has $found complete C program(s)" ||
    not_ok "docs/c-api.md has no \`\`\`c program"

# libfuseeng.so forwards each call by name (core/shim keeps the lists): it
# exports every call the public headers' API blocks declare.
sed -n '/FE_API_BEGIN/,/FE_API_END/p' core/include/fuseeng.h core/include/fuseeng_cli.h |
    grep -o 'fe_[a-z_0-9]*(' | tr -d '(' | sort -u >"$T/declared"
nm -D --defined-only "$BUILD/libfuseeng.so" | awk '$2 == "T" { print $3 }' | sort -u >"$T/exported"
missing=$(comm -23 "$T/declared" "$T/exported" | tr '\n' ' ')
if [ -s "$T/declared" ] && [ -z "$missing" ]; then
    ok "libfuseeng.so exports every call of fuseeng.h and fuseeng_cli.h"
else
    not_ok "libfuseeng.so exports every call of fuseeng.h and fuseeng_cli.h" "missing: $missing"
fi

if [ "${SANITIZE:-}" = 1 ]; then
    skip "LuaJIT FFI drives libfuseeng.so" "LuaJIT cannot load a sanitizer-instrumented library"
elif ! command -v luajit >/dev/null 2>&1; then
    skip "LuaJIT FFI drives libfuseeng.so" "luajit is not installed"
else
    expect_ok "LuaJIT FFI drives libfuseeng.so (the headers' blocks through ffi.cdef)" '^ok$' \
        luajit examples/ffi_demo.lua . "$BUILD/libfuseeng.so"
    expect_ok "LuaJIT FFI simulates a plan (fe_engine_simulate, fe_report_figures)" \
        '^gcu_tlf on gcu: .* kernels \(\+[0-9]+ extern\), unfused' luajit examples/ffi_demo.lua . "$BUILD/libfuseeng.so"
fi
finish
