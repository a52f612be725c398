# Text from a model (class names in its metadata) shows as text everywhere (issue 19 §11):
# report.md escapes Markdown and HTML, replaces terminal escape codes and invalid UTF-8 with
# U+FFFD; run.log and the console carry no control characters. Each case_* is one ctest entry.

# hostile_run NAME: runs ../shared/data/hostile/NAME.onnx at conf 0 (every class detected), read
# as a YOLOv8 head (--head v8: their random heads match no family's signature).
hostile_run() {
  rm -rf out
  "$EB_BIN" run --mode rgb --backend native --head v8 --model0 "$DATA/hostile/$1.onnx" \
    --source synthetic=64x64 --frames 3 --warmup 0 --min_frames 0 --min_duration_s 0 --conf 0 \
    --db none --output out >console.txt 2>&1 || fail "$1: the run failed: $(cat console.txt)"
  run_dir out
}

# no_control_bytes FILE: no byte below 0x20 but newline, and no DEL.
no_control_bytes() {
  ! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1" ||
    fail "$1 holds control characters: $(LC_ALL=C grep -n "$(printf '[\001-\011\013-\037\177]')" "$1" | cat -v | head -3)"
}

case_class_names_from_metadata_are_text() {
  need_shared
  local d
  d=$(hostile_run html2)
  grep -qF '| \<script\>alert(1)\</script\> |' "$d/report.md" ||
    fail "HTML in a class name is not escaped: $(grep -a -A4 'Detections by class' "$d/report.md")"
  grep -q '\(^\|[^\\]\)<\(script\|img\|/td\)' "$d/report.md" && fail "raw HTML in report.md"

  d=$(hostile_run ansi2)
  for f in "$d/report.md" "$d/run.log" console.txt; do no_control_bytes "$f"; done
  grep -qF "$(printf '\357\277\275\\[31mRED')" "$d/report.md" ||
    fail "the escape code is not shown as U+FFFD: $(grep -a 'RED' "$d/report.md" | cat -v)"

  d=$(hostile_run utf8bad2)
  iconv -f UTF-8 -t UTF-8 "$d/report.md" >/dev/null 2>&1 || fail "report.md is not valid UTF-8"
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "report.json does not parse"
}

# A newline in a path (a source folder named so) cannot split a line of run.log.
case_newline_in_a_path_stays_on_its_line() {
  local nl
  nl=$(printf 'a\nb')
  "$EB_BIN" run --mode rgb --backend native --model0 "$nl.onnx" --source synthetic=64x64 \
    --frames 1 --db none --output out >console.txt 2>&1
  local d; d=$(run_dir out)
  grep -q '^b.onnx' "$d/run.log" && fail "a newline in the model path split run.log's line"
  grep -q 'a?b.onnx' "$d/run.log" || fail "the path is not named in run.log: $(cat "$d/run.log")"
  return 0
}
