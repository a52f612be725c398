# End-to-end runs of `edgebench llm` on the tiny synthesized decoders (a few hundred KB; ONNX
# Runtime runs them). Each case_* is one ctest entry.

# tiny ARCH [ARGS...]: writes tiny.onnx (the tiny model of ARCH, context 256 unless ARGS say).
tiny() {
  local arch=$1
  shift
  "$EB_BIN" model synth --arch "$arch" --size tiny --ctx 256 "$@" -o tiny.onnx >/dev/null ||
    fail "model synth --arch $arch failed"
}

# llm ARGS...: `edgebench llm` of tiny.onnx on ONNX Runtime, output in out/, no history.
llm() {
  "$EB_BIN" llm --model tiny.onnx --backend ort --output out --db none "$@" >o.txt 2>e.txt
}

# phase_tables_add_up REPORT_JSON: each phase's node times lie inside its forwards' time (how
# close they come is a figure of the machine's load, reported as coverage, not asserted), and
# its op-type table adds up to the nodes' sum.
phase_tables_add_up() {
  local j=$1 p
  for p in prefill decode; do
    local c sum=0 i v; c=$(jq_get "$j" profile/$p/coverage)
    awk -v c="$c" 'BEGIN { exit !(c > 0 && c <= 1.0001) }' || fail "$p coverage $c"
    for i in $(seq 0 60); do
      v=$("$EB_JSONQ" "$j" profile/$p/by_op/$i/share 2>/dev/null) || break
      sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }')
    done
    near "$sum" 1 0.001 || fail "$p by_op shares add up to $sum"
  done
}

case_llama_report() {
  need_ort
  tiny llama
  llm --prompt 32 --gen 16 --reps 3 --warmup 1 || fail "llm failed ($?): $(cat e.txt)"
  local d; d=$(run_dir out)
  # The llama-bench table on stdout: prefill and decode rows, then where the report is.
  grep -qE '^\| llama tiny fp32 \| .* \| pp32 \| [0-9.]+ ± [0-9.]+ \|$' o.txt || fail "no pp32 row: $(cat o.txt)"
  grep -qE '^\| llama tiny fp32 \| .* \| tg16 \| [0-9.]+ ± [0-9.]+ \|$' o.txt || fail "no tg16 row: $(cat o.txt)"
  grep -qx "report: $d/report.md" o.txt || fail "no report line: $(cat o.txt)"
  local j=$d/report.json
  [ "$(jq_get "$j" kind)" = llm ] || fail "kind"
  [ "$(jq_get "$j" status)" = ok ] || fail "status"
  [ "$(jq_get "$j" validity/verdict)" = VALID ] || fail "verdict: $(jq_get "$j" validity/reasons/0)"
  [ "$(jq_get "$j" backend/name)" = ort ] || fail "backend"
  [ "$(jq_get "$j" model/arch)" = llama ] || fail "arch"
  [ "$(jq_get "$j" workload/reps_measured)" = 3 ] || fail "reps measured"
  # One TTFT a repetition; one decode time a step of every repetition.
  [ "$(jq_get "$j" ttft_ms/count)" = 3 ] || fail "ttft count"
  [ "$(jq_get "$j" decode_token_ms/count)" = 48 ] || fail "decode count"
  [ "$(jq_get "$j" llama_bench/0/test)" = pp32 ] || fail "llama_bench pp"
  [ "$(jq_get "$j" llama_bench/1/test)" = tg16 ] || fail "llama_bench tg"
  # 16 greedy tokens, the same in every repetition, within the vocabulary (1024).
  local t; t=$(jq_get "$j" tokens/15)
  [ "$t" -ge 0 ] && [ "$t" -lt 1024 ] || fail "token 15: $t"
  [ "$(jq_get "$j" tokens_consistent)" = true ] || fail "tokens differ between repetitions"
  # tiny: 2 layers x (K, V) x 2 KV heads x 16 x 4 bytes = 512 bytes a token; 48 positions.
  [ "$(jq_get "$j" model/kv_bytes_per_token)" = 512 ] || fail "kv bytes per token"
  [ "$(jq_get "$j" memory/kv_bytes_final)" = 24576 ] || fail "kv bytes final"
  [ "$(jq_get "$j" memory/kv_bytes_ctx)" = 24576 ] || fail "kv at ctx (prompt + gen)"
  # The CPU has no peak: MFU and bandwidth use are null, with the reason.
  [ "$(jq_get "$j" efficiency/mfu)" = null ] || fail "mfu on the cpu"
  jq_get "$j" efficiency/why_not | grep -q "no entry in the peak table" || fail "why_not"
  # Achieved rates from the model's FLOPs and bytes.
  local tf; tf=$(jq_get "$j" efficiency/prefill_tflops_s)
  awk -v x="$tf" 'BEGIN { exit !(x > 0) }' || fail "prefill TFLOP/s $tf"
  grep -q '^## llama-bench$' "$d/report.md" || fail "report.md has no llama-bench table"
  grep -q '| decode, per token | 48 |' "$d/report.md" || fail "report.md latency row"
  grep -q '<svg[^>]*id="decode"' "$d/report.html" || fail "report.html has no decode chart"
  [ -s "$d/metrics.jsonl" ] && [ -s "$d/env.json" ] && [ -s "$d/run.log" ] || fail "run files"
}

