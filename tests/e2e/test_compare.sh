# End-to-end runs of `edgebench compare`: a sweep of synthesized models over backends and
# precisions on the CPU, and a sweep with a missing model file. Each case_* is one ctest entry.

# synth_models: yolov8n and yolo11n at 160 (small, so that each row takes a fraction of a second).
synth_models() {
  "$EB_BIN" model synth --arch yolov8 --scale n --imgsz 160 -o v8.onnx >/dev/null || fail "synth v8"
  "$EB_BIN" model synth --arch yolo11 --scale n --imgsz 160 -o y11.onnx >/dev/null || fail "synth 11"
}

# data_rows FILE: lines after the header (CSV) or table rows after the separator (Markdown).
csv_rows() { tail -n +2 "$1" | grep -c .; }
md_rows() { grep -c '^| \(ok\|unsupported\|failed\) |' "$1"; }

case_sweep_fp16_unsupported_on_cpu() {
  need_ort
  synth_models
  "$EB_BIN" compare --models v8.onnx,y11.onnx --backends native,ort --precisions fp32,fp16 \
    --imgsz 160 --devices cpu --frames 12 --warmup 2 --min_frames 5 --out out \
    >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat stderr.txt)"
  for f in compare.md compare.json compare.jsonl compare.html latency_comparative_160.csv; do
    [ -s "out/$f" ] || fail "out/$f missing or empty"
  done
  "$EB_JSONQ" out/compare.json >/dev/null || fail "compare.json does not parse"
  "$EB_JSONQ" -l out/compare.jsonl >/dev/null || fail "compare.jsonl has a bad line"
  # 2 models x 2 backends x 2 precisions, the same count in every output and on stdout
  [ "$(jq_get out/compare.json rows)" = 8 ] || fail "compare.json rows"
  [ "$(grep -c . out/compare.jsonl)" = 8 ] || fail "compare.jsonl lines"
  [ "$(csv_rows out/latency_comparative_160.csv)" = 8 ] || fail "CSV rows"
  [ "$(md_rows out/compare.md)" = 8 ] || fail "Markdown rows"
  [ "$(md_rows stdout.txt)" = 8 ] || fail "the table is not printed"
  # expansion order: models, backends, precisions; fp16 on the CPU is unsupported with a reason
  local i want_p st reason
  for i in 0 1 2 3 4 5 6 7; do
    want_p=fp32; [ $((i % 2)) -eq 1 ] && want_p=fp16
    [ "$(jq_get out/compare.json "rows/$i/precision")" = "$want_p" ] || fail "row $i precision"
    st=$(jq_get out/compare.json "rows/$i/status")
    reason=$(jq_get out/compare.json "rows/$i/reason")
    if [ "$want_p" = fp16 ]; then
      [ "$st" = unsupported ] || fail "row $i: fp16 on cpu must be unsupported, is $st"
      [ -n "$reason" ] || fail "row $i: unsupported without a reason"
    else
      [ "$st" = ok ] || fail "row $i: $st: $reason"
      [ "$(jq_get out/compare.json "rows/$i/frames")" = 12 ] || fail "row $i frames"
      [ "$(jq_get out/compare.json "rows/$i/backend_ran")" = \
        "$(jq_get out/compare.json "rows/$i/backend")" ] || fail "row $i ran another backend"
      jq_get out/compare.json "rows/$i/p50_ms" | grep -q '^[0-9]' || fail "row $i p50"
      jq_get out/compare.json "rows/$i/gflops" | grep -q '^[0-9]' || fail "row $i GFLOPs"
    fi
  done
  [ "$(jq_get out/compare.json rows/0/model)" = v8.onnx ] || fail "models are outermost"
  [ "$(jq_get out/compare.json rows/2/backend)" = ort ] || fail "backends after models"
  grep -q '<svg' out/compare.html || fail "compare.html has no chart"
  # every row that ran is in the history as a sweep run
  if command -v sqlite3 >/dev/null; then
    [ "$(sqlite3 "$XDG_DATA_HOME/edgebench/history.db" \
      "SELECT count(*) FROM runs WHERE kind = 'sweep'")" = 4 ] || fail "history: 4 sweep runs"
  fi
}

case_sweep_missing_model_row_fails() {
  need_ort
  synth_models
  "$EB_BIN" compare --models v8.onnx,missing.onnx --backends native,ort --precisions fp32 \
    --imgsz 160 --frames 12 --warmup 2 --min_frames 5 --db none --out out \
    >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 1 ] || fail "a failed row must exit 1, got $rc: $(cat stderr.txt)"
  grep -q 'missing.onnx: no such file' stderr.txt || fail "no warning naming the missing file"
  [ "$(jq_get out/compare.json rows)" = 4 ] || fail "compare.json rows"
  [ "$(csv_rows out/latency_comparative_160.csv)" = 4 ] || fail "CSV rows"
  [ "$(md_rows out/compare.md)" = 4 ] || fail "Markdown rows"
  local i
  for i in 0 1; do
    [ "$(jq_get out/compare.json "rows/$i/status")" = ok ] || fail "row $i not ok"
  done
  for i in 2 3; do
    [ "$(jq_get out/compare.json "rows/$i/status")" = failed ] || fail "row $i not failed"
    jq_get out/compare.json "rows/$i/reason" | grep -q 'no such file' || fail "row $i reason"
  done
}

