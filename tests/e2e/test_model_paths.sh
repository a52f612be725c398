# Model paths that are not model files (issue 19 §4): a device, a FIFO, a folder, a file past the
# 2 GiB an ONNX file can hold. Each ends promptly in one clear line with the documented exit
# code; a run still writes its report; nothing is read without bound or waited on forever.
# Each case_* is one ctest entry.

# ends_within SECONDS CMD...: runs CMD; fails the case when it outlives SECONDS (a hang).
ends_within() {
  local s=$1; shift
  timeout -k 5 "$s" "$@"
  local rc=$?
  [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || fail "edgebench $* did not end within $s s"
  return "$rc"
}

# A run whose only slot's model is /dev/zero: the slot fails (not a regular file), the run ends
# (the model fingerprint does not read an endless device) and the report says why.
case_run_on_a_device_fails_the_slot_and_ends() {
  ends_within 60 "$EB_BIN" run --mode rgb --backend native --model0 /dev/zero \
    --source synthetic=64x64 --frames 3 --warmup 0 --db none --output out --quiet 2>err.txt
  local rc=$?
  [ "$rc" -eq 1 ] || fail "nothing could run: exit 1, not $rc: $(cat err.txt)"
  grep -q "/dev/zero.*not a regular file" err.txt || fail "no clear line: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = failed ] || fail "slot 0 must be failed"
  [ "$(jq_get "$d/report.json" slots/0/model_sha256)" = null ] || fail "a device has no fingerprint"
}

# `model info` on a FIFO with no writer: refused at once, never waited on in open().
case_model_info_on_a_fifo_is_refused() {
  mkfifo pipe.onnx || skip "cannot make a FIFO here"
  ends_within 20 "$EB_BIN" model info pipe.onnx >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -ne 0 ] || fail "a FIFO is not a model"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "one line expected: $(cat err.txt)"
  grep -q "pipe.onnx: not a regular file (a device, FIFO or socket); pass an .onnx file" err.txt ||
    fail "unclear: $(cat err.txt)"
}

# A folder is named as a folder (it once read "9223372036854775807 bytes above the 2 GiB limit").
case_model_info_on_a_folder_says_folder() {
  mkdir m.onnx
  ends_within 20 "$EB_BIN" model info m.onnx >out.txt 2>err.txt && fail "a folder is not a model"
  grep -q "m.onnx: it is a folder; pass an .onnx file" err.txt || fail "unclear: $(cat err.txt)"
  grep -q "9223372036854775807" err.txt && fail "a folder's size is not a byte count"
  return 0
}

# A 3 GB sparse file: refused by its size before anything is read, in `model info` and in a run,
# whose fingerprint does not hash it either (it once hashed 40 GB after the slot had failed).
case_oversized_model_is_refused_unread() {
  truncate -s 3G big.onnx || skip "no sparse files here"
  ends_within 20 "$EB_BIN" model info big.onnx >out.txt 2>err.txt && fail "3 GB is not loadable"
  grep -q "big.onnx: 3221225472 bytes, above the 2 GiB one ONNX file can hold" err.txt ||
    fail "unclear: $(cat err.txt)"
  ends_within 60 "$EB_BIN" run --mode rgb --backend native --model0 big.onnx \
    --source synthetic=64x64 --frames 3 --warmup 0 --db none --output out --quiet 2>err.txt
  local rc=$?
  [ "$rc" -eq 1 ] || fail "exit 1 expected, not $rc: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/model_sha256)" = null ] ||
    fail "a file past the bound has no fingerprint"
}
