# End-to-end runs of `edgebench run` with ONNX Runtime. Each case_* is one ctest entry; cases
# whose name contains "dual" also run under ThreadSanitizer.

# check_reports DIR: the five files exist; JSON parses; the Markdown has its sections in order.
check_reports() {
  local d=$1
  for f in report.json report.md metrics.jsonl run.log env.json; do
    [ -s "$d/$f" ] || fail "$d/$f missing or empty"
  done
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "report.json does not parse"
  "$EB_JSONQ" "$d/env.json" >/dev/null || fail "env.json does not parse"
  "$EB_JSONQ" -l "$d/metrics.jsonl" >/dev/null || fail "metrics.jsonl has a bad line"
  [ "$(jq_get "$d/report.json" slots)" = 2 ] || fail "report.json must list both slots"
  local a b c
  a=$(grep -n '^## Memory Safety Summary' "$d/report.md" | cut -d: -f1)
  b=$(grep -n '^## Slot 0: rgb' "$d/report.md" | cut -d: -f1)
  c=$(grep -n '^## Slot 1: thermal' "$d/report.md" | cut -d: -f1)
  [ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] && [ "$a" -lt "$b" ] && [ "$b" -lt "$c" ] ||
    fail "report.md sections missing or out of order"
  grep -q '^## System metrics' "$d/report.md" || fail "report.md lacks System metrics"
}

case_dual_embedded_default() {
  # The demo path: no model and no source given (make demo runs the same with default frames).
  need_ort
  eb_run --mode dual --frames 12 --warmup 2 --output out >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat stderr.txt)"
  grep -q '^report: ' stdout.txt || fail "the report path is not printed"
  local d; d=$(run_dir out)
  check_reports "$d"
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/status)" = ok ] || fail "slot $i not ok"
    # Both slots measured 12 frames at least; the one that met its 12 first ran on until the
    # other had too, and counts the frames it finished inside the window.
    [ "$(jq_get "$d/report.json" slots/$i/frames/measured)" -ge 12 ] || fail "slot $i frames"
    [ "$(jq_get "$d/report.json" slots/$i/frames/warmup)" -ge 2 ] || fail "slot $i warm-up"
  done
  [ "$(jq_get "$d/report.json" slots/0/model)" = "embedded:yolov8n-640" ] || fail "rgb default model"
  [ "$(jq_get "$d/report.json" slots/1/model)" = "embedded:yolo11n-640" ] || fail "thermal default model"
  [ "$(jq_get "$d/report.json" pair/pairs)" -ge 12 ] || fail "pair statistics"
  # --backend auto (the default) picks the native engine for both synthesized models; its memory
  # plan is a hard cap
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/backend)" = native ] || fail "slot $i: auto must pick native"
    grep -q "auto: native supports every node" "$d/report.json" || fail "slot $i: no auto reason"
  done
  [ "$(jq_get "$d/report.json" memory/limit_type)" = hard ] || fail "native limit type"
  [ "$(jq_get "$d/report.json" exit_code)" = 0 ] || fail "exit code in report"
}

case_dual_real_models_coco_and_hituav() {
  need_ort; need_shared
  eb_run --mode dual --model0 "$DATA/models/yolov8n_int8_qdq.onnx" \
    --model1 "$DATA/models/yolo11n_320_int8_dynamic.onnx" \
    --rgb_source "image_dir=$DATA/datasets/coco128/images/train2017" \
    --thermal_source "image_dir=$DATA/datasets/thermal/hit-uav/images" \
    --frames 16 --warmup 1 --solo_baseline --interval_ms 100 --output out --quiet 2>err.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat err.txt)"
  local d; d=$(run_dir out)
  check_reports "$d"
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/status)" = ok ] || fail "slot $i not ok"
    local r; r=$(jq_get "$d/report.json" slots/$i/solo_baseline/interference_ratio)
    [ "$r" != null ] || fail "slot $i has no interference ratio"
  done
  [ "$(jq_get "$d/report.json" slots/1/input/width)" = 320 ] || fail "thermal model input size"
  local dets; dets=$(jq_get "$d/report.json" slots/0/detections/total)
  [ "${dets%.*}" -gt 16 ] || fail "coco128 frames should yield detections, got $dets"
  grep -q 'Dual-stream pair' "$d/report.md" || fail "report.md lacks the pair section"
}

