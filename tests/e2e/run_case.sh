#!/usr/bin/env bash
# run_case.sh SCRIPT CASE: sources an e2e test script and runs one case function in a fresh
# temporary directory. Helpers available to cases: fail, skip, need_shared, need_ort, jq_get,
# near, run_dir, numbers_from_report, fmt.
set -u
script=$1
case_name=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ebe2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
need_shared() { [ -d "${EB_SHARED_DATA:-}" ] || skip "../shared/data is absent"; DATA=$EB_SHARED_DATA; }
need_ort() {
  "$EB_BIN" backends 2>/dev/null | grep -q '^ort  *available' ||
    skip "ONNX Runtime library not found (run scripts/setup.sh)"
}
# eb_run ARGS...: `edgebench run` with the extra options of this suite ($EB_TEST_RUN_ARGS; the
# TSan suite passes --threads 1 so that ONNX Runtime, which is not instrumented, runs each
# session on its calling thread while the two slot threads still run in parallel).
# shellcheck disable=SC2086
eb_run() { "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} "$@"; }
# jq_get FILE PATH: value at PATH in FILE (fails the case when absent).
jq_get() { "$EB_JSONQ" "$1" "$2" || fail "no $2 in $1"; }
# near A B TOL: |A - B| <= TOL (decimal numbers).
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'; }
# coco_map MODEL OUT [ARGS...]: `edgebench val` of MODEL on coco128's train2017 images with ARGS,
# results in OUT; prints its mAP50-95 (the case fails with val's message when val fails).
coco_map() {
  local m=$1 o=$2
  shift 2
  "$EB_BIN" val --model "$m" --data "$DATA/datasets/coco128" --out "$o" --quiet "$@" \
    >/dev/null 2>"$o.err" || fail "val $m $*: $(cat "$o.err")"
  jq_get "$o/val.json" metrics/map
}
# run_dir DIR: the single run folder under DIR.
run_dir() { local d; d=$(ls -d "$1"/*/ 2>/dev/null | head -1); [ -n "$d" ] || fail "no run folder under $1"; echo "${d%/}"; }

# numbers_from_report SUMMARY REPORT: fails the case naming each number of SUMMARY that REPORT
# does not hold. A number is a run of digits with an optional decimal part that does not
# continue a word, a name or another number ("fp32", "x2", "v8" and the "0" of "0.1.0" are
# text, not figures), read the same way from both files. report.json's raw per-frame sample
# arrays are left out of the candidates (any 3-decimal millisecond figure would find a match
# among hundreds of samples). How rounding is matched: report.json writes numbers in full
# (shortest round-trip) and summary.md as report.md prints them (a fixed number of decimals),
# so a summary number with d decimals matches a report.json number that printf("%.<d>f")
# turns into the same text; a number without decimals (a count, a threshold quoted in a
# validity reason, a date) must appear in report.json exactly. Signs are not read: summary.md
# states no negative figure.
numbers_from_report() {
  local sum=$1 rep=$2 pat='(^|[^A-Za-z0-9_.])[0-9]+(\.[0-9]+)?'
  LC_ALL=C grep -vE '"(end_to_end|inference)_ms": \[' "$rep" |
    LC_ALL=C grep -oE "$pat([eE][-+]?[0-9]+)?" | LC_ALL=C sed -E 's/^[^0-9]//' >json_numbers.txt
  LC_ALL=C grep -oE "$pat" "$sum" | LC_ALL=C sed -E 's/^[^0-9]//' >summary_numbers.txt
  [ -s summary_numbers.txt ] || fail "summary.md states no figure at all"
  LC_ALL=C awk 'NR == FNR { have[$0] = 1; v[++n] = $0; next }
    $0 in have { next }
    {
      dot = index($0, ".")
      ok = 0
      if (dot > 0) {
        fmt = "%." (length($0) - dot) "f"
        for (i = 1; i <= n && !ok; i++)
          ok = sprintf(fmt, v[i] + 0) == $0
      }
      if (!ok) { print "summary says " $0 ", which report.json does not hold"; bad = 1 }
    }
    END { exit bad }' json_numbers.txt summary_numbers.txt >unmatched.txt ||
    fail "$(cat unmatched.txt)"
}

# fmt D NUMBER: NUMBER with D decimals, as the reports print it.
fmt() { LC_ALL=C awk -v d="$1" -v x="$2" 'BEGIN { printf "%.*f", d, x }'; }

cd "$TMP" || exit 1
# Every `edgebench run` appends to the run history (default ${XDG_DATA_HOME:-~/.local/share}/
# edgebench/history.db): the tests keep theirs in the case's folder, never the user's.
export XDG_DATA_HOME="$TMP/xdg-data"
# Likewise the TensorRT engine cache (default ${XDG_CACHE_HOME:-~/.cache}/edgebench/trt).
export XDG_CACHE_HOME="$TMP/xdg-cache"
# shellcheck source=/dev/null
source "$script"
"case_$case_name"
