#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (tests/fuzz; one per parser of user files) under
# ASan+UBSan: each target first replays its corpus (tests/fuzz/corpus/<target>), then fuzzes for
# --seconds with --jobs processes. Used by `make test` (scripts/test.sh, EB_FUZZ_SECONDS each)
# and `make fuzz` (FUZZ_SECONDS, FUZZ_TARGETS, FUZZ_JOBS).
#
#   scripts/fuzz.sh [options] [TARGET...]       (default: every target)
#     --seconds N     fuzzing time per target after the replay; 0 = replay only (default 60)
#     --jobs N        fuzzing processes per target, sharing its work corpus (default 1)
#     --runs N        each job stops after N executions even before --seconds (default 0: no
#                     limit); e.g. --jobs 16 --runs 625000 --seconds 600 for 10 million a target
#     --parallel N    targets run at the same time (default 1)
#     --build-dir D   the build folder (default build-fuzz): configured with clang, -DEB_FUZZ=ON,
#                     ASan+UBSan, and only the fuzz targets are built
#     --no-build      run the targets already built in --build-dir (D/tests/fuzz_<target> or
#                     D/fuzz_<target>): no clang needed, e.g. on a machine the binaries were
#                     copied to with their libraries (--bundle)
#     --bundle OUT    after building, copy the targets and the shared libraries they need (but
#                     the C library's) into OUT, to run there with --no-build --build-dir OUT
#     --corpus D      the seed corpora (default tests/fuzz/corpus of this checkout)
#
# Per target it prints one line, also written to D/fuzz-summary.txt:
#   fuzz <target>: passed: 123456 executions in 60 s (1 job), nothing found
#   fuzz <target>: FAILED: crash found: D/fuzz-artifacts/<target>/crash-... (reproduce: ...)
# then "fuzz: N passed, N failed, N skipped". New inputs the fuzzer keeps go to
# D/fuzz-work/<target> (reused by the next run); the libFuzzer logs to D/fuzz-logs/<target>.
# Exit status: 0 when nothing failed, 1 when something did, 77 when nothing could run (no clang
# or no libFuzzer runtime; the reason is printed).
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
all_targets="onnx png jpeg bmp tegrastats cli coco yolo voc profile prompt_ids"
seconds=60 jobs=1 runs=0 parallel=1 build_dir=build-fuzz no_build=0 bundle="" corpus="$repo/tests/fuzz/corpus"
targets=""
usage() { sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; }
need_value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then
    echo "fuzz.sh: $1 needs a value" >&2
    exit 2
  fi
}
while [ $# -gt 0 ]; do
  case "$1" in
  --seconds) need_value "$@"; seconds=$2; shift 2 ;;
  --jobs) need_value "$@"; jobs=$2; shift 2 ;;
  --runs) need_value "$@"; runs=$2; shift 2 ;;
  --parallel) need_value "$@"; parallel=$2; shift 2 ;;
  --build-dir) need_value "$@"; build_dir=$2; shift 2 ;;
  --bundle) need_value "$@"; bundle=$2; shift 2 ;;
  --corpus) need_value "$@"; corpus=$2; shift 2 ;;
  --no-build) no_build=1; shift ;;
  -h | --help) usage; exit 0 ;;
  -*) echo "fuzz.sh: unknown option '$1'; see scripts/fuzz.sh --help" >&2; exit 2 ;;
  *) targets="$targets $1"; shift ;;
  esac
done
for v in seconds jobs runs parallel; do
  case "${!v}" in
  '' | *[!0-9]*) echo "fuzz.sh: --$v must be a whole number, not '${!v}'" >&2; exit 2 ;;
  esac
done
if [ "$jobs" -lt 1 ] || [ "$parallel" -lt 1 ]; then
  echo "fuzz.sh: --jobs and --parallel must be at least 1" >&2
  exit 2
fi
targets=${targets:-$all_targets}
for t in $targets; do
  case " $all_targets " in
  *" $t "*) ;;
  *) echo "fuzz.sh: unknown target '$t'; the targets are: $all_targets" >&2; exit 2 ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$PWD/$build_dir" ;; esac

# ---------------------------------------------------------------- build
if [ "$no_build" -eq 0 ]; then
  skip=""
  if ! command -v clang >/dev/null 2>&1; then
    skip="clang is missing (Debian package clang; scripts/setup.sh --for test installs it)"
  elif ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' |
    clang -x c -fsanitize=fuzzer,address -o /dev/null - >/dev/null 2>&1; then
    skip="clang cannot link libFuzzer (Debian package libclang-rt-14-dev; scripts/setup.sh --for test installs it)"
  fi
  if [ -n "$skip" ]; then
    echo "fuzz: skipped: $skip"
    exit 77
  fi
  mkdir -p "$build_dir"
  echo "fuzz: configure and build in $build_dir"
  if ! (cd "$repo" && cmake -S . -B "$build_dir" -DCMAKE_C_COMPILER=clang -DEB_FUZZ=ON \
    -DEB_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug -DEB_CUDA=OFF -DEB_BUILD_BENCH=OFF \
    >"$build_dir/configure.log" 2>&1); then
    cat "$build_dir/configure.log"
    echo "fuzz: FAILED: configure (log: $build_dir/configure.log)"
    exit 1
  fi
  bins=""
  for t in $targets; do bins="$bins fuzz_$t"; done
  # shellcheck disable=SC2086
  if ! cmake --build "$build_dir" -j "$(nproc 2>/dev/null || echo 2)" --target $bins \
    >"$build_dir/build.log" 2>&1; then
    grep -E 'error|Error' "$build_dir/build.log" | head -40
    echo "fuzz: FAILED: build (log: $build_dir/build.log)"
    exit 1
  fi
