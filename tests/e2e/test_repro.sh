# The reproducibility files of a run folder: inputs.json (the effective configuration, the model
# files with their SHA-256, an image_dir source's file list hash) and assumptions.md (what the
# numbers rest on), next to env.json. Each case_* is one ctest entry.

# list_hash DIR: the file list hash of docs/report-schema.md computed by the shell: for each
# .jpg/.jpeg/.png/.bmp file of DIR in byte order of its name, the name, a NUL, its size in
# decimal and a newline, all through sha256sum.
list_hash() {
  (cd "$1" && LC_ALL=C ls -1 | LC_ALL=C grep -iE '\.(jpe?g|png|bmp)$' | LC_ALL=C sort |
    while IFS= read -r f; do printf '%s\0%s\n' "$f" "$(stat -c %s "$f")"; done) |
    sha256sum | cut -d' ' -f1
}

case_synth_model_inputs_and_assumptions() {
  "$EB_BIN" model synth --arch yolov8 --scale n --imgsz 160 -o m.onnx >/dev/null ||
    fail "synth failed"
  eb_run --mode rgb --model0 m.onnx --source synthetic=320x240 --frames 30 --warmup 2 \
    --min_frames 25 --conf 0.3 --max_drift_pct 7.5 --db none --output out \
    >stdout.txt 2>stderr.txt || fail "run failed: $(cat stderr.txt)"
  local d; d=$(run_dir out)
  for f in inputs.json assumptions.md env.json report.json; do
    [ -s "$d/$f" ] || fail "$f missing or empty next to env.json"
  done
  "$EB_JSONQ" "$d/inputs.json" >/dev/null || fail "inputs.json does not parse"

  # The model: path, size and SHA-256 of the file itself, the same as report.json's.
  local sum; sum=$(sha256sum m.onnx | cut -d' ' -f1)
  [ "$(jq_get "$d/inputs.json" slots/0/model/sha256)" = "$sum" ] || fail "model sha256 != sha256sum"
  [ "$(jq_get "$d/inputs.json" slots/0/model/size_bytes)" = "$(stat -c %s m.onnx)" ] ||
    fail "model size"
  [ "$(jq_get "$d/inputs.json" slots/0/model/path)" = m.onnx ] || fail "model path"
  [ "$(jq_get "$d/report.json" slots/0/model_sha256)" = "$sum" ] || fail "report.json sha256"
  [ "$(jq_get "$d/inputs.json" slots/1/status)" = skipped ] || fail "thermal slot status"
  [ "$(jq_get "$d/inputs.json" slots/1/model)" = null ] || fail "skipped slot has a model"
  # Not a dataset: null in both files.
  [ "$(jq_get "$d/inputs.json" slots/0/dataset)" = null ] || fail "synthetic source has a dataset"
  [ "$(jq_get "$d/report.json" slots/0/source_files)" = null ] || fail "report.json source_files"

  # The effective configuration is report.json's config echo: options given and defaults.
  local k
  for k in min_frames conf max_drift_pct warmup frames iou backend gpu_mem_limit_gb; do
    [ "$(jq_get "$d/inputs.json" config/$k)" = "$(jq_get "$d/report.json" config/$k)" ] ||
      fail "config/$k differs from report.json"
  done
  [ "$(jq_get "$d/inputs.json" config/min_frames)" = 25 ] || fail "--min_frames not resolved"
  near "$(jq_get "$d/inputs.json" config/conf)" 0.3 1e-9 || fail "--conf not resolved"

  # assumptions.md: the CI method report.json names, and every threshold of report.json's
  # validity criteria with this run's value.
  local a="$d/assumptions.md" ci
  ci=$(jq_get "$d/report.json" slots/0/latency_ms/end_to_end/ci_method)
  grep -qF "\"$ci\"" "$a" || fail "assumptions.md does not name the CI method '$ci'"
  grep -q 'Binomial(n, q)' "$a" || fail "assumptions.md does not say how the CI is built"
  for k in min_frames min_duration_s max_drift_pct max_others_cpu_pct max_cov_pct max_drop_pct; do
    local v; v=$(jq_get "$d/report.json" validity/criteria/$k)
    grep -qF "| \`--$k\` (\`$k\`) | $v" "$a" || fail "assumptions.md lacks $k = $v"
  done
  grep -qF '| `--max_drift_pct` (`max_drift_pct`) | 7.5 |' "$a" || fail "the given drift threshold"
  # What was not measured follows the result: no power sensor here, no --profile, no --data.
  grep -q '^- Per-operator profile, slot rgb: no --profile\.' "$a" || fail "profile not listed"
  grep -q '^- Accuracy (mAP), slot rgb: no --data dataset\.' "$a" || fail "accuracy not listed"
  grep -q '^- Slot thermal: did not run (skipped' "$a" || fail "skipped slot not listed"
  grep -q '^- End-to-end p99 confidence interval, slot rgb: 30 measured frames, fewer than the 368' \
    "$a" || fail "the missing p99 interval is not explained"
  grep -q '^## Peaks and clocks' "$a" && grep -q '| Jetson AGX Orin 64GB | 1300 |' "$a" ||
    fail "peak table missing"
  grep -q 'FLOPs.*2 FLOPs per multiply-add' "$a" || fail "FLOP convention missing"
}