case_qwen2_fp16_and_prompt_ids() {
  need_ort
  tiny qwen2 --dtype fp16
  printf '5, 17 900\n3 1023\n' >ids.txt
  llm --prompt_ids ids.txt --gen 4 --reps 3 --warmup 0 || fail "llm failed ($?): $(cat e.txt)"
  local j; j=$(run_dir out)/report.json
  [ "$(jq_get "$j" workload/prompt)" = 5 ] || fail "the file's 5 ids are the prompt"
  [ "$(jq_get "$j" workload/prompt_source)" = ids.txt ] || fail "prompt_source"
  [ "$(jq_get "$j" backend/precision)" = fp16 ] || fail "precision is the model's dtype"
  [ "$(jq_get "$j" model/kv_bytes_per_token)" = 256 ] || fail "fp16 kv bytes"
  [ "$(jq_get "$j" tokens_consistent)" = true ] || fail "tokens differ"
  # The same prompt, the same greedy tokens (a second run).
  local first; first=$(jq_get "$j" tokens/3)
  rm -rf out
  llm --prompt_ids ids.txt --gen 4 --reps 3 --warmup 0 || fail "second run failed"
  [ "$(jq_get "$(run_dir out)/report.json" tokens/3)" = "$first" ] || fail "tokens changed"
}

case_kv_cache_over_the_limit() {
  tiny llama --ctx 4096
  # 512 bytes a token x 4096 = 2 MiB of cache: over a 1 MB limit.
  llm --ctx 4096 --gpu_mem_limit_gb 0.001
  local rc=$?
  [ "$rc" = 1 ] || fail "exit $rc, expected 1: $(cat e.txt)"
  grep -q "needed [0-9.]* MiB for the KV cache at ctx 4096 (2.0 MiB)" e.txt || fail "$(cat e.txt)"
  grep -q "limit 1.0 MiB" e.txt || fail "no limit in: $(cat e.txt)"
  local j; j=$(run_dir out)/report.json
  [ "$(jq_get "$j" status)" = failed ] || fail "status"
  jq_get "$j" message | grep -q "for the KV cache at ctx 4096" || fail "message"
  [ "$(jq_get "$j" validity/verdict)" = INVALID ] || fail "verdict"
  # The plain-language page says so too.
  grep -q '^- \*\*The model did not run\*\*: needed' "$(run_dir out)/summary.md" || fail "summary"
  numbers_from_report "$(run_dir out)/summary.md" "$j"
}

