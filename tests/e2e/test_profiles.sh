# End-to-end head recognition and model profiles (yolo/profile.h) through `edgebench run`, on
# models written by eb_mkonnx (tests/support/onnx_build.h presets). Each case_* is one ctest
# entry.

# mk PRESET: writes the preset's model into the case folder and prints its name.
mk() {
  [ -n "${EB_MKONNX:-}" ] || skip "EB_MKONNX not set (run through ctest)"
  "$EB_MKONNX" "$1" "$1.onnx" || fail "eb_mkonnx $1 failed"
  echo "$1.onnx"
}

# prun OUT ARGS...: one-frame run of slot rgb on a synthetic source into folder OUT.
prun() {
  local out=$1
  shift
  eb_run --mode rgb --source synthetic=320x240 --frames 2 --warmup 0 --output "$out" --quiet "$@"
}

# expect_layout BACKEND PRESET LAYOUT: the preset runs on BACKEND and its slot reads LAYOUT.
expect_layout() {
  local be=$1 m; m=$(mk "$2")
  prun "out-$2-$be" --backend "$be" --model0 "$m" 2>err.txt ||
    fail "$2 on $be failed: $(cat err.txt)"
  local j; j=$(run_dir "out-$2-$be")/report.json
  [ "$(jq_get "$j" slots/0/status)" = ok ] || fail "$2 on $be: slot not ok"
  [ "$(jq_get "$j" slots/0/layout)" = "$3" ] ||
    fail "$2 on $be: layout $(jq_get "$j" slots/0/layout), want $3"
  [ "$(jq_get "$j" slots/0/model_profile/family)" = "$3" ] || fail "$2 on $be: family"
  [ "$(jq_get "$j" slots/0/model_profile/source)" = built-in ] || fail "$2 on $be: source"
}

case_detr_and_end2end_run_native() {
  expect_layout native detr detr
  expect_layout native detr-sigmoid detr
  expect_layout native end2end end2end
}

case_detr_and_end2end_run_ort() {
  need_ort
  expect_layout ort detr detr
  expect_layout ort end2end end2end
}

case_unknown_layout_is_refused_with_its_outputs() {
  local m; m=$(mk unknown)
  local rc=0
  prun out --backend native --model0 "$m" 2>err.txt || rc=$?
  [ "$rc" = 1 ] || fail "an unknown head exited $rc, want 1"
  grep -q "no head adapter recognises the model's outputs (mystery \[1,7,3\])" err.txt ||
    fail "the error does not list the outputs: $(cat err.txt)"
  grep -q -- "--head v8|v5|v5-raw|yolox|nanodet|fastestdet|fastestv2|end2end|detr" err.txt ||
    fail "the error does not give the --head choices"
  grep -q -- "--model_profile" err.txt || fail "the error does not name --model_profile"
  local j; j=$(run_dir out)/report.json
  [ -s "$j" ] || fail "no report for the failed run"
  [ "$(jq_get "$j" slots/0/status)" = failed ] || fail "slot status is not failed"
  jq_get "$j" slots/0/message | grep -q "mystery \[1,7,3\]" || fail "report message lacks outputs"
}

case_head_overrides_recognition() {
  local m; m=$(mk v5)
  prun auto --backend native --model0 "$m" 2>err.txt || fail "v5 run failed: $(cat err.txt)"
  [ "$(jq_get "$(run_dir auto)/report.json" slots/0/layout)" = v5 ] || fail "v5 not recognised"
  prun out --backend native --model0 "$m" --head v5-raw 2>err.txt ||
    fail "--head v5-raw failed: $(cat err.txt)"
  local j; j=$(run_dir out)/report.json
  [ "$(jq_get "$j" slots/0/layout)" = v5-raw ] || fail "--head did not force v5-raw"
  [ "$(jq_get "$j" slots/0/model_profile/source)" = --head ] || fail "source is not --head"
  [ "$(jq_get "$j" slots/0/model_profile/family)" = yolov5-raw ] || fail "family"
  # A head that does not fit says why, with the outputs.
  prun bad --backend native --model0 "$m" --head nanodet 2>err.txt && fail "--head nanodet ran"
  grep -q "head nanodet does not fit the model's outputs (output0 \[1,252,85\])" err.txt ||
    fail "no reason for the misfit: $(cat err.txt)"
}

case_model_profile_file_overrides() {
  local m; m=$(mk v5)
  printf '# hand-written\nname = mine\nhead = v5-raw\ncolor = bgr\nresize = stretch\npad = 0\n' \
    >mine.profile
  prun out --backend native --model0 "$m" --model_profile mine.profile 2>err.txt ||
    fail "--model_profile run failed: $(cat err.txt)"
  local j; j=$(run_dir out)/report.json
  [ "$(jq_get "$j" slots/0/model_profile/family)" = mine ] || fail "family is not the file's name"
  [ "$(jq_get "$j" slots/0/model_profile/source)" = "profile file" ] || fail "source"
  [ "$(jq_get "$j" slots/0/layout)" = v5-raw ] || fail "the file's head was not used"
  local in; in=$(jq_get "$j" slots/0/model_profile/input)
  case "$in" in "BGR /255, stretch"*", pad 0") ;; *) fail "input is \"$in\"" ;; esac
  jq_get "$j" slots/0/model_profile/why | grep -q "settings from mine.profile" ||
    fail "why does not name the file"
}

case_bad_profile_file_fails_with_its_line() {
  local m; m=$(mk v5)
  printf 'color = bgr\n\nmean = 1, 2\n' >bad.profile
  local rc=0
  prun out --backend native --model0 "$m" --model_profile bad.profile 2>err.txt || rc=$?
  [ "$rc" = 1 ] || fail "a bad profile exited $rc, want 1"
  [ "$(grep -c . err.txt)" = 1 ] || fail "the error is not one line: $(cat err.txt)"
  grep -q "model profile bad.profile line 3: mean needs three numbers" err.txt ||
    fail "the error does not name the file, line and key: $(cat err.txt)"
  [ "$(jq_get "$(run_dir out)/report.json" slots/0/status)" = failed ] || fail "slot not failed"
}
