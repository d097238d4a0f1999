# reason_parts.sh: decide reasons that name the candidate's parts
# ("{part1}", core/script/reason.c): each decision names its own parts,
# also when the memo answered it from another block of the same structure,
# and text that is no placeholder stays as written.
. tests/lib.sh
lua5.4 examples/gen_models.lua --layers 2 --compact --out "$T/l2.json" >/dev/null

cat >"$T/named.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "named", driver = "greedy", memo = true,
  decide = function(self, group, ctx)
    if #group > 3 then return false, "{part2} stays apart from {part1}" end
    return true, "fuse {part1} with {part2}; {part3} {part0} {part10} {part"
  end }
LUA
"$FUSEENG" run "$T/l2.json" --policy "$T/named.lua" --explain --stats >"$T/out.txt" 2>&1
expect_ok "layer 0's decision names layer 0's nodes" \
    "^  fuse +\[layers\.0\.scores, layers\.0\.scores_scaled\] +fuse \{'layers\.0\.scores'\} with \{'layers\.0\.scores_scaled'\}; \{part3\} \{part0\} \{part10\} \{part$" \
    cat "$T/out.txt"
expect_ok "layer 1's, answered by the memo, names layer 1's" \
    "^  fuse +\[layers\.1\.scores, layers\.1\.scores_scaled\] +fuse \{'layers\.1\.scores'\} with \{'layers\.1\.scores_scaled'\}" \
    cat "$T/out.txt"
expect_ok "the memo answered the second layer" "hook answers reused" cat "$T/out.txt"
expect_ok "a part of more than two nodes by its ends and size, in the order the reason gives" \
    "stays apart from \{'layers\.[01]\.[a-z0-9_]+', \.\.\., 'layers\.[01]\.[a-z0-9_]+'\} \([0-9]+ nodes\)$" \
    cat "$T/out.txt"
if grep -E "^  no .*layers\.0\..*\{'layers\.1\.|^  no .*layers\.1\..*\{'layers\.0\." "$T/out.txt" >/dev/null; then
    not_ok "no decision names another layer's nodes" "$(grep -E 'layers\.0.*layers\.1' "$T/out.txt" | head -2)"
else
    ok "no decision names another layer's nodes"
fi

finish
