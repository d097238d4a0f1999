# ab_html.sh: fuseeng ab --html in a real headless Chromium: the page loads
# from a file with no network, logs nothing to the console, and paints its
# charts (a screenshot differs from one of the same page without them).
# Skipped when Chromium is absent (make deps installs Debian's chromium).
. tests/lib.sh
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
G=examples/models/gpt2_block.json R=examples/models/resnet50_bottleneck.json

check "ab --html writes the page" "$FUSEENG" ab "$G" "$R" --policy no_fusion --policy fuse_all \
    --policy gcu_tlf --dim S=64 --measure --reps 3 --html "$T/ab.html"
page=$T/ab.html
if grep -q '^<!DOCTYPE html>' "$page" && grep -q '</html>' "$page"; then ok "the page is HTML"; else not_ok "the page is HTML"; fi
# Self-contained: nothing is fetched (the SVG namespace is a name, not a fetch).
if grep -Eo '(src|href)="[^"]*"' "$page" | grep -Ev '="(data:|#)' | grep -q .; then
    not_ok "the page fetches nothing" "$(grep -Eo '(src|href)="[^"]*"' "$page" | grep -Ev '="(data:|#)' | head -3)"
else ok "the page fetches nothing"; fi
for want in 'id="summary"' 'class="chart"' '<summary>diff no_fusion vs fuse_all' \
            'download="row0-1.trace.json" href="data:application/json;base64,' '95% CI'; do
    if grep -qF "$want" "$page"; then ok "the page has $want"; else not_ok "the page has $want"; fi
done

# Chromium prints a page's console messages as INFO:CONSOLE lines.
shoot() {   # shoot PAGE PNG: headless screenshot; stderr in PNG.err
    HOME=$T timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
        --enable-logging=stderr --v=0 --window-size=1200,1400 --screenshot="$2" "file://$1" \
        >"$2.out" 2>"$2.err"
}
if [ -z "$CHROMIUM" ]; then
    skip "the page loads in headless Chromium without console errors" "chromium not installed (make deps installs it)"
    skip "the screenshot shows the charts" "chromium not installed"
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
    printf '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body><script>nosuch();</script></body></html>\n' >"$T/broken.html"
    shoot "$T/broken.html" "$T/broken.png"
    if grep -q 'CONSOLE.*nosuch is not defined' "$T/broken.png.err"; then ok "the console check catches an error"
    else not_ok "the console check catches an error" "$(tail -3 "$T/broken.png.err")"; fi
fi
expect_fail "--html with --shard" 2 'give the output options to' "$FUSEENG" ab "$G" --policy no_fusion --policy fuse_all --shard 1/2 --html "$T/x.html"
finish
