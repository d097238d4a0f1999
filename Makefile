# fuseeng: `make demo` and `make test` are the README's two commands.
#
#   make                 build build/fuseeng, build/libfuseeng.a, build/libfuseeng.so
#   make test            build and run every test; last line "N passed, N failed"
#   make test SANITIZE=1 the same with ASan + UBSan (in build/san/)
#   make demo            install deps, build, run the main job on a bundled model
#   make bench           benchmark programs (print their figures; a dated entry
#                        goes into docs/performance.md, BENCH_LOG= leaves it out)
#   make fuzz FUZZ_S=N   libFuzzer harnesses, N s each, then FUZZ_SEEDS random graphs
#   make difftest DIFF_SEEDS=N   the differential tester over N random graphs
#   make bundle          a relocatable fuseeng for GPU nodes without a registry (docs/cuda.md)
#   make valgrind        memcheck over the PORTABLE=1 build (docs/testing.md)
#   make ... PORTABLE=1  build for any x86-64 host (and valgrind), in build/portable
#   make models          regenerate examples/models and examples/bench
#   make install PREFIX=/usr/local
#
# Sources are found by wildcard: the layer folders below make the library,
# core/cli/*.c the binary, tests/test_*.c one test program each,
# tests/bench/*.c one benchmark program each.
#
# The folders are layers, bottom to top; a file is compiled with the include
# paths of its own layer and those beneath it, so a header from a layer
# above is not found and the build stops: the compiler keeps the
# architecture (docs/architecture.md).
#   core/ir       graph IR, op registry, inference, model files, JSON, errors
#   kernels/vec   vector math, dtype conversion, iteration, cache sizes, scratch
#   kernels/ops   one op at a time on the CPU: reference kernels, GEMM, conv
#   kernels/group a fused group analysed for any device; kernel choices
#   kernels/cpu   the CPU executor: lowering, tiling, vector programs, groups
#   kernels/gpu   the GPU code generator (sees the analysis, not kernels/cpu)
#   core/import   model import (ONNX): reads a foreign graph, builds ours with
#                 core/ir's builder, folds constants with the kernels' dtype
#                 conversions (one owner of f16/bf16 rounding)
#   core/plan     plans, legality, partitions, group keys, the exact search
#                 (candidate groups, the MILP solver's wrapper)
#   core/sim      machine descriptions, the cost model, reports, traces, plan files
#   core/exec     running plans on the kernels: sessions, timing, checks, profiles
#   core/script   the Lua sandbox, planners, policies, runs, drivers, ctx
#   core/api      the public API: the handles and every call of the public
#                 headers (core/include: fuseeng.h, fuseeng_cli.h)
#   core/cli      the fuseeng command, through fuseeng_cli.h

PREFIX ?= /usr/local
SHARED ?= ../shared

# Quiet by default; `make V=1` prints the full commands.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

ifeq ($(SANITIZE),1)
BUILD := build/san
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT := -O1
else
BUILD := build
SAN :=
OPT := -O2
endif

PKGS := lua5.4 jansson libcrypto openblas libprotobuf-c
# LPeg is linked statically and preloaded (lua-lpeg-dev ships the archive;
# its .pc file points at the wrong directory on Debian, so ask the compiler).
LPEG_A = $(shell $(CC) -print-file-name=liblua5.4-lpeg.a)
# OpenBLAS built on OpenMP, so that the process has one thread pool: the
# pthread build keeps its own workers spinning beside ours, and on a busy
# two-core machine a kernel then waits out scheduler ticks (measured: a 5 ms
# SwiGLU took 200 ms). Debian keeps that build beside the default one.
# It is not linked: its constructor hangs when the address space is short
# (`ulimit -v`), before main, in every command. kernels/ops/blas.c opens it
# by this path (FE_OPENBLAS) at its first use, after checking for room.
OPENBLAS_DIR := $(wildcard /usr/lib/$(shell $(CC) -print-multiarch)/openblas-openmp)
ifneq ($(OPENBLAS_DIR),)
export PKG_CONFIG_PATH := $(OPENBLAS_DIR)/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
%/obj/kernels/ops/blas.o: CFLAGS += -DFE_OPENBLAS='"$(OPENBLAS_DIR)/libopenblas.so.0"'
%/obj/kernels/ops/blas.o: FUZZ_CFLAGS += -DFE_OPENBLAS='"$(OPENBLAS_DIR)/libopenblas.so.0"'
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) lua5.4-lpeg)
# oneDNN (libdnnl-dev) and GLPK (libglpk-dev, the MILP solver of
# core/plan/milp.c) ship no .pc file: their one library each by name
PKG_LIBS = $(shell pkg-config --libs $(filter-out openblas,$(PKGS))) -ldnnl -lglpk
ARCH_CFLAGS := $(shell $(CC) -march=native -E -x c /dev/null >/dev/null 2>&1 && echo -march=native)

