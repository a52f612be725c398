# End-to-end runs of `edgebench run --profile` (the per-operator profile in report.json and
# report.md). Each case_* is one ctest entry.

# num_ok EXPR: awk evaluates EXPR (numbers substituted by the caller); exit 0 when true.
num_ok() { awk "BEGIN { exit !($1) }"; }

# profile_run BACKEND [ARGS...]: the embedded yolov8n on slot rgb at 160x160, 5 measured frames.
profile_run() {
  local be=$1
  shift
  eb_run --mode rgb --backend "$be" --profile --frames 5 --warmup 1 --imgsz 160 \
    --source synthetic=320x240 --output out --quiet "$@" 2>err.txt ||
    fail "--backend $be --profile failed: $(cat err.txt)"
}

case_native_profile_tables_add_up() {
  profile_run native
  local d j; d=$(run_dir out); j=$d/report.json
  [ "$(jq_get "$j" slots/0/status)" = ok ] || fail "slot rgb not ok"
  [ "$(jq_get "$j" slots/0/backend)" = native ] || fail "backend is not native"
  jq_get "$j" slots/0/provider | grep -Eq '^edgebench-native cpu [a-z0-9]+ x[0-9]+ threads?$' ||
    fail "provider lacks the kernel family and threads: $(jq_get "$j" slots/0/provider)"
  # Only the measured frames are profiled (not the probe inference or the warm-up).
  [ "$(jq_get "$j" slots/0/profile/frames)" = 5 ] || fail "profiled frames != measured frames"
  [ "$(jq_get "$j" slots/0/profile_note)" = null ] || fail "profile_note set on a native run"
  local n_ops; n_ops=$(jq_get "$j" slots/0/profile/by_op_type)
  [ "$n_ops" -ge 5 ] || fail "by_op_type has $n_ops entries"
  [ "$(jq_get "$j" slots/0/profile/by_op_type/0/op)" = Conv ] ||
    fail "top op type is $(jq_get "$j" slots/0/profile/by_op_type/0/op), not Conv"
  local i pct sum_pct=0 nodes=0 prev=1e300 ms
  for ((i = 0; i < n_ops; i++)); do
    pct=$(jq_get "$j" "slots/0/profile/by_op_type/$i/pct")
    ms=$(jq_get "$j" "slots/0/profile/by_op_type/$i/ms_per_frame")
    num_ok "$ms <= $prev" || fail "by_op_type is not sorted by time at $i"
    prev=$ms
    sum_pct=$(awk "BEGIN { print $sum_pct + $pct }")
    nodes=$((nodes + $(jq_get "$j" "slots/0/profile/by_op_type/$i/nodes")))
  done
  num_ok "$sum_pct > 99.9 && $sum_pct < 100.1" || fail "op type percentages sum to $sum_pct"
  [ "$nodes" = "$(jq_get "$j" slots/0/profile/nodes)" ] || fail "op types count $nodes nodes"
  # The per-node times account for the measured inference stage within 5%.
  local sum infer ratio
  sum=$(jq_get "$j" slots/0/profile/sum_ms_per_frame)
  infer=$(jq_get "$j" slots/0/latency_ms/inference/mean)
  ratio=$(jq_get "$j" slots/0/profile/sum_to_inference)
  num_ok "$sum > 0 && $sum >= 0.95 * $infer && $sum <= 1.05 * $infer" ||
    fail "sum of node times $sum ms vs inference mean $infer ms"
  num_ok "$ratio > 0.95 && $ratio < 1.05 && ($ratio - $sum / $infer) ^ 2 < 1e-12" ||
    fail "sum_to_inference $ratio disagrees with $sum / $infer"
  local gf gfs
  gf=$(jq_get "$j" slots/0/profile/by_op_type/0/gflops_per_frame)
  gfs=$(jq_get "$j" slots/0/profile/by_op_type/0/gflops_per_s)
  num_ok "$gf > 0.1 && $gfs > 0" || fail "Conv FLOPs $gf GFLOP/frame at $gfs GFLOP/s"
  [ "$(jq_get "$j" slots/0/profile/top_nodes)" = 15 ] || fail "top_nodes is not the top 15"
  jq_get "$j" slots/0/profile/top_nodes/0/name | grep -q . || fail "top node has no name"
  # The other slot did not run: no profile there.
  [ "$(jq_get "$j" slots/1/profile)" = null ] || fail "skipped slot has a profile"
  local md=$d/report.md
  grep -q '^### Per-operator profile' "$md" || fail "report.md lacks the profile section"
  grep -q '^| Op type | Nodes | ms/frame | % | GFLOP/frame | GFLOP/s | MFU % |' "$md" ||
    fail "report.md lacks the op type table"
  grep -Eq '^\| Conv \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| n/a \|$' "$md" ||
    fail "report.md has no Conv row (with MFU n/a on the CPU)"
  grep -q '^| Node | Op | Fused | ms/frame | % | GFLOP/s | MFU % |' "$md" || fail "no top node table"
}