case_profile_lists_mfu_and_not_the_profile() {
  # With --profile the operator profile is measured: no longer listed as missing; on the CPU
  # there is no peak, and assumptions.md says why with the profile's own note.
  "$EB_BIN" model synth --arch yolov8 --scale n --imgsz 160 -o m.onnx >/dev/null ||
    fail "synth failed"
  eb_run --mode rgb --model0 m.onnx --backend native --source synthetic=320x240 --frames 10 \
    --warmup 1 --profile --db none --output out >/dev/null 2>stderr.txt ||
    fail "run failed: $(cat stderr.txt)"
  local d; d=$(run_dir out)
  local a="$d/assumptions.md" note
  [ "$(jq_get "$d/report.json" slots/0/profile/peak_tflops)" = null ] || skip "a device with a peak"
  note=$(jq_get "$d/report.json" slots/0/profile/peak_note)
  grep -q '^- Per-operator profile, slot rgb' "$a" && fail "a measured profile listed as missing"
  grep -qF -- "- MFU, slot rgb: $note." "$a" || fail "MFU's absence does not quote '$note'"
  grep -qF -- "- Slot rgb: no peak: $note." "$a" || fail "peaks section does not quote '$note'"
}

case_dataset_file_list_hash() {
  need_shared
  local src="$DATA/datasets/coco128/images/train2017"
  [ -d "$src" ] || skip "$src is absent"
  mkdir imgs
  local f
  for f in $(LC_ALL=C ls "$src" | head -4); do cp "$src/$f" imgs/; done
  eb_run --mode rgb --source image_dir=imgs --frames 4 --warmup 1 --db none --output a \
    >/dev/null 2>err.txt || fail "run a failed: $(cat err.txt)"
  local d1; d1=$(run_dir a)
  local h1; h1=$(jq_get "$d1/inputs.json" slots/0/dataset/file_list_sha256)
  [ "$h1" = "$(list_hash imgs)" ] || fail "dataset hash $h1 is not the documented list hash"
  [ "$(jq_get "$d1/inputs.json" slots/0/dataset/files)" = 4 ] || fail "dataset files"
  [ "$(jq_get "$d1/inputs.json" slots/0/dataset/bytes)" = "$(cat imgs/* | wc -c)" ] ||
    fail "dataset bytes"
  [ "$(jq_get "$d1/report.json" slots/0/source_files/file_list_sha256)" = "$h1" ] ||
    fail "report.json and inputs.json disagree"
  # A file added (and a file that is not an image, which the source does not read) changes it
  # exactly as the list changes.
  cp "$src/$(LC_ALL=C ls "$src" | sed -n 5p)" imgs/zz_added.jpg
  echo notes >imgs/readme.txt
  eb_run --mode rgb --source image_dir=imgs --frames 5 --warmup 1 --db none --output b \
    >/dev/null 2>err.txt || fail "run b failed: $(cat err.txt)"
  local d2; d2=$(run_dir b)
  local h2; h2=$(jq_get "$d2/inputs.json" slots/0/dataset/file_list_sha256)
  [ "$h2" != "$h1" ] || fail "adding a file did not change the dataset hash"
  [ "$h2" = "$(list_hash imgs)" ] || fail "second hash is not the documented list hash"
  [ "$(jq_get "$d2/inputs.json" slots/0/dataset/files)" = 5 ] || fail "dataset files after add"
}
