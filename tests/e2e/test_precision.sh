# Precision that tells the truth: the model's precision read from its graph in run's report,
# compare's rows and the history, beside the precision the backend computed in; run --precision
# int8; a QDQ model on the native engine's int8 kernels by default, --qdq float for the
# fake-quant float path. Each case_* is one ctest entry (the shared models; a few frames each).

# prun MODEL ARGS...: a short rgb run of MODEL from the shared models.
prun() {
  local m=$1
  shift
  eb_run --mode rgb --model0 "$DATA/models/$m" --source synthetic=320x240 --frames 3 --warmup 1 \
    --min_frames 0 --min_duration_s 0 --output out --quiet "$@"
}

case_qdq_runs_int8_kernels_by_default() {
  need_shared
  prun yolov8n_int8_qdq.onnx --backend native --db none 2>err.txt || fail "run: $(cat err.txt)"
  local d
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/model_precision)" = int8-qdq ] || fail "model precision"
  [ "$(jq_get "$d/report.json" slots/0/compute_precision)" = int8 ] || fail "computed in"
  [ "$(jq_get "$d/report.json" slots/0/qdq_path)" = "int8 kernels" ] || fail "qdq path"
  grep -q "model int8-qdq (64 heavy ops.*computed in int8 (int8 kernels)" "$d/report.md" ||
    fail "report.md precision line: $(grep -i precision "$d/report.md")"
  rm -rf out
  prun yolov8n_int8_qdq.onnx --backend native --db none --qdq float 2>err.txt ||
    fail "run --qdq float: $(cat err.txt)"
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/qdq_path)" = "fake-quant float" ] || fail "--qdq float path"
  [ "$(jq_get "$d/report.json" slots/0/compute_precision)" = fp32 ] || fail "--qdq float computes fp32"
  [ "$(jq_get "$d/report.json" slots/0/model_precision)" = int8-qdq ] || fail "still an int8-qdq model"
}

case_dynamic_model_is_int8_dynamic() {
  need_shared
  prun yolov8n_320_int8_dynamic.onnx --backend native --db none 2>err.txt ||
    fail "run: $(cat err.txt)"
  local d
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/model_precision)" = int8-dynamic ] || fail "model precision"
  [ "$(jq_get "$d/report.json" slots/0/compute_precision)" = int8 ] || fail "computed in"
  [ "$(jq_get "$d/report.json" slots/0/qdq_path)" = null ] || fail "no QDQ path for a dynamic model"
}

case_run_precision_int8() {
  need_shared
  prun yolov8n_int8_qdq.onnx --backend native --db none --precision int8 2>err.txt ||
    fail "run --precision int8 on the QDQ model: $(cat err.txt)"
  local d
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot not ok"
  [ "$(jq_get "$d/report.json" slots/0/qdq_path)" = "int8 kernels" ] || fail "int8 path"
  [ "$(jq_get "$d/report.json" config/precision)" = int8 ] || fail "config echo"
  # a float model is refused with the reason and what to do
  rm -rf out
  eb_run --mode rgb --imgsz 64 --frames 2 --warmup 0 --db none --output out --quiet \
    --precision int8 2>err.txt
  [ $? -eq 1 ] || fail "--precision int8 on the fp32 embedded model must fail the slot"
  grep -q "is fp32 (read from its graph" err.txt || fail "reason: $(cat err.txt)"
  grep -q "quantize it first" err.txt || fail "advice: $(cat err.txt)"
  # contradicting options are a usage error
  eb_run --precision int8 --qdq float --db none 2>err.txt
  [ $? -eq 2 ] || fail "--precision int8 --qdq float must exit 2"
  grep -q "give one of them" err.txt || fail "message: $(cat err.txt)"
}

case_ort_is_unaffected() {
  need_shared
  need_ort
  prun yolov8n_int8_qdq.onnx --backend ort --db none 2>err.txt || fail "ort run: $(cat err.txt)"
  local d
  d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/backend)" = ort ] || fail "backend"
  [ "$(jq_get "$d/report.json" slots/0/model_precision)" = int8-qdq ] || fail "model precision"
  [ "$(jq_get "$d/report.json" slots/0/compute_precision)" = int8 ] || fail "ort computes int8"
  [ "$(jq_get "$d/report.json" slots/0/qdq_path)" = null ] || fail "no native QDQ path on ort"
}

case_compare_advice_per_model_precision() {
  need_shared
  "$EB_BIN" compare --models "$DATA/models/yolov8n_320_int8_dynamic.onnx,embedded:yolov8n" \
    --backends native --precisions fp32,int8 --imgsz 320 --source synthetic=320x240 --frames 2 \
    --warmup 0 --min_frames 0 --min_duration_s 0 --db none --out cmp --quiet >/dev/null \
    2>err.txt || fail "compare: $(cat err.txt)"
  # rows: dynamic fp32, dynamic int8, embedded fp32, embedded int8
  [ "$(jq_get cmp/compare.json rows/0/model_precision)" = int8-dynamic ] || fail "row 0 model"
  [ "$(jq_get cmp/compare.json rows/0/status)" = unsupported ] || fail "dynamic fp32 row"
  jq_get cmp/compare.json rows/0/reason | grep -q "int8-dynamic" || fail "row 0 reason"
  [ "$(jq_get cmp/compare.json rows/1/status)" = ok ] || fail "dynamic int8 row must run"
  [ "$(jq_get cmp/compare.json rows/1/compute_precision)" = int8 ] || fail "row 1 computed"
  [ "$(jq_get cmp/compare.json rows/2/model_precision)" = fp32 ] || fail "row 2 model"
  [ "$(jq_get cmp/compare.json rows/2/status)" = ok ] || fail "embedded fp32 row"
  [ "$(jq_get cmp/compare.json rows/3/status)" = unsupported ] || fail "embedded int8 row"
  jq_get cmp/compare.json rows/3/reason | grep -q "this model is fp32 (read from its graph), so quantize it first" ||
    fail "row 3 reason: $(jq_get cmp/compare.json rows/3/reason)"
  ! grep -q "float, so quantize" cmp/compare.json || fail "the old advice is back"
}

case_history_stores_model_precision() {
  need_shared
  prun yolov8n_320_int8_dynamic.onnx --backend native --db h.db 2>err.txt ||
    fail "run: $(cat err.txt)"
  "$EB_BIN" history --db h.db >hist.txt 2>herr.txt || fail "history: $(cat herr.txt)"
  head -1 hist.txt | grep -q "model prec  *computed" || fail "history header: $(head -1 hist.txt)"
  sed -n 2p hist.txt | grep -Eq ' yolov8n_320_int8_dynamic[.a-z]* +native +cpu +int8-dynamic +int8 ' ||
    fail "history row: $(sed -n 2p hist.txt)"
}