case_rgb_bus_finds_bus_and_persons() {
  need_ort; need_shared
  mkdir imgs && ln -s "$DATA/datasets/samples/bus.jpg" imgs/bus.jpg
  eb_run --mode rgb --model0 "$DATA/models/yolov8n_int8_qdq.onnx" --source image_dir=imgs --no_loop \
    --warmup 0 --output out --quiet || fail "run failed"
  local d n i name cnt bus=0 person=0
  d=$(run_dir out)
  n=$(jq_get "$d/report.json" slots/0/detections/per_class)
  for ((i = 0; i < n; i++)); do
    name=$(jq_get "$d/report.json" "slots/0/detections/per_class/$i/name")
    cnt=$(jq_get "$d/report.json" "slots/0/detections/per_class/$i/count")
    [ "$name" = bus ] && bus=${cnt%.*}
    [ "$name" = person ] && person=${cnt%.*}
  done
  [ "$bus" -ge 1 ] || fail "no bus found in bus.jpg"
  [ "$person" -ge 3 ] || fail "found $person persons in bus.jpg, expected at least 3"
  [ "$(jq_get "$d/report.json" slots/1/status)" = skipped ] || fail "thermal slot must be skipped"
}

case_thermal_video_source() {
  need_ort; need_shared
  eb_run --mode thermal --model1 "$DATA/models/yolov8n_320_int8_dynamic.onnx" \
    --source "video=$DATA/datasets/video/car-detection.mp4" --frames 8 --warmup 1 --output out \
    --quiet || fail "video run failed"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/1/frames/measured)" = 8 ] || fail "8 frames expected"
  [ "$(jq_get "$d/report.json" slots/0/status)" = skipped ] || fail "rgb slot must be skipped"
}

# expect_slot_failure RC_EXPECTED TEXT ARGS...: the run exits RC, the report is written with
# slot failed and its message containing TEXT, and stderr names it in one line.
expect_slot_failure() {
  local want_rc=$1 text=$2; shift 2
  eb_run "$@" --output out --quiet --frames 4 --warmup 0 >/dev/null 2>err.txt
  local rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "exit $rc, expected $want_rc: $(cat err.txt)"
  grep -qF -- "$text" err.txt || fail "stderr lacks '$text': $(cat err.txt)"
  local d; d=$(run_dir out)
  check_reports "$d"
  grep -qF -- "$text" "$d/report.md" || fail "report.md lacks the reason"
}

