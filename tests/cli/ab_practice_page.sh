# ab_practice_page.sh: docs/ab-in-practice.md shows what the engine prints.
#
# Every ```console block of the page that starts with "$ fuseeng" and has
# no --measure or --execute is run again (a command goes on over lines that end in a
# backslash or a pipe or leave a quote open), ../shared being $SHARED, and
# the rest of the block (the pasted output) must be in the command's
# output: its lines in order, a line "..."
# standing for lines the page leaves out; text and kernel counts exactly,
# numbers within 1% (a build without FMA may round the last digit
# differently). The planning-time column (the last word of each table row
# under a "... plan ms" header) is not compared: it is the host's, not the
# plan's. Measured blocks cannot repeat; a tiny measured run of the same five
# policies checks that the command still runs and prints its intervals.
# Last, the checker is shown a copy of the page with one figure changed and
# must reject it (so this test can fail).
. tests/lib.sh
SHARED=${SHARED:-../shared}
PAGE=${PAGE:-docs/ab-in-practice.md}
export LC_ALL=C FUSEENG SHARED

# blocks PAGE: the page's checked console blocks, as $T/b/N.cmd (the command,
# its lines as on the page) and $T/b/N.page (the output shown); prints the count.
blocks() {
    rm -rf "$T/b"
    mkdir -p "$T/b"
    awk -v dir="$T/b" '
        !inblock && /^```console[ \t]*$/ { inblock = 1; state = "first"; next }
        inblock && /^```[ \t]*$/ { inblock = 0; if (out != "") close(out); out = ""; next }
        !inblock { next }
        state == "first" {
            state = "skip"
            if ($0 !~ /^\$ fuseeng /) next
            cmd = substr($0, 3); state = "cmd"; started = 0
        }
        state == "cmd" {
            if (started) cmd = cmd "\n" $0
            started = 1
            # the command goes on after a backslash, a pipe or an open quote
            q = cmd; more = (cmd ~ /[\\|][ \t]*$/) || gsub(/\047/, "", q) % 2
            if (more) next
            if (cmd ~ /--measure|--execute/) { state = "skip"; next }
            n++; out = dir "/" n ".page"; printf "" > out
            print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd"); state = "out"
            next
        }
        state == "out" { print > out }
        END { print n + 0 }
    ' "$1"
}

# matches PAGE_OUT CMD_OUT: the page's lines are in the command's output.
matches() {
    awk -v page="$1" '
        function words(s, w) { gsub(/[|,]/, " ", s); return split(s, w, " ") }
        function num(s) { sub(/x$/, "", s); return s ~ /^-?[0-9]+(\.[0-9]+)?$/ }
        # norm: the line without the planning time of a table row
        function norm(s, st,    w, k, i, r) {
            if (s ~ /^[ \t]*\.\.\.[ \t]*$/ || s ~ /^[ \t]*$/) { st["plan"] = 0; return s }
            if (s ~ /plan ms[ \t]*$/) { st["plan"] = 1; return s }
            if (!st["plan"]) return s
            k = split(s, w, " "); r = ""
            for (i = 1; i < k; i++) r = r " " w[i]
            return r
        }
        function same(x, y,    a, b, n, m, i, p, q) {
            n = words(x, a); m = words(y, b)
            if (n != m) return 0
            for (i = 1; i <= n; i++) {
                if (a[i] == b[i]) continue
                if (!num(a[i]) || !num(b[i])) return 0
                p = a[i] + 0; q = b[i] + 0
                if (p - q > 0.01 * q + 0.0051 || q - p > 0.01 * q + 0.0051) return 0
            }
            return 1
        }
        { out[++n] = norm($0, so) }
        END {
            j = 1; gap = 0; bad = 0
            while ((getline l < page) > 0) {
                ln++; p = norm(l, sp)
                if (p ~ /^[ \t]*\.\.\.[ \t]*$/) { gap = 1; continue }
                if (gap && p ~ /^[ \t]*$/) continue
                while (j <= n && !same(p, out[j])) {
                    if (!gap) break
                    j++
                }
                if (j > n || !same(p, out[j])) {
                    print "page line " ln " of the block is not in the output" (gap ? "" : " at that place") ":"
                    print "  page:    " l
                    if (j <= n) print "  command: " out[j]
                    bad = 1; exit 1
                }
                j++; gap = 0
            }
            if (!gap && j <= n) { print "the command prints more than the page shows: " out[j]; exit 1 }
        }
    ' "$2"
}

