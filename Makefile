# edgebench: thin wrapper over CMake. `make demo` and `make test` install what they need
# (scripts/setup.sh --for demo / --for test); plain `make` only builds, and on a machine that
# lacks something the build needs it stops at configure time with one line naming it and
# `make setup`.
BUILD      ?= build
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all build setup demo test fuzz install clean

all: build

# What the build and the demo need: build tools, the libraries edgebench links, ONNX Runtime.
setup:
	@bash scripts/setup.sh --for demo --quiet

# Configure once. A failed configure leaves no cache behind (so the next `make` configures
# again) and shows its one-line reason (CMakeLists.txt: "edgebench: missing ...") or, for any
# other failure, CMake's whole output.
$(BUILD)/CMakeCache.txt:
	@m=""; command -v cmake >/dev/null 2>&1 || m="cmake (Debian cmake)"; \
	cc="$${CC:-cc}"; command -v "$${cc%% *}" >/dev/null 2>&1 || m="$${m:+$$m, }a C compiler (Debian build-essential)"; \
	[ -z "$$m" ] || { echo "edgebench: missing $$m: run \`make setup\` (it installs them), then \`make\` again" >&2; exit 1; }
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS) \
		>$(BUILD)/configure.log 2>&1 || { rm -f $@; \
		grep -m1 -o 'edgebench: missing .*' $(BUILD)/configure.log >&2 || cat $(BUILD)/configure.log >&2; exit 1; }

build: $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

# The embedded default: dual mode, synthesized yolov8n (rgb) and yolo11n (thermal) on synthetic
# streams; prints where the report is.
demo: setup
	@$(MAKE) --no-print-directory build
	@./$(BUILD)/src/edgebench run --mode dual

# Every test: the normal build, the ASan+UBSan build (whole suite), the TSan build (the
# threaded tests), the aarch64 kernel tests under qemu (x86-64 hosts) and the fuzz suite
# (EB_FUZZ_SECONDS per target, default 10; 0 = corpus replay only); one closing line with the
# totals.
test:
	@bash scripts/setup.sh --for test --quiet
	@bash scripts/test.sh

# The libFuzzer targets (clang build in build-fuzz) for as long as asked, e.g.
# `make fuzz FUZZ_SECONDS=600 FUZZ_TARGETS="onnx png" FUZZ_JOBS=8`, or a count of executions
# per job (FUZZ_RUNS, 0 = none; FUZZ_SECONDS still bounds it); prints per target the
# executions run and whether anything was found (scripts/fuzz.sh --help for the rest).
FUZZ_SECONDS ?= 300
FUZZ_JOBS    ?= 1
FUZZ_RUNS    ?= 0
FUZZ_TARGETS ?=
fuzz:
	@bash scripts/setup.sh --for test --quiet
	@bash scripts/fuzz.sh --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS) --runs $(FUZZ_RUNS) $(FUZZ_TARGETS)

install: build
	@cmake --install $(BUILD)

clean:
	@rm -rf $(BUILD) build-asan build-tsan build-aarch64 build-fuzz