# summary.md, inputs.json and assumptions.md beside report.json, and what they say is what
# report.json holds.
case_summary_and_repro() {
  tiny llama
  printf '5 17 3 99 4 1000 2 8 8 12\n' >ids.txt
  llm --backend native --prompt_ids ids.txt --gen 8 --reps 3 --target_tps 1 ||
    fail "llm failed: $(cat e.txt)"
  local d; d=$(run_dir out)
  local j=$d/report.json i=$d/inputs.json
  for f in summary.md inputs.json assumptions.md; do [ -s "$d/$f" ] || fail "no $f"; done
  numbers_from_report "$d/summary.md" "$j"
  # inputs.json: the files that went in, with the SHA-256 sha256sum gives them.
  [ "$(jq_get "$i" kind)" = llm ] || fail "inputs kind"
  [ "$(jq_get "$i" model/sha256)" = "$(sha256sum tiny.onnx | cut -d' ' -f1)" ] || fail "model sha256"
  [ "$(jq_get "$i" prompt/source)" = file ] || fail "prompt source"
  [ "$(jq_get "$i" prompt/sha256)" = "$(sha256sum ids.txt | cut -d' ' -f1)" ] || fail "prompt sha256"
  [ "$(jq_get "$i" prompt/tokens)" = 10 ] || fail "prompt tokens"
  # The file's 10 ids and 8 steps are the context the native engine planned for (read before
  # the load), not the model's 256 positions.
  [ "$(jq_get "$j" workload/ctx)" = 18 ] || fail "ctx $(jq_get "$j" workload/ctx), expected 18"
  [ "$(jq_get "$j" memory/kv_bytes_ctx)" = $((18 * 512)) ] || fail "kv at ctx"
  local planned; planned=$(jq_get "$j" memory/planned_bytes)
  mv out out_ids
  llm --backend native --prompt 10 --gen 8 --reps 3 || fail "llm failed: $(cat e.txt)"
  [ "$(jq_get "$(run_dir out)/report.json" memory/planned_bytes)" = "$planned" ] ||
    fail "planned $planned with the file, $(jq_get "$(run_dir out)/report.json" memory/planned_bytes) with a seeded prompt of the same length"
  rm -rf out
  mv out_ids out
  [ "$(jq_get "$i" config/target_tps)" = 1 ] || fail "config target_tps"
  [ "$(jq_get "$i" config/backend)" = native ] || fail "config backend"
  [ "$(jq_get "$j" workload/prompt_sha256)" = "$(jq_get "$i" prompt/sha256)" ] || fail "report prompt sha256"
  # summary.md: the decode rate and the first token as report.json has them, and the judgement
  # against --target_tps.
  local tps ttft; tps=$(awk -v x="$(jq_get "$j" decode_tokens_per_s/mean)" 'BEGIN { printf "%.1f", x }')
  ttft=$(awk -v x="$(jq_get "$j" ttft_ms/p50)" 'BEGIN { printf "%.3f", x }')
  grep -q "Decode generated $tps tokens/s (mean over the repetitions) against the 1 tokens/s" \
    "$d/summary.md" || fail "summary decode rate ($tps): $(cat "$d/summary.md")"
  grep -q '\*\*It keeps up.\*\*' "$d/summary.md" || fail "summary keeps up"
  grep -q "The first token came $ttft ms" "$d/summary.md" || fail "summary ttft ($ttft)"
  grep -q "^\*\*$(jq_get "$j" validity/verdict)\*\*" "$d/summary.md" || fail "summary verdict"
  grep -q "^- $(jq_get "$j" workload/reps_measured) repetitions measured, $(jq_get "$j" decode_token_ms/count) decode steps" \
    "$d/summary.md" || fail "summary rests on"
  # assumptions.md: the rule's threshold as report.json states it, and what was not measured.
  grep -q "at least $(jq_get "$j" validity/criteria/min_reps) repetitions were measured" \
    "$d/assumptions.md" || fail "assumptions min reps"
  grep -q "^- The per-operator tables of the phases: no --profile" "$d/assumptions.md" ||
    fail "assumptions: profile not measured"
  # A rate decode cannot reach is judged as not kept up; no target, not judged.
  rm -rf out
  llm --backend native --prompt 8 --gen 4 --reps 3 --target_tps 1000000 --profile ||
    fail "llm failed: $(cat e.txt)"
  grep -q '\*\*It does not keep up.\*\*' "$(run_dir out)/summary.md" || fail "summary not kept up"
  # With the phases' profiles: each phase's slowest op type, as report.json's by_op[0].
  local op; op=$(jq_get "$(run_dir out)/report.json" profile/decode/by_op/0/op)
  grep -q "^- In decode, the most time goes to \`$op\` operations" "$(run_dir out)/summary.md" ||
    fail "summary decode op ($op)"
  numbers_from_report "$(run_dir out)/summary.md" "$(run_dir out)/report.json"
  [ "$(jq_get "$(run_dir out)/inputs.json" prompt/source)" = seeded ] || fail "seeded prompt"
  rm -rf out
  llm --backend native --prompt 8 --gen 4 --reps 3 || fail "llm failed: $(cat e.txt)"
  grep -q 'No target rate was set (--target_tps), so keeping up is not judged' \
    "$(run_dir out)/summary.md" || fail "summary without a target"
  [ "$(jq_get "$(run_dir out)/report.json" workload/target_tps)" = null ] || fail "target null"
}