case_missing_model() {
  need_ort
  expect_slot_failure 1 "missing.onnx" --mode rgb --model0 missing.onnx --source synthetic=64x64
}
case_random_bytes_model() {
  need_ort
  head -c 4096 /dev/urandom >rand.onnx
  expect_slot_failure 1 "rand.onnx" --mode rgb --model0 rand.onnx --source synthetic=64x64
}
case_truncated_model() {
  need_ort; need_shared
  head -c 200000 "$DATA/models/yolov8n_int8_qdq.onnx" >trunc.onnx
  expect_slot_failure 1 "trunc.onnx" --mode rgb --model0 trunc.onnx --source synthetic=64x64
}
case_pt_weights_explain_export() {
  need_ort
  echo x >best.pt
  expect_slot_failure 1 "format=onnx" --mode rgb --model0 best.pt --source synthetic=64x64
}
case_model_without_yolo_output() {
  need_ort; need_shared
  # a random head (hostile/html2.onnx, output0 [1,6,256]) matches no family: refused with its
  # outputs listed, never decoded as something it is not
  expect_slot_failure 1 "no head adapter recognises the model's outputs (output0" \
    --mode rgb --model0 "$DATA/hostile/html2.onnx" --source synthetic=64x64
  grep -qF "(output0 [1,6,256]); name one with --head v8|v5|v5-raw|yolox" err.txt ||
    fail "the refusal lists no outputs or choices: $(cat err.txt)"
}
case_directory_without_images() {
  need_ort; need_shared
  mkdir empty
  expect_slot_failure 1 "no .jpg/.jpeg/.png/.bmp images" --mode rgb \
    --model0 "$DATA/models/yolov8n_320_int8_dynamic.onnx" --source image_dir=empty
}
case_undecodable_video() {
  need_ort; need_shared
  echo "not a video" >clip.mp4
  expect_slot_failure 1 "clip.mp4" --mode rgb \
    --model0 "$DATA/models/yolov8n_320_int8_dynamic.onnx" --source video=clip.mp4
}
case_dual_one_slot_fails_other_runs() {
  need_ort; need_shared
  expect_slot_failure 3 "missing1.onnx" --mode dual \
    --model0 "$DATA/models/yolov8n_320_int8_dynamic.onnx" --model1 missing1.onnx \
    --rgb_source synthetic=320x240 --thermal_source synthetic=320x240
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "rgb slot should have run"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 4 ] || fail "rgb slot frames"
  [ "$(jq_get "$d/report.json" slots/1/status)" = failed ] || fail "thermal slot should fail"
}
case_cuda_device_without_provider() {
  need_ort
  expect_slot_failure 1 "CUDA" --mode rgb --device cuda --source synthetic=64x64 \
    --model0 "$(mkmodel)"
  # the backend names no flag; the harness adds it on the console, in run.log and report.json
  local d; d=$(run_dir out)
  grep -q -- "; use .*--device cpu" err.txt || fail "no flag advice on the console: $(cat err.txt)"
  grep -q -- "slot rgb failed: .*; use .*--device cpu" "$d/run.log" || fail "no flag advice in run.log"
  jq_get "$d/report.json" slots/0/message | grep -q -- "; use .*--device cpu" ||
    fail "no flag advice in report.json: $(jq_get "$d/report.json" slots/0/message)"
}
mkmodel() { "$EB_BIN" model synth --imgsz 160 -o m160.onnx >/dev/null && echo m160.onnx; }

