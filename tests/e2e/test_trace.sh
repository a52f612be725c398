# End-to-end runs of `edgebench profile --trace` (trace.json, checked by eb_tracecheck against
# the run's frames_<slot>.csv) and `--nsys` (a fake nsys on PATH, or none). Each case_* is one
# ctest entry.

# trace_run ARGS...: `profile --trace` of the embedded models at 160x160 on the cpu device.
trace_run() {
  "$EB_BIN" profile --trace --backend native --frames 6 --warmup 1 --imgsz 160 --output out \
    "$@" >o.txt 2>e.txt || fail "profile --trace failed ($?): $(cat e.txt)"
}

case_rgb_stages_match_frames() {
  trace_run --mode rgb --source synthetic=320x240
  local d; d=$(run_dir out)
  "$EB_TRACECHECK" "$d/trace.json" "rgb=$d/frames_rgb.csv" || fail "trace.json does not check"
  grep -qx "trace: $d/trace.json" o.txt || fail "no trace line: $(cat o.txt)"
  [ "$(jq_get "$d/report.json" trace/file)" = trace.json ] || fail "report.json trace.file"
  [ "$(jq_get "$d/report.json" trace/frames/0)" = 6 ] || fail "trace.frames[0] is not 6"
  [ "$(jq_get "$d/report.json" trace/frames/1)" = 0 ] || fail "the skipped slot has frames"
  [ "$(jq_get "$d/report.json" trace/gpu)" = none ] || fail "trace.gpu on the cpu device"
  [ "$(jq_get "$d/report.json" trace/gpu_note)" = "no slot runs on the cuda device" ] ||
    fail "trace.gpu_note: $(jq_get "$d/report.json" trace/gpu_note)"
  [ "$(jq_get "$d/report.json" trace/top_kernels)" = 0 ] || fail "kernels on the cpu device"
  # No CUPTI is tried on the cpu device: no warning about it.
  if grep -q CUPTI e.txt; then fail "CUPTI message on the cpu device: $(cat e.txt)"; fi
}

case_dual_two_threads() {
  trace_run --mode dual --rgb_source synthetic=320x240 --thermal_source synthetic=160x128
  local d; d=$(run_dir out)
  "$EB_TRACECHECK" "$d/trace.json" "rgb=$d/frames_rgb.csv" "thermal=$d/frames_thermal.csv" >c.txt ||
    fail "trace.json does not check"
  # Two threads of one process, each with its own tid.
  [ "$(grep -c '^ok ' c.txt)" = 2 ] || fail "$(cat c.txt)"
  [ "$(awk '{ print $NF }' c.txt | sort -u | wc -l)" = 2 ] || fail "slots share a tid: $(cat c.txt)"
}

case_checker_rejects_a_broken_trace() {
  trace_run --mode rgb --source synthetic=320x240
  local d; d=$(run_dir out)
  # A stage moved onto the one before it: the check must see the overlap.
  sed 's/"name":"preprocess","cat":"stage","pid":\([0-9]*\),"tid":1,"ts":\([0-9.]*\)/"name":"preprocess","cat":"stage","pid":\1,"tid":1,"ts":0.0/' \
    "$d/trace.json" >bad.json
  if "$EB_TRACECHECK" bad.json "rgb=$d/frames_rgb.csv" 2>c.txt; then fail "overlap not seen"; fi
  grep -q 'before the end' c.txt || fail "$(cat c.txt)"
}

case_without_trace_no_file() {
  "$EB_BIN" profile --backend native --mode rgb --frames 2 --warmup 1 --imgsz 160 \
    --source synthetic=320x240 --output out --quiet 2>e.txt || fail "profile failed: $(cat e.txt)"
  local d; d=$(run_dir out)
  [ ! -e "$d/trace.json" ] || fail "trace.json without --trace"
  [ "$(jq_get "$d/report.json" trace)" = null ] || fail "report.json trace is not null"
}

case_nsys_absent() {
  mkdir empty
  PATH="$PWD/empty" "$EB_BIN" profile --nsys --backend native --mode rgb --frames 2 --warmup 1 \
    --imgsz 160 --source synthetic=320x240 --output out --quiet >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 2 ] || fail "exit $rc without nsys, expected 2 (as --ncu without ncu)"
  grep -qx 'edgebench: error: nsys not found on PATH: install Nsight Systems (the CUDA toolkit.s nsight-systems) for --nsys' e.txt ||
    fail "not the one line: $(cat e.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "the run's reports are missing"
}