# A file that is not ONNX: its row fails with the reader's message naming the file (not
# "<memory>"), and the other model's row still runs.
case_sweep_corrupt_model_is_named() {
  synth_models
  head -c 3000 v8.onnx >cut.onnx
  "$EB_BIN" compare --models v8.onnx,cut.onnx --backends native --precisions fp32 \
    --imgsz 160 --frames 12 --warmup 2 --min_frames 5 --db none --out out \
    >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 1 ] || fail "a failed row must exit 1, got $rc: $(cat stderr.txt)"
  [ "$(jq_get out/compare.json rows/0/status)" = ok ] || fail "row 0 not ok"
  [ "$(jq_get out/compare.json rows/1/status)" = failed ] || fail "row 1 not failed"
  jq_get out/compare.json rows/1/reason | grep -q 'failed to read model cut.onnx' ||
    fail "row 1's reason does not name the file: $(jq_get out/compare.json rows/1/reason)"
  ! grep -q '<memory>' stderr.txt out/compare.md || fail "a message names the model <memory>"
}

case_sweep_embedded_two_sizes() {
  # No files at all: the embedded model is synthesized at each size; one CSV per size.
  "$EB_BIN" compare --imgsz 160,320 --backends native --frames 12 --warmup 2 --min_frames 5 \
    --db none --out out >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat stderr.txt)"
  [ "$(csv_rows out/latency_comparative_160.csv)" = 1 ] || fail "160 CSV rows"
  [ "$(csv_rows out/latency_comparative_320.csv)" = 1 ] || fail "320 CSV rows"
  [ "$(jq_get out/compare.json rows/1/imgsz)" = 320 ] || fail "second row imgsz"
  [ "$(jq_get out/compare.json rows/1/status)" = ok ] || fail "second row status"
  # bad input: one line naming the thing, exit 2
  "$EB_BIN" compare --backends native,tflite --db none --out out2 >/dev/null 2>err.txt
  rc=$?
  [ "$rc" -eq 2 ] || fail "unknown backend must exit 2, got $rc"
  [ "$(grep -c . err.txt)" = 1 ] && grep -q "tflite" err.txt || fail "bad-input message: $(cat err.txt)"
}