# The CPU has no entry in the table of device peaks: MFU is null everywhere and peak_note says
# why (GPU runs, which have a peak, are checked by the CUDA tests).
case_native_cpu_profile_has_null_mfu_with_reason() {
  profile_run native
  local d j; d=$(run_dir out); j=$d/report.json
  [ "$(jq_get "$j" slots/0/status)" = ok ] || fail "slot rgb not ok"
  local k
  for k in mfu_pct mfu_inference_pct peak_tflops peak_clock_mhz peak_device \
    by_op_type/0/mfu_pct top_nodes/0/mfu_pct; do
    [ "$(jq_get "$j" "slots/0/profile/$k")" = null ] || fail "profile/$k is not null on the CPU"
  done
  [ "$(jq_get "$j" slots/0/profile/peak_precision)" = fp32 ] ||
    fail "peak_precision is $(jq_get "$j" slots/0/profile/peak_precision), not fp32"
  jq_get "$j" slots/0/profile/peak_note | grep -q '^cpu: no peak in the table' ||
    fail "peak_note lacks the reason: $(jq_get "$j" slots/0/profile/peak_note)"
  # The achieved figures are still there.
  num_ok "$(jq_get "$j" slots/0/profile/gflops_per_s) > 0" || fail "no achieved GFLOP/s"
  grep -q '^| MFU (model FLOPs utilisation) | n/a — cpu: no peak in the table' "$d/report.md" ||
    fail "report.md lacks the MFU line with the reason"
}

case_native_without_profile_has_null_profile() {
  eb_run --mode rgb --backend native --frames 2 --warmup 0 --imgsz 160 \
    --source synthetic=320x240 --output out --quiet 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/profile)" = null ] || fail "profile without --profile"
  [ "$(jq_get "$d/report.json" slots/0/profile_note)" = null ] || fail "note without --profile"
  ! grep -q 'Per-operator profile' "$d/report.md" || fail "report.md has a profile section"
}

case_ort_profile_is_null_with_a_warning() {
  need_ort
  profile_run ort
  local d j; d=$(run_dir out); j=$d/report.json
  [ "$(jq_get "$j" slots/0/status)" = ok ] || fail "--profile must not fail an ort slot"
  [ "$(jq_get "$j" exit_code)" = 0 ] || fail "exit code $(jq_get "$j" exit_code)"
  [ "$(jq_get "$j" slots/0/profile)" = null ] || fail "ort slot has a profile"
  jq_get "$j" slots/0/profile_note | grep -q 'native backend only' || fail "no profile_note"
  local n i found=0
  n=$(jq_get "$j" warnings)
  for ((i = 0; i < n; i++)); do
    jq_get "$j" "warnings/$i" | grep -q 'per-operator profile is available with the native' &&
      found=1
  done
  [ "$found" = 1 ] || fail "report.json warnings lack the profile line"
  grep -q '^> \*\*Warning:\*\* slot rgb: --profile' "$d/report.md" ||
    fail "report.md lacks the profile warning in the slot"
  grep -q 'per-operator profile is available with the native backend only' err.txt ||
    grep -q 'per-operator profile is available with the native backend only' "$d/run.log" ||
    fail "the warning is not logged"
}
