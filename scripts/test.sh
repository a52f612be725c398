#!/usr/bin/env bash
# Builds and runs every test suite: the normal build (all tests), an ASan+UBSan build (all
# tests), a TSan build (the threaded tests: label "dual" and the sampler), on x86-64 hosts an
# aarch64 cross build of the CPU kernel tests run under qemu (the NEON kernels), and the fuzz
# suite (scripts/fuzz.sh: a clang build of the libFuzzer targets, each replaying its corpus then
# fuzzing for EB_FUZZ_SECONDS, default 10; 0 = replay only). The sanitizer and aarch64 builds
# run in the background, at the lowest priority, while the normal suite's tests run. Each
# suite's line gives its time; the closing line "tests: N passed, N failed, N skipped (M min)" is
# over all five (one fuzz test per target). Exit status 0 only when nothing failed.
set -u
cd "$(dirname "$0")/.." || exit 1
jobs=$(nproc 2>/dev/null || echo 2)
passed=0 failed=0 skipped=0 broken=0

# suite_targets BUILD_DIR CTEST_ARGS: the build targets the tests CTEST_ARGS select need (a
# configured BUILD_DIR): unit.M.* and kernels.M.* need test_M, conformance.N test_N, e2e.* the
# binary and the tests' helpers.
suite_targets() {
  # shellcheck disable=SC2086
  (cd "$1" && ctest -N $2) | sed -nE 's/^ *Test +#[0-9]+: ([a-z0-9_]+)\.([a-z0-9_]+).*/\1 \2/p' |
    while read -r group mod; do
      case $group in
      e2e) echo edgebench eb_jsonq eb_mkonnx eb_fake_nvml eb_tracecheck eb_rtsp_relay ;;
      *) echo "test_$mod" ;;
      esac
    done | tr ' ' '\n' | sort -u | tr '\n' ' '
  cmake --build "$1" --target help 2>/dev/null | grep -E '^\.\.\. eb_nvtx_inject$' >/dev/null && echo eb_nvtx_inject
}

# build_suite BUILD_DIR CMAKE_ARGS CTEST_ARGS [only]: configures and builds; "only" builds just
# what the selected tests need (suite_targets), else everything. On failure the reason goes to
# BUILD_DIR.failed (printed by test_suite) and the status is 1.
build_suite() {
  local dir=$1 cargs=$2 targs=$3 only=${4:-} targets=""
  rm -f "$dir.failed"
  # shellcheck disable=SC2086
  if ! cmake -S . -B "$dir" -DEB_BUILD_BENCH=ON $cargs >"$dir.configure.log" 2>&1; then
    cp "$dir.configure.log" "$dir.failed"; return 1
  fi
  [ -n "$only" ] && targets="--target $(suite_targets "$dir" "$targs")"
  # shellcheck disable=SC2086
  if ! cmake --build "$dir" -j "$jobs" $targets >"$dir.build.log" 2>&1; then
    grep -E 'error|Error' "$dir.build.log" | head -40 >"$dir.failed"; return 1
  fi
}

# test_suite NAME BUILD_DIR CTEST_ARGS: the suite's tests, once build_suite has run (the
# suite is broken when it failed); adds to the counts.
test_suite() {
  local name=$1 dir=$2 targs=$3 log t0=$SECONDS
  if [ -f "$dir.failed" ] || [ ! -f "$dir/CTestTestfile.cmake" ]; then
    echo "$name: the build failed:"; cat "$dir.failed" 2>/dev/null; broken=$((broken + 1)); return
  fi
  log="$dir/ctest.log"
  # shellcheck disable=SC2086
  (cd "$dir" && ctest --output-on-failure -j "$jobs" $targs) 2>&1 | tee "$log" | \
    grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|Failed|\*\*\*|FAIL|Error' | \
    grep -vE 'Passed|Not Run' | head -200
  local total fail skip
  total=$(grep -Eo 'tests failed out of [0-9]+' "$log" | grep -Eo '[0-9]+$' | tail -1)
  fail=$(grep -Eo '[0-9]+ tests failed out of' "$log" | grep -Eo '^[0-9]+' | tail -1)
  skip=$(grep -cE '\*\*\*Skipped|Not Run \(Disabled\)' "$log")
  total=${total:-0} fail=${fail:-0}
  [ "$total" -gt 0 ] || { echo "$name: no test ran"; broken=$((broken + 1)); return; }
  echo "$name: $((total - fail - skip)) passed, $fail failed, $skip skipped (tests: $((SECONDS - t0)) s)"
  passed=$((passed + total - fail - skip)); failed=$((failed + fail)); skipped=$((skipped + skip))
}

