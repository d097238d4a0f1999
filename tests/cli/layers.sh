# layers.sh: the source tree keeps its architecture (tests/tools/layers.lua).
#
# First the checker must be able to fail: each kind of violation is planted
# in a small synthetic tree of its own (a Makefile with LAYERS over two lines
# and a SEES_ line, a few folders, their objects compiled into its
# build/obj), and the checker must report exactly that rule, naming the
# place. Then the real tree, with the build's objects ($BUILD/obj): one TAP
# line per rule of the checker.
. tests/lib.sh
BUILD=${BUILD:-build}
CC=${CC:-cc}
CHECK=$(pwd)/tests/tools/layers.lua

put() {   # put FILE: write stdin to FILE under the planted tree $T/p
    mkdir -p "$(dirname "$T/p/$1")"
    cat >"$T/p/$1"
}

compile() {   # compile FOLDER/NAME.c ...: objects into $T/p/build/obj
    for src in "$@"; do
        mkdir -p "$T/p/build/obj/$(dirname "$src")"
        (cd "$T/p" && $CC -c -Icore/ir -Ikernels/vec -Ikernels/gpu -Icore/include \
            -o "build/obj/${src%.c}.o" "$src") >>"$T/cc.log" 2>&1 || return 1
    done
}

# The synthetic tree, which passes every rule: core/ir at the bottom,
# kernels/vec and kernels/gpu above it (gpu sees core/ir only), core/api on
# top, the public header, the command, a test script and a Lua file.
mkdir -p "$T/p"
put Makefile <<'EOF'
# The layers, bottom to top, over two lines as the real Makefile may write them.
LAYERS := core/ir kernels/vec \
          kernels/gpu core/api
SEES_kernels/gpu := core/ir
EOF
put docs/notes.md <<'EOF'
notes
EOF
put core/ir/graph.h <<'EOF'
/* graph.h: the IR, read by kernels/vec/vec.c (docs/notes.md). Names that
 * are no files of the tree: model.json, plan.json, FILE.lua, foo.c,
 * kernels/*.c, onnx.pb-c.c, build/gen/x.c, /usr/include/lua5.4/lua.h. */
int ir_nodes(void);
EOF
put core/ir/graph.c <<'EOF'
/* graph.c: the IR (graph.h); fe_nodes is public (fuseeng.h). */
#include "graph.h"
int ir_nodes(void) { return 1; }
int fe_nodes(void) { return ir_nodes(); }
EOF
put kernels/vec/vtypes.h <<'EOF'
typedef float vec_f32;
EOF
put kernels/vec/vec.h <<'EOF'
#include "vtypes.h"
int vec_add(void);
EOF
put kernels/vec/vec.c <<'EOF'
#include "graph.h"
#include "vec.h"
int vec_add(void) { return ir_nodes(); }
EOF
put kernels/gpu/gpu.h <<'EOF'
/* gpu.h: the GPU's calls, beside vec/vec.h (a path from a folder above). */
int gpu_run(void);
EOF
put kernels/gpu/gpu.c <<'EOF'
#include "graph.h"
#include "gpu.h"
int gpu_run(void) { return ir_nodes() + 1; }
EOF
put core/include/fuseeng.h <<'EOF'
/* fuseeng.h: the public header (core/api/api.c and core/ir/graph.c define
 * it; core/shim/shim.c forwards it). */
int fe_run(void);
int fe_nodes(void);
EOF
put core/api/api.c <<'EOF'
#include "fuseeng.h"
#include "gpu.h"
#include "vec.h"
int fe_run(void) { return gpu_run() + vec_add(); }
EOF
put core/cli/main.c <<'EOF'
#include "fuseeng.h"
int main(void) { return fe_run() + fe_nodes(); }
EOF
put core/shim/shim.c <<'EOF'
#include "fuseeng.h"
int fe_run(void) { return 0; }
int fe_nodes(void) { return 0; }
EOF
put tests/t.sh <<'EOF'
# t.sh: runs core/cli/main.c's command (and t.sh is this file).
echo "# not a comment: gone.sh" '# nor this: gone.lua'
EOF
put lua/x.lua <<'EOF'
-- x.lua: see docs/notes.md
local s = "-- not a comment: gone.lua"
--[[ a long comment naming tests/t.sh ]]
return s
EOF
if compile core/ir/graph.c kernels/vec/vec.c kernels/gpu/gpu.c core/api/api.c core/cli/main.c \
    core/shim/shim.c; then
    ok "the synthetic tree compiles"
