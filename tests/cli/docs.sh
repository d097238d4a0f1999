# docs.sh: every code sample in README.md and docs/*.md runs, so the docs
# cannot rot. One TAP line per fenced block, named FILE:LINE.
#
# A block's info string says how it is checked:
#
#   ```sh            shell commands, run by /bin/sh -e with $BUILD first in
#                    PATH and $FUSEENG set, outside the make that runs the
#                    tests (MAKEFLAGS, SANITIZE, PORTABLE unset), in a scratch directory
#                    that links every top-level entry of the repo: paths read
#                    as from the repo root, and files a sample writes stay in
#                    the scratch directory (one per document, so a later
#                    sample may read what an earlier one wrote). Must exit 0
#                    within 60 s;
#                    keep samples to a few seconds (small --dim values).
#   ```make          make commands (the README's two): each line `make T` is
#                    checked with `make -n T` (the target exists and resolves);
#                    not run, since `make test` runs this very test.
#   ```lua           a policy file: fuseeng run MODEL --policy FILE must exit
#                    0, MODEL being examples/models/llama2_7b_layer.json, or
#                    the arguments of a first line `-- run: ARGS` (then
#                    fuseeng run ARGS --policy FILE).
#                    A first line `-- script`: a script, fuseeng script FILE
#                    (it checks itself with assert). A first line `-- machine`:
#                    a machine file, used by fuseeng run MODEL --policy
#                    no_fusion --machine FILE.
#                    A first line `-- luajit`: a LuaJIT FFI program, run as
#                    `luajit FILE . LIBRARY` (arg[1] the repo root, arg[2]
#                    $BUILD/libfuseeng.so, as examples/ffi_demo.lua takes
#                    them); skipped under SANITIZE=1 or without luajit.
#                    A block whose first or second line is `-- NAME.lua: ...`
#                    is also saved as NAME.lua in the scratch directory, so a
#                    later ```sh sample can use it by that name.
#   ```json model    fuseeng check FILE
#   ```json plan     fuseeng sim MODEL --plan FILE, MODEL being the example
#                    model (examples/models/*.json) whose name the plan gives
#   ```json profile  fuseeng run examples/bench/swiglu.json --policy
#                    profile_lookup --profile FILE
#   ```json KIND     any other KIND (bench, trace, ...): valid JSON (an LPeg
#                    grammar run by fuseeng script), no reader being exposed
#   ```c             a complete program: compiled against $BUILD/libfuseeng.so
#                    with -Icore/include, run in the scratch directory, exit 0
#   ```text output   the output of the ```sh block before it: every line but
#                    those that are "..." (elided) must be a line of that
#                    block's stdout, in the same order (trailing blanks
#                    ignored); for samples whose figures do not depend on the
#                    host (simulated, counted), so that they cannot go stale
#   ```text          output or a fragment: not run, only counted (measured
#                    figures, which differ from host to host)
#   ```console       (the same)
#
# Any other info string, or none, fails: nothing slips through unchecked.
# The last lines say how many blocks of each kind ran.
. tests/lib.sh
REPO=$(pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ABS_BUILD=$BUILD ;; *) ABS_BUILD=$REPO/$BUILD ;; esac
FUSEENG_ABS=$ABS_BUILD/fuseeng
DEFAULT_MODEL=examples/models/llama2_7b_layer.json