# check_page PAGE [first]: run every checked block (up to the first that
# differs, with "first"); prints the problems, exit 1 on any.
check_page() {
    count=$(blocks "$1")
    [ "$count" -gt 0 ] || { echo "$1: no checked console block"; return 1; }
    rc=0 i=1
    while [ "$i" -le "$count" ]; do
        cmd=$(cat "$T/b/$i.cmd")
        run=$(printf '%s\n' "$cmd" | sed "s#\.\./shared/#$SHARED/#g")
        sh -c "fuseeng() { \"\$FUSEENG\" \"\$@\"; }; $run" >"$T/b/$i.out" 2>"$T/b/$i.err"
        code=$?
        # a pipeline hides the engine's status; a table with FAILED cells exits 1 by design
        if [ "$code" -gt 1 ] || [ ! -s "$T/b/$i.out" ]; then
            echo "block $i: \$ $cmd"
            echo "  exit $code: $(head -c 400 "$T/b/$i.err")"
            rc=1
        elif ! msg=$(matches "$T/b/$i.page" "$T/b/$i.out"); then
            echo "block $i: \$ $cmd"
            echo "$msg"
            rc=1
        fi
        [ "$rc" -ne 0 ] && [ "$2" = first ] && break
        i=$((i + 1))
    done
    return $rc
}

if [ ! -d "$SHARED/models" ] || [ ! -d ../shared/models ] ||
   [ "$(cd "$SHARED" && pwd -P)" != "$(cd ../shared && pwd -P)" ]; then
    # the suite file names ../shared/models as the page does
    skip "$PAGE holds what its commands print" "no ../shared/models (or SHARED is elsewhere)"
    skip "a changed figure on the page is caught" "no ../shared/models"
else
    if out=$(check_page "$PAGE" 2>&1); then
        ok "$PAGE holds what its commands print ($(blocks "$PAGE") blocks)"
    else
        not_ok "$PAGE holds what its commands print" "$out"
    fi
    # One figure of the summary changed by 5%: the checker must say so.
    awk '!done && /^  gcu_tlf +1\.881x/ { sub(/1\.881x/, "1.975x"); done = 1 } { print }' \
        "$PAGE" >"$T/changed.md"
    if cmp -s "$PAGE" "$T/changed.md"; then
        not_ok "a changed figure on the page is caught" "the page has no '  gcu_tlf 1.881x' summary line to change"
    elif out=$(check_page "$T/changed.md" first 2>&1); then
        not_ok "a changed figure on the page is caught" "the checker accepted 1.975x for 1.881x"
    elif printf '%s\n' "$out" | grep -q '1\.975x'; then
        ok "a changed figure on the page is caught"
    else
        not_ok "a changed figure on the page is caught" "$out"
    fi

    # The suite files of the page: the first is part 1's command line, byte
    # for byte in JSON; the second (part 2's, measured) loads and plans.
    "$FUSEENG" ab --suite examples/suites/ab_practice.json --json >"$T/suite.json" 2>"$T/err"
    "$FUSEENG" ab examples/models/*.json "$SHARED"/models/*.json --policy infinicore \
        --policy inductor_greedy --policy gcu_tlf --policy tvm_fuseops --policy xla_priority \
        --machine gcu --machine gcu_big --json >"$T/cmd.json" 2>>"$T/err"
    # (but the provenance line, which names each report's own command)
    sed -i '/^  "provenance": /d' "$T/suite.json" "$T/cmd.json"
    if [ -s "$T/cmd.json" ] && cmp -s "$T/suite.json" "$T/cmd.json"; then
        ok "examples/suites/ab_practice.json is part 1's command (same JSON report)"
    else
        not_ok "examples/suites/ab_practice.json is part 1's command (same JSON report)" "$(head -c 600 "$T/err")"
    fi
    expect_ok "examples/suites/ab_practice_measured.json loads and plans its 7 rows" \
        '^summary over 7 rows against the baseline infinicore' \
        "$FUSEENG" ab --suite examples/suites/ab_practice_measured.json
fi

# The measured comparison on a tiny setting: it runs, checks the results and
# gives each policy an interval and a verdict.
expect_ok "the page's measured comparison runs (tiny dims, 3 rounds)" \
    '^[* ] xla_priority +[0-9.]+ +[0-9.]+x  \[[0-9.]+, [0-9.]+\] +(faster|slower|same) +ok +[0-9]+$' \
    "$FUSEENG" ab examples/models/gpt2_block.json --policy infinicore --policy inductor_greedy \
    --policy gcu_tlf --policy tvm_fuseops --policy xla_priority --dim S=16 --measure --reps 3
finish
