# ab_provenance.sh: every ab report says where it came from (issue 37):
# fuseeng's version and commit (as --version says them), the command line,
# the date, the host's CPU and cores, and each model's file and SHA-256, in
# the text, JSON, CSV and Markdown reports (the page: ab_html.sh); and two
# models of one name stay two rows, each named with its file.
. tests/lib.sh
G=examples/models/gpt2_block.json
# the same model name in two files of different bytes
sed 's/^{/{ /' "$G" >"$T/other.json"
ver=$("$FUSEENG" --version | sed -n 's/^fuseeng \([^ ]*\) (commit \(.*\))$/\1 \2/p')
v=${ver% *} c=${ver#* }
sha_g=$(sha256sum "$G" | cut -c1-64) sha_o=$(sha256sum "$T/other.json" | cut -c1-64)
cores=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
[ -n "$cpu" ] || cpu="unknown CPU"
AB() { "$FUSEENG" ab "$G" "$T/other.json" --policy no_fusion --policy fuse_all --dim S=64 "$@"; }

[ -n "$v" ] && [ -n "$c" ] && ok "--version says the version and the commit ($v, $c)" ||
    not_ok "--version says the version and the commit" "$("$FUSEENG" --version)"

AB >"$T/out" 2>"$T/err"
if grep -Fq "report     fuseeng $v (commit $c), " "$T/out" && grep -Fq "$cpu ($cores core" "$T/out" &&
    grep -Fq "command    fuseeng ab $G $T/other.json --policy no_fusion --policy fuse_all --dim S=64" "$T/out" &&
    grep -Eq "^report .*, 20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:]{8}Z, " "$T/out" &&
    grep -Fq "model      gpt2-block (examples/models/gpt2_block.json): $G sha256 $(echo "$sha_g" | cut -c1-16)" "$T/out" &&
    grep -Fq "model      gpt2-block ($T/other.json): $T/other.json sha256 $(echo "$sha_o" | cut -c1-16)" "$T/out"; then
    ok "text: version, commit, command, date, host and each model's file and hash; two gpt2-block rows"
else
    not_ok "text: version, commit, command, date, host and each model's file and hash; two gpt2-block rows" \
        "$(tail -6 "$T/out")"
fi
[ "$(grep -c '^gpt2-block (' "$T/out")" -eq 2 ] && ok "text: two models of one name are two rows, each with its file" ||
    not_ok "text: two models of one name are two rows, each with its file" "$(grep '^gpt2-block' "$T/out")"

AB --json >"$T/j" 2>"$T/err"
if /usr/bin/env python3 - "$T/j" "$v" "$c" "$cores" "$sha_g" "$sha_o" "$T/other.json" <<'EOF' 2>"$T/pyerr"
import json, re, sys
d = json.load(open(sys.argv[1]))
v, c, cores, sg, so, other = sys.argv[2:8]
p = d["provenance"]
assert p["fuseeng"] == v and p["commit"] == c, p
assert p["command"].startswith("fuseeng ab ") and p["command"].endswith("--json"), p
assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", p["date"]), p
assert p["cores"] == int(cores) and p["cpu"] and p["gpu"] is None, p
rows = d["rows"]
assert len(rows) == 2 and rows[0]["model"] == rows[1]["model"] == "gpt2-block", rows
assert rows[0]["sha256"] == sg and rows[1]["sha256"] == so and rows[1]["file"] == other, rows
EOF
then ok "JSON: a provenance object and each row's file and sha256"
else not_ok "JSON: a provenance object and each row's file and sha256" "$(tail -3 "$T/pyerr")"; fi

AB --csv >"$T/csv" 2>"$T/err"
if head -1 "$T/csv" | grep -q ',file,sha256,fuseeng,commit,date,cpu,cores,gpu,command$' &&
    [ "$(grep -c ",$sha_o,$v,$c,20" "$T/csv")" -eq 2 ] && [ "$(grep -c ",$sha_g,$v,$c,20" "$T/csv")" -eq 2 ]; then
    ok "CSV: each line ends with its file, hash and the report's provenance"
else not_ok "CSV: each line ends with its file, hash and the report's provenance" "$(head -3 "$T/csv")"; fi

AB --md >"$T/md" 2>"$T/err"
if grep -Fq "Report: fuseeng $v (commit $c), " "$T/md" && grep -Fq 'Command: `fuseeng ab ' "$T/md" &&
    grep -Fq "| $T/other.json | $sha_o |" "$T/md" && grep -Fq "| $G | $sha_g |" "$T/md"; then
    ok "Markdown: the report line and a table of the models' files and hashes"
else not_ok "Markdown: the report line and a table of the models' files and hashes" "$(tail -6 "$T/md")"; fi
finish