# --trace: trace.json holds each repetition's prefill and decode and every decode step, as
# report.json counts them; on the CPU, no kernels, and the reason.
case_trace_phases() {
  tiny llama
  llm --backend native --prompt 16 --gen 8 --reps 3 --trace || fail "llm failed: $(cat e.txt)"
  local d; d=$(run_dir out)
  [ -s "$d/trace.json" ] || fail "no trace.json"
  grep -qx "trace: $d/trace.json" o.txt || fail "no trace line: $(cat o.txt)"
  [ "$(jq_get "$d/report.json" trace/file)" = trace.json ] || fail "trace file"
  [ "$(jq_get "$d/report.json" trace/steps)" = 24 ] || fail "trace steps"
  [ "$(jq_get "$d/report.json" trace/gpu)" = none ] || fail "trace gpu"
  [ "$(jq_get "$d/report.json" trace/gpu_note)" = "the model does not run on the cuda device" ] ||
    fail "gpu note"
  "$EB_TRACECHECK" "$d/trace.json" "llm=$d/report.json" >check.txt || fail "trace.json does not check"
  grep -q '^ok llm: 3 repetitions, 6 phase events, 24 step events' check.txt || fail "$(cat check.txt)"
  # The checker fails a trace whose steps are out of order.
  sed 's/"step":7,/"step":6,/' "$d/trace.json" >broken.json
  ! "$EB_TRACECHECK" broken.json "llm=$d/report.json" 2>err.txt || fail "a wrong step passes"
  grep -q "is not step 7 of rep 0" err.txt || fail "checker: $(cat err.txt)"
  # Without --trace: no file, trace null.
  rm -rf out
  llm --backend native --prompt 8 --gen 2 --reps 3 || fail "llm failed: $(cat e.txt)"
  [ ! -e "$(run_dir out)/trace.json" ] || fail "trace.json without --trace"
  [ "$(jq_get "$(run_dir out)/report.json" trace)" = null ] || fail "trace not null"
}

# On a GPU (skips elsewhere): CUPTI's kernels in trace.json, each inside a prefill or decode
# phase of the repetitions; and what the report says of a profiled run there.
case_cuda_trace_and_profile() {
  tiny llama
  llm --backend native --device cuda --prompt 16 --gen 8 --reps 3 --trace
  local rc=$?
  if [ "$rc" != 0 ]; then
    grep -Eq "no CUDA GPU is usable|has no CUDA device|no CUDA device|not built with CUDA" e.txt &&
      skip "$(grep -m1 -E 'CUDA' e.txt)"
    fail "llm --trace on cuda: exit $rc: $(cat e.txt)"
  fi
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" trace/gpu)" = cupti ] ||
    skip "no CUPTI: $(jq_get "$d/report.json" trace/gpu_note)"
  "$EB_TRACECHECK" "$d/trace.json" --kernels "llm=$d/report.json" || fail "trace.json does not check"
  local n; n=$(jq_get "$d/report.json" trace/kernels)
  [ "$n" -gt 24 ] || fail "only $n kernels in 3 prefills and 24 decode steps"
  jq_get "$d/report.json" trace/top_kernels/0/name | grep -q . || fail "top kernel has no name"
  grep -q '^top kernels by total GPU time (trace):' o.txt || fail "no table printed"
  # --profile on cuda runs node by node: the report says its latencies are not an unprofiled
  # run's.
  rm -rf out
  llm --backend native --device cuda --prompt 16 --gen 4 --reps 3 --profile ||
    fail "llm --profile on cuda: $(cat e.txt)"
  jq_get "$(run_dir out)/report.json" warnings/0 | grep -q '^--profile on cuda: every forward ran node by node' ||
    fail "no warning on the profiled path"
}

