#!/bin/sh
# run.sh: run every benchmark program in $BUILD/bench; each prints its figures.
#
# The run is also written down as one entry of the performance log
# (docs/performance.md): $BUILD/bench/entry.md gets the date, the commit,
# the host, the compiler and each program's output in a ```text block.
# With BENCH_LOG=FILE (make bench passes docs/performance.md) the entry is
# then inserted into FILE below its line "<!-- make bench inserts new
# entries below -->", newest first. The terminal shows what it always did
# (a program's stderr now comes through its stdout, to be in the entry too).
BUILD=${BUILD:-build}
ENTRY=${BENCH_ENTRY:-$BUILD/bench/entry.md}
BENCH_LOG=${BENCH_LOG:-}
# The benchmarks measure what the kernels can do on a quiet machine, so
# OpenMP's workers keep their default waits (spinning briefly between
# parallel regions); the fuseeng command runs them passive (core/cli/main.c),
# which costs in-cache microbenchmarks like the compute ceilings dearly.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
started=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

# Line-buffered output through the pipe to tee, as on a terminal.
linebuf=""
command -v stdbuf >/dev/null 2>&1 && linebuf="stdbuf -oL"

status=0
n=0
for b in "$BUILD"/bench/*; do
    case $b in *.d) continue ;; esac
    if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
    n=$((n + 1))
    name=$(basename "$b")
    echo "== $name"
    # shellcheck disable=SC2086
    { $linebuf "$b" 2>&1; echo $? >"$tmp/$n.rc"; } | tee "$tmp/$n.out"
    rc=$(cat "$tmp/$n.rc")
    [ "$rc" -eq 0 ] || status=1
    echo "$name $rc" >>"$tmp/list"
    echo
done
t1=$(date +%s)

# ---- the entry ----
# host_line: CPU model, CPUs, memory and kernel, from /proc and lscpu.
host_line() {
    model=$(sed -n 's/^model name[ \t]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    [ -n "$model" ] || model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
    [ -n "$model" ] || model=$(uname -m)
    cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo "?")
    topo=""
    if command -v lscpu >/dev/null 2>&1; then
        s=$(lscpu | sed -n 's/^Socket(s): *//p'); c=$(lscpu | sed -n 's/^Core(s) per socket: *//p')
        t=$(lscpu | sed -n 's/^Thread(s) per core: *//p')
        [ -n "$s$c$t" ] && topo=" ($s socket(s) x $c core(s) x $t thread(s))"
    fi
    mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
    echo "$model, $cpus CPUs$topo, ${mem:-? GiB} of memory; $(uname -sr)"
}

# isa_line: the instruction sets the kernels choose paths by.
isa_line() {
    flags=$(sed -n 's/^\(flags\|Features\)[ \t]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    have=""
    for f in sse4_2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_vnni avx512_bf16 \
             avx512_fp16 amx_tile amx_bf16 asimd asimdhp sve sve2; do
        case " $flags " in *" $f "*) have="$have $f" ;; esac
    done
    case " $flags " in *" avx512f "*) ;; *" avx2 "*) have="$have (no AVX-512)" ;; esac
    echo "${have# }"
}

# cache_line: the caches cpu0 sees (sysfs, as kernels/ reads them).
cache_line() {
    out=""
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
        [ -r "$d/level" ] || continue
        ty=$(cat "$d/type"); lv=$(cat "$d/level"); sz=$(cat "$d/size")
        case $ty in Data) nm="L${lv}d" ;; Instruction) nm="L${lv}i" ;; *) nm="L$lv" ;; esac
        sz=$(echo "$sz" | awk '/K$/ { k = $0 + 0; if (k >= 1024 && k % 1024 == 0) print k / 1024 " MiB"; else print k " KiB"; next } { print }')
        shared=$(cat "$d/shared_cpu_list" 2>/dev/null)
        case $shared in *[-,]*) sz="$sz shared by CPUs $shared" ;; esac
        out="$out, $nm $sz"
    done
    echo "${out#, }"
}

commit="not a git checkout"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    commit=$(git describe --always --dirty 2>/dev/null)
fi
secs=$((t1 - t0))
took="$((secs / 60)) min $((secs % 60)) s"
failed=$(awk '$2 != 0 { printf "%s%s (exit %s)", sep, $1, $2; sep = ", " }' "$tmp/list" 2>/dev/null)
settings=$(env | grep -E '^(OMP_[A-Z_]+|FE_BENCH_[A-Z0-9_]+|BENCH_[A-Z_]+)=' |
           grep -Ev '^BENCH_(LOG|ENTRY|CFLAGS)=' | sort | tr '\n' ' ' | sed 's/ *$//')

fence=$(printf "\140\140\140")   # three backquotes
mkdir -p "$(dirname "$ENTRY")"
{
    echo "## $started: make bench at $commit"
    echo
    echo "- host: $(host_line)"
    echo "- ISA: $(isa_line)"
    echo "- caches: $(cache_line)"
    echo "- load average at the start: ${load:-unknown}"
    # shellcheck disable=SC2086
    flags=$(printf '%s ' ${BENCH_CFLAGS:-} | sed 's/ $//')
    echo "- compiler: $(${CC:-cc} --version 2>/dev/null | head -n 1) (${flags:-flags not given}), build tree $BUILD"
    echo "- settings: ${settings:-none set, defaults throughout}"
    if [ -n "$failed" ]; then
        echo "- programs: $n in $took; not every target met or run: $failed"
    else
        echo "- programs: $n in $took, each exit 0"
    fi
    i=0
    while [ "$i" -lt "$n" ]; do
        i=$((i + 1))
        echo
        echo "### $(sed -n "${i}p" "$tmp/list" | cut -d' ' -f1)"
        echo
        echo "${fence}text"
        # a line opening a fence would end the block early
        sed "s/^\([ \t]*\)$fence/\1'''/" "$tmp/$i.out"
        echo "$fence"
    done
} >"$ENTRY"
echo "bench: this run's log entry is $ENTRY"

if [ -n "$BENCH_LOG" ]; then
    mark='<!-- make bench inserts new entries below -->'
    if ! grep -qxF "$mark" "$BENCH_LOG" 2>/dev/null; then
        echo "bench: $BENCH_LOG has no line '$mark'; the entry stays in $ENTRY" >&2
        exit 1
    fi
    awk -v entry="$ENTRY" -v mark="$mark" '
        { print }
        $0 == mark { print ""; while ((getline l < entry) > 0) print l }
    ' "$BENCH_LOG" >"$tmp/log" && cat "$tmp/log" >"$BENCH_LOG" &&
        echo "bench: entry added to $BENCH_LOG (newest first); commit it with the change it measures"
fi
exit $status