echo "== normal: configure and build in build"
t0=$SECONDS
build_suite build "-DCMAKE_BUILD_TYPE=RelWithDebInfo" ""
echo "normal: build $((SECONDS - t0)) s"

# The sanitizer builds leave the CUDA device out (-DEB_CUDA=OFF): the CUDA runtime and ASan/TSan
# do not mix, and CI has no GPU; the normal build compiles the CUDA sources.
# The families' coco128 mAP bands (e2e.families.*_val_coco128) and the quantised models' mAP
# (two e2e.quantize cases) check figures, not memory: the same decoders, preprocessing,
# calibration and QDQ writer run under ASan in the families' bus.jpg cases, unit.quantize.* and
# the other e2e.quantize cases, so the slow instrumented passes are left to the normal suite.
# The same holds for e2e.val.val_coco128_ort and e2e.run_data.rgb_coco128_matches_val (figures:
# ONNX Runtime's mAP, run --data's equal to val's): val and run --data run under ASan in the
# other e2e.val and e2e.run_data cases.
# Likewise the e2e.html cases that open the report in Chromium: the browser is not instrumented,
# and the HTML writer runs under ASan in unit.html.* and every e2e case that writes a report.
# The sanitizer builds leave bench/ out (the normal build compiles it; nothing runs it here),
# and the ASan build is -O1, as ASan's documentation advises: the engine's kernels at -O0 are
# most of its tests' time.
# e2e.soak.*: measures the process's RSS, which ASan's shadow memory and quarantine grow by design.
# The float families' bus.jpg cases (yolox, nanodet, yolov5lite, Yolo-FastestV2, FastestDet): what
# differs between them, the head decoders and the preprocessing, runs under ASan in unit.head.*
# and unit.model_profile.*; the int8 families' cases stay (real-model shapes through the int8
# kernels). Eight of the eleven e2e.profile_ncu cases (a fake ncu's usage, paths, timeouts and
# signals): ncu's output is parsed under ASan in unit.ncu.*, and the fake-ncu summary, the run
# without ncu and ncu's failure stay. The synthesizer's shadow evaluation against ONNX Runtime
# (the evaluation runs under ASan in every case that synthesizes a model), the fp16-on-CPU sweep
# (its rows' refusal is the compare cases' code) and the ORT per-operator tables of a run and of
# an llm (ORT's profile files are parsed under ASan in unit.ort.profile_file_*): ONNX Runtime's
# own work, which ASan does not instrument, is most of their time.
asan_cargs="-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DEB_BUILD_BENCH=OFF -DEB_SANITIZE=address,undefined -DEB_TEST_TIMEOUT_MULTIPLIER=3 -DEB_CUDA=OFF"
asan_targs="-E ^e2e\.soak\.|^e2e\.families\.(yolox_nano|nanodet_m|yolov5lite_e|yolo_fastestv2|fastestdet)_bus$|^e2e\.profile_ncu\.(help_and_usage_errors|ncu_path_option|ncu_profiles_nothing|no_ncu_on_path|no_profile_to_target|nvtx_ranges_emitted|ncu_timeout_stops_and_reaps_ncu|ncu_sigint_is_forwarded_and_reaped)$|^e2e\.families\..*_val_coco128$|^e2e\.quantize\.(yolov8n_float_twin_requantised|opset11_model_in_both_backends)$|^e2e\.html\..*_loads_in_chromium$|^e2e\.val\.val_coco128_ort$|^e2e\.run_data\.rgb_coco128_matches_val$|^unit\.model\.synth_shadow_matches_ort_(yolov8n|yolo11n)$|^e2e\.compare\.sweep_fp16_unsupported_on_cpu$|^e2e\.profile\.ort_profile_tables_add_up$|^e2e\.llm\.profile_per_phase_ort$"
# ONNX Runtime is not instrumented: with its own thread pool TSan sees its internal hand-offs
# as races (see tests/tsan.supp) and slows to a crawl; one intra-op thread per session keeps
# ORT on the slot threads, whose parallelism is what this suite checks. Only the executables
# of these tests are built (about a third of the build). Left out: the soak (RSS under TSan's
# shadow memory) and the dual run of the two shared real models on their datasets (the same slot
# threads as the embedded default's dual run, with real models' compute: 100 s under TSan).
tsan_cargs="-DCMAKE_BUILD_TYPE=Debug -DEB_BUILD_BENCH=OFF -DEB_SANITIZE=thread -DEB_TEST_TIMEOUT_MULTIPLIER=5 -DEB_CUDA=OFF"
tsan_targs="-R dual|sampler|thread|concurrent -E ^e2e\.soak\.|^e2e\.run\.dual_real_models_coco_and_hituav$"