# --nsys: the same llm again under Nsight Systems (a fake nsys here), its capture gated on the
# measured repetitions' range, its kernel summary printed; without nsys, one line and exit 2
# after the run's own reports.
case_nsys() {
  tiny llama
  mkdir bin empty
  cat >bin/nsys <<'SH'
#!/bin/bash
echo "$*" >>"$FAKE_NSYS_CALLS"
case $1 in
profile) exit 0 ;;
stats)
  echo '"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"'
  echo '60.0,3000000,30,100000.0,100000.0,90000,110000,100.0,"k_gemv(float const*)"'
  echo '40.0,2000000,20,100000.0,100000.0,90000,110000,100.0,"k_norm"'
  ;;
esac
SH
  chmod +x bin/nsys
  FAKE_NSYS_CALLS=$PWD/calls.txt PATH="$PWD/bin:$PATH" llm --backend native --prompt 8 --gen 4 \
    --reps 3 --nsys --trace || fail "exit $?: $(cat e.txt)"
  grep -q '^profile --trace=cuda,nvtx --capture-range=nvtx --nvtx-capture llm:measure@edgebench.stage --capture-range-end=stop' calls.txt ||
    fail "nsys profile args: $(cat calls.txt)"
  # The re-run: the same llm options, without --nsys and --trace, into the run folder.
  grep -q ' llm --model tiny.onnx --backend ort --output out --db none --backend native --prompt 8 --gen 4 --reps 3 --db none --output .*/nsys-run$' calls.txt ||
    fail "the re-run: $(cat calls.txt)"
  grep -A3 '^top kernels by total GPU time (nsys):' o.txt >t.txt || fail "no table: $(cat o.txt)"
  sed -n 3p t.txt | grep -Eq '^  k_gemv\(float const\*\) +30 +3\.000 +60\.0%$' || fail "row 1: $(cat t.txt)"
  [ -s "$(run_dir out)/report.json" ] || fail "the run's own report"
  rm -rf out
  PATH="$PWD/empty" llm --backend native --prompt 8 --gen 2 --reps 3 --nsys
  [ $? = 2 ] || fail "exit without nsys, expected 2"
  grep -q '^edgebench: error: nsys not found on PATH' e.txt || fail "$(cat e.txt)"
  [ "$(jq_get "$(run_dir out)/report.json" status)" = ok ] || fail "the run's reports are missing"
}

case_bad_input() {
  tiny llama
  "$EB_BIN" llm --model tiny.onnx --prompt 0 2>e.txt
  [ $? = 2 ] && grep -q -- "--prompt: '0' is not a whole number in 1\.\." e.txt || fail "$(cat e.txt)"
  "$EB_BIN" llm --model tiny.onnx --frames 3 2>e.txt
  [ $? = 2 ] && grep -q "unknown option --frames" e.txt || fail "$(cat e.txt)"
  "$EB_BIN" llm --prompt 4 2>e.txt
  [ $? = 2 ] && grep -q "needs --model" e.txt || fail "$(cat e.txt)"
  "$EB_BIN" llm --model missing.onnx 2>e.txt
  [ $? = 2 ] && grep -q "missing.onnx: cannot be read" e.txt || fail "$(cat e.txt)"
  llm --prompt 200 --gen 100
  [ $? = 2 ] && grep -q "longer than the 256 positions" e.txt || fail "$(cat e.txt)"
  llm --prompt 16 --gen 8 --ctx 20
  [ $? = 2 ] && grep -q -- "--ctx 20 is shorter than --prompt 16 + --gen 8" e.txt || fail "$(cat e.txt)"
  need_ort # the ids are read once the model is loaded (the vocabulary may come from its logits)
  printf '1 2 x\n' >ids.txt
  llm --prompt_ids ids.txt
  [ $? = 2 ] && grep -q "token 3 is not a whole number in 0..1023" e.txt || fail "$(cat e.txt)"
}