# --device tensorrt on a machine without TensorRT (the npm ONNX Runtime lists the provider but
# lacks its library, or does not list it): one clear line per slot, and the reports are written.
# skip_if_tensorrt_runs RC: skips where the run went through (a machine with TensorRT).
skip_if_tensorrt_runs() {
  [ "$1" -ne 0 ] || skip "this ONNX Runtime runs TensorRT; the case needs one without it"
}
case_tensorrt_device_without_provider() {
  need_ort
  eb_run --mode dual --backend ort --device tensorrt --imgsz 64 --output out --quiet --frames 2 \
    --warmup 0 >/dev/null 2>err.txt
  local rc=$?
  skip_if_tensorrt_runs "$rc"
  [ "$rc" -eq 1 ] || fail "exit $rc, expected 1 (both slots failed): $(cat err.txt)"
  [ "$(grep -c "slot .* failed: failed to enable the TensorRT execution provider" err.txt)" -eq 2 ] ||
    fail "one TensorRT line per slot expected: $(cat err.txt)"
  grep -q -- "; use .*--device cpu" err.txt || fail "no flag advice: $(cat err.txt)"
  local d; d=$(run_dir out)
  check_reports "$d"
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/status)" = failed ] || fail "slot $i status"
    jq_get "$d/report.json" slots/$i/message | grep -q "TensorRT execution provider" ||
      fail "slot $i message: $(jq_get "$d/report.json" slots/$i/message)"
  done
  grep -q "TensorRT execution provider" "$d/report.md" || fail "report.md lacks the reason"
}
case_tensorrt_int8_needs_a_qdq_model() {
  need_ort
  # a float model: refused from its graph, before ONNX Runtime's providers are looked at
  expect_slot_failure 1 "--precision int8 on --device tensorrt needs a QDQ model" --mode rgb \
    --backend ort --device tensorrt --precision int8 --model0 "$(mkmodel)" \
    --source synthetic=64x64
  grep -qF "is fp32 (read from its graph" err.txt || fail "the model's precision: $(cat err.txt)"
  grep -qF "quantize it first (edgebench quantize)" err.txt || fail "what to do: $(cat err.txt)"
  local d; d=$(run_dir out)
  ! grep -q "execution provider" "$d/run.log" || fail "the provider was set up before the check"
  [ ! -e "$XDG_CACHE_HOME/edgebench/trt" ] || fail "an engine cache folder was made for nothing"
  if [ ! -d "${EB_SHARED_DATA:-}" ]; then
    echo "../shared/data is absent: the int8-dynamic and QDQ model parts are not run"
    return 0
  fi
  # a dynamically quantised model is int8, but has no Q/DQ scales for TensorRT
  rm -rf out
  expect_slot_failure 1 "is int8-dynamic (read from its graph" --mode rgb --backend ort \
    --device tensorrt --precision int8 --model0 "$EB_SHARED_DATA/models/yolov8n_int8_dynamic.onnx" \
    --source synthetic=64x64
  # a QDQ model passes the check and gets as far as the provider
  rm -rf out
  eb_run --mode rgb --backend ort --device tensorrt --precision int8 --output out --quiet \
    --frames 2 --warmup 0 --model0 "$EB_SHARED_DATA/models/yolov8n_int8_qdq.onnx" \
    --source synthetic=64x64 >/dev/null 2>err.txt
  local rc=$?
  skip_if_tensorrt_runs "$rc"
  ! grep -q "needs a QDQ model" err.txt || fail "a QDQ model was refused: $(cat err.txt)"
  grep -q "TensorRT execution provider" err.txt || fail "no provider error: $(cat err.txt)"
}
case_tensorrt_cache_folder() {
  need_ort
  tensorrt_run() {
    rm -rf out
    eb_run --mode rgb --backend ort --device tensorrt --imgsz 64 --output out --quiet --frames 2 \
      --warmup 0 "$@" >/dev/null 2>err.txt
    local rc=$?
    skip_if_tensorrt_runs "$rc"
    grep -q TensorrtExecutionProvider "$(run_dir out)/env.json" ||
      skip "this ONNX Runtime does not list TensorRT: the cache folder is never reached"
  }
  # the default folder, made with its parents when the provider is set up
  tensorrt_run
  [ -d "$XDG_CACHE_HOME/edgebench/trt" ] || fail "no default cache folder: $(cat err.txt)"
  # --trt_cache off makes none
  rm -rf "$XDG_CACHE_HOME/edgebench"
  tensorrt_run --trt_cache off
  [ ! -e "$XDG_CACHE_HOME/edgebench" ] || fail "--trt_cache off made a folder"
  # a folder that cannot be made (under a regular file): one line naming it
  echo x >afile
  tensorrt_run --trt_cache afile/trt
  grep -qF "failed to create the TensorRT engine cache folder afile/trt: Not a directory; give another --trt_cache folder or --trt_cache off" err.txt ||
    fail "message: $(cat err.txt)"
  check_reports "$(run_dir out)"
}

case_mem_limit_violations_are_counted_not_fatal() {
  need_ort
  # ONNX Runtime's CPU arena cannot be capped (limit type soft): the limit is monitored,
  # violations are counted, every frame runs, and the run exits 5
  eb_run --mode rgb --backend ort --model0 "$(mkmodel)" --source synthetic=320x240 --frames 5 \
    --warmup 0 --gpu_mem_limit_gb 0.01 --output out --quiet 2>err.txt
  local rc=$?
  [ "$rc" -eq 5 ] || fail "violations must exit 5, not $rc: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" memory/overall)" = VIOLATIONS ] || fail "overall must be VIOLATIONS"
  [ "$(jq_get "$d/report.json" memory/violations)" = 5 ] || fail "one violation per frame expected"
  [ "$(jq_get "$d/report.json" memory/limit_type)" = soft ] || fail "ort cpu is monitored only: soft"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 5 ] || fail "every frame must run"
  grep -q "MEMORY LIMIT VIOLATION: process RSS .* GB exceeds the limit 0.01 GB (slot rgb, frame" \
    "$d/run.log" || fail "violations are not logged"
}

