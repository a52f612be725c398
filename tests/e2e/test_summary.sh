# summary.md: the one-page plain-language summary of a run folder. Every number in it must be
# one that report.json holds. Each case_* is one ctest entry.

synth() { "$EB_BIN" model synth --imgsz 160 -o m.onnx >/dev/null || fail "synth failed"; }

case_unpaced_run_with_limit_and_profile() {
  synth
  eb_run --mode rgb --model0 m.onnx --backend native --source synthetic=320x240 --frames 30 \
    --warmup 2 --profile --gpu_mem_limit_gb 2 --db none --output out >/dev/null 2>stderr.txt ||
    fail "run failed: $(cat stderr.txt)"
  local d; d=$(run_dir out)
  local s="$d/summary.md" j="$d/report.json"
  [ -s "$s" ] || fail "summary.md missing or empty"
  for h in '# Run summary' '## What ran' '## Does it keep up?' '## Memory' '## Bottleneck' \
    '## Verdict' '## What this rests on'; do
    grep -qxF "$h" "$s" || fail "summary.md lacks the heading '$h'"
  done
  numbers_from_report "$s" "$j"

  # What ran: the model, backend, device and precision of slot 0; the unused slot in words.
  grep -qF -- "- Slot rgb: model \`m.onnx\`. Backend: $(jq_get "$j" slots/0/backend) " "$s" ||
    fail "what ran: model and backend"
  grep -qF "Device / provider: $(jq_get "$j" slots/0/device) / " "$s" || fail "device"
  grep -qF "computed in $(jq_get "$j" slots/0/compute_precision)" "$s" || fail "precision"
  grep -qF -- "- Slot thermal was skipped: $(jq_get "$j" slots/1/message)." "$s" ||
    fail "the unused slot is not said in words"

  # No target rate: said plainly, with the measured rate and no invented target.
  grep -qF "no target frame rate was set" "$s" || fail "a missing target rate is not said"
  grep -qF "as fast as it could: $(fmt 1 "$(jq_get "$j" slots/0/throughput_fps)") FPS" "$s" ||
    fail "the measured FPS"
  ! grep -q "keeps up\.\|does not keep up" "$s" || fail "keeping up judged without a target"

  # Memory: the peak against the --gpu_mem_limit_gb limit.
  grep -qF "): $(fmt 2 "$(jq_get "$j" memory/peak_gb)") GB against a limit of 2.00 GB." "$s" ||
    fail "memory peak against the limit"
  [ "$(jq_get "$j" memory/violations)" = 0 ] && { grep -qF "stayed within the limit" "$s" ||
    fail "no violation, yet not said within the limit"; }

  # Bottleneck: the stage with the largest p50 and the top operator type of the profile.
  local best="" bestv=-1 st v
  for st in read preprocess inference postprocess; do
    v=$(jq_get "$j" "slots/0/latency_ms/$st/p50")
    if awk -v a="$v" -v b="$bestv" 'BEGIN { exit !(a > b) }'; then best=$st; bestv=$v; fi
  done
  grep -qF "($best): $(fmt 3 "$bestv") ms of the" "$s" || fail "the slowest stage is not $best"
  grep -qF "the most time goes to \`$(jq_get "$j" slots/0/profile/by_op_type/0/op)\`" "$s" ||
    fail "the top operator"

  # Verdict and what it rests on.
  grep -qxF "**$(jq_get "$j" validity/verdict)**, because:" "$s" ||
    grep -qF "**$(jq_get "$j" validity/verdict)**: every check held" "$s" || fail "verdict"
  local n r
  n=$(jq_get "$j" validity/reasons)
  for ((r = 0; r < n; r++)); do
    grep -qF -- "- $(jq_get "$j" "validity/reasons/$r")" "$s" || fail "reason $r not given"
  done
  grep -qF "Slot rgb: 30 frames measured over $(fmt 2 "$(jq_get "$j" slots/0/wall_s)") s" "$s" ||
    fail "frames and duration"
  local lo hi
  lo=$(fmt 3 "$(jq_get "$j" slots/0/latency_ms/end_to_end/p50_ci/low)")
  hi=$(fmt 3 "$(jq_get "$j" slots/0/latency_ms/end_to_end/p50_ci/high)")
  grep -qF "95% confidence interval [$lo, $hi] ms" "$s" || fail "the p50 CI"
}

case_paced_run_says_whether_it_kept_up() {
  synth
  eb_run --mode rgb --model0 m.onnx --source synthetic=320x240@25 --frames 20 --warmup 1 \
    --db none --output out >/dev/null 2>stderr.txt || fail "run failed: $(cat stderr.txt)"
  local d; d=$(run_dir out)
  local s="$d/summary.md" j="$d/report.json"
  numbers_from_report "$s" "$j"
  grep -qF "frames arrived at $(fmt 2 "$(jq_get "$j" slots/0/pacing/target_fps)") FPS" "$s" ||
    fail "the target rate"
  grep -qF "it processed $(fmt 2 "$(jq_get "$j" slots/0/pacing/achieved_fps)") FPS" "$s" ||
    fail "the measured rate against it"
  # The judgement follows report.json's own figures, whichever way this machine went.
  if awk -v a="$(jq_get "$j" slots/0/pacing/drop_pct)" \
    -v b="$(jq_get "$j" validity/criteria/max_drop_pct)" 'BEGIN { exit !(a <= b) }'; then
    grep -qF "**It keeps up.**" "$s" || fail "kept up, yet not said"
  else
    grep -qF "**It does not keep up.**" "$s" || fail "did not keep up, yet not said"
  fi
}

case_dual_run_with_a_skipped_slot() {
  synth
  eb_run --mode dual --model0 m.onnx --rgb_source synthetic=320x240 \
    --thermal_source synthetic=320x240 --frames 20 --warmup 1 --db none --output out \
    >/dev/null 2>stderr.txt || fail "run failed: $(cat stderr.txt)"
  local d; d=$(run_dir out)
  local s="$d/summary.md" j="$d/report.json"
  [ "$(jq_get "$j" slots/1/status)" = skipped ] || fail "thermal slot not skipped"
  numbers_from_report "$s" "$j"
  grep -qF -- "- Slot thermal was skipped: $(jq_get "$j" slots/1/message)." "$s" ||
    fail "the skipped slot is not said in words"
  grep -qF -- "- Slot rgb: model \`m.onnx\`." "$s" || fail "the slot that ran"
}

case_failed_slot_gives_its_reason() {
  synth
  printf 'not a model' >bad.onnx
  eb_run --mode dual --model0 m.onnx --model1 bad.onnx --rgb_source synthetic=320x240 \
    --thermal_source synthetic=320x240 --frames 20 --warmup 1 --db none --output out \
    >/dev/null 2>stderr.txt && fail "a run with a failed slot exited 0"
  local d; d=$(run_dir out)
  local s="$d/summary.md" j="$d/report.json"
  [ "$(jq_get "$j" slots/1/status)" = failed ] || fail "thermal slot not failed"
  numbers_from_report "$s" "$j"
  grep -qF -- "- Slot thermal failed and has no results: " "$s" || fail "failure not said"
  grep -qF "(error: $(jq_get "$j" slots/1/error))." "$s" || fail "the error is not named"
  grep -qF "**$(jq_get "$j" validity/verdict)**" "$s" || fail "the verdict differs from report.json's"
}