fi

# The executable of target $1 in the build folder, or "".
bin_of() {
  local b
  for b in "$build_dir/tests/fuzz_$1" "$build_dir/fuzz_$1"; do
    [ -x "$b" ] && { echo "$b"; return; }
  done
  echo ""
}

if [ -n "$bundle" ]; then
  mkdir -p "$bundle/lib" || exit 1
  for t in $targets; do
    b=$(bin_of "$t")
    [ -n "$b" ] || { echo "fuzz.sh: fuzz_$t was not built in $build_dir" >&2; exit 1; }
    cp "$b" "$bundle/" || exit 1
    # Every resolved library but the C library's own (libc, libm, the loader...), which the
    # other machine has and must match its kernel.
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
      grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
      while read -r lib; do cp -L "$lib" "$bundle/lib/"; done
  done
  echo "fuzz: bundled $(echo "$targets" | wc -w) targets in $bundle (run: scripts/fuzz.sh --no-build --build-dir $bundle ...)"
fi
[ -d "$build_dir/lib" ] && export LD_LIBRARY_PATH="$build_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---------------------------------------------------------------- run
# The dataset targets write each input into a temporary folder: in memory (/dev/shm) they run
# about six times faster than on a disk-backed /tmp. $EB_FUZZ_TMPDIR names another folder.
if [ -n "${EB_FUZZ_TMPDIR:-}" ]; then
  export TMPDIR=$EB_FUZZ_TMPDIR
elif [ -d /dev/shm ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$repo/tests/lsan.supp:print_suppressions=0}"
# libFuzzer flags of every run: a 25 s hang is a finding (timeout-*), so is a 2 GiB RSS (oom-*).
common=(-timeout=25 -rss_limit_mb=2048 -print_final_stats=1)
summary="$build_dir/fuzz-summary.txt"
: >"$summary"
mkdir -p "$build_dir/fuzz-results"

# run_target T: replays T's corpus, fuzzes it; writes its line to fuzz-results/T.
run_target() {
  local t=$1 b seeds work art logs res line rc=0 execs=0 n found
  b=$(bin_of "$t")
  seeds="$corpus/$t" work="$build_dir/fuzz-work/$t" art="$build_dir/fuzz-artifacts/$t/"
  logs="$build_dir/fuzz-logs/$t" res="$build_dir/fuzz-results/$t"
  if [ -z "$b" ]; then
    echo "fuzz $t: skipped: fuzz_$t is not in $build_dir (build it, or give --build-dir)" >"$res"
    return
  fi
  if [ ! -d "$seeds" ]; then
    echo "fuzz $t: FAILED: its corpus $seeds is missing" >"$res"
    return
  fi
  rm -rf "$logs" "$art"
  mkdir -p "$work" "$art" "$logs"
  # 1. the corpus once (every file; a crash here is a regression of a fixed bug)
  (cd "$logs" && "$b" -runs=0 "${common[@]}" -artifact_prefix="$art" "$seeds" >replay.log 2>&1) || rc=1
  # 2. fuzzing: --jobs processes on the shared work corpus (new inputs go there; the seeds are
  #    read only), each seeded differently but deterministically per job number
  if [ "$rc" -eq 0 ] && [ "$seconds" -gt 0 ]; then
    local pids="" j lf_runs=-1
    [ "$runs" -gt 0 ] && lf_runs=$runs
    for j in $(seq 1 "$jobs"); do
      (cd "$logs" && exec "$b" "${common[@]}" -max_total_time="$seconds" -seed="$j" -runs="$lf_runs" \
        -artifact_prefix="$art" "$work" "$seeds" >"job$j.log" 2>&1) &
      pids="$pids $!"
    done
    for j in $pids; do wait "$j" || rc=1; done
  fi
  for f in "$logs"/*.log; do
    n=$(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$f" | grep -Eo '[0-9]+$' | tail -1)
    execs=$((execs + ${n:-0}))
  done
  found=$(find "$art" -maxdepth 1 -type f | sort)
  if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
    line="passed: $execs executions in $seconds s ($jobs job$([ "$jobs" -gt 1 ] && echo s)), nothing found"
  elif [ -n "$found" ]; then
    line="FAILED: $(for f in $found; do printf '%s found: %s (reproduce: %s %s); ' \
      "$(basename "$f" | sed 's/-.*//')" "$f" "$b" "$f"; done)$execs executions, logs in $logs"
  else
    line="FAILED: libFuzzer stopped with an error and no reproducer; see $logs"
  fi
  echo "fuzz $t: $line" >"$res"
}

echo "fuzz: $seconds s per target after its corpus replay, $jobs job(s) each, $parallel target(s) at a time"
running=0
for t in $targets; do
  rm -f "$build_dir/fuzz-results/$t"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
passed=0 failed=0 skipped=0
for t in $targets; do
  line=$(cat "$build_dir/fuzz-results/$t" 2>/dev/null || echo "fuzz $t: FAILED: no result")
  echo "$line" | tee -a "$summary"
  case "$line" in
  *": passed:"*) passed=$((passed + 1)) ;;
  *": skipped:"*) skipped=$((skipped + 1)) ;;
  *) failed=$((failed + 1)) ;;
  esac
done
echo "fuzz: $passed passed, $failed failed, $skipped skipped" | tee -a "$summary"
[ "$failed" -eq 0 ] || exit 1
[ "$passed" -gt 0 ] || exit 77
exit 0