case_not_a_decoder() {
  need_ort
  "$EB_BIN" model synth --imgsz 64 -o det.onnx >/dev/null || fail "synth"
  "$EB_BIN" llm --model det.onnx --backend ort --output out --db none 2>e.txt
  [ $? = 2 ] && grep -q "is not a decoder edgebench llm can run: it has the input images" e.txt ||
    fail "$(cat e.txt)"
  # The report of what happened is written all the same.
  [ "$(jq_get "$(run_dir out)/report.json" status)" = failed ] || fail "no failed report"
}

case_precision_other_than_the_model() {
  need_ort
  tiny llama
  llm --precision fp16 --prompt 4 --gen 2
  [ $? = 2 ] && grep -q "ONNX Runtime runs the model in its own dtype (fp32)" e.txt ||
    fail "$(cat e.txt)"
}

case_nvtx_phase_ranges() {
  need_ort
  [ -n "${EB_NVTX_INJECT:-}" ] || skip "built without the nvtx3 headers (no NVTX ranges)"
  tiny llama
  NVTX_INJECTION64_PATH=$EB_NVTX_INJECT EB_NVTX_LOG=$PWD/nvtx.log \
    llm --prompt 8 --gen 4 --reps 3 --warmup 1 || fail "llm failed: $(cat e.txt)"
  # One prefill and one decode range a repetition, warm-up included.
  [ "$(grep -c '^push edgebench.stage@prefill$' nvtx.log)" = 4 ] || fail "prefill ranges: $(cat nvtx.log)"
  [ "$(grep -c '^push edgebench.stage@decode$' nvtx.log)" = 4 ] || fail "decode ranges"
  # With --profile on the native engine, each node's range inside them (as run --profile).
  rm -f nvtx.log
  NVTX_INJECTION64_PATH=$EB_NVTX_INJECT EB_NVTX_LOG=$PWD/nvtx.log \
    llm --backend native --profile --prompt 8 --gen 4 --reps 3 --warmup 0 ||
    fail "llm --profile failed: $(cat e.txt)"
  awk '/^push edgebench.stage@prefill$/ { on = 1; next } /^pop edgebench.stage$/ { on = 0 }
       on && /^push edgebench@MatMul:.lm_head.MatMul$/ { n++ } END { exit !(n == 3) }' nvtx.log ||
    fail "no lm_head range inside each prefill: $(grep -c MatMul nvtx.log) MatMul ranges"
}