# PORTABLE=1: a build that every x86-64 host runs, and valgrind too, in its
# own tree. -march=native compiles in what this CPU has, so its binaries
# stop with SIGILL on an older CPU and under valgrind, which (3.19, Debian
# 12) decodes up to AVX2 but no AVX-512. The kernels choose their vector
# paths at compile time (kernels/vec/vmath.h, fe_k_vform_ok): the baseline
# build runs their scalar and SSE2 paths, PORTABLE_ARCH=x86-64-v3 (its own
# tree too) keeps the AVX2 ones, which valgrind also runs
# (docs/architecture.md, "Building").
PORTABLE_ARCH ?= x86-64
ifeq ($(PORTABLE),1)
BUILD := $(BUILD)/portable$(if $(filter-out x86-64,$(PORTABLE_ARCH)),-$(PORTABLE_ARCH))
ARCH_CFLAGS := $(shell $(CC) -march=$(PORTABLE_ARCH) -E -x c /dev/null >/dev/null 2>&1 && echo -march=$(PORTABLE_ARCH) -mtune=generic)
endif

# The layers, bottom to top (tests/tools/layers.lua reads these lines). A
# layer sees the layers listed before it, unless SEES_<layer> names fewer:
# a device's code generator does not see another device's.
LAYERS := core/ir kernels/vec kernels/ops kernels/group kernels/cpu kernels/gpu \
          core/import core/plan core/sim core/exec core/script core/api
SEES_kernels/gpu := core/ir kernels/vec kernels/ops kernels/group
# INC_<layer>: the -I flags of the layers it sees and of its own folder.
seen :=
$(foreach l,$(LAYERS),$(eval INC_$(l) := $(foreach s,$(if $(SEES_$(l)),$(SEES_$(l)),$(seen)),-I$(s)) -I$(l))$(eval seen += $(l)))
# The public headers: seen by core/api (which defines every call in them),
# core/cli, core/shim and the programs outside the library, never by a
# layer beneath core/api.
PUBLIC_INC := -Icore/include
INC_core/api += $(PUBLIC_INC)
ALL_INC := $(foreach l,$(LAYERS),-I$(l)) $(PUBLIC_INC)
# The version, from its one place (core/ir/version.h), for fuseeng.pc.
VERSION := $(shell sed -n 's/^\#define FE_VERSION "\(.*\)"$$/\1/p' core/ir/version.h)

# -Werror is for development and CI, never a user's build: a compiler or
# -march that warns where ours did not must not stop `make`. `make WERROR=1`
# turns it on; tests/cli/warnings.sh (in `make test`) compiles every source
# with it for several -march targets and clang (docs/architecture.md, "Builds").
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
CFLAGS := -std=c11 $(OPT) -g -Wall -Wextra $(WERROR_FLAG) -fPIC -fopenmp \
          -D_GNU_SOURCE $(ARCH_CFLAGS) $(SAN)
# The OpenMP runtime is the compiler's own, linked by -fopenmp (gcc:
# libgomp, clang: libomp), and only that one: a -lgomp beside clang's
# libomp came first in the lookup order, so clang's code forked its
# parallel regions in libomp but took omp_get_thread_num from libgomp, 0
# in every thread. libdnnl still loads libgomp, but after the runtime
# named here, whose GOMP_ symbols then serve it. OMP_LIB names the runtime
# for fuseeng.pc, whose users may link without -fopenmp.
OMP_LIB := $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),-lomp,-lgomp)
LDLIBS = $(LPEG_A) $(PKG_LIBS) -lm -ldl -lpthread
LDFLAGS := $(SAN) -fopenmp

