# progress.sh: long work shows its progress and the time left on stderr
# when stderr is a terminal (a pseudo-terminal here, made by python's pty
# module), never when it is not and never with --quiet; Ctrl-C stops bench
# between groups, prints what was measured and exits 130; ab --measure
# likewise keeps the rows done (issue 37).
. tests/lib.sh
PY=$(command -v python3)
M=examples/models/resnet50_bottleneck.json
if [ -z "$PY" ]; then
    for c in "bench on a terminal" "not on a file" "not with --quiet" "ab --measure on a terminal" \
        "Ctrl-C stops bench" "Ctrl-C stops ab --measure"; do
        skip "progress: $c" "no python3 for a pseudo-terminal"
    done
    finish
    exit $?
fi

# The pty runner written below: OUT ERR [--sigint-after S] CMD...: CMD with stderr on a
# pseudo-terminal (its bytes into ERR), stdout into OUT; prints the exit
# status. --sigint-after: send SIGINT once S seconds have passed and the
# terminal has shown a progress line.
cat >"$T/ptyrun.py" <<'EOF'
import os, pty, select, signal, subprocess, sys, time
out, err = sys.argv[1], sys.argv[2]
args, after = sys.argv[3:], None
if args[0] == "--sigint-after":
    after, args = float(args[1]), args[2:]
master, slave = pty.openpty()
with open(out, "wb") as o:
    p = subprocess.Popen(args, stdout=o, stderr=slave, stdin=subprocess.DEVNULL)
os.close(slave)
got, t0, sent = b"", time.time(), False
while True:
    r, _, _ = select.select([master], [], [], 0.1)
    if r:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            chunk = b""
        if not chunk and p.poll() is not None:
            break
        got += chunk
    elif p.poll() is not None:
        break
    if after is not None and not sent and time.time() - t0 > after and b" left" in got:
        p.send_signal(signal.SIGINT)
        sent = True
p.wait()
open(err, "wb").write(got)
print(p.returncode)
EOF
tty() { "$PY" "$T/ptyrun.py" "$@"; }
B="$FUSEENG bench $M --policy no_fusion --budget 0.4"

rc=$(tty "$T/out" "$T/err" $B)
if [ "$rc" = 0 ] && grep -aq 'measuring group [0-9]*/1[01].*about [0-9ms ]* left' "$T/err" &&
    grep -aq '^groups' "$T/out" && ! grep -aq 'measuring' "$T/out"; then
    ok "progress: bench on a terminal shows the group and the time left on stderr"
else
    not_ok "progress: bench on a terminal shows the group and the time left on stderr" "exit $rc" \
        "stderr: $(tr '\r' '\n' <"$T/err" | tail -3)"
fi
$B >"$T/out" 2>"$T/err"
if [ $? -eq 0 ] && [ ! -s "$T/err" ] && grep -q '^groups' "$T/out"; then
    ok "progress: not on a file (stderr empty)"
else not_ok "progress: not on a file (stderr empty)" "$(head -c 300 "$T/err")"; fi
rc=$(tty "$T/out" "$T/err" $B --quiet)
if [ "$rc" = 0 ] && [ ! -s "$T/err" ] && grep -q '^groups' "$T/out"; then
    ok "progress: not with --quiet, on a terminal"
else not_ok "progress: not with --quiet, on a terminal" "exit $rc" "$(tr '\r' '\n' <"$T/err" | tail -2)"; fi

cat >"$T/suite.json" <<EOF
{"models": ["$M", "examples/models/opu_convnet.json", "$M", "examples/models/opu_convnet.json"],
 "policies": ["no_fusion", "fuse_all"]}
EOF
A="$FUSEENG ab --suite $T/suite.json --measure --budget 0.3"
rc=$(tty "$T/out" "$T/err" $A)
if [ "$rc" = 0 ] && grep -aq 'ab --measure: row [0-9]/4 .*about [0-9ms ]* left' "$T/err"; then
    ok "progress: ab --measure on a terminal shows the row and the time left"
else not_ok "progress: ab --measure on a terminal shows the row and the time left" "exit $rc" \
    "$(tr '\r' '\n' <"$T/err" | tail -3)"; fi

# Ctrl-C: what was finished is printed, exit 130
rc=$(tty "$T/out" "$T/err" --sigint-after 1 $B)
if [ "$rc" = 130 ] && grep -q '^interrupted (Ctrl-C): groups 0 to [0-9]* of 10 measured' "$T/out" &&
    grep -aq 'interrupted (Ctrl-C)' "$T/err" && ! grep -q '^totals' "$T/out"; then
    ok "progress: Ctrl-C stops bench between groups, prints those measured, exit 130"
else not_ok "progress: Ctrl-C stops bench between groups, prints those measured, exit 130" "exit $rc" \
    "$(head -c 400 "$T/out")" "$(tr '\r' '\n' <"$T/err" | tail -2)"; fi
rc=$(tty "$T/out" "$T/err" --sigint-after 1 $A --json)
if [ "$rc" = 130 ] && "$PY" -c "
import json; d = json.load(open('$T/out'))
assert d['interrupted'] is True and 1 <= len(d['rows']) < 4, (d.get('interrupted'), len(d['rows']))
assert all('cpu_ms' in c for r in d['rows'] for c in r['policies'])
"; then
    ok "progress: Ctrl-C stops ab --measure between rows, the JSON of the rows done, exit 130"
else not_ok "progress: Ctrl-C stops ab --measure between rows, the JSON of the rows done, exit 130" \
    "exit $rc" "$(head -c 400 "$T/out")"; fi
finish