case_nsys_fake_kernel_table() {
  mkdir bin
  cat >bin/nsys <<'SH'
#!/bin/bash
echo "$*" >>"$FAKE_NSYS_CALLS"
case $1 in
profile) exit 0 ;;
stats)
  echo "Processing [x.sqlite] with [cuda_gpu_kern_sum.py]..."
  echo ""
  echo '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"'
  echo '25.0,1000000,10,100000.0,100000.0,90000,110000,100.0,"k_small(float const*, float*)"'
  echo '75.0,3000000,30,100000.0,100000.0,90000,110000,100.0,"k_conv<(int)3, ""x"">"'
  ;;
esac
SH
  chmod +x bin/nsys
  FAKE_NSYS_CALLS=$PWD/calls.txt PATH="$PWD/bin:$PATH" "$EB_BIN" profile --nsys --backend native \
    --mode rgb --frames 2 --warmup 1 --imgsz 160 --source synthetic=320x240 --output out \
    --quiet >o.txt 2>e.txt || fail "exit $?: $(cat e.txt)"
  grep -q '^profile --trace=cuda,nvtx --capture-range=nvtx --nvtx-capture rgb:measure@edgebench.stage --capture-range-end=stop' calls.txt ||
    fail "nsys profile args: $(cat calls.txt)"
  grep -q ' run .*--db none --output .*/nsys-run$' calls.txt || fail "the re-run: $(cat calls.txt)"
  grep -q '^stats --report cuda_gpu_kern_sum --format csv --output - .*/nsys.nsys-rep$' calls.txt ||
    fail "nsys stats args: $(cat calls.txt)"
  # Sorted by total time, with calls and shares.
  grep -A3 '^top kernels by total GPU time (nsys):' o.txt >t.txt || fail "no table: $(cat o.txt)"
  sed -n 3p t.txt | grep -Eq '^  k_conv<\(int\)3, "x"> +30 +3\.000 +75\.0%$' || fail "row 1: $(cat t.txt)"
  sed -n 4p t.txt | grep -Eq '^  k_small\(float const\*, float\*\) +10 +1\.000 +25\.0%$' || fail "row 2: $(cat t.txt)"
}

# On a GPU (the lead engineer's machine): kernels from CUPTI on their streams, inside the span of
# the traced frames, and the top kernels in report.json. Skips without a usable GPU or CUPTI.
case_cuda_kernels() {
  "$EB_BIN" profile --trace --backend native --device cuda --mode rgb --frames 20 --warmup 3 \
    --imgsz 160 --source synthetic=320x240 --output out >o.txt 2>e.txt
  local rc=$?
  if [ "$rc" != 0 ]; then
    grep -Eq "no CUDA GPU is usable|has no CUDA device|no CUDA device" e.txt && skip "$(grep -m1 -E 'CUDA' e.txt)"
    fail "profile --trace on cuda: exit $rc: $(cat e.txt)"
  fi
  local d; d=$(run_dir out)
  if [ "$(jq_get "$d/report.json" trace/gpu)" != cupti ]; then
    skip "no CUPTI: $(jq_get "$d/report.json" trace/gpu_note)"
  fi
  "$EB_TRACECHECK" "$d/trace.json" --kernels "rgb=$d/frames_rgb.csv" || fail "trace.json does not check"
  local n; n=$(jq_get "$d/report.json" trace/kernels)
  [ "$n" -gt 20 ] || fail "only $n kernels in 20 frames"
  [ "$(jq_get "$d/report.json" trace/top_kernels)" -ge 1 ] || fail "no top kernels"
  jq_get "$d/report.json" trace/top_kernels/0/name | grep -q . || fail "top kernel has no name"
  grep -q '^top kernels by total GPU time (trace):' o.txt || fail "no table printed"
}

# The range that gates `--nsys`'s capture: once per slot, around the measured pass only.
case_measure_range_for_nsys() {
  [ -n "${EB_NVTX_INJECT:-}" ] || skip "built without the nvtx3 headers (no NVTX ranges)"
  NVTX_INJECTION64_PATH=$EB_NVTX_INJECT EB_NVTX_LOG=$PWD/nvtx.log \
    "$EB_BIN" run --backend native --mode dual --frames 2 --warmup 1 --imgsz 160 \
    --rgb_source synthetic=320x240 --thermal_source synthetic=320x240 --output out --quiet 2>e.txt ||
    fail "run failed: $(cat e.txt)"
  for s in rgb thermal; do
    [ "$(grep -c "^push edgebench.stage@$s:measure$" nvtx.log)" = 1 ] || fail "$s:measure ranges"
  done
  # Inside it: the measured frames' stages (2 frames at least), not the warm-up's.
  awk '/@rgb:measure$/ { on = 1; next } on && /@rgb:infer$/ { n++ } END { exit !(n >= 2) }' nvtx.log ||
    fail "no measured frame inside rgb:measure"
}