else
    not_ok "the synthetic tree compiles" "$(tail -n 5 "$T/cc.log")"
fi
lua5.4 "$CHECK" "$T/p" "$T/p/build/obj" >"$T/check" 2>&1
if [ "$(grep -c '^ok ' "$T/check")" -eq 8 ] && grep -q '^1\.\.8$' "$T/check"; then
    ok "the synthetic tree passes every rule"
else
    not_ok "the synthetic tree passes every rule" "$(sed 's/^/  /' "$T/check")"
fi
# The drawing of the clean tree: every module, no arrow drawn as refused.
lua5.4 "$CHECK" "$T/p" "$T/p/build/obj" --dot "$T/clean.dot" >/dev/null 2>&1
if grep -q '"core/ir/graph" \[label' "$T/clean.dot" && grep -q ' -> ' "$T/clean.dot" &&
    ! grep -q 'color=red' "$T/clean.dot"; then
    ok "the clean tree's drawing has no arrow up and no circle"
else
    not_ok "the clean tree's drawing has no arrow up and no circle" "$(sed 's/^/  /' "$T/clean.dot")"
fi
cp -R "$T/p" "$T/clean"

# expect_rule NAME RULE REGEX...: the checker exits 1 on the planted tree,
# RULE is the one rule that fails, and each REGEX matches one of its
# problem lines. The tree is then restored.
expect_rule() {
    name=$1 rule=$2; shift 2
    lua5.4 "$CHECK" "$T/p" "$T/p/build/obj" >"$T/check" 2>&1
    rc=$?
    why=""
    [ "$rc" -eq 1 ] || why="exit $rc, expected 1"
    grep -q "^not ok $rule - " "$T/check" || why="${why:-rule $rule did not fail}"
    [ "$(grep -c '^not ok ' "$T/check")" -eq 1 ] || why="${why:-another rule failed too}"
    for re in "$@"; do
        grep -Eq -- "^# $re" "$T/check" || why="${why:-no problem line matches /$re/}"
    done
    if [ -z "$why" ]; then ok "$name"; else not_ok "$name" "$why" "$(sed 's/^/  /' "$T/check")"; fi
    rm -rf "$T/p"
    cp -R "$T/clean" "$T/p"
}

# Rule 1: the Makefile's layer list.
sed -i 's|^SEES_kernels/gpu := core/ir$|&\nSEES_kernels/vec := core/ir kernels/gpu|' "$T/p/Makefile"
expect_rule "a SEES_ line naming a layer above fails" 1 \
    'Makefile: SEES_kernels/vec names kernels/gpu, which is not a layer listed before kernels/vec'
printf 'int stray(void) { return 0; }\n' >"$T/p/kernels/stray.c"
expect_rule "a source in no layer fails" 1 'kernels/stray.c is in no layer'

# Rules 2 to 5: includes.
printf '#include "vtypes.h"\n' >>"$T/p/core/ir/graph.c"
lua5.4 "$CHECK" "$T/p" "$T/p/build/obj" --dot "$T/up.dot" >/dev/null 2>&1
if grep -q '"core/ir/graph" -> "kernels/vec/vtypes" \[color=red\]' "$T/up.dot"; then
    ok "the drawing shows an upward include in red"
else
    not_ok "the drawing shows an upward include in red" "$(grep -- '->' "$T/up.dot" | head)"
fi
expect_rule "an upward include fails" 2 \
    'core/ir/graph.c:5: includes "vtypes.h" from kernels/vec, a layer above core/ir'
sed -i '1i #include "vec.h"' "$T/p/kernels/gpu/gpu.c"
expect_rule "an include of a layer SEES_ leaves out fails" 2 \
    'kernels/gpu/gpu.c:1: includes "vec.h" from kernels/vec, a folder kernels/gpu does not see'
sed -i '1i #include "gpu.h"' "$T/p/core/cli/main.c"
expect_rule "the command including a layer's header fails" 3 \
    'core/cli/main.c:1: includes "gpu.h" from kernels/gpu'
sed -i '1i #include "fuseeng.h"' "$T/p/kernels/vec/vec.c"
expect_rule "a layer including the public header fails" 4 \
    'kernels/vec/vec.c:1: includes "fuseeng.h", a public header'
