# A file of the run folder that cannot be written (issue 19 §8) is one error line naming it and
# why, exit code 6, and every other file is still written; a too-long --output is refused
# before anything runs. A full disk is simulated hermetically by a file size limit
# (`ulimit -f`): with SIGXFSZ ignored (which stays ignored across exec) a write past the limit
# fails with EFBIG, "File too large", at the write, the flush or the close.

# The embedded yolov8n on slot rgb at 160x160: fast on one CPU core.
QUICK=(--mode rgb --backend native --frames 5 --warmup 0 --imgsz 160 --source synthetic=320x240
  --db none --quiet)

# limited KB ARGS...: `edgebench run ARGS` where no file may grow past KB kilobytes (bash's
# ulimit -f counts 1024-byte blocks); the console goes to o.txt/e.txt through a pipe and a FIFO,
# which the limit does not touch, and both readers have finished when it returns.
limited() {
  local kb=$1 rc reader
  shift
  rm -f err.fifo && mkfifo err.fifo || fail "cannot make a FIFO"
  cat err.fifo >e.txt &
  reader=$!
  # shellcheck disable=SC2086
  (ulimit -f "$kb" && trap '' XFSZ && exec "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} "$@") \
    2>err.fifo | cat >o.txt
  rc=${PIPESTATUS[0]}
  wait "$reader"
  return "$rc"
}

case_file_size_limit_loses_report_html_only() {
  # report.html of this run is ~30 KB, report.json ~14 KB, the other files smaller: at 20 KB
  # only report.html is lost.
  limited 20 "${QUICK[@]}" --output out
  local rc=$?
  [ "$rc" = 6 ] || fail "exit $rc, expected 6: $(cat e.txt)"
  local d; d=$(run_dir out)
  [ "$(grep -c '^edgebench: error: ' e.txt)" = 1 ] || fail "expected one error line: $(cat e.txt)"
  grep -q "^edgebench: error: failed to write $d/report.html: File too large" e.txt ||
    fail "the error does not name report.html and why: $(cat e.txt)"
  [ ! -e "$d/report.html" ] || fail "a report.html was left behind"
  ! ls -A "$d" | grep -q '\.tmp\.' || fail "a temporary file was left: $(ls -A "$d")"
  for f in report.json report.md env.json run.log metrics.jsonl frames_rgb.csv; do
    [ -s "$d/$f" ] || fail "$f missing or empty"
  done
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "report.json does not parse"
  "$EB_JSONQ" "$d/env.json" >/dev/null || fail "env.json does not parse"
  [ "$(jq_get "$d/report.json" exit_code)" = 6 ] || fail "report.json exit_code"
  local n k found=0
  n=$(jq_get "$d/report.json" warnings) # an array's length
  for ((k = 0; k < n; k++)); do
    jq_get "$d/report.json" "warnings/$k" | grep -q "^failed to write $d/report.html: " && found=1
  done
  [ "$found" = 1 ] || fail "report.json's warnings lack the loss of report.html"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 5 ] || fail "the run's results"
  grep -q "^report: $d/report.md$" o.txt || fail "report line: $(cat o.txt)"
  grep -q "ERROR failed to write $d/report.html" "$d/run.log" || fail "run.log lacks the error"
}

case_nothing_writable_names_every_file() {
  # 0 KB: every file of the run folder is created empty and every write fails.
  limited 0 "${QUICK[@]}" --output out
  local rc=$?
  [ "$rc" = 6 ] || fail "exit $rc, expected 6: $(cat e.txt)"
  local d; d=$(run_dir out)
  for f in report.json report.md report.html env.json run.log metrics.jsonl frames_rgb.csv; do
    grep -q "^edgebench: error: failed to write $d/$f: File too large" e.txt ||
      fail "no error line for $f: $(cat e.txt)"
  done
  [ ! -s o.txt ] || fail "a report line names a file that was not written: $(cat o.txt)"
}

case_too_long_output_is_refused_before_the_run() {
  local long i
  long=out
  for ((i = 0; i < 20; i++)); do long="$long/$(printf 'd%.0s' {1..199})"; done # 4,003 bytes
  eb_run "${QUICK[@]}" --output "$long" >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 6 ] || fail "exit $rc, expected 6: $(cat e.txt)"
  [ "$(wc -l <e.txt)" = 1 ] || fail "expected one line: $(cat e.txt)"
  grep -q '^edgebench: error: failed to create output folder out/ddd.*: the path is too long (4003 bytes; at most [0-9]*); choose a shorter --output$' e.txt ||
    fail "stderr: $(cat e.txt)"
  [ "$(wc -c <e.txt)" -lt 400 ] || fail "the line repeats the whole path"
  [ ! -e out ] || fail "folders were made for a refused --output"
  [ ! -s o.txt ] || fail "stdout: $(cat o.txt)"
}

case_output_folder_that_cannot_be_made() {
  : >file
  eb_run "${QUICK[@]}" --output file/sub >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 6 ] || fail "exit $rc, expected 6: $(cat e.txt)"
  grep -q '^edgebench: error: failed to create output folder file/sub: Not a directory' e.txt ||
    fail "stderr: $(cat e.txt)"
}
