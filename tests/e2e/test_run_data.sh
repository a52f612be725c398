# End-to-end runs of `edgebench run --data`: accuracy inside a benchmark (the dataset's images as
# the source, the measured frames scored as `edgebench val` scores them), and its usage errors.
# Each case_* is one ctest entry.

case_rgb_coco128_matches_val() {
  need_shared
  local model="$DATA/models/yolov8n_320_int8_dynamic.onnx" data="$DATA/datasets/coco128"
  eb_run --mode rgb --model0 "$model" --data "$data" --frames 128 --warmup 2 --output runs \
    --db none --quiet >stdout.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "run exit $rc: $(cat err.txt)"
  local d; d=$(run_dir runs)
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "report.json does not parse"
  [ "$(jq_get "$d/report.json" slots/0/accuracy/format)" = coco ] || fail "coco128 is COCO JSON"
  [ "$(jq_get "$d/report.json" slots/0/accuracy/images)" = 128 ] || fail "128 images scored"
  [ "$(jq_get "$d/report.json" slots/0/accuracy/conf)" = 0.001 ] || fail "no --conf: 0.001"
  [ "$(jq_get "$d/report.json" slots/0/source)" = "data=$data" ] || fail "source names the dataset"
  [ "$(jq_get "$d/report.json" slots/0/accuracy/detections_file)" = detections_rgb.json ] ||
    fail "detections file name"
  [ -s "$d/detections_rgb.json" ] || fail "detections_rgb.json missing"
  [ "$(jq_get "$d/detections_rgb.json" "")" -ge 5000 ] || fail "too few detections at conf 0.001"
  [ "$(jq_get "$d/report.json" slots/1/accuracy)" = null ] || fail "the thermal slot has no data"
  grep -q '^### Accuracy' "$d/report.md" || fail "report.md lacks the Accuracy section"
  grep -q '<h3>Accuracy</h3>' "$d/report.html" || fail "report.html lacks the Accuracy table"
  "$EB_BIN" val --model "$model" --data "$data" --out val --quiet >val.txt 2>verr.txt ||
    fail "val failed: $(cat verr.txt)"
  local run_map val_map
  run_map=$(jq_get "$d/report.json" slots/0/accuracy/map50_95)
  val_map=$(jq_get val/val.json metrics/map)
  near "$run_map" "$val_map" 0.005 || fail "run mAP50-95 $run_map, val $val_map: differ > 0.005"
  awk -v m="$run_map" 'BEGIN { exit !(m > 0.2) }' || fail "mAP50-95 $run_map is implausibly low"
}

case_dual_coco128_and_hituav_with_class_map() {
  need_shared
  printf '# COCO model on HIT-UAV\nperson = Person\ncar = Car\nbicycle = Bicycle\n' >map.txt
  eb_run --mode dual --model0 "$DATA/models/yolov8n_320_int8_dynamic.onnx" \
    --model1 "$DATA/models/yolo11n_320_int8_dynamic.onnx" \
    --rgb_data "$DATA/datasets/coco128" --thermal_data "$DATA/datasets/thermal/hit-uav" \
    --thermal_class_map map.txt --frames 24 --warmup 2 --conf 0.01 --output runs --db none \
    --quiet >stdout.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "run exit $rc: $(cat err.txt)"
  local d; d=$(run_dir runs)
  local r="$d/report.json"
  # each slot measured 24 frames, or more when it ran on until the other had met its 24
  local n0; n0=$(jq_get "$r" slots/0/accuracy/images)
  [ "$n0" -ge 24 ] && [ "$n0" -lt 128 ] || fail "rgb: only the measured images ($n0)"
  [ "$(jq_get "$r" slots/0/accuracy/dataset_images)" = 128 ] || fail "rgb: coco128 has 128"
  [ "$(jq_get "$r" slots/1/accuracy/format)" = voc ] || fail "hit-uav is read from its VOC XML"
  [ "$(jq_get "$r" slots/1/accuracy/images)" -ge 24 ] || fail "thermal: 24 images scored"
  [ "$(jq_get "$r" slots/1/accuracy/classes_mapped)" = 3 ] || fail "3 classes mapped by the map"
  [ "$(jq_get "$r" slots/1/accuracy/class_map)" = map.txt ] || fail "the class map is named"
  [ "$(jq_get "$r" slots/1/accuracy/per_class)" = 3 ] || fail "Person, Car, Bicycle evaluated"
  [ "$(jq_get "$r" slots/1/accuracy/conf)" = 0.01 ] || fail "--conf given: detections at 0.01"
  [ "$(jq_get "$r" slots/1/accuracy/conf_source)" = --conf ] || fail "conf_source"
  local m; m=$(jq_get "$r" slots/1/accuracy/map50_95)
  awk -v m="$m" 'BEGIN { exit !(m >= 0 && m <= 0.3) }' || fail "thermal mAP50-95 $m implausible"
  [ -s "$d/detections_rgb.json" ] || fail "detections_rgb.json missing"
  [ -s "$d/detections_thermal.json" ] || fail "detections_thermal.json missing"
  grep -q 'images scored' "$d/report.md" || fail "report.md does not say how many were scored"
}

case_bad_data_is_a_usage_error() {
  need_shared
  "$EB_BIN" run --mode rgb --model0 "$DATA/models/yolov8n_320_int8_dynamic.onnx" \
    --data /nonexistent/dataset --output runs --db none >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq 2 ] || fail "exit $rc, expected 2: $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "expected one line on stderr, got: $(cat err.txt)"
  grep -qF "failed to read dataset /nonexistent/dataset: no such folder" err.txt ||
    fail "stderr does not name the folder: $(cat err.txt)"
  [ ! -e runs ] || fail "a usage error must not create a run folder"
  "$EB_BIN" run --mode rgb --model0 "$DATA/models/yolov8n_320_int8_dynamic.onnx" \
    --data "$DATA/datasets/coco128" --class_map nomap.txt --output runs --db none \
    >out.txt 2>err.txt
  rc=$?
  [ "$rc" -eq 2 ] || fail "missing class map: exit $rc, expected 2"
  grep -qF "class map nomap.txt: no such file" err.txt || fail "stderr: $(cat err.txt)"
  [ ! -e runs ] || fail "a usage error must not create a run folder"
}
