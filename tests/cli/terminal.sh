# terminal.sh: the habits of the terminal (issue 37): "did you mean" for a
# mistyped policy, op, param, machine or command (the one edit distance,
# fe_closest); `fuseeng machines` lists every shipped machine; the man page
# names every command; the bash completion completes commands, options,
# policies and machines. (make install putting them in place, and the
# pkg-config file's run path: install.sh; sample outputs: docs.sh.)
. tests/lib.sh
G=examples/models/gpt2_block.json
expect_fail "did you mean: a policy" 2 "policy 'gcu_tl' not found \\(did you mean 'gcu_tlf'\\?\\)" \
    "$FUSEENG" run "$G" --policy gcu_tl
expect_fail "did you mean: an op (fuseeng ops)" 2 "no op 'rms_nrom' \\(did you mean 'rms_norm'\\?\\)" \
    "$FUSEENG" ops rms_nrom
sed 's/"op": "gelu"/"op": "geul"/' "$G" >"$T/typo.json"
expect_fail "did you mean: an op in a model" 2 "unknown op 'geul' \\(did you mean 'gelu'\\?\\)" \
    "$FUSEENG" check "$T/typo.json"
expect_fail "did you mean: a param" 2 "has no param 'margn_us' \\(did you mean 'margin_us'\\?\\)" \
    "$FUSEENG" run "$G" --policy gcu_tlf --param margn_us=1
expect_fail "did you mean: a machine" 2 "machine 'gcu_bgi' not found \\(did you mean 'gcu_big'\\?\\)" \
    "$FUSEENG" run "$G" --policy gcu_tlf --machine gcu_bgi
expect_fail "did you mean: a command" 2 "unknown command 'rnu' \\(did you mean 'run'\\?\\)" "$FUSEENG" rnu
expect_fail "did you mean: nothing when nothing is close" 2 "unknown command 'zzzzzz'\\. Try" "$FUSEENG" zzzzzz
cat >"$T/pat.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "typo", driver = "patterns", patterns = { "sliu -> mul" },
                   decide = function() return true, "yes" end }
EOF
expect_fail "did you mean: an op in a pattern (Lua, the same distance)" 2 "unknown op 'sliu' \\(did you mean 'silu'\\?\\)" \
    "$FUSEENG" run "$G" --policy "$T/pat.lua"

# fuseeng machines: one line per file in lua/machines, each with its description
"$FUSEENG" machines >"$T/m" 2>"$T/err"
want=$(ls lua/machines/*.lua | sed 's#.*/##; s/\.lua$//' | sort | tr '\n' ' ')
got=$(awk '{ print $1 }' "$T/m" | sort | tr '\n' ' ')
if [ "$want" = "$got" ] && grep -q '^gcu  *.*L2' "$T/m"; then ok "fuseeng machines lists the shipped machines ($got)"
else not_ok "fuseeng machines lists the shipped machines" "want: $want" "got: $got" "$(head -c 300 "$T/err")"; fi

# the man page: renders, and names every command --help lists
cmds=$("$FUSEENG" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
missing=
for c in $cmds; do grep -q "^\\.B $c\\b" docs/fuseeng.1 || missing="$missing $c"; done
if [ -z "$missing" ] && [ -n "$cmds" ]; then ok "the man page names every command ($(echo $cmds | wc -w))"
else not_ok "the man page names every command" "missing:$missing"; fi
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z docs/fuseeng.1 2>"$T/err"
    [ ! -s "$T/err" ] && ok "the man page renders without warnings" ||
        not_ok "the man page renders without warnings" "$(head -5 "$T/err")"
else skip "the man page renders without warnings" "no groff"; fi

# the bash completion, as bash calls it
complete_words() {   # complete_words WORD... : COMPREPLY for the last word
    bash -c '. scripts/fuseeng.bash-completion
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fuseeng; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$@" 2>&1
}
if command -v bash >/dev/null 2>&1; then
    r=$(complete_words "$FUSEENG" ma | tr '\n' ' ')
    [ "$r" = "machines " ] && ok "completion: a command" || not_ok "completion: a command" "got: $r"
    r=$(complete_words "$FUSEENG" run m.json --policy gcu_t | tr '\n' ' ')
    [ "$r" = "gcu_tlf " ] && ok "completion: a policy after --policy" || not_ok "completion: a policy after --policy" "got: $r"
    r=$(complete_words "$FUSEENG" run m.json --machine gcu_ | tr '\n' ' ')
    [ "$r" = "gcu_big " ] && ok "completion: a machine after --machine" || not_ok "completion: a machine after --machine" "got: $r"
    r=$(complete_words "$FUSEENG" bench --bu | tr '\n' ' ')
    [ "$r" = "--budget " ] && ok "completion: a command's option, from its help" || not_ok "completion: a command's option, from its help" "got: $r"
else
    for c in "a command" "a policy after --policy" "a machine after --machine" "a command's option, from its help"; do
        skip "completion: $c" "no bash"
    done
fi
finish
