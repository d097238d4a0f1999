# ab_html.sh: fuseeng ab --html in a real headless Chromium: the page loads
# from a file with no network, logs nothing to the console, and paints its
# charts and its summary table (a screenshot differs from one of the same
# page without them). The page stays small: traces are files beside it
# (PAGE.traces/), 6 models x 5 policies under 1 MB; its axis ticks are
# round (1-2-5 steps); it says where it came from (provenance). Skipped
# when Chromium is absent (make deps installs Debian's chromium).
. tests/lib.sh
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
G=examples/models/gpt2_block.json R=examples/models/resnet50_bottleneck.json

check "ab --html writes the page" "$FUSEENG" ab "$G" "$R" --policy no_fusion --policy fuse_all \
    --policy gcu_tlf --dim S=64 --measure --reps 3 --html "$T/ab.html"
page=$T/ab.html
if grep -q '^<!DOCTYPE html>' "$page" && grep -q '</html>' "$page"; then ok "the page is HTML"; else not_ok "the page is HTML"; fi
# Self-contained: nothing is fetched from elsewhere (the SVG namespace is a
# name, not a fetch); the traces are links to files beside the page.
if grep -Eo '(src|href)="[^"]*"' "$page" | grep -Ev '="(data:|#|ab\.html\.traces/row[0-9]+-[0-9]+\.trace\.json")' | grep -q .; then
    not_ok "the page fetches nothing from elsewhere" "$(grep -Eo '(src|href)="[^"]*"' "$page" | grep -Ev '="(data:|#)' | head -3)"
else ok "the page fetches nothing from elsewhere"; fi
for want in 'id="summary"' 'class="chart"' '<summary>diff no_fusion vs fuse_all' \
            'href="ab.html.traces/row0-1.trace.json"' '95% CI' 'id="provenance"' \
            "$("$FUSEENG" --version | sed 's/^fuseeng \([^ ]*\) (commit \(.*\))$/\1 (commit \2)/')" \
            'gpt2_block.json <span class="note">sha256 '; do
    if grep -qF "$want" "$page"; then ok "the page has $want"; else not_ok "the page has $want"; fi
done
ntr=$(ls "$T/ab.html.traces" | wc -l)
if [ "$ntr" -eq 6 ] && grep -q '"traceEvents"' "$T/ab.html.traces/row0-1.trace.json"; then
    ok "each plan's trace is a file beside the page ($ntr)"
else not_ok "each plan's trace is a file beside the page" "$ntr files: $(ls "$T/ab.html.traces" | head -3)"; fi
# Round ticks: each axis's labels are 0, s, 2s, ... with s 1, 2 or 5 times a power of 10.
if grep -o 'class="tick"[^>]*>[^<]*' "$page" | sed 's/.*>//; s/x$//' | awk '
    $1 == 0 { if (n > 1 && bad == 0) good++; n = 0; prev = 0; step = 0; next_ok = 1 }
    { if (n == 1) { step = $1; m = step; while (m >= 10) m /= 10; while (m < 1) m *= 10
                    if (m != 1 && m != 2 && m != 5) bad++ }
      else if (n > 1 && ($1 - prev - step > 1e-9 || prev + step - $1 > 1e-9)) bad++
      prev = $1; n++ }
    END { if (n > 1 && bad == 0) good++; exit !(good >= 3 && bad == 0) }'; then
    ok "the axis ticks are round numbers (1-2-5 steps)"
else not_ok "the axis ticks are round numbers (1-2-5 steps)" "$(grep -o 'class="tick"[^>]*>[^<]*' "$page" | sed 's/.*>//' | tr '\n' ' ' | head -c 300)"; fi

# Small: 6 models x 5 policies, traces and diffs, under 1 MB.
"$FUSEENG" ab examples/models/gpt2_block.json examples/models/bert_base_layer.json \
    examples/models/hub_conflict.json examples/models/resnet50_bottleneck.json \
    examples/models/llama2_7b_layer.json examples/models/opu_convnet.json --dim S=64 \
    --policy no_fusion --policy fuse_all --policy gcu_tlf --policy tvm_fuseops --policy xla_priority \
    --html "$T/six.html" >/dev/null 2>"$T/err"
size=$(wc -c <"$T/six.html")
if [ "$size" -gt 0 ] && [ "$size" -lt 1048576 ] && [ "$(ls "$T/six.html.traces" | wc -l)" -eq 30 ]; then
    ok "6 models x 5 policies: the page is $size bytes (under 1 MB), 30 traces beside it"
else not_ok "6 models x 5 policies: the page is under 1 MB" "$size bytes" "$(head -c 300 "$T/err")"; fi

# Chromium prints a page's console messages as INFO:CONSOLE lines.
shoot() {   # shoot PAGE PNG: headless screenshot; stderr in PNG.err
    HOME=$T timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
        --enable-logging=stderr --v=0 --window-size=1200,1400 --screenshot="$2" "file://$1" \
        >"$2.out" 2>"$2.err"
}
if [ -z "$CHROMIUM" ]; then
    skip "the page loads in headless Chromium without console errors" "chromium not installed (make deps installs it)"
    skip "the screenshot shows the charts" "chromium not installed"
    skip "the screenshot shows the summary table" "chromium not installed"
    skip "the console check catches an error" "chromium not installed"
else
    shoot "$page" "$T/page.png"
    if [ -s "$T/page.png" ] && ! grep -Eq 'CONSOLE|Page load failed' "$T/page.png.err"; then
        ok "the page loads in headless Chromium without console errors"
    else not_ok "the page loads in headless Chromium without console errors" "$(grep -E 'CONSOLE|failed' "$T/page.png.err" | head -3)"; fi
    sed 's/<svg [^>]*>/<svg width="0" height="0">/' "$page" >"$T/nochart.html"
    shoot "$T/nochart.html" "$T/nochart.png"
    if [ -s "$T/nochart.png" ] && ! cmp -s "$T/page.png" "$T/nochart.png"; then ok "the screenshot shows the charts"
    else not_ok "the screenshot shows the charts" "the same pixels with the charts removed"; fi
    # the summary table: the same page without it paints other pixels
    awk '/<table id="summary">/ { drop = 1 } !drop { print } drop && /<\/table>/ { drop = 0 }' "$page" >"$T/nosum.html"
    shoot "$T/nosum.html" "$T/nosum.png"
    if grep -q 'id="summary"' "$T/nosum.html"; then not_ok "the screenshot shows the summary table" "the table was not removed"
    elif [ -s "$T/nosum.png" ] && ! cmp -s "$T/page.png" "$T/nosum.png"; then ok "the screenshot shows the summary table"
    else not_ok "the screenshot shows the summary table" "the same pixels with the summary table removed"; fi
    printf '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><script>nosuch();</script></body></html>\n' >"$T/broken.html"
    shoot "$T/broken.html" "$T/broken.png"
    if grep -q 'CONSOLE.*nosuch is not defined' "$T/broken.png.err"; then ok "the console check catches an error"
    else not_ok "the console check catches an error" "$(tail -3 "$T/broken.png.err")"; fi
fi
expect_fail "--html with --shard" 2 'give the output options to' "$FUSEENG" ab "$G" --policy no_fusion --policy fuse_all --shard 1/2 --html "$T/x.html"
finish
