# The console and the labels (issue 18 §7): --quiet prints errors only, notices appear once on
# the console and always in run.log, ONNX Runtime's own log lines stay in run.log, env.json and
# run.log name the backend that ran, and run options work without the `run` command. Each
# case_* is one ctest entry; the runs are small (64x64, a few frames) and record no history.

SMALL="--source synthetic=64x64 --frames 5 --warmup 1 --imgsz 64 --db none --min_frames 0 --min_duration_s 0 --output out"

# An ONNX model y = Identity(x), x [1,3,64,64], with an initializer no node uses: ONNX Runtime
# logs a warning when it removes it. Not a detector: the slot fails after ORT loaded it.
unused_init_model() {
  printf '%s' 'CAcSDmVkZ2ViZW5jaC10ZXN0OmUKEAoBeBIBeSIISWRlbnRpdHkSAWcqFAgBEAFCCHVudXNlZF93SgQAAIA/WhsKAXgSFgoUCAESEAoCCAEKAggDCgIIQAoCCEBiGwoBeRIWChQIARIQCgIIAQoCCAMKAghACgIIQEIECgAQDQ==' |
    base64 -d >"$1" || fail "cannot write $1"
}

case_quiet_run_has_empty_stderr() {
  # shellcheck disable=SC2086
  eb_run --mode rgb $SMALL --quiet >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat stderr.txt)"
  [ ! -s stderr.txt ] || fail "--quiet printed on stderr: $(cat stderr.txt)"
  grep -q '^report: ' stdout.txt || fail "the report path is not printed"
  local d; d=$(run_dir out)
  # run.log still keeps everything, the notices included.
  grep -q 'INFO slot rgb: backend native' "$d/run.log" || fail "run.log lacks the backend line"
}

case_notices_once_on_console_always_in_run_log() {
  # shellcheck disable=SC2086
  eb_run --mode rgb $SMALL >stdout.txt 2>stderr.txt || fail "run failed: $(cat stderr.txt)"
  local d n seen=0; d=$(run_dir out)
  for notice in "not a Jetson" "NVML not available"; do
    n=$(grep -c "$notice" "$d/run.log")
    [ "$n" -le 1 ] || fail "run.log has '$notice' $n times"
    [ "$n" -eq 1 ] || continue # a Jetson, or a machine with NVML: no such notice
    seen=1
    [ "$(grep -c "$notice" stderr.txt)" -eq 1 ] || fail "'$notice' not once on the console: $(cat stderr.txt)"
    ! grep -q "warning: $notice" stderr.txt || fail "'$notice' is a notice, not a warning"
  done
  [ "$seen" -eq 1 ] || [ -e /etc/nv_tegra_release ] || fail "neither notice in run.log off a Jetson"
  # shellcheck disable=SC2086
  eb_run --mode rgb $SMALL --quiet 2>quiet.txt || fail "quiet run failed"
  [ ! -s quiet.txt ] || fail "--quiet printed: $(cat quiet.txt)"
}

case_native_run_env_has_no_ort_version() {
  # shellcheck disable=SC2086
  eb_run --mode rgb --backend native $SMALL --quiet || fail "run failed"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/env.json" ort_version)" = null ] || fail "native run: env.json names ORT $(jq_get "$d/env.json" ort_version)"
  [ "$(jq_get "$d/env.json" ort_library)" = null ] || fail "native run: env.json has ort_library"
  [ "$(jq_get "$d/env.json" ort_providers)" = null ] || fail "native run: env.json has ort_providers"
  [ "$(jq_get "$d/report.json" slots/0/backend)" = native ] || fail "report backend"
  grep -q 'slot rgb: backend native edgebench-native' "$d/run.log" || fail "run.log does not name native"
  ! grep -q onnxruntime "$d/run.log" || fail "a native run mentions onnxruntime: $(grep onnxruntime "$d/run.log")"
  # The CUDA stack: a bool, and each version a string or null with a note saying why.
  local built; built=$(jq_get "$d/env.json" cuda/built)
  [ "$built" = true ] || [ "$built" = false ] || fail "cuda.built is $built"
  if [ "$(jq_get "$d/env.json" cuda/driver_version)" = null ]; then
    [ "$(jq_get "$d/env.json" cuda/note)" != null ] || fail "cuda.driver_version null without a note"
  fi
}

case_ort_run_names_ort() {
  need_ort
  # shellcheck disable=SC2086
  eb_run --mode rgb --backend ort $SMALL --quiet || fail "run failed"
  local d v; d=$(run_dir out)
  v=$(jq_get "$d/env.json" ort_version)
  [[ "$v" == 1.* ]] || fail "env.json ort_version is $v"
  [ "$(jq_get "$d/env.json" ort_library)" != null ] || fail "env.json lacks ort_library"
  grep -q '"CPUExecutionProvider"' "$d/env.json" || fail "env.json ort_providers lacks the CPU provider"
  grep -q "slot rgb: backend ort $v" "$d/run.log" || fail "run.log does not name ort $v"
}

case_ort_log_lines_stay_in_run_log() {
  need_ort
  unused_init_model unused.onnx
  eb_run --mode rgb --backend ort --model0 unused.onnx $SMALL >stdout.txt 2>stderr.txt
  local d; d=$(run_dir out)
  grep -q "onnxruntime warning.*unused_w" "$d/run.log" || fail "ORT's warning is not in run.log"
  ! grep -q "unused_w" stderr.txt || fail "ORT's log line reached the console: $(cat stderr.txt)"
  # The slot's failure (not a detector) is one error line, printed once.
  [ "$(grep -c 'edgebench: error:' stderr.txt)" -eq 1 ] || fail "expected one error line: $(cat stderr.txt)"
}

case_options_without_run_or_mode() {
  "$EB_BIN" model synth --arch yolo11 --scale n --imgsz 64 -o m.onnx >/dev/null || fail "synth failed"
  # The form users come from: no command, no --mode; --model0 alone runs rgb.
  "$EB_BIN" --source synthetic=64x64 --model0 m.onnx --frames 3 --warmup 1 --db none \
    --output out --quiet 2>err.txt || fail "exit $?: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" config/mode)" = rgb ] || fail "mode is not rgb"
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot rgb not ok"
  # Both models on one --source: dual, each slot reading that source.
  "$EB_BIN" --source=synthetic=64x64 --model0 m.onnx --model1 m.onnx --frames 3 --warmup 1 \
    --db none --output out2 --quiet 2>err.txt || fail "dual exit $?: $(cat err.txt)"
  d=$(run_dir out2)
  [ "$(jq_get "$d/report.json" config/mode)" = dual ] || fail "mode is not dual"
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/status)" = ok ] || fail "slot $i not ok"
    [ "$(jq_get "$d/report.json" slots/$i/source)" = "synthetic=64x64" ] || fail "slot $i source"
  done
  # An explicit --mode still decides, with its own checks.
  "$EB_BIN" --mode dual --source synthetic=64x64 --model0 m.onnx --db none --output out3 \
    2>err.txt && fail "--mode dual with --source must be a usage error"
  grep -q "not --source" err.txt || fail "unclear error: $(cat err.txt)"
}
