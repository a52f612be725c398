# edgebench: thin wrapper over CMake. `make demo` and `make test` install what they need.
BUILD      ?= build
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all build setup demo test install clean

all: build

setup:
	@bash scripts/setup.sh --quiet

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS) >/dev/null

build: $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

# The embedded default: dual mode, synthesized yolov8n (rgb) and yolo11n (thermal) on synthetic
# streams; prints where the report is.
demo: setup
	@$(MAKE) --no-print-directory build
	@./$(BUILD)/src/edgebench run --mode dual

# Every test: the normal build, the ASan+UBSan build (whole suite), the TSan build (the
# threaded tests) and the aarch64 kernel tests under qemu (x86-64 hosts); one closing line with
# the totals.
test: setup
	@bash scripts/test.sh

install: build
	@cmake --install $(BUILD)

clean:
	@rm -rf $(BUILD) build-asan build-tsan build-aarch64