# Blocks of one markdown file: $T/blocks/N.txt holds the body, and the
# manifest has one line "N LINE INFO" per block (LINE of the opening fence).
extract() {
    rm -rf "$T/blocks"
    mkdir -p "$T/blocks"
    awk -v dir="$T/blocks" '
        !inblock && /^[ \t]*```/ {
            inblock = 1; n++; info = $0
            sub(/^[ \t]*```/, "", info); sub(/[ \t]+$/, "", info)
            if (info == "") info = "(none)"
            print n, NR, info > (dir "/manifest")
            out = dir "/" n ".txt"; printf "" > out
            next
        }
        inblock && /^[ \t]*```[ \t]*$/ { inblock = 0; close(out); next }
        inblock { print > out }
        END { if (inblock) print n, "unclosed" > (dir "/unclosed") }
    ' "$1"
    touch "$T/blocks/manifest"
}

# A fresh scratch directory that looks like the repo root.
scratch() {
    rm -rf "$T/root"
    mkdir -p "$T/root"
    for e in "$REPO"/* "$REPO"/.[!.]*; do
        [ -e "$e" ] && ln -s "$e" "$T/root/$(basename "$e")"
    done
}

# run_in_scratch CMD...: run CMD in the scratch directory, output in $T/out,
# $T/err; outside the make that runs the tests, as a user's shell would be.
run_in_scratch() {
    (cd "$T/root" && PATH="$ABS_BUILD:$PATH" FUSEENG="$FUSEENG_ABS" \
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u PORTABLE -u PORTABLE_ARCH timeout 60 "$@" </dev/null) \
        >"$T/out" 2>"$T/err"
}

# The example model whose "name" is NAME, or nothing.
model_named() {
    grep -l "\"name\": *\"$1\"" "$REPO"/examples/models/*.json 2>/dev/null | head -n 1
}

json_check() {   # json_check FILE: is FILE one valid JSON value?
    {
        cat <<'LUA'
local lpeg = require "lpeg"
local P, R, S, V = lpeg.P, lpeg.R, lpeg.S, lpeg.V
local ws = S" \t\r\n"^0
local json = P{ "doc",
  doc = ws * V"value" * ws * -1,
  value = V"object" + V"array" + V"string" + V"number" + P"true" + P"false" + P"null",
  object = "{" * ws * (V"member" * (ws * "," * ws * V"member")^0)^-1 * ws * "}",
  member = V"string" * ws * ":" * ws * V"value",
  array = "[" * ws * (V"value" * (ws * "," * ws * V"value")^0)^-1 * ws * "]",
  string = '"' * (P"\\" * 1 + (1 - S'"\\'))^0 * '"',
  number = P"-"^-1 * (P"0" + R"19" * R"09"^0) * ("." * R"09"^1)^-1
           * (S"eE" * S"+-"^-1 * R"09"^1)^-1,
}
local text = [==========[
LUA
        cat "$1"
        echo ']==========]'
        echo 'assert(json:match(text), "not valid JSON")'
    } >"$T/json_check.lua"
    run_in_scratch "$FUSEENG_ABS" script "$T/json_check.lua"
}

# check_block NAME INFO FILE: run one block; sets kind (for the counts), and
# skip_why when the block cannot be checked on this machine.
check_block() {
    name=$1 info=$2 body=$3
    kind=$info
    case $info in
    sh)
        cp "$body" "$T/sample.sh"
        run_in_scratch /bin/sh -e "$T/sample.sh"
        rc=$?
        cp "$T/out" "$T/last_sh_out"
        return $rc ;;
    'text output')
        if [ ! -s "$T/last_sh_out" ]; then
            echo "no \`\`\`sh sample before it printed anything" >"$T/err"
            false
        else
            cp "$T/last_sh_out" "$T/out"
            awk 'NR == FNR { sub(/[ \t]+$/, ""); out[++n] = $0; next }
                 { sub(/[ \t]+$/, "") }
                 $0 == "..." { next }
                 { while (at < n && out[++at] != $0) ; if (out[at] != $0) { print "not in the output (or out of order): " $0; bad = 1; exit } }
                 END { exit bad }' "$T/last_sh_out" "$body" >"$T/err"
        fi ;;
    make)
        rc=0
        while read -r cmd target rest; do
            case $cmd in '' | '#'*) continue ;; esac
            if [ "$cmd" != make ] || [ -n "$rest" ]; then
                echo "not a 'make TARGET' line: $cmd $target $rest" >"$T/err"; rc=1; break
            fi
            (cd "$REPO" && make -n "$target" </dev/null) >"$T/out" 2>"$T/err" || { rc=1; break; }
        done <"$body"
        [ "$rc" -eq 0 ] ;;
    lua)
        first=$(head -n 1 "$body")
        named=$(head -n 2 "$body" | sed -n 's/^-- \([A-Za-z0-9_]*\.lua\):.*/\1/p' | head -n 1)
        [ -n "$named" ] && cp "$body" "$T/root/$named"
        case $first in
        '-- script'*)
            kind="lua script"
            cp "$body" "$T/script.lua"
            run_in_scratch "$FUSEENG_ABS" script "$T/script.lua" ;;
        '-- luajit'*)
            kind="lua luajit"
            cp "$body" "$T/ffi.lua"
            if [ "${SANITIZE:-}" = 1 ] || ! command -v luajit >/dev/null 2>&1; then
                skip_why="LuaJIT cannot run here (not installed, or a sanitizer build)"
                return 0
            fi
            run_in_scratch luajit "$T/ffi.lua" . "$ABS_BUILD/libfuseeng.so" ;;
        '-- machine'*)
            kind="lua machine"
            cp "$body" "$T/machine.lua"
            run_in_scratch "$FUSEENG_ABS" run "$DEFAULT_MODEL" --policy no_fusion --machine "$T/machine.lua" ;;
        '-- run: '*)
            kind="lua policy"
            cp "$body" "$T/policy.lua"
            # shellcheck disable=SC2086
            run_in_scratch "$FUSEENG_ABS" run ${first#-- run: } --policy "$T/policy.lua" ;;
        *)
            kind="lua policy"
            cp "$body" "$T/policy.lua"
            run_in_scratch "$FUSEENG_ABS" run "$DEFAULT_MODEL" --policy "$T/policy.lua" ;;
        esac ;;
    'json model')
        cp "$body" "$T/model.json"
        run_in_scratch "$FUSEENG_ABS" check "$T/model.json" ;;
    'json plan')
        cp "$body" "$T/plan.json"
        mname=$(sed -n 's/.*"model": *"\([^"]*\)".*/\1/p' "$body" | head -n 1)
        model=$(model_named "$mname")
        if [ -z "$model" ]; then
            echo "no model named '$mname' in examples/models" >"$T/err"
            false
        else
            run_in_scratch "$FUSEENG_ABS" sim "$model" --plan "$T/plan.json"
        fi ;;
    'json profile')
        cp "$body" "$T/profile.json"
        run_in_scratch "$FUSEENG_ABS" run examples/bench/swiglu.json --policy profile_lookup \
            --profile "$T/profile.json" ;;
    'json '*)
        kind="json (valid)"
        json_check "$body" ;;
    c)
        san=""
        [ "${SANITIZE:-}" = 1 ] && san="-fsanitize=address,undefined"
        cp "$body" "$T/sample.c"
        # shellcheck disable=SC2086
        if cc -std=c11 -Wall -Wextra -Werror $san -I"$REPO/core/include" -o "$T/sample" "$T/sample.c" \
              -L"$ABS_BUILD" -lfuseeng -Wl,-rpath,"$ABS_BUILD" >"$T/out" 2>"$T/err"; then
            run_in_scratch "$T/sample"
        else
            false
        fi ;;
    text | console)
        kind="$info (not run)"
        true ;;
    *)
        kind="unknown"
        echo "info string '$info' says nothing about how to check this block; see tests/cli/docs.sh" >"$T/err"
        false ;;
    esac
}

: >"$T/kinds"
for doc in README.md docs/*.md; do
    [ -f "$doc" ] || continue
    extract "$doc"
    scratch
    rm -f "$T/last_sh_out"
    if [ -f "$T/blocks/unclosed" ]; then
        not_ok "$doc: a fence is never closed" "$(cat "$T/blocks/unclosed")"
    fi
    while read -r i line info; do
        skip_why=""
        check_block "$doc:$line" "$info" "$T/blocks/$i.txt"
        rc=$?
        if [ "$rc" -eq 0 ] && [ -n "$skip_why" ]; then
            skip "$doc:$line ($info)" "$skip_why"
        elif [ "$rc" -eq 0 ]; then
            ok "$doc:$line ($info)"
        else
            not_ok "$doc:$line ($info)" "exit $rc" "stderr: $(head -c 800 "$T/err")" \
                   "stdout: $(tail -c 400 "$T/out")"
        fi
        echo "$kind" >>"$T/kinds"
    done <"$T/blocks/manifest"
done
echo "# samples by kind:"
sort "$T/kinds" | uniq -c | sed 's/^/# /'
finish