LIB_SRC := $(foreach l,$(LAYERS),$(wildcard $(l)/*.c))
CLI_SRC := $(wildcard core/cli/*.c)
SHIM_SRC := core/shim/fuseeng_shim.c
TEST_SRC := $(wildcard tests/test_*.c)
BENCH_SRC := $(wildcard tests/bench/*.c)

# The ONNX schema, compiled by protoc-c at build time from Debian's onnx.proto
# (python3-onnx), never committed: the generated code follows the installed
# schema and protobuf-c. Only core/import sees its header.
ONNX_PROTO ?= /usr/lib/python3/dist-packages/onnx/onnx.proto
GEN := $(BUILD)/gen
GEN_OBJ := $(BUILD)/obj/gen/onnx.pb-c.o
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_OBJ)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
EXAMPLE_BIN := $(BUILD)/examples/embed

DEPS_OK := build/.deps-ok

.PHONY: all deps test demo bench models install clean
all: $(BUILD)/fuseeng $(BUILD)/libfuseeng.a $(BUILD)/libfuseeng.so

# The install prefix is compiled into the home's finder (core/script/home.c)
# as the last place to look for lua/ and policies/: a program linked with
# the installed libfuseeng.a has no other way to find them. A stamp named
# after the prefix rebuilds that one object when the prefix changes.
PREFIX_STAMP := $(BUILD)/.prefix$(subst /,_,$(subst _,__,$(PREFIX)))
$(PREFIX_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.prefix*
	@touch $@
$(BUILD)/obj/core/script/home.o: $(PREFIX_STAMP)
$(BUILD)/obj/core/script/home.o: CFLAGS += -DFE_DATADIR='"$(PREFIX)/share/fuseeng"'

# The commit the build comes from, compiled into provenance.o (every report
# and --version say it), "-dirty" when tracked files differ from it, and
# "unknown" outside a git tree (a tarball). A stamp per commit rebuilds
# that one object when it changes.
COMMIT := $(or $(shell git rev-parse --short=12 HEAD 2>/dev/null),unknown)$(if $(shell git status --porcelain --untracked-files=no 2>/dev/null | head -c1),-dirty)
COMMIT_STAMP := $(BUILD)/.commit-$(COMMIT)
$(COMMIT_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.commit-*
	@touch $@
$(BUILD)/obj/core/api/provenance.o: $(COMMIT_STAMP)
$(BUILD)/obj/core/api/provenance.o: CFLAGS += -DFE_COMMIT='"$(COMMIT)"'

# Install missing system packages once; re-run when the script changes.
$(DEPS_OK): scripts/deps.sh
	@mkdir -p build
	sh scripts/deps.sh
	@touch $@
deps: $(DEPS_OK)

# Each layer's objects see only the headers of their layer and those below
# (core/api the public headers too); the command and the shim see the
# public headers (and the command its own).
$(foreach l,$(LAYERS),$(eval $(BUILD)/obj/$(l)/%.o: LAYER_INC := $(INC_$(l))))
$(BUILD)/obj/core/cli/%.o: LAYER_INC := $(PUBLIC_INC) -Icore/cli
$(BUILD)/obj/core/shim/%.o: LAYER_INC := $(PUBLIC_INC)

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(LAYER_INC) $(GEN_INC) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# onnx.pb-c.{c,h} from ONNX_PROTO; a missing schema says which package has it.
$(GEN)/onnx.pb-c.h: $(GEN)/onnx.pb-c.c
$(GEN)/onnx.pb-c.c: $(wildcard $(ONNX_PROTO)) | $(DEPS_OK)
	@test -f "$(ONNX_PROTO)" || { echo "make: ONNX schema $(ONNX_PROTO) not found: install python3-onnx (scripts/deps.sh) or set ONNX_PROTO=PATH/onnx.proto" >&2; exit 1; }
	@mkdir -p $(GEN)
	$(call say,PROTOC,$(ONNX_PROTO))
	$(Q)protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(GEN) $(ONNX_PROTO)
# Generated code is not ours to keep warning-free: plain warnings for it alone.
$(GEN_OBJ): $(GEN)/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(filter-out -Werror -Wextra,$(CFLAGS)) -w -I$(GEN) $(PKG_CFLAGS) -c $< -o $@
$(BUILD)/obj/core/import/%.o: GEN_INC := -I$(GEN)
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard core/import/*.c)): $(GEN)/onnx.pb-c.h

$(BUILD)/libfuseeng.a: $(LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

# The engine as a shared object. Lua 5.4 is linked in by its own soname;
# libfuseeng.so (below) loads this with RTLD_DEEPBIND so that a host that
# carries another Lua (LuaJIT exports lua_* too) cannot capture its calls.
$(BUILD)/libfuseeng-core.so: $(LIB_OBJ)
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,--exclude-libs,ALL -Wl,-Bsymbolic $(LDLIBS)

$(BUILD)/libfuseeng.so: $(BUILD)/obj/$(SHIM_SRC:.c=.o) $(BUILD)/libfuseeng-core.so
	$(call say,LD,$@)
	$(Q)$(CC) -shared -o $@ $(BUILD)/obj/$(SHIM_SRC:.c=.o) $(LDFLAGS) -ldl

$(BUILD)/fuseeng: $(CLI_OBJ) $(BUILD)/libfuseeng.a
	$(call say,LD,$@)
	$(Q)$(CC) -o $@ $(CLI_OBJ) $(BUILD)/libfuseeng.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libfuseeng.a | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(ALL_INC) $(PKG_CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libfuseeng.a $(LDFLAGS) $(LDLIBS) -lcmocka

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libfuseeng.a | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(ALL_INC) $(PKG_CFLAGS) -MMD -MP -o $@ $< $(BUILD)/libfuseeng.a $(LDFLAGS) $(LDLIBS)

# Examples link the public shared library, as a user's program would.
$(BUILD)/examples/%: examples/%.c $(BUILD)/libfuseeng.so
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) -std=c11 -Wall -Wextra $(WERROR_FLAG) $(SAN) $(PUBLIC_INC) -o $@ $< \
	    -L$(BUILD) -lfuseeng -Wl,-rpath,'$$ORIGIN/..'

# The benchmark programs are built too, so that they cannot rot unnoticed.
test: all $(TEST_BIN) $(EXAMPLE_BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) SHARED=$(SHARED) SANITIZE=$(SANITIZE) sh tests/run.sh

demo: all
	sh examples/demo.sh $(BUILD)/fuseeng

# make bundle: fuseeng for a machine with no package registry (a GPU node):
# the PORTABLE=1 build with the libraries it needs, the Lua files and the
# policies, relocatable, as $(BUILD)/bundle/fuseeng and a .tar.xz of it
# (scripts/bundle.sh; docs/cuda.md says how to use it).
.PHONY: bundle
bundle:
	$(MAKE) --no-print-directory PORTABLE=1 SANITIZE=
	sh scripts/bundle.sh $(BUILD)/portable/fuseeng $(BUILD)/bundle/fuseeng
	tar cJf $(BUILD)/bundle/fuseeng.tar.xz -C $(BUILD)/bundle fuseeng

# make bench: every benchmark program, and the run as a dated entry of the
# performance log (tests/bench/run.sh writes $(BUILD)/bench/entry.md and
# inserts it into BENCH_LOG; `make bench BENCH_LOG=` writes the entry only).
BENCH_LOG ?= docs/performance.md
bench: all $(BENCH_BIN)
	@BUILD=$(BUILD) BENCH_LOG=$(BENCH_LOG) CC="$(CC)" BENCH_CFLAGS="$(OPT) $(ARCH_CFLAGS) $(SAN)" \
	    sh tests/bench/run.sh

models: | $(DEPS_OK)
	lua5.4 examples/gen_models.lua examples

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/fuseeng
	install -m 755 $(BUILD)/fuseeng $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libfuseeng.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libfuseeng.so $(BUILD)/libfuseeng-core.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 core/include/fuseeng.h core/include/fuseeng_cli.h $(DESTDIR)$(PREFIX)/include/
	cp -R lua policies $(DESTDIR)$(PREFIX)/share/fuseeng/
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 docs/fuseeng.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 scripts/fuseeng.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/fuseeng
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS@|$(LPEG_A) $(PKG_LIBS) $(OMP_LIB) -lm -ldl -lpthread|' \
	    core/fuseeng.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/fuseeng.pc

# make valgrind: tests/valgrind/run.sh's full set under memcheck on the
# PORTABLE=1 tree, then its kernels set on an x86-64-v3 tree where this CPU
# has AVX2 (which valgrind decodes), so that the kernels' AVX2 paths are
# checked as well (the rest is the same code, compiled for another ISA)
# (docs/architecture.md, "Builds"). Never on the sanitizer tree: ASan and
# valgrind both replace malloc.
VG_SET ?= full
VG_ARCHS ?= x86-64 $(if $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo y),x86-64-v3)
.PHONY: valgrind valgrind-tree
valgrind:
	$(Q)set=full; for a in $(VG_ARCHS); do \
	    $(MAKE) --no-print-directory PORTABLE=1 PORTABLE_ARCH=$$a SANITIZE= VG_SET=$$set valgrind-tree || exit 1; \
	    set=kernels; \
	done
valgrind-tree: all $(TEST_BIN) $(EXAMPLE_BIN)
	@echo "# valgrind ($(VG_SET) set) on $(BUILD) ($(ARCH_CFLAGS))"
	$(Q)BUILD=$(BUILD) SHARED=$(SHARED) sh tests/valgrind/run.sh $(VG_SET)

clean:
	rm -rf build

# ---- the differential tester (tests/difftest, docs/testing.md) ----
# `make test` replays the kept seeds and a few hundred more (tests/cli/
# difftest.sh); `make difftest DIFF_SEEDS=N` runs seeds 1..N, leaving the
# model of any failure in $(BUILD)/difftest.
DIFFTEST_BIN := $(BUILD)/difftest/difftest
DIFF_SEEDS ?= 2000
$(DIFFTEST_BIN): $(wildcard tests/difftest/*.c tests/difftest/*.h) $(BUILD)/libfuseeng.a | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CC,tests/difftest)
	$(Q)$(CC) $(CFLAGS) $(ALL_INC) $(PKG_CFLAGS) -o $@ $(wildcard tests/difftest/*.c) \
	    $(BUILD)/libfuseeng.a $(LDFLAGS) $(LDLIBS)
test: $(DIFFTEST_BIN)
difftest: all $(DIFFTEST_BIN)
	OMP_WAIT_POLICY=passive $(DIFFTEST_BIN) --list tests/difftest/seeds.txt \
	    --seeds 1:$(DIFF_SEEDS) --out $(BUILD)/difftest
.PHONY: difftest

# ---- Fuzzing (docs/testing.md) ----
# make fuzz FUZZ_S=N: build the libFuzzer harnesses tests/fuzz/fuzz_*.c with
# clang under ASan + UBSan (the library too, in build/fuzz/) and run each for
# N seconds, at lower priority. make test replays the kept regression
# inputs and the seeds through the same harnesses built with $(CC).
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_S ?= 60
FUZZ_CC ?= clang
FUZZ_DIR := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Wno-pass-failed -fPIC -fopenmp -D_GNU_SOURCE $(ARCH_CFLAGS) \
               $(FUZZ_SAN)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/gen/onnx.pb-c.o
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_REPLAY := $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/fuzz_%)

$(foreach l,$(LAYERS),$(eval $(FUZZ_DIR)/obj/$(l)/%.o: LAYER_INC := $(INC_$(l))))

$(FUZZ_DIR)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CLANG,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(LAYER_INC) $(GEN_INC) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/obj/gen/onnx.pb-c.o: $(GEN)/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(filter-out -Werror -Wextra,$(FUZZ_CFLAGS)) -w -I$(GEN) $(PKG_CFLAGS) -c $< -o $@
$(FUZZ_DIR)/obj/core/import/%.o: GEN_INC := -I$(GEN)
$(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard core/import/*.c)): $(GEN)/onnx.pb-c.h

$(FUZZ_DIR)/libfuseeng.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_DIR)/libfuseeng.a
	$(call say,CLANG,$<)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(ALL_INC) $(PKG_CFLAGS) -o $@ $< \
	    $(FUZZ_DIR)/libfuseeng.a $(LDLIBS)

$(BUILD)/fuzz-replay/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h tests/fuzz/replay.c $(BUILD)/libfuseeng.a
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) $(ALL_INC) $(PKG_CFLAGS) -o $@ $< tests/fuzz/replay.c \
	    $(BUILD)/libfuseeng.a $(LDFLAGS) $(LDLIBS)

test: $(FUZZ_REPLAY)

# Then the differential tester over FUZZ_SEEDS random graphs (make test
# runs a few hundred).
FUZZ_SEEDS ?= 5000
.PHONY: fuzz
fuzz: all $(FUZZ_BIN) $(DIFFTEST_BIN)
	@FUSEENG=$(BUILD)/fuseeng FUZZ_DIR=$(FUZZ_DIR) sh tests/fuzz/fuzz.sh $(FUZZ_S) $(FUZZ_TARGETS)
	$(MAKE) --no-print-directory difftest DIFF_SEEDS=$(FUZZ_SEEDS)

-include $(FUZZ_LIB_OBJ:.o=.d)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d) $(BENCH_BIN:=.d)
