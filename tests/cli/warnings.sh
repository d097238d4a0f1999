# warnings.sh: every source of the library, the command and the shim
# compiles without a warning under -Werror (make WERROR=1) for several
# targets, whatever CPU this machine has: gcc at -march=x86-64, x86-64-v3
# and x86-64-v4 (the kernels' scalar, AVX2 and AVX-512 paths), and clang at
# x86-64 and x86-64-v4. A user's build has no -Werror (a newer compiler's
# opinion must not stop it), so this is where a warning is caught before it
# lands: gcc 12's -Wmaybe-uninitialized in fused_views.c showed only on
# AVX-512 hosts. -O2, as the builds use: gcc finds maybe-uninitialized
# values while optimising, so a syntax-only pass would miss them.
#
# Each target is a tree of its own under build/warn/ (kept, so a later run
# compiles only what changed), built with `make -j` over this machine's
# cores. A target the compiler cannot build for says SKIP; so does clang
# when it is not installed (scripts/deps.sh installs it, with libomp-dev for
# its OpenMP header). Then the x86-64 trees of gcc and clang link the
# command, which must name one OpenMP runtime and bind every OpenMP call to
# it (one_runtime, below).
n=0
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)
objs() {   # objs TREE: the command's and the shim's objects in TREE
    for f in core/cli/*.c core/shim/*.c; do
        o=${f%.c}.o
        printf ' %s/obj/%s' "$1" "$o"
    done
}

target() {   # target CC ARCH: build every object of that target with -Werror
    cc=$1 arch=$2
    n=$((n + 1))
    name="$cc -march=$arch -O2 -Wall -Wextra -Werror"
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "ok $n - $name # SKIP $cc is not installed (scripts/deps.sh installs it)"
        return
    fi
    if ! echo 'int x;' | "$cc" -march="$arch" -x c -c -o /dev/null - 2>/dev/null; then
        echo "ok $n - $name # SKIP $cc cannot compile for -march=$arch on this host"
        return
    fi
    if ! echo '#include <omp.h>' | "$cc" -fopenmp -x c -fsyntax-only - 2>/dev/null; then
        echo "ok $n - $name # SKIP $cc has no omp.h (scripts/deps.sh installs libomp-dev)"
        return
    fi
    tree=build/warn/$cc-$arch
    t0=$(date +%s)
    # shellcheck disable=SC2046
    if MAKEFLAGS= make -s -k -j"$jobs" CC="$cc" WERROR=1 PORTABLE=1 PORTABLE_ARCH="$arch" \
            SANITIZE= BUILD="$tree" "$tree/libfuseeng.a" $(objs "$tree") >"$log" 2>&1; then
        echo "ok $n - $name: warning-free ($(($(date +%s) - t0)) s)"
    else
        echo "not ok $n - $name"
        grep -E 'error|warning' "$log" | sed 's/^/# /' | head -n 20
        echo "# all of it: make WERROR=1 PORTABLE=1 PORTABLE_ARCH=$arch CC=$cc BUILD=$tree"
        status=1
    fi
}

# one_runtime CC ARCH: the command of CC's tree links one OpenMP runtime,
# its compiler's, and every OpenMP call of the process (ours, libdnnl's)
# binds to it. A -lgomp beside clang's libomp linked both, and clang's code
# forked its parallel regions in libomp but took omp_get_thread_num from
# libgomp (0 in every thread); libdnnl, built on libgomp, must then find
# its GOMP_ calls in libomp, which comes first.
one_runtime() {
    cc=$1 arch=$2 tree=build/warn/$1-$2
    n=$((n + 1))
    name="$cc: the command links one OpenMP runtime"
    if [ ! -f "$tree/libfuseeng.a" ] || ! command -v readelf >/dev/null 2>&1; then
        echo "ok $n - $name # SKIP no $cc tree (see above) or no readelf"
        return
    fi
    # shellcheck disable=SC2046
    if ! MAKEFLAGS= make -s -j"$jobs" CC="$cc" WERROR=1 PORTABLE=1 PORTABLE_ARCH="$arch" \
            SANITIZE= BUILD="$tree" "$tree/fuseeng" >"$log" 2>&1; then
        echo "not ok $n - $name"
        echo "# linking $tree/fuseeng failed:"
        sed 's/^/# /' "$log" | head -n 20
        status=1
        return
    fi
    need=$(readelf -d "$tree/fuseeng" | sed -n 's/.*(NEEDED).*\[\(lib[gi]\{0,1\}omp[0-9]*\.so[.0-9]*\)\]$/\1/p')
    rm -f "$log".ld.*
    OMP_WAIT_POLICY=passive LD_DEBUG=bindings LD_DEBUG_OUTPUT="$log.ld" "$tree/fuseeng" run \
        examples/models/opu_convnet.json --policy fuse_all --execute --no-timing >/dev/null 2>&1
    # "binding file FROM [0] to TO [0]: normal symbol `S'": where the
    # calls of everything but the runtimes themselves land
    to=$(cat "$log".ld.* 2>/dev/null | grep -E "normal symbol .(omp_|GOMP_|__kmpc_)" |
        grep -Ev "binding file [^ ]*/lib[gi]?omp[^ /]*\.so" |
        sed -n 's/.* to \([^ ]*\) .*/\1/p' | sort -u)
    rm -f "$log".ld.*
    if [ "$(echo "$need" | grep -c .)" -eq 1 ] && [ "$(echo "$to" | grep -c .)" -eq 1 ] &&
        [ "$(basename "$to")" = "$need" ]; then
        echo "ok $n - $name: $need, every OpenMP call bound to it"
    else
        echo "not ok $n - $name"
        echo "# runtimes the command names (readelf -d): $(echo $need)"
        echo "# where its OpenMP calls bind (LD_DEBUG=bindings): $(echo $to)"
        status=1
    fi
}

case $(uname -m) in
    x86_64)
        for a in x86-64 x86-64-v3 x86-64-v4; do target gcc "$a"; done
        for a in x86-64 x86-64-v4; do target clang "$a"; done
        one_runtime gcc x86-64
        one_runtime clang x86-64
        ;;
    *)  # elsewhere the compilers' own default targets
        target gcc native
        target clang native
        one_runtime gcc native
        one_runtime clang native
        ;;
esac
echo "1..$n"
exit $status
