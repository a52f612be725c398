#!/usr/bin/env bash
# run_case.sh SCRIPT CASE: sources an e2e test script and runs one case function in a fresh
# temporary directory. Helpers available to cases: fail, skip, need_shared, need_ort, jq_get,
# near, run_dir.
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
cd "$TMP" || exit 1
# Every `edgebench run` appends to the run history (default ${XDG_DATA_HOME:-~/.local/share}/
# edgebench/history.db): the tests keep theirs in the case's folder, never the user's.
export XDG_DATA_HOME="$TMP/xdg-data"
# Likewise the TensorRT engine cache (default ${XDG_CACHE_HOME:-~/.cache}/edgebench/trt).
export XDG_CACHE_HOME="$TMP/xdg-cache"
# shellcheck source=/dev/null
source "$script"
"case_$case_name"