# The monitored figure on a CPU run is the process RSS, and violations say so (never "GPU").
# How much RSS a process has beyond its planned arena depends on the machine (which shared
# libraries load, the allocator): a first run measures it, and the limit of the second lies
# halfway between the arena plan (which must fit) and that peak (which must then exceed it).
case_cpu_rss_over_the_limit_exits_5() {
  local args=(--mode rgb --backend native --imgsz 64 --source synthetic=64x64 --min_frames 0
    --min_duration_s 0 --frames 5 --warmup 1 --db none --quiet)
  eb_run "${args[@]}" --gpu_mem_limit_gb 1 --output probe 2>err.txt || fail "probe run: $(cat err.txt)"
  local p; p=$(run_dir probe)
  local peak; peak=$(jq_get "$p/report.json" slots/0/memory/peak_gb)
  local plan_mib
  plan_mib=$(jq_get "$p/report.json" memory/methods/0 | sed -n 's/.*(planned \([0-9.]*\) MiB).*/\1/p')
  [ -n "$plan_mib" ] || fail "the report does not state the arena plan: $(jq_get "$p/report.json" memory/methods/0)"
  local limit
  limit=$(awk -v peak="$peak" -v plan="$plan_mib" 'BEGIN {
    plan_gb = plan * 1048576 / 1e9
    if (peak <= plan_gb * 1.05) { print "none"; exit }
    printf "%.4f", (plan_gb + peak) / 2 }')
  [ "$limit" != none ] || fail "process RSS ${peak} GB does not exceed the ${plan_mib} MiB arena it holds"
  eb_run "${args[@]}" --gpu_mem_limit_gb "$limit" --output out 2>err.txt
  local rc=$?
  [ "$rc" -eq 5 ] || fail "violations must exit 5, not $rc (limit $limit GB, probe peak $peak GB): $(cat err.txt)"
  grep -q "process RSS .* GB exceeds the limit .* GB (slot rgb, frame" err.txt ||
    fail "no process RSS violation: $(cat err.txt)"
  grep -q "GPU" err.txt && fail "a CPU run's violation names the GPU: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" exit_code)" = 5 ] || fail "exit code in report"
  [ "$(jq_get "$d/report.json" memory/limit_bound)" = configured ] || fail "limit bound"
  [ "$(jq_get "$d/report.json" memory/monitored)" = "process RSS" ] || fail "monitored figure"
}

# One budget for both slots: the thermal slot gets what rgb's plan left of the limit. The two
# embedded plans at --imgsz 64 are about 25 and 21 MiB; 0.04 GB (38.1 MiB) holds one, not both.
case_dual_second_slot_gets_what_the_first_left() {
  eb_run --mode dual --backend native --imgsz 64 --gpu_mem_limit_gb 0.04 --min_frames 0 \
    --min_duration_s 0 --frames 5 --warmup 1 --db none --output out --quiet 2>err.txt
  local rc=$?
  [ "$rc" -eq 3 ] || fail "one slot failed, the other ran: exit 3, not $rc: $(cat err.txt)"
  grep -q "slot thermal failed: .*needed [0-9.]* MiB, [0-9.]* MiB left of the limit after slot rgb (38.1 MiB).*; raise --gpu_mem_limit_gb" \
    err.txt || fail "no budget failure message: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "rgb must run"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 5 ] || fail "rgb frames"
  [ "$(jq_get "$d/report.json" slots/1/status)" = failed ] || fail "thermal must fail"
  [ "$(jq_get "$d/report.json" exit_code)" = 3 ] || fail "exit code in report"
}

case_mem_limit_clamped_in_report() {
  need_ort
  eb_run --mode rgb --model0 "$(mkmodel)" --source synthetic=64x64 --frames 2 --warmup 0 \
    --gpu_mem_limit_gb 12 --output out 2>err.txt >/dev/null || fail "run failed"
  grep -q "clamped to 8.0" err.txt || fail "no clamping warning"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" memory/limit_gb)" = 8 ] || fail "limit not clamped in the report"
}