# The NEON kernels (src/engine/cpu/arm) against their references: the kernel tests only
# (EB_KERNEL_TESTS_ONLY), cross-compiled for aarch64 and run by ctest through qemu user-mode
# emulation (cmake/aarch64-linux-gnu.cmake). scripts/setup.sh installs the cross compiler and
# qemu on x86-64 hosts; elsewhere the suite is skipped with its reason and counted as 1 skipped.
aarch64_skip=""
if [ "$(uname -m)" != x86_64 ]; then
  aarch64_skip="the host is $(uname -m), not x86-64 (on aarch64 the normal suite runs the NEON kernels)"
elif ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
  aarch64_skip="aarch64-linux-gnu-gcc is missing (Debian package gcc-aarch64-linux-gnu)"
elif [ ! -f /usr/aarch64-linux-gnu/include/stdio.h ]; then
  aarch64_skip="the aarch64 C library headers are missing (Debian package libc6-dev-arm64-cross)"
elif ! command -v qemu-aarch64 >/dev/null 2>&1; then
  aarch64_skip="qemu-aarch64 is missing (Debian package qemu-user)"
fi
a64_cargs="-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DEB_KERNEL_TESTS_ONLY=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo"

# The sanitizer and aarch64 builds run while the normal suite's tests do, at the lowest CPU
# priority (renice 19: a test that wants a core gets it; many of them wait on servers, pacing
# or timeouts, and the builds take the idle time), one after another in the background.
echo "== asan+ubsan, tsan$([ -z "$aarch64_skip" ] && echo ", aarch64"): configure and build in the background"
(
  renice -n 19 -p "$BASHPID" >/dev/null 2>&1
  build_suite build-asan "$asan_cargs" "$asan_targs"
  build_suite build-tsan "$tsan_cargs" "$tsan_targs" only
  [ -n "$aarch64_skip" ] || build_suite build-aarch64 "$a64_cargs" ""
) &
bg_builds=$!

echo "== normal: tests"
test_suite "normal" build ""
t0=$SECONDS
wait "$bg_builds"
echo "== the background builds: $((SECONDS - t0)) s more"

echo "== asan+ubsan: tests (build-asan)"
test_suite "asan+ubsan" build-asan "$asan_targs"
echo "== tsan: tests (build-tsan)"
EB_TEST_RUN_ARGS="--threads 1" test_suite "tsan" build-tsan "$tsan_targs"
if [ -n "$aarch64_skip" ]; then
  echo "== aarch64 (qemu): skipped: $aarch64_skip"
  skipped=$((skipped + 1))
else
  echo "== aarch64 (qemu): tests (build-aarch64)"
  test_suite "aarch64 (qemu)" build-aarch64 ""
fi

# The libFuzzer targets under ASan+UBSan, two at a time (one job each): see scripts/fuzz.sh.
# One test per target: passed when its corpus replayed and the fuzzing found nothing; a crash,
# leak, hang or out-of-memory is a failure with its reproducer's path printed. Without clang or
# the libFuzzer runtime the suite is skipped with its reason and counted as 1 skipped.
# 10 s per target: on a 2-core machine the clang build of the targets takes about 3.5 minutes
# and ten targets two at a time about 1 more, so the suite adds about 4.5 minutes.
echo "== fuzz: ${EB_FUZZ_SECONDS:-10} s per target (EB_FUZZ_SECONDS)"
fuzz_t0=$SECONDS
bash scripts/fuzz.sh --build-dir build-fuzz --seconds "${EB_FUZZ_SECONDS:-10}" --jobs 1 --parallel 2 \
  >build-fuzz.log 2>&1
fuzz_rc=$?
grep -E '^fuzz' build-fuzz.log
echo "fuzz: $((SECONDS - fuzz_t0)) s"
if [ "$fuzz_rc" -eq 77 ]; then
  skipped=$((skipped + 1))
elif line=$(grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' build-fuzz.log | tail -1); then
  read -r _ np _ nf _ ns _ <<<"$line"
  passed=$((passed + np)); failed=$((failed + nf)); skipped=$((skipped + ns))
else
  tail -20 build-fuzz.log
  broken=$((broken + 1))
fi

failed=$((failed + broken))
echo "tests: $passed passed, $failed failed, $skipped skipped ($((SECONDS / 60)) min)"
[ "$failed" -eq 0 ]
