# End-to-end cases of the measurement core (src/harness/pipeline/pipeline.c): run length, looping, the
# dual window, camera-rate pacing. Each case_* is one ctest entry; cases whose name contains
# "dual" also run under ThreadSanitizer.

# model SIZE: a synthesized yolov8n at SIZE (seeded), in the case's folder.
model() {
  [ -f "m$1.onnx" ] ||
    "$EB_BIN" model synth --arch yolov8 --scale n --imgsz "$1" -o "m$1.onnx" >/dev/null 2>&1 ||
    fail "model synth $1"
  echo "m$1.onnx"
}

# A run short enough for a test: no history, no validity minimums unless a case sets them.
short() { eb_run --db none --min_frames 0 --min_duration_s 0 --output out --quiet "$@"; }

# csv_col FILE NAME: the column index (1-based) of NAME in the CSV header.
csv_col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }

case_overlap_slow_and_fast_slots() {
  # A slow slot (yolov8n at 640) beside a fast one (at 64): both start from one barrier, the
  # fast one keeps running until the slow one is done, and only frames that ran while both
  # ran are counted.
  short --mode dual --model0 "$(model 640)" --model1 "$(model 64)" \
    --rgb_source synthetic=320x240 --thermal_source synthetic=320x240 \
    --frames 6 --warmup 1 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  local slow_n fast_n fast_left pairs
  slow_n=$(jq_get "$d/report.json" slots/0/frames/measured)
  fast_n=$(jq_get "$d/report.json" slots/1/frames/measured)
  fast_left=$(jq_get "$d/report.json" slots/1/frames/left_out)
  pairs=$(jq_get "$d/report.json" pair/pairs)
  [ "$slow_n" -ge 6 ] || fail "slow slot measured $slow_n < 6"
  [ "$fast_n" -gt "$slow_n" ] || fail "the fast slot ($fast_n) must run more frames than the slow ($slow_n)"
  [ "$pairs" -eq "$slow_n" ] || fail "pairs $pairs must be the smaller count $slow_n"
  for s in rgb thermal; do [ -s "$d/frames_$s.csv" ] || fail "frames_$s.csv missing"; done
  # Every counted frame of one slot started (and ended) inside the other slot's active window:
  # from the barrier (start_ms 0) to the end of its last frame, left-out frames included.
  local cs ce cc
  cs=$(csv_col "$d/frames_rgb.csv" start_ms); ce=$(csv_col "$d/frames_rgb.csv" end_to_end_ms)
  cc=$(csv_col "$d/frames_rgb.csv" counted)
  check_inside() { # A B: counted frames of A inside B's active window
    awk -F, -v s="$cs" -v e="$ce" -v c="$cc" '
      NR == FNR { if (FNR > 1 && $s + $e > hi) hi = $s + $e; next }
      FNR > 1 && $c == 1 { n++; if ($s < 0 || $s + $e > hi + 0.001) bad++ }
      END { if (n == 0) { print "no counted frames"; exit 1 } if (bad) { print bad " frames outside"; exit 1 } }
    ' "$d/frames_$2.csv" "$d/frames_$1.csv" || fail "counted $1 frames outside the $2 slot's window"
  }
  check_inside rgb thermal
  check_inside thermal rgb
  # The report's counts are the CSV's.
  local csv_counted csv_left
  csv_counted=$(awk -F, -v c="$cc" 'NR > 1 && $c == 1' "$d/frames_thermal.csv" | wc -l)
  csv_left=$(awk -F, -v c="$cc" 'NR > 1 && $c == 0' "$d/frames_thermal.csv" | wc -l)
  [ "$csv_counted" -eq "$fast_n" ] || fail "thermal: csv counted $csv_counted, report $fast_n"
  [ "$csv_left" -eq "$fast_left" ] || fail "thermal: csv left out $csv_left, report $fast_left"
  # The window: the slot statistics and the pair FPS come from it.
  local wall end
  wall=$(jq_get "$d/report.json" slots/1/wall_s)
  end=$(jq_get "$d/report.json" slots/1/window/end_ms)
  awk -v w="$wall" -v e="$end" 'BEGIN { exit !(w > 0 && (w * 1000 - e) ^ 2 < 1e-6) }' ||
    fail "wall_s $wall is not the window $end ms"
}