case_history_and_diff() {
  need_ort
  tiny llama
  for i in 1 2; do
    "$EB_BIN" llm --model tiny.onnx --backend ort --prompt 16 --gen 8 --reps 3 --output out \
      --db h.db --quiet >/dev/null 2>e.txt || fail "llm $i failed: $(cat e.txt)"
  done
  "$EB_BIN" history --db h.db >h.txt || fail "history failed"
  [ "$(grep -cE '^ +[12] +[0-9T:.Z-]+ +[^ ]+ +llm +tiny.onnx +ort +cpu +fp32 +fp32 ' h.txt)" = 2 ] ||
    fail "no llm rows: $(cat h.txt)"
  # each report names its row: the id, and the uuid the database holds for it
  local d u
  d=$(ls -d out/*-llm/ | tail -1)
  [ "$(jq_get "$d/report.json" history/run_id)" = 2 ] || fail "run 2's report lacks its id"
  u=$(jq_get "$d/report.json" history/uuid)
  "$EB_BIN" history --db h.db --format csv >hu.csv || fail "history csv failed"
  grep -q "^2,$u," hu.csv || fail "run 2's uuid '$u' is not the database's: $(cat hu.csv)"
  "$EB_BIN" diff 1 2 --db h.db >d.txt
  local rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 4 ] || fail "diff exit $rc: $(cat d.txt)"
  grep -q 'kind llm' d.txt && grep -q '^  decode tok/s ' d.txt && grep -q '^  ttft p50 ms ' d.txt ||
    fail "$(cat d.txt)"
}

case_native_matches_ort_tokens() {
  need_ort
  tiny qwen2
  for b in ort native; do
    "$EB_BIN" llm --model tiny.onnx --backend $b --prompt 24 --gen 12 --reps 3 --output $b \
      --db none --quiet >/dev/null 2>e.txt || fail "llm --backend $b failed: $(cat e.txt)"
  done
  local jo jn; jo=$(run_dir ort)/report.json jn=$(run_dir native)/report.json
  [ "$(jq_get "$jn" backend/name)" = native ] || fail "backend"
  for i in 0 1 5 11; do
    [ "$(jq_get "$jo" tokens/$i)" = "$(jq_get "$jn" tokens/$i)" ] || fail "token $i differs"
  done
  # native plans its memory for the context and holds it against the limit.
  [ "$(jq_get "$jn" memory/planned_bytes)" -gt 0 ] || fail "no planned bytes"
  [ "$(jq_get "$jo" memory/planned_bytes)" = null ] || fail "ort has no plan"
}

case_profile_per_phase() {
  tiny llama
  llm --backend native --profile --prompt 32 --gen 8 --reps 3 || fail "llm failed: $(cat e.txt)"
  local j; j=$(run_dir out)/report.json
  [ "$(jq_get "$j" profile/prefill/runs)" = 3 ] || fail "prefill runs"
  [ "$(jq_get "$j" profile/decode/runs)" = 24 ] || fail "decode runs"
  phase_tables_add_up "$j"
  # The biggest product of the tiny model (64 x 1024 a token) is among the slowest nodes.
  local found=0
  for i in $(seq 0 14); do
    [ "$("$EB_JSONQ" "$j" profile/prefill/top_nodes/$i/name 2>/dev/null)" = /lm_head/MatMul ] && found=1
  done
  [ $found = 1 ] || fail "lm_head is not among the 15 slowest prefill nodes"
  grep -q '^### decode: 24 forwards' "$(run_dir out)/report.md" || fail "report.md profile"
}

# ONNX Runtime profiles the session as a whole: its file is split by run after the last
# repetition, the warm-up's runs left out, into the same per-phase tables as native's.
case_profile_per_phase_ort() {
  need_ort
  tiny llama
  llm --profile --prompt 32 --gen 5 --reps 4 --warmup 2 || fail "llm failed: $(cat e.txt)"
  local d j; d=$(run_dir out) j=$(run_dir out)/report.json
  [ "$(jq_get "$j" backend/name)" = ort ] || fail "backend"
  # One prefill a measured repetition, gen decode steps each; no warm-up run.
  [ "$(jq_get "$j" profile/prefill/runs)" = 4 ] || fail "prefill runs $(jq_get "$j" profile/prefill/runs)"
  [ "$(jq_get "$j" profile/decode/runs)" = 20 ] || fail "decode runs $(jq_get "$j" profile/decode/runs)"
  ! "$EB_JSONQ" "$j" warnings/0 >/dev/null 2>&1 || fail "warning: $("$EB_JSONQ" "$j" warnings/0)"
  phase_tables_add_up "$j"
  # ONNX Runtime's node names, with its op types (MatMul among them).
  for p in prefill decode; do
    local ops; ops=$(for i in $(seq 0 40); do "$EB_JSONQ" "$j" profile/$p/by_op/$i/op 2>/dev/null || break; done)
    echo "$ops" | grep -qx MatMul || fail "$p has no MatMul row: $ops"
  done
  local found=0
  for i in $(seq 0 14); do
    [ "$("$EB_JSONQ" "$j" profile/prefill/top_nodes/$i/name 2>/dev/null)" = /lm_head/MatMul ] && found=1
  done
  [ $found = 1 ] || fail "lm_head is not among the 15 slowest prefill nodes"
  grep -q '^### prefill: 4 forwards' "$d/report.md" || fail "report.md prefill profile"
  grep -q '^### decode: 20 forwards' "$d/report.md" || fail "report.md decode profile"
}
