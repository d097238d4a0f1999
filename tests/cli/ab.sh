# ab.sh: `fuseeng ab`, policies compared on models.
. tests/lib.sh
A="examples/models/llama2_7b_layer.json examples/models/resnet50_bottleneck.json"
expect_ok "ab compares and stars the fastest" '^\* fuse_all +[0-9]+' \
    "$FUSEENG" ab $A --policy no_fusion --policy fuse_all
expect_ok "ab --csv" '^llama2-7b-layer,fuse_all,7,3,' "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --csv
expect_ok "ab --json" '"speedup"' "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --json
expect_ok "ab --dim applies to the models that have the dim" 'llama2-7b-layer \(unfused ' \
    "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --dim S=512
expect_ok "ab --param applies to the policies that have it" 'static_rules\{max_graph_size=1\}' \
    "$FUSEENG" ab $A --policy fuse_all --policy static_rules --param max_graph_size=1
check "ab --svg writes a chart" "$FUSEENG" ab $A --policy no_fusion --policy fuse_all --svg "$T/ab.svg"
if grep -q '^<svg' "$T/ab.svg" && grep -q '</svg>' "$T/ab.svg"; then ok "the chart is SVG"; else not_ok "the chart is SVG"; fi
expect_fail "ab needs two policies" 2 "at least two --policy" "$FUSEENG" ab $A --policy fuse_all
expect_fail "ab --param nobody has" 2 "no policy given has that parameter" \
    "$FUSEENG" ab $A --policy fuse_all --policy no_fusion --param margin=1
expect_fail "ab on a bad model" 2 "nosuch.json: cannot open" "$FUSEENG" ab "$T/nosuch.json" --policy fuse_all --policy no_fusion
finish