printf '#include "vec.h"\nstruct vec_state { int n; };\n' >"$T/p/kernels/vec/vec_impl.h"
sed -i '1i #include "vec_impl.h"' "$T/p/kernels/vec/vec.c"
lua5.4 "$CHECK" "$T/p" "$T/p/build/obj" --dot "$T/circle.dot" >/dev/null 2>&1
if grep -q '"kernels/vec/vec" \[label="vec", color=red\]' "$T/circle.dot" &&
    grep -q '"kernels/vec/vec_impl" \[label="vec_impl", style=dashed, color=red\]' "$T/circle.dot"; then
    ok "the drawing shows every member of a circle in red"
else
    not_ok "the drawing shows every member of a circle in red" "$(grep 'kernels/vec/' "$T/circle.dot")"
fi
expect_rule "a circle through a header alone fails" 5 \
    'these include each other in a circle: kernels/vec/vec, kernels/vec/vec_impl \(a header alone\)'

# Rule 6: calls and data references, which no include shows (each caller
# declares what it uses itself).
printf 'int vec_add(void);\nint ir_up(void) { return vec_add(); }\n' >>"$T/p/core/ir/graph.c"
compile core/ir/graph.c
expect_rule "an upward call through a local prototype fails" 6 \
    'core/ir/graph.o references vec_add, defined in kernels/vec/vec.o: core/ir does not see'
printf 'int vec_count = 3;\n' >>"$T/p/kernels/vec/vec.c"
printf 'extern int vec_count;\nint ir_count(void) { return vec_count; }\n' >>"$T/p/core/ir/graph.c"
compile core/ir/graph.c kernels/vec/vec.c
expect_rule "an upward data reference fails" 6 \
    'core/ir/graph.o references vec_count, defined in kernels/vec/vec.o'
printf 'int vec_add(void);\nint gpu_vec(void) { return vec_add(); }\n' >>"$T/p/kernels/gpu/gpu.c"
compile kernels/gpu/gpu.c
expect_rule "a call into a layer SEES_ leaves out fails" 6 \
    'kernels/gpu/gpu.o references vec_add, defined in kernels/vec/vec.o: kernels/gpu does not see'
printf 'int gpu_run(void);\nint cli_gpu(void) { return gpu_run(); }\n' >>"$T/p/core/cli/main.c"
compile core/cli/main.c
expect_rule "the command calling past the public API fails" 6 \
    'core/cli/main.o references gpu_run, defined in kernels/gpu/gpu.o: core/cli uses the public API'
printf 'int ir_nodes(void);\nint shim_ir(void) { return ir_nodes(); }\n' >>"$T/p/core/shim/shim.c"
compile core/shim/shim.c
expect_rule "the shim calling into the engine fails" 6 \
    'core/shim/shim.o references ir_nodes, defined in core/ir/graph.o: core/shim reaches the engine'

# Rule 7: stale paths in comments, in C, shell and Lua.
sed -i '1s|/\* graph.h:|/* graph.h (was core/ir/ir.h):|' "$T/p/core/ir/graph.h"
printf '# see docs/gone.md\n' >>"$T/p/tests/t.sh"
printf -- '-- moved to lua/gone/dsl.lua\n' >>"$T/p/lua/x.lua"
expect_rule "stale paths in comments fail" 7 'core/ir/graph.h:1: names core/ir/ir.h,' \
    'tests/t.sh:3: names docs/gone.md,' 'lua/x.lua:5: names lua/gone/dsl.lua,'

# The real tree and the build's objects, and its drawing.
lua5.4 "$CHECK" . "$BUILD/obj" --dot "$T/tree.dot" >"$T/real" 2>&1
if grep -q 'color=red' "$T/tree.dot"; then
    not_ok "the tree's drawing has no arrow up and no circle" "$(grep 'color=red' "$T/tree.dot")"
else
    ok "the tree's drawing has no arrow up and no circle"
fi
if ! grep -q '^1\.\.[0-9]' "$T/real"; then
    not_ok "the checker runs on the tree" "$(sed 's/^/  /' "$T/real")"
fi
while IFS= read -r line; do   # its TAP lines, numbered on from ours
    case $line in
        "ok "*"# SKIP "*) rest=${line#ok * - }; skip "${rest%% \# SKIP *}" "${rest##* \# SKIP }" ;;
        "ok "*) ok "${line#ok * - }" ;;
        "not ok "*) not_ok "${line#not ok * - }" ;;
        "# "*) echo "$line" ;;
    esac
done <"$T/real"
finish
