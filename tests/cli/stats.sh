# stats.sh: --stats prints the whole planning time and its parts (the
# engine's, the Lua hooks', the simulator calls the hooks make), and hook
# calls per second of hook time; a policy without hooks spends it all in
# the engine.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json
N='[0-9]+\.[0-9]{3}'

expect_ok "--stats splits planning time into engine, hooks and simulator calls" \
    "^stats +planning $N s: engine $N s \([0-9]+%: driver, legality, groups\), Lua hooks $N s \([0-9]+%\), simulator calls $N s \([0-9]+%, [1-9][0-9]* kernels priced\)$" \
    "$FUSEENG" run "$M" --policy gcu_afe --stats
expect_ok "--stats: hook calls per second of hook time" \
    '^ +[1-9][0-9]* Lua hook calls \([0-9]+ per second of hook time\), [0-9]+ instructions' \
    "$FUSEENG" run "$M" --policy gcu_afe --stats
expect_ok "--stats: a policy without hooks prices nothing" \
    "simulator calls $N s \([0-9]+%, 0 kernels priced\)" \
    "$FUSEENG" run "$M" --policy fuse_all --stats
# The parts add up to the whole, to the rounding of the printed figures.
"$FUSEENG" run "$M" --policy gcu_tlf --stats >"$T/out" 2>&1
if sed -n 's/^stats *planning \([0-9.]*\) s: engine \([0-9.]*\) s.*Lua hooks \([0-9.]*\) s.*simulator calls \([0-9.]*\) s.*/\1 \2 \3 \4/p' "$T/out" |
    awk '{ d = $1 - ($2 + $3 + $4); exit !(NF == 4 && d > -0.003 && d < 0.003) }'; then
    ok "--stats: the parts add up to the planning time"
else
    not_ok "--stats: the parts add up to the planning time" "$(grep -A1 '^stats' "$T/out")"
fi
finish
