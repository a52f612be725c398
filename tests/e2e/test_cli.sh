# End-to-end command-line checks (no model needed). Each case_* is one ctest entry.

# expect_usage_error EXPECTED_TEXT ARGS...: exit 2 and one stderr line containing the text.
expect_usage_error() {
  local want=$1; shift
  "$EB_BIN" "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq 2 ] || fail "edgebench $* exited $rc, expected 2 (usage error)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "expected one line on stderr, got: $(cat err.txt)"
  grep -qF -- "$want" err.txt || fail "stderr lacks '$want': $(cat err.txt)"
  [ -z "$(ls -A runs 2>/dev/null)" ] || fail "a usage error must not create a run folder"
}

case_help_lists_commands_and_flags() {
  "$EB_BIN" --help >h.txt || fail "--help failed"
  for w in "run" "model synth" "model info" "tegrastats" "backends"; do
    grep -q "$w" h.txt || fail "--help lacks $w"
  done
  "$EB_BIN" run --help >r.txt || fail "run --help failed"
  for f in --mode --source --rgb_source --thermal_source --model0 --model1 --gpu_mem_limit_gb \
           --frames --warmup --imgsz --conf --iou --device --threads --output --interval_ms \
           --solo_baseline --verbose --quiet --ort_lib; do
    grep -q -- "$f" r.txt || fail "run --help lacks $f"
  done
  grep -q "exit codes" r.txt || fail "run --help does not document exit codes"
}

case_unknown_flag() { expect_usage_error "unknown option --batch" run --batch 2; }
case_unknown_command() { expect_usage_error "unknown command 'frobnicate'" frobnicate; }
case_mem_limit_zero() { expect_usage_error "--gpu_mem_limit_gb: 0 is out of range" run --gpu_mem_limit_gb 0; }
# Positive but under one byte: refused with the range, not taken as "no cap".
case_mem_limit_below_1mb() {
  expect_usage_error "--gpu_mem_limit_gb: 1e-10 is out of range (accepted: 0.001 <= G <= 8" \
    run --gpu_mem_limit_gb 1e-10
}
# A paced source slower than a frame every 10 s is refused with the range, as --fps is.
case_fps_below_a_frame_every_10_s() {
  expect_usage_error "FPS 0.001 is out of range; give 0 (unpaced) or 0.1..1000" \
    run --mode rgb --source synthetic=64x64@0.001
  expect_usage_error "--fps: 0.001 is out of range (accepted: 0 or 0.1..1000)" run --fps 0.001
  expect_usage_error "--thermal_fps: 0.05 is out of range (accepted: 0 or 0.1..1000)" \
    run --thermal_fps 0.05
}
case_frames_out_of_range() { expect_usage_error "--frames: -5 is out of range (accepted: 0..10000000)" run --frames -5; }
case_bad_mode() { expect_usage_error "--mode: 'stereo' is not accepted (accepted: rgb|thermal|dual)" run --mode stereo; }
case_dual_without_thermal_source() {
  expect_usage_error "--mode dual needs --thermal_source" \
    run --mode dual --model0 m.onnx --rgb_source synthetic=64x64
}
case_legacy_invocation_without_run() {
  # Users coming from the Python tool type `edgebench --mode ...`: same parser, same errors.
  expect_usage_error "--mode dual needs --thermal_source" \
    --mode dual --model0 m.onnx --rgb_source synthetic=64x64
}
case_bad_source_spec() {
  expect_usage_error "--source" run --mode rgb --model0 m.onnx --source synthetic=0x0
}

case_tegrastats_command() {
  need_shared
  "$EB_BIN" tegrastats "$DATA/tegrastats/samples.txt" >t.jsonl || fail "tegrastats failed"
  [ "$("$EB_JSONQ" -l t.jsonl)" -eq 4 ] || fail "expected 4 JSON lines"
  head -1 t.jsonl >first.json
  [ "$(jq_get first.json status)" = ok ] || fail "first line status"
  [ "$(jq_get first.json power_total_mw)" = 4520 ] || fail "POM_5V_IN power"
  "$EB_BIN" tegrastats --summary - <"$DATA/tegrastats/samples.txt" >s.json || fail "--summary on stdin"
  "$EB_JSONQ" s.json >/dev/null || fail "--summary output is not JSON"
  "$EB_BIN" tegrastats /nonexistent/log.txt 2>err.txt; [ $? -eq 1 ] || fail "missing file exit code"
  grep -q "/nonexistent/log.txt" err.txt || fail "missing file not named"
}