case_duration_measures_at_least_that_long() {
  short --mode rgb --model0 "$(model 64)" --source synthetic=160x120 --duration 3 --warmup 1 \
    2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  local wall; wall=$(jq_get "$d/report.json" slots/0/wall_s)
  awk -v w="$wall" 'BEGIN { exit !(w >= 3.0) }' || fail "--duration 3 measured $wall s"
  # a 3 s pass is long enough to tell what other processes used: a share of the CPUs' time
  local others; others=$(jq_get "$d/report.json" slots/0/window/others_cpu_pct)
  awk -v o="$others" 'BEGIN { exit !(o + 0 == o && o >= 0 && o <= 100) }' ||
    fail "window.others_cpu_pct is not a share: $others"
}

case_frames_on_one_image_loops() {
  need_shared
  short --mode rgb --model0 "$(model 64)" --source "$DATA/datasets/samples/bus.jpg" --frames 50 \
    --warmup 1 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 50 ] || fail "--frames 50 on one image"
  [ "$(jq_get "$d/report.json" slots/0/frames/source_loops)" -ge 49 ] || fail "source_loops"
}

case_no_loop_stops_at_the_end() {
  need_shared
  mkdir imgs
  for i in 1 2 3; do cp "$DATA/datasets/samples/bus.jpg" "imgs/$i.jpg"; done
  short --mode rgb --model0 "$(model 64)" --source image_dir=imgs --frames 10 --no_loop \
    --warmup 1 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 3 ] || fail "--no_loop measured past the end"
  rm -rf out
  short --mode rgb --model0 "$(model 64)" --source image_dir=imgs --frames 10 --warmup 1 \
    2>err.txt || fail "run failed: $(cat err.txt)"
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 10 ] || fail "the folder did not loop"
}

case_default_length_meets_the_minimums() {
  # Neither --frames nor --duration: the run lasts until --min_frames and --min_duration_s.
  eb_run --db none --output out --quiet --mode rgb --model0 "$(model 64)" \
    --source synthetic=64x48 --min_frames 40 --min_duration_s 1 --warmup 1 2>err.txt ||
    fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" -ge 40 ] || fail "fewer than --min_frames"
  local wall; wall=$(jq_get "$d/report.json" slots/0/wall_s)
  awk -v w="$wall" 'BEGIN { exit !(w >= 1.0) }' || fail "shorter than --min_duration_s: $wall"
}

case_paced_keeps_the_camera_rate() {
  # 30 FPS for 3 s on a light model: every frame kept (a queue absorbs a scheduling hiccup of
  # this shared machine), the achieved rate is the clock's.
  short --mode rgb --model0 "$(model 32)" --source synthetic=320x240@30 --duration 3 \
    --queue 4 --warmup 2 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/pacing/target_fps)" = 30 ] || fail "target fps"
  [ "$(jq_get "$d/report.json" slots/0/pacing/dropped)" = 0 ] || fail "frames dropped"
  local fps; fps=$(jq_get "$d/report.json" slots/0/pacing/achieved_fps)
  awk -v f="$fps" 'BEGIN { exit !(f >= 29 && f <= 31) }' || fail "achieved $fps FPS, not 30 +- 1"
  [ -n "$(csv_col "$d/frames_rgb.csv" arrival_ms)" ] || fail "no arrival column"
}

case_paced_faster_than_the_model_drops() {
  # 200 FPS into a model that takes longer than 5 ms a frame: frames are dropped and counted,
  # the slot is INVALID, and latency from arrival is at least the inference latency.
  short --mode rgb --model0 "$(model 640)" --fps 200 --source synthetic=320x240 --frames 8 \
    --warmup 1 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/pacing/dropped)" -gt 0 ] || fail "no frame dropped"
  [ "$(jq_get "$d/report.json" slots/0/pacing/deadline_misses)" -gt 0 ] || fail "no deadline missed"
  grep -q "did not keep up" "$d/report.json" || fail "no validity reason for the drops"
  local arr inf
  arr=$(jq_get "$d/report.json" slots/0/pacing/latency_from_arrival_ms/p50)
  inf=$(jq_get "$d/report.json" slots/0/latency_ms/inference/p50)
  awk -v a="$arr" -v i="$inf" 'BEGIN { exit !(a >= i) }' || fail "from arrival $arr < inference $inf"
}

case_fps_on_a_camera_is_refused() {
  short --mode rgb --model0 "$(model 64)" --source camera=63 --fps 30 --frames 2 2>err.txt
  [ $? -eq 1 ] || fail "--fps on a camera must fail the slot (exit 1)"
  local d; d=$(run_dir out)
  grep -q "delivers frames at its own rate" "$d/report.json" || fail "no reason in the report"
}