case_dual_sigint_writes_interrupted_report() {
  need_ort
  mkmodel >/dev/null
  # The binary itself goes to the background (not the eb_run function, whose subshell would
  # take the signal); $EB_TEST_RUN_ARGS is split on purpose.
  # shellcheck disable=SC2086
  "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} --mode dual --model0 m160.onnx --model1 m160.onnx \
    --rgb_source synthetic=320x240 \
    --thermal_source synthetic=320x240 --frames 1000000 --warmup 0 --output out --quiet \
    2>err.txt &
  local pid=$! i
  for ((i = 0; i < 300; i++)); do
    [ -s "$(ls -d out/*/ 2>/dev/null | head -1)metrics.jsonl" ] && break
    sleep 0.1
  done
  sleep 1
  kill -INT "$pid"
  # It must stop after the current frame: no hang.
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    fail "still running 60 s after SIGINT"
  fi
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 130 ] || fail "interrupted run exit $rc, expected 130"
  local d; d=$(run_dir out)
  check_reports "$d"
  [ "$(jq_get "$d/report.json" interrupted)" = true ] || fail "report not marked interrupted"
  local n; n=$(jq_get "$d/report.json" slots/0/frames/measured)
  [ "${n%.*}" -gt 0 ] || fail "no frames recorded before the interrupt"
  grep -qi "interrupted" "$d/report.md" || fail "report.md not marked interrupted"
}