# An endless input with no newline (/dev/zero) neither grows memory nor ignores Ctrl-C: lines are
# capped (EB_TEGRASTATS_LINE_MAX), and SIGINT ends the command with what it read (exit 130).
# An over-long line in a file is one malformed record; the lines around it parse.
case_tegrastats_lines_are_bounded() {
  { printf 'RAM 1/2MB CPU [1%%@100] '; head -c 20000 /dev/zero | tr '\0' 'x'; printf '\n'
    printf 'RAM 2000/7620MB (lfb 4x4MB) SWAP 0/3810MB (cached 0MB) CPU [5%%@1510,3%%@1510] GR3D_FREQ 0%%@[305]\n'
  } >long.txt
  "$EB_BIN" tegrastats long.txt >t.jsonl || fail "tegrastats failed on a long line"
  [ "$("$EB_JSONQ" -l t.jsonl)" -eq 2 ] || fail "expected 2 records: $(cat t.jsonl)"
  head -1 t.jsonl >first.json; tail -1 t.jsonl >second.json
  [ "$(jq_get first.json status)" = malformed ] || fail "an over-long line is malformed"
  [ "$(jq_get second.json status)" != malformed ] || fail "the line after it must parse"
  "$EB_BIN" tegrastats --summary /dev/zero >s.json 2>err.txt &
  local pid=$!
  # Memory does not grow with what was read (it grew ~2.5 GB/s before the cap): the resident
  # size after 64 MiB read and after 256 MiB read (/proc/PID/io rchar) is the same.
  rss_after_reading() {
    local want=$1 t=0 rchar
    while [ "$t" -lt 600 ]; do
      rchar=$(awk '/^rchar:/ {print $2}' "/proc/$pid/io" 2>/dev/null) ||
        { kill -KILL "$pid"; skip "/proc/$pid/io is not readable here"; }
      [ -n "$rchar" ] || fail "tegrastats /dev/zero ended by itself: $(cat err.txt)"
      [ "$rchar" -ge "$want" ] && { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; return; }
      sleep 0.1; t=$((t + 1))
    done
    kill -KILL "$pid"; fail "tegrastats read under $want bytes of /dev/zero in 60 s"
  }
  local rss1 rss2
  rss1=$(rss_after_reading $((64 << 20)))
  rss2=$(rss_after_reading $((256 << 20)))
  [ $((rss2 - rss1)) -lt 8192 ] || fail "RSS grew from ${rss1} to ${rss2} kB on /dev/zero"
  kill -INT "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
  kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; fail "SIGINT did not end it within 10 s"; }
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 130 ] || fail "exit 130 after SIGINT, not $rc: $(cat err.txt)"
  "$EB_JSONQ" s.json >/dev/null || fail "the summary of what was read is not written"
}

case_model_synth_and_info() {
  "$EB_BIN" model synth --arch yolo11 --scale n --imgsz 320 -o y11.onnx || fail "synth failed"
  "$EB_BIN" model info y11.onnx >info.txt || fail "info failed"
  grep -q "output0" info.txt || fail "info lacks the output name"
  grep -qi "param" info.txt || fail "info lacks parameters"
  grep -qi "flop" info.txt || fail "info lacks FLOPs"
  "$EB_BIN" model synth --arch yolov9 -o x.onnx 2>err.txt; [ $? -eq 2 ] || fail "bad --arch exit code"
  grep -q -- "--arch" err.txt || fail "bad --arch not named"
  head -c 3000 y11.onnx >trunc.onnx
  "$EB_BIN" model info trunc.onnx 2>err.txt && fail "info accepted a truncated model"
  grep -q "trunc.onnx" err.txt || fail "truncated model not named"
}

case_model_info_planned_peak() {
  # `model info` plans the model with the native engine: the planned peak (arena) is printed,
  # positive and below the naive sum of every intermediate tensor, in text and in --json.
  "$EB_BIN" model synth --arch yolov8 --scale n --imgsz 320 -o y8.onnx || fail "synth failed"
  "$EB_BIN" model info y8.onnx >info.txt || fail "info failed"
  grep -q "memory plan (native engine, input 320x320" info.txt || fail "no memory plan: $(cat info.txt)"
  grep -q "planned peak:" info.txt || fail "no planned peak line"
  grep -q "naive sum:" info.txt || fail "no naive sum line"
  "$EB_BIN" model info y8.onnx --json >info.json || fail "info --json failed"
  [ "$(jq_get info.json memory_plan/available)" = true ] || fail "plan not available"
  local arena naive total
  arena=$(jq_get info.json memory_plan/arena_bytes)
  naive=$(jq_get info.json memory_plan/naive_bytes)
  total=$(jq_get info.json memory_plan/total_bytes)
  [ "$arena" -gt 0 ] || fail "planned peak $arena is not positive"
  [ "$arena" -lt "$naive" ] || fail "planned peak $arena is not below the naive sum $naive"
  [ "$total" -ge "$arena" ] || fail "total $total below the arena $arena"
  "$EB_BIN" model info y8.onnx --imgsz 33 2>err.txt; [ $? -eq 2 ] || fail "bad --imgsz exit code"
  grep -q -- "--imgsz" err.txt || fail "bad --imgsz not named"
}