# small_yolo_dataset DIR N: a YOLO-layout dataset (images/, labels/) of the first N images of
# coco128's train2017 that have a label file, linked, so that scoring a row takes a moment.
small_yolo_dataset() {
  local src=$DATA/datasets/coco128 f n=0
  mkdir -p "$1/images" "$1/labels" || fail "mkdir $1"
  for f in "$src"/labels/train2017/*.txt; do
    [ "$n" -lt "$2" ] || break
    ln -s "$src/images/train2017/$(basename "${f%.txt}").jpg" "$1/images/" &&
      ln -s "$f" "$1/labels/" || fail "link $f"
    n=$((n + 1))
  done
}

# --calib: the int8 rows of a float model run it quantized (once per model and size, whatever
# the backend), and map_delta is each row's mAP minus its fp32 row's.
case_sweep_calib_quantizes_float_model_for_int8() {
  need_shared
  local model=$DATA/models-fp32/fastestdet_352_fp32.onnx
  local calib=$DATA/datasets/coco128/images/val2017
  small_yolo_dataset ds 8
  "$EB_BIN" compare --models "$model" --backends native,auto --precisions fp32,int8 \
    --imgsz 352 --calib "$calib" --calib_images 4 --data ds --frames 6 --warmup 1 \
    --min_frames 2 --db none --out out >stdout.txt 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat stderr.txt)"
  local q=out/quantized/fastestdet_352_fp32_352.int8.onnx
  [ -s "$q" ] || fail "$q missing: $(ls -R out)"
  # quantized once, for the first int8 row; the second backend's int8 row reuses it
  [ "$(grep -c '^quantize: calibrating' stderr.txt)" = 1 ] ||
    fail "quantized $(grep -c '^quantize: calibrating' stderr.txt) times: $(cat stderr.txt)"
  grep -q "on 4 of 128 images" stderr.txt || fail "--calib_images 4 not used: $(cat stderr.txt)"
  local i r st note
  for i in 0 1 2 3; do
    st=$(jq_get out/compare.json "rows/$i/status")
    [ "$st" = ok ] || fail "row $i: $st: $(jq_get out/compare.json "rows/$i/reason")"
    jq_get out/compare.json "rows/$i/map50_95" | grep -q '^0\.[0-9]' || fail "row $i has no mAP"
  done
  for r in 0 2; do # fp32 rows: the float model, no note, ΔmAP 0 against themselves
    [ "$(jq_get out/compare.json "rows/$r/model_precision")" = fp32 ] || fail "row $r model"
    [ "$(jq_get out/compare.json "rows/$r/note")" = "" ] || fail "row $r has a note"
    [ "$(jq_get out/compare.json "rows/$r/map_delta")" = 0 ] ||
      fail "row $r map_delta $(jq_get out/compare.json "rows/$r/map_delta")"
  done
  for r in 1 3; do # int8 rows: the quantized file ran, and say so
    [ "$(jq_get out/compare.json "rows/$r/precision")" = int8 ] || fail "row $r precision"
    [ "$(jq_get out/compare.json "rows/$r/model")" = "$model" ] || fail "row $r model name"
    [ "$(jq_get out/compare.json "rows/$r/model_precision")" = int8-qdq ] ||
      fail "row $r ran a $(jq_get out/compare.json "rows/$r/model_precision") model"
    note=$(jq_get out/compare.json "rows/$r/note")
    [ "$note" = "quantized by edgebench quantize from $model, 4 images of $calib; ran $q" ] ||
      fail "row $r note: $note"
    # ΔmAP = this row's mAP minus its backend's fp32 row's, to the 4-decimal rounding
    awk -v d="$(jq_get out/compare.json "rows/$r/map_delta")" \
      -v a="$(jq_get out/compare.json "rows/$r/map50_95")" \
      -v b="$(jq_get out/compare.json "rows/$((r - 1))/map50_95")" \
      'BEGIN { e = d - (a - b); exit !(e < 1.5e-4 && e > -1.5e-4) }' ||
      fail "row $r map_delta $(jq_get out/compare.json "rows/$r/map_delta") is not its mAP minus row $((r - 1))'s"
  done
  # the CSV the tool's users read: map_delta right after map50_95, the same values
  local csv=out/latency_comparative_352.csv col
  col=$(head -1 "$csv" | tr ',' '\n' | grep -n '^map_delta$' | cut -d: -f1)
  [ -n "$col" ] || fail "no map_delta column: $(head -1 "$csv")"
  [ "$(head -1 "$csv" | cut -d, -f$((col - 1)))" = map50_95 ] || fail "map_delta not after map50_95"
  [ "$(sed -n 2p "$csv" | cut -d, -f"$col")" = 0.0000 ] || fail "CSV fp32 map_delta"
  [ "$(sed -n 3p "$csv" | cut -d, -f"$col")" = \
    "$(printf '%.4f' "$(jq_get out/compare.json rows/1/map_delta)")" ] || fail "CSV int8 map_delta"
  grep -q 'ΔmAP vs fp32' out/compare.md || fail "compare.md has no ΔmAP column"
}

# Without --calib an int8 row of a float model is refused with both ways out; a --calib folder
# without images fails the int8 row with quantize's reason, and the fp32 row still runs.
case_sweep_int8_float_model_needs_calib() {
  need_shared
  local model=$DATA/models-fp32/fastestdet_352_fp32.onnx
  "$EB_BIN" compare --models "$model" --precisions fp32,int8 --imgsz 352 --frames 4 \
    --warmup 1 --min_frames 2 --db none --out out >/dev/null 2>stderr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "an unsupported row must exit 0, got $rc: $(cat stderr.txt)"
  [ "$(jq_get out/compare.json rows/0/status)" = ok ] || fail "fp32 row"
  [ "$(jq_get out/compare.json rows/1/status)" = unsupported ] || fail "int8 row"
  jq_get out/compare.json rows/1/reason |
    grep -qF "so quantize it first (edgebench quantize) or give compare --calib DIR" ||
    fail "int8 reason: $(jq_get out/compare.json rows/1/reason)"
  [ ! -e out/quantized ] || fail "quantized without --calib"
  mkdir empty
  "$EB_BIN" compare --models "$model" --precisions fp32,int8 --imgsz 352 --calib empty \
    --frames 4 --warmup 1 --min_frames 2 --db none --out out2 >/dev/null 2>stderr.txt
  rc=$?
  [ "$rc" -eq 1 ] || fail "a failed row must exit 1, got $rc: $(cat stderr.txt)"
  [ "$(jq_get out2/compare.json rows/0/status)" = ok ] || fail "fp32 row with a bad --calib"
  [ "$(jq_get out2/compare.json rows/1/status)" = failed ] || fail "int8 row with no images"
  jq_get out2/compare.json rows/1/reason | grep -q '^--calib: .*empty' ||
    fail "int8 reason: $(jq_get out2/compare.json rows/1/reason)"
  [ ! -e out2/quantized/fastestdet_352_fp32_352.int8.onnx ] || fail "a failed quantize left a file"
}