case_every_shared_model_runs() {
  need_ort; need_shared
  local m n=0 d
  for m in "$DATA"/models/*.onnx; do
    rm -rf out
    eb_run --mode rgb --model0 "$m" --source "image_dir=$DATA/datasets/samples" --warmup 1 \
      --no_loop --output out --quiet 2>err.txt || fail "$(basename "$m"): $(cat err.txt)"
    d=$(run_dir out)
    [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "$(basename "$m") did not run"
    [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 2 ] || fail "$(basename "$m") frames"
    local dets; dets=$(jq_get "$d/report.json" slots/0/detections/total)
    [ "${dets%.*}" -ge 2 ] || fail "$(basename "$m") found $dets objects in bus.jpg and zidane.jpg"
    n=$((n + 1))
  done
  [ "$n" -ge 4 ] || fail "expected the 4 int8 models, found $n"
}

case_missing_source() {
  need_ort
  expect_slot_failure 1 "image_dir=/nonexistent/imgs: no such file or directory" --mode rgb \
    --model0 "$(mkmodel)" --source image_dir=/nonexistent/imgs
}

case_unreadable_model() {
  # Root can read a chmod 000 file, so a folder stands in for a model that cannot be read.
  need_ort
  mkdir adir
  expect_slot_failure 1 "failed to open model adir" --mode rgb --model0 adir \
    --source synthetic=64x64
}

case_backend_native_runs_with_a_hard_limit() {
  eb_run --backend native --mode rgb --model0 "$(mkmodel)" --source synthetic=320x240 \
    --frames 3 --warmup 1 --output out --quiet 2>err.txt || fail "native run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  check_reports "$d"
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot not ok"
  [ "$(jq_get "$d/report.json" slots/0/backend)" = native ] || fail "backend is not native"
  [ "$(jq_get "$d/report.json" slots/0/backend_reason)" = "--backend native" ] || fail "reason"
  [ "$(jq_get "$d/report.json" memory/limit_type)" = hard ] || fail "the native plan cap is hard"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 3 ] || fail "frames"
}

case_backend_native_plan_over_the_limit_fails_at_load() {
  expect_slot_failure 1 "limit" --backend native --mode rgb --model0 "$(mkmodel)" \
    --source synthetic=64x64 --gpu_mem_limit_gb 0.001
  grep -q "needed .* MiB, limit .* MiB" err.txt || fail "no 'needed X MiB, limit Y MiB': $(cat err.txt)"
}

case_backend_auto_explains_its_choice() {
  need_ort
  [ -n "${EB_MKONNX:-}" ] || skip "EB_MKONNX not set (run through ctest)"
  # A v8 head behind a Resize with mode 'cubic', which the native engine refuses.
  "$EB_MKONNX" native-refused cubic.onnx || fail "eb_mkonnx failed"
  eb_run --backend auto --mode rgb --model0 cubic.onnx \
    --source synthetic=320x240 --frames 1 --warmup 0 --output out --quiet 2>err.txt ||
    fail "auto run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/backend)" = ort ] || fail "auto should fall back to ort"
  jq_get "$d/report.json" slots/0/backend_reason | grep -q "not supported by the native engine" ||
    fail "the fallback reason does not say what native cannot do"
  rm -rf out
  eb_run --backend auto --mode rgb --model0 "$(mkmodel)" --source synthetic=64x64 --frames 1 \
    --warmup 0 --output out --quiet 2>err.txt || fail "auto run failed: $(cat err.txt)"
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/backend)" = native ] || fail "auto should pick native"
}

case_dual_native_engines_in_parallel() {
  eb_run --backend native --mode dual --model0 "$(mkmodel)" --model1 m160.onnx \
    --rgb_source synthetic=320x240 --thermal_source synthetic=160x128 --frames 6 --warmup 0 \
    --output out --quiet 2>err.txt || fail "dual native failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/backend)" = native ] || fail "slot 0 backend"
  [ "$(jq_get "$d/report.json" slots/1/backend)" = native ] || fail "slot 1 backend"
  # Each slot runs until both have their 6 frames, the one that got there first until its
  # last frame ends after the other's (pipeline.c measure): the window (to the earliest slot's
  # end) then holds all 6 of the slot that got there last, whichever thread looked first.
  local i
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/frames/measured)" -ge 6 ] || fail "slot $i frames"
  done
  [ "$(jq_get "$d/report.json" pair/pairs)" = 6 ] || fail "pairs"
}

case_nvml_fake_gpu_in_report() {
  # GPU telemetry through NVML, with the fake libnvidia-ml of tests/support/fake_nvml.c (CI has
  # no GPU): 30 W, HwThermalSlowdown active.
  [ -n "${EB_FAKE_NVML:-}" ] || skip "EB_FAKE_NVML not set (run through ctest)"
  export EB_NVML_LIB=$EB_FAKE_NVML FAKE_NVML_POWER_MW=30000 FAKE_NVML_THROTTLE=0x40
  eb_run --backend native --mode rgb --model0 "$(mkmodel)" --source synthetic=64x64 \
    --frames 4 --warmup 1 --interval_ms 10 --output out --quiet 2>err.txt ||
    fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  check_reports "$d"
  [ "$(jq_get "$d/report.json" system/nvml_used)" = true ] || fail "NVML not used"
  [ "$(jq_get "$d/report.json" system/gpus/0/name)" = "Fake GPU 0" ] || fail "GPU name"
  [ "$(jq_get "$d/report.json" system/gpus/0/power_avg_mw)" = 30000 ] || fail "power_avg_mw"
  [ "$(jq_get "$d/report.json" system/energy_per_frame_mj)" != null ] || fail "no energy per frame"
  [ "$(jq_get "$d/report.json" system/energy_source)" = nvml ] || fail "energy source"
  # The measured window's energy (30 W over the window, wall_s), per measured frame: the warm-up
  # frame and the time before and after the pass are left out.
  local win epf wall frames
  win=$(jq_get "$d/report.json" system/energy_window_mj)
  epf=$(jq_get "$d/report.json" system/energy_per_frame_mj)
  wall=$(jq_get "$d/report.json" slots/0/wall_s)
  frames=$(jq_get "$d/report.json" slots/0/frames/measured)
  awk -v e="$win" -v w="$wall" -v p="$epf" -v n="$frames" \
    'BEGIN { x = 30000 * w; exit !(e > 0 && (e - x) < 1e-6 * x && (x - e) < 1e-6 * x &&
                                    (p * n - e) < 1e-6 * e && (e - p * n) < 1e-6 * e) }' ||
    fail "energy_window_mj $win is not 30 W x the window $wall s, or per frame $epf x $frames"
  [ "$(jq_get "$d/report.json" system/throttled)" = true ] || fail "throttling not flagged"
  grep -q '^\*\*Throttling detected during the run:\*\* HwThermalSlowdown$' "$d/report.md" ||
    fail "report.md lacks the throttling line"
  grep -q '"gpus":\[{"index":0,"name":"Fake GPU 0",' "$d/metrics.jsonl" ||
    fail "metrics.jsonl lacks the gpus array"
  # A warning: in run.log; --quiet keeps the console to errors.
  grep -q "WARN GPU 0 (Fake GPU 0) is throttling: HwThermalSlowdown" "$d/run.log" ||
    fail "throttling is not logged"
  ! grep -q "is throttling" err.txt || fail "--quiet printed a warning: $(cat err.txt)"
}

case_preprocess_says_where_and_why() {
  # auto on the CPU: the host letterboxes, and the report says why.
  eb_run --backend native --mode rgb --model0 "$(mkmodel)" --source synthetic=320x240 \
    --frames 2 --warmup 0 --output out --quiet 2>err.txt || fail "native run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/input/preprocess)" = cpu ] || fail "auto on cpu is not cpu"
  jq_get "$d/report.json" slots/0/input/preprocess_reason | grep -q "^auto: the cpu device" ||
    fail "reason: $(jq_get "$d/report.json" slots/0/input/preprocess_reason)"
  grep -q "^| Preprocessing | cpu (auto: " "$d/report.md" || fail "report.md lacks Preprocessing"
  [ "$(jq_get "$d/report.json" slots/0/decode)" = cpu ] || fail "auto decode on cpu is not cpu"
  jq_get "$d/report.json" slots/0/decode_reason | grep -q "^auto: .*the cpu device has no head reduction" ||
    fail "decode reason: $(jq_get "$d/report.json" slots/0/decode_reason)"
  rm -rf out
  expect_slot_failure 1 "--decode gpu: " --backend native --mode rgb --model0 "$(mkmodel)" \
    --source synthetic=64x64 --decode gpu
  rm -rf out
  # gpu where the backend cannot: the slot fails with what to do; the report is still written.
  expect_slot_failure 1 "--preprocess gpu: the cpu device preprocesses frames on the host; use --preprocess cpu or auto" \
    --backend native --mode rgb --model0 "$(mkmodel)" --source synthetic=64x64 --preprocess gpu
}

case_run_save_images_writes_annotated_pngs() {
  # --save_images 2 in dual mode: the first two measured frames of each slot, PNG at the
  # source's size (the embedded models, synthetic frames: the files, not the boxes, are tested).
  eb_run --mode dual --rgb_source synthetic=96x64 --thermal_source synthetic=80x48 --imgsz 160 \
    --frames 4 --warmup 1 --save_images 2 --output out --quiet >/dev/null 2>err.txt ||
    fail "edgebench run failed: $(cat err.txt)"
  local d f; d=$(run_dir out)
  for f in rgb_000000 rgb_000001 thermal_000000 thermal_000001; do
    [ -s "$d/$f.png" ] || fail "$f.png missing: $(ls "$d")"
    [ "$(head -c 8 "$d/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f.png is not a PNG"
  done
  [ -e "$d/rgb_000002.png" ] && fail "more than --save_images 2 frames written"
  [ "$(od -An -tu1 -j16 -N8 "$d/rgb_000000.png" | awk '{ printf "%dx%d", $3 * 256 + $4, $7 * 256 + $8 }')" = 96x64 ] ||
    fail "rgb_000000.png is not 96x64"
  [ "$(od -An -tu1 -j16 -N8 "$d/thermal_000000.png" | awk '{ printf "%dx%d", $3 * 256 + $4, $7 * 256 + $8 }')" = 80x48 ] ||
    fail "thermal_000000.png is not 80x48"
}
