# policies_page.sh: the results tables of docs/policies.md, made by the
# commands the page shows (fuseeng policies --results, and fuseeng ab
# --optimal once per shipped machine for the gap column). Run from the
# repository root:
#
#   sh tests/tools/policies_page.sh           rewrite the tables in the page
#   sh tests/tools/policies_page.sh --check   exit 1 if the page and the
#                                             command disagree (tests/cli/policies_page.sh)
#
# The tables sit between the page's "<!-- results: begin -->" and
# "<!-- results: end -->" lines. --check compares cell by cell: text and
# kernel counts exactly, numbers within 1% (a build without FMA may round
# the last digit differently).
FUSEENG=${FUSEENG:-build/fuseeng}
SHARED=${SHARED:-../shared}
PAGE=${PAGE:-docs/policies.md}
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The command, as the page shows it (../shared/models is $SHARED/models).
"$FUSEENG" policies --results examples/models/*.json "$SHARED"/models/*.json \
    --skip benchmark_fusion >"$tmp/new"
rc=$?
if [ "$rc" -gt 1 ]; then
    echo "policies_page.sh: fuseeng policies --results failed (exit $rc)" >&2
    exit 2
fi

# The gap to the optimum: fuseeng ab --optimal on the example models, once
# per shipped machine, the same policies (no_fusion first, the baseline);
# each summary's "gap to optimal" column becomes one column here.
pols="--policy no_fusion"
for f in policies/*.lua; do
    p=$(basename "$f" .lua)
    case $p in no_fusion|benchmark_fusion) ;; *) pols="$pols --policy $p" ;; esac
done
machines=$(ls lua/machines/*.lua | sed 's|.*/||; s|\.lua$||')
for m in $machines; do
    # shellcheck disable=SC2086
    if ! "$FUSEENG" ab examples/models/*.json $pols --machine "$m" --optimal --md >"$tmp/ab_$m" 2>"$tmp/err"; then
        echo "policies_page.sh: fuseeng ab --optimal --machine $m failed: $(cat "$tmp/err")" >&2
        exit 2
    fi
done
{
    echo
    echo "The gap of each policy to the optimum, (time - optimum) / optimum, as the"
    echo "geometric mean over the example models, on each shipped machine:"
    echo
    printf '| policy |'
    for m in $machines; do printf ' %s |' "$m"; done
    printf '\n|---|'
    for m in $machines; do printf -- '---:|'; done
    printf '\n'
    # a summary row: | name | geomean | wins | ties | losses | failed | gap |
    for m in $machines; do
        awk -F' [|] ' '/^\| policy \| geomean/ { on = 1; next } on && !/^\|/ { exit }
                       on && /^\| [a-z]/ { sub(/ \|$/, "", $7); print $1, $7 }' \
            "$tmp/ab_$m" | sed 's/^| //' >"$tmp/gap_$m"
    done
    first=$(echo "$machines" | head -n 1)
    while read -r name gap; do
        printf '| `%s` |' "$name"
        for m in $machines; do printf ' %s |' "$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/gap_$m")"; done
        printf '\n'
    done <"$tmp/gap_$first"
} >>"$tmp/new"
awk '/^<!-- results: begin -->$/ { on = 1; next } /^<!-- results: end -->$/ { on = 0 } on' \
    "$PAGE" >"$tmp/old"
if ! grep -q '^<!-- results: begin -->$' "$PAGE" || ! grep -q '^<!-- results: end -->$' "$PAGE"; then
    echo "policies_page.sh: $PAGE has no '<!-- results: begin -->' ... '<!-- results: end -->' block" >&2
    exit 2
fi

if [ "$1" = "--check" ]; then
    # Split every line into words at '|', ',' and spaces; compare word by
    # word, numbers ("1.23x", "4.567") with a relative tolerance.
    awk -v old="$tmp/old" '
        function words(s, w) { gsub(/[|,]/, " ", s); return split(s, w, " ") }
        function num(s) { sub(/x$/, "", s); return s ~ /^[0-9]+(\.[0-9]+)?$/ }
        {
            if ((getline o < old) <= 0) { print "line " NR ": the page has fewer lines"; bad = 1; exit }
            n = words($0, a); m = words(o, b)
            if (n != m) { print "line " NR ":\n  page:    " o "\n  command: " $0; bad = 1; next }
            for (i = 1; i <= n; i++) {
                if (a[i] == b[i]) continue
                if (num(a[i]) && num(b[i])) {
                    x = a[i] + 0; y = b[i] + 0
                    if (x - y <= 0.01 * y + 0.0051 && y - x <= 0.01 * y + 0.0051) continue
                }
                print "line " NR ": \"" b[i] "\" on the page, \"" a[i] "\" from the command"; bad = 1
                break
            }
        }
        END { if ((getline o < old) > 0) { print "the page has more lines"; bad = 1 } exit bad }
    ' "$tmp/new" || {
        echo "policies_page.sh: $PAGE is out of date; run: sh tests/tools/policies_page.sh" >&2
        exit 1
    }
    exit 0
fi

awk -v new="$tmp/new" '
    /^<!-- results: end -->$/ { while ((getline l < new) > 0) print l; skip = 0 }
    skip { next }
    { print }
    /^<!-- results: begin -->$/ { skip = 1 }
' "$PAGE" >"$tmp/page" && cat "$tmp/page" >"$PAGE"
