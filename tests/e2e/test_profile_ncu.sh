# End-to-end runs of `edgebench profile [--ncu]` and of the NVTX ranges. CI has no GPU and no
# Nsight Compute: the cases write a fake `ncu` (a shell script) that checks its arguments,
# runs the re-run it was given, and prints canned CSV in ncu's raw-page format. Each case_* is
# one ctest entry.

# num_ok EXPR: awk evaluates EXPR; exit 0 when true.
num_ok() { awk "BEGIN { exit !($1) }"; }

# The embedded yolov8n on slot rgb at 160x160: fast on one CPU core.
PROFILE_ARGS=(--mode rgb --backend native --frames 2 --warmup 0 --imgsz 160
  --source synthetic=320x240 --output out --quiet)

# write_fake_ncu DIR: DIR/ncu, a fake Nsight Compute. Profiling (no --import): needs --nvtx,
# --nvtx-include and --metrics, records the ranges, runs the application after --export FILE
# (our command line puts it last) and creates FILE.ncu-rep. --import: needs --csv --page raw and
# prints the canned raw page: kernel names, or (--print-nvtx-rename kernel) the ranges.
# $FAKE_NCU_FAIL=1: fails like ncu without access to the GPU counters; =app: like ncu whose
# application failed (ncu's own lines go to stdout, as Nsight Compute 2025.3 prints them).
# $FAKE_NCU_NONE=1: no kernel matched (the CPU device launches none).
write_fake_ncu() {
  mkdir -p "$1" fake
  cat >"$1/ncu" <<EOF
#!/usr/bin/env bash
state='$PWD/fake'
EOF
  cat >>"$1/ncu" <<'EOF'
printf '%s\n' "$*" >>"$state/calls.txt"
if [ "${FAKE_NCU_FAIL:-0}" = 1 ]; then
  echo "==PROF== Connected to process $$"
  echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0."
  exit 1
elif [ "${FAKE_NCU_FAIL:-0}" = app ]; then
  echo "edgebench: error: slot rgb failed: failed to load model x.onnx: no such file" >&2
  echo "==ERROR== The application returned an error code (1)."
  exit 1
fi
args=("$@")
if [[ " $* " == *" --import "* ]]; then
  [[ " $* " == *" --csv "* && " $* " == *" --page raw "* ]] ||
    { echo "==ERROR== fake ncu: --import without --csv --page raw" >&2; exit 9; }
  mapfile -t R <"$state/ranges.txt"
  [ "${#R[@]}" -ge 3 ] || { echo "==ERROR== fake ncu: fewer than 3 ranges" >&2; exit 9; }
  k1='void conv2d_direct<float, 3, 3>(const float*, float*, int)'
  k2='sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x64x32'
  k3='epilogue<""silu"", 4>(float*, int)'
  k4='void upsample_nearest2d<float>(float*, const float*, int, int)'
  rename=0
  [[ " $* " == *" --print-nvtx-rename kernel "* ]] && rename=1
  # row ID RANGE KERNEL DRAM% DURATION_US SM% OCCUPANCY%: one launch as Nsight Compute 2025.3
  # writes it (the NVTX stack column; renamed kernels are "<range>/<kernel>").
  row() {
    local k=$3
    [ "$rename" = 1 ] && k="$2/$3"
    echo "\"$1\",\"4242\",\"edgebench\",\"127.0.0.1\",\"4242  \"\"edgebench:$2:none:none:none:none:ASCII:$2\"\"  \"\"edgebench.stage:rgb:infer:none:none:none:none:ASCII:rgb:infer\"\" \",\"\",\"$k\",\"1\",\"7\",\"(256, 1, 1)\",\"(40, 16, 1)\",\"0\",\"9.0\",\"$4\",\"$5\",\"32\",\"$6\",\"$7\""
  }
  echo '"ID","Process ID","Process Name","Host Name","thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__registers_per_thread","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active"'
  echo '"","","","","","","","","","","","","","%","us","register/thread","%","%"'
  row 0 "${R[0]}" "$k1" 81.520000 12.288000 23.400000 61.870000
  row 1 "${R[0]}" "$k1" 80.480000 12.000000 24.600000 62.130000
  row 2 "${R[0]}" "$k2" 35.200000 30.500000 88.100000 24.900000
  row 3 "${R[1]}" "$k3" 70.250000 4.100000 12.500000 80.000000
  row 4 "${R[2]}" "$k4" n/a 2.000000 40.000000 50.000000
  exit 0
fi
[[ " $* " == *" --nvtx "* ]] || { echo "==ERROR== fake ncu: no --nvtx" >&2; exit 9; }
: >"$state/ranges.txt"
report=
i=0
while [ "$i" -lt "$#" ]; do
  case ${args[$i]} in
  --nvtx-include) i=$((i + 1)); r=${args[$i]}; r=${r#edgebench@}; echo "${r%/}" >>"$state/ranges.txt" ;;
  --metrics) i=$((i + 1)); echo "${args[$i]}" >"$state/metrics.txt" ;;
  --export) i=$((i + 1)); report=${args[$i]}.ncu-rep; i=$((i + 1)); break ;;
  esac
  i=$((i + 1))
done
[ -n "$report" ] || { echo "==ERROR== fake ncu: no --export" >&2; exit 9; }
echo "==PROF== Connected to process $$"
"${args[@]:$i}" || exit $?
if [ "${FAKE_NCU_NONE:-0}" = 1 ]; then # as ncu 2025.3 when no kernel matched: no report
  echo "==WARNING== No kernels were profiled."
  exit 0
fi
: >"$report"
echo "==PROF== Report: $report"
EOF
  chmod +x "$1/ncu"
}

# usage_error EXPECTED ARGS...: exit 2, the text on stderr, no run folder.
usage_error() {
  local want=$1
  shift
  "$EB_BIN" profile "$@" >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 2 ] || fail "profile $* exited $rc, expected 2"
  [ "$(wc -l <e.txt)" -eq 1 ] || fail "expected one line on stderr: $(cat e.txt)"
  grep -qF -- "$want" e.txt || fail "stderr lacks '$want': $(cat e.txt)"
  [ -z "$(ls -A out 2>/dev/null)" ] || fail "a usage error must not create a run folder"
}

case_help_and_usage_errors() {
  "$EB_BIN" --help | grep -q "edgebench profile" || fail "--help lacks profile"
  "$EB_BIN" profile --help >h.txt || fail "profile --help failed"
  for w in --ncu --ncu_top --ncu_path --ncu_timeout_s "edgebench run --help" ncu.md ncu.json \
    "exit codes"; do
    grep -qF -- "$w" h.txt || fail "profile --help lacks $w"
  done
  usage_error "--ncu_top: 0 is out of range (accepted: 1..15)" --ncu --ncu_top 0
  usage_error "--ncu_top: 'x' is not an integer (accepted: 1..15)" --ncu --ncu_top=x
  usage_error "--ncu_top needs a value" --ncu --ncu_top
  usage_error "--ncu_top, --ncu_timeout_s and --ncu_path go with --ncu" --ncu_top 3
  usage_error "--ncu_top, --ncu_timeout_s and --ncu_path go with --ncu" --ncu_timeout_s 3
  usage_error "--ncu_timeout_s: 0 is out of range (accepted: 1..86400)" --ncu --ncu_timeout_s 0
  usage_error "--ncu_timeout_s: '1m' is not an integer (accepted: 1..86400)" --ncu --ncu_timeout_s=1m
  usage_error "--ncu takes no value" --ncu=1
  usage_error "unknown option --batch" --ncu --batch 2
}

case_profile_without_ncu_is_a_profiled_run() {
  "$EB_BIN" profile "${PROFILE_ARGS[@]}" >o.txt 2>e.txt || fail "profile failed: $(cat e.txt)"
  local d j; d=$(run_dir out); j=$d/report.json
  [ "$(jq_get "$j" config/profile)" = true ] || fail "--profile not forced on"
  [ "$(jq_get "$j" slots/0/profile/frames)" = 2 ] || fail "no per-operator profile"
  [ ! -e "$d/ncu.json" ] || fail "ncu.json without --ncu"
  grep -q "^report: $d/report.md" o.txt || fail "no report line: $(cat o.txt)"
}

case_fake_ncu_summary() {
  write_fake_ncu bin
  PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu --ncu_top 3 "${PROFILE_ARGS[@]}" >o.txt 2>e.txt ||
    fail "profile --ncu exited $?: $(cat e.txt)"
  local d j; d=$(run_dir out); j=$d/ncu.json
  grep -q "^ncu: $d/ncu.md" o.txt || fail "no ncu line: $(cat o.txt)"
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "the profile run failed"
  # The profiling command: one --nvtx-include per target, the four metrics, the short re-run.
  local calls=fake/calls.txt
  [ "$(wc -l <$calls)" = 3 ] || fail "expected 3 ncu calls (profile, 2 imports): $(cat $calls)"
  # (the slowest node is a Conv or, in a slow sanitizer build, the fused DFL: any op's range)
  head -1 $calls | grep -qE -- "--nvtx --nvtx-include edgebench@[A-Za-z.]+:" ||
    fail "no include: $(head -1 $calls)"
  [ "$(wc -l <fake/ranges.txt)" = 3 ] || fail "--ncu_top 3 gave $(wc -l <fake/ranges.txt) ranges"
  for m in gpu__time_duration.sum sm__throughput.avg.pct_of_peak_sustained_elapsed \
    dram__throughput.avg.pct_of_peak_sustained_elapsed \
    sm__warps_active.avg.pct_of_peak_sustained_active; do
    grep -q "$m" fake/metrics.txt || fail "--metrics lacks $m"
  done
  head -1 $calls | grep -q -- " run .* --profile --frames 3 --warmup 1 --output $d/ncu-run$" ||
    fail "re-run arguments: $(head -1 $calls)"
  sed -n 2p $calls | grep -q -- "--import $d/ncu.ncu-rep --csv --page raw$" || fail "import 1"
  sed -n 3p $calls | grep -q -- "--csv --page raw --print-nvtx-rename kernel$" || fail "import 2"
  # The re-run ran (under the fake) into its own folder inside the run folder.
  local r; r=$(run_dir "$d/ncu-run")
  [ "$(jq_get "$r/report.json" slots/0/frames/measured)" = 3 ] || fail "re-run frames"
  [ "$(jq_get "$r/report.json" slots/0/profile/frames)" = 3 ] || fail "re-run not profiled"
  # Targets: the three slowest nodes of the profile, slowest first.
  [ "$(jq_get "$j" status)" = ok ] || fail "status $(jq_get "$j" status)"
  [ "$(jq_get "$j" targets)" = 3 ] || fail "targets"
  local r0 r1 r2
  r0=$(jq_get "$j" targets/0/range) r1=$(jq_get "$j" targets/1/range) r2=$(jq_get "$j" targets/2/range)
  [ "$r0" = "$(sed -n 1p fake/ranges.txt)" ] || fail "targets/0 is $r0"
  [ "$(jq_get "$j" targets/0/node)" = "$(jq_get "$d/report.json" slots/0/profile/top_nodes/0/name)" ] ||
    fail "targets/0 is not the slowest node"
  [[ "$r0" != */* ]] || fail "range name keeps a '/': $r0"
  num_ok "$(jq_get "$j" targets/0/ms_per_frame) >= $(jq_get "$j" targets/1/ms_per_frame)" ||
    fail "targets not slowest first"
  # Kernels: by target, then duration; the means of repeated launches; units converted.
  [ "$(jq_get "$j" launches)" = 5 ] || fail "launches"
  [ "$(jq_get "$j" kernels)" = 4 ] || fail "kernels: $(jq_get "$j" kernels)"
  jq_get "$j" kernels/0/kernel | grep -q '^sm90_xmma_fprop' || fail "kernels/0"
  [ "$(jq_get "$j" kernels/0/range)" = "$r0" ] || fail "kernels/0 range"
  [ "$(jq_get "$j" kernels/0/verdict)" = compute-bound ] || fail "kernels/0 verdict"
  num_ok "$(jq_get "$j" kernels/0/duration_us) == 30.5" || fail "kernels/0 duration"
  [ "$(jq_get "$j" kernels/1/kernel)" = 'void conv2d_direct<float, 3, 3>(const float*, float*, int)' ] ||
    fail "kernel name with commas: $(jq_get "$j" kernels/1/kernel)"
  [ "$(jq_get "$j" kernels/1/launches)" = 2 ] || fail "kernels/1 launches"
  num_ok "($(jq_get "$j" kernels/1/duration_us) - 12.144)^2 < 1e-12" || fail "kernels/1 duration"
  num_ok "($(jq_get "$j" kernels/1/dram_pct) - 81)^2 < 1e-12" || fail "kernels/1 dram"
  num_ok "($(jq_get "$j" kernels/1/sm_pct) - 24)^2 < 1e-12" || fail "kernels/1 sm"
  num_ok "($(jq_get "$j" kernels/1/occupancy_pct) - 62)^2 < 1e-12" || fail "kernels/1 occupancy"
  [ "$(jq_get "$j" kernels/1/verdict)" = memory-bound ] || fail "kernels/1 verdict"
  # the op of the slowest node (a Conv, or in a slow sanitizer build possibly another op)
  local op0; op0=$(jq_get "$d/report.json" slots/0/profile/top_nodes/0/op)
  [ "$(jq_get "$j" kernels/1/op)" = "$op0" ] || fail "kernels/1 op is not $op0"
  [ "$(jq_get "$j" kernels/2/kernel)" = 'epilogue<"silu", 4>(float*, int)' ] || fail "\"\" escape"
  [ "$(jq_get "$j" kernels/2/range)" = "$r1" ] || fail "kernels/2 range"
  [ "$(jq_get "$j" kernels/3/range)" = "$r2" ] || fail "kernels/3 range"
  [ "$(jq_get "$j" kernels/3/dram_pct)" = null ] || fail "n/a is not null"
  [ "$(jq_get "$j" kernels/3/verdict)" = unknown ] || fail "kernels/3 verdict"
  local md=$d/ncu.md
  grep -q '^| NVTX range | Kernel | Launches | Duration µs | SM % | DRAM % | Occupancy % | Verdict |' "$md" ||
    fail "ncu.md lacks the kernel table"
  grep -qF "| $r0 | void conv2d_direct<float, 3, 3>(const float*, float*, int) | 2 | 12.14 | 24.0 | 81.0 | 62.0 | memory-bound |" "$md" ||
    fail "ncu.md lacks the conv2d row: $(cat "$md")"
  grep -qF "| 1 | $r0 | $op0 | rgb |" "$md" || fail "ncu.md lacks the targets"
}

case_ncu_path_option() {
  write_fake_ncu tools
  "$EB_BIN" profile --ncu --ncu_top 3 --ncu_path "$PWD/tools/ncu" "${PROFILE_ARGS[@]}" \
    >o.txt 2>e.txt || fail "--ncu_path exited $?: $(cat e.txt)"
  [ "$(jq_get "$(run_dir out)/ncu.json" ncu)" = "$PWD/tools/ncu" ] || fail "ncu path"
  "$EB_BIN" profile --ncu --ncu_path "$PWD/nothing/ncu" "${PROFILE_ARGS[@]}" 2>e2.txt
  [ $? = 2 ] || fail "a missing --ncu_path must exit 2"
  grep -qF -- "--ncu_path $PWD/nothing/ncu: not an executable file" e2.txt || fail "$(cat e2.txt)"
}

case_ncu_profiles_nothing() {
  write_fake_ncu bin
  FAKE_NCU_NONE=1 PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu "${PROFILE_ARGS[@]}" >o.txt 2>e.txt ||
    fail "exit $? when ncu profiled nothing: $(cat e.txt)"
  grep -q 'warning: ncu profiled no kernel in these ranges' e.txt || fail "no warning: $(cat e.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/ncu.json" status)" = ok ] || fail "status"
  [ "$(jq_get "$d/ncu.json" kernels)" = 0 ] || fail "kernels"
  [ "$(jq_get "$d/ncu.json" report)" = null ] || fail "a report that ncu did not write"
  [ "$(wc -l <fake/calls.txt)" = 1 ] || fail "imported a report that does not exist"
  grep -q 'ncu profiled no kernel' "$d/ncu.md" || fail "ncu.md does not say so"
}

case_no_ncu_on_path() {
  mkdir empty
  PATH="$PWD/empty" "$EB_BIN" profile --ncu "${PROFILE_ARGS[@]}" >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 2 ] || fail "exit $rc without ncu, expected 2"
  [ "$(grep -c 'ncu not found on PATH: install Nsight Compute or pass --ncu_path' e.txt)" = 1 ] ||
    fail "stderr: $(cat e.txt)"
  grep -q '^edgebench: error: ncu not found on PATH: install Nsight Compute or pass --ncu_path$' e.txt ||
    fail "not one line: $(cat e.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/profile/frames)" = 2 ] || fail "report.json lacks the profile"
  [ -s "$d/report.md" ] || fail "no report.md"
  [ "$(jq_get "$d/ncu.json" status)" = unavailable ] || fail "ncu.json status"
  grep -q 'ncu not found on PATH' "$d/ncu.md" || fail "ncu.md does not say why"
}

case_ncu_fails() {
  write_fake_ncu bin
  FAKE_NCU_FAIL=1 PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu "${PROFILE_ARGS[@]}" >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 2 ] || fail "exit $rc when ncu fails, expected 2"
  local line
  line=$(grep '^edgebench: error: ncu failed (exit status 1)' e.txt) || fail "stderr: $(cat e.txt)"
  [[ "$line" == *'"==ERROR== ERR_NVGPUCTRPERM - The user does not have permission'* ]] ||
    fail "ncu's error line not quoted: $line"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/profile/frames)" = 2 ] || fail "report.json lacks the profile"
  [ "$(jq_get "$d/ncu.json" status)" = failed ] || fail "ncu.json status"
  jq_get "$d/ncu.json" message | grep -q ERR_NVGPUCTRPERM || fail "ncu.json message"
  grep -q ERR_NVGPUCTRPERM "$d/ncu.log" || fail "ncu's output not kept"
  # The application failing under ncu: its own last line says more than ncu's.
  rm -rf out
  FAKE_NCU_FAIL=app PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu "${PROFILE_ARGS[@]}" >o.txt 2>e.txt
  [ $? = 2 ] || fail "exit code when the application fails under ncu"
  grep -q '^edgebench: error: ncu failed (exit status 1): "edgebench: error: slot rgb failed: failed to load model x.onnx' e.txt ||
    fail "the application's line not quoted: $(cat e.txt)"
}

case_no_profile_to_target() {
  need_ort
  write_fake_ncu bin
  PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu --mode rgb --backend ort --frames 2 --warmup 0 \
    --imgsz 160 --source synthetic=320x240 --output out --quiet >o.txt 2>e.txt
  [ $? = 2 ] || fail "expected exit 2"
  grep -q 'no per-operator profile to target' e.txt || fail "stderr: $(cat e.txt)"
  [ ! -e fake/calls.txt ] || fail "ncu ran without targets"
}

# The NVTX ranges themselves, seen by a minimal NVTX tool (tests/support/nvtx_inject.c).
case_nvtx_ranges_emitted() {
  [ -n "${EB_NVTX_INJECT:-}" ] || skip "built without the nvtx3 headers (no NVTX ranges)"
  NVTX_INJECTION64_PATH=$EB_NVTX_INJECT EB_NVTX_LOG=$PWD/nvtx.log \
    eb_run "${PROFILE_ARGS[@]}" --profile 2>e.txt || fail "run failed: $(cat e.txt)"
  [ -s nvtx.log ] || fail "no range reached the tool"
  local d nodes
  d=$(run_dir out)
  nodes=$(jq_get "$d/report.json" slots/0/profile/nodes)
  # Stages: probe + 2 measured frames through pre and infer; read and post per measured frame.
  for s in pre:3 infer:3 read:2 post:2; do
    [ "$(grep -c "^push edgebench.stage@rgb:${s%:*}$" nvtx.log)" = "${s#*:}" ] ||
      fail "rgb:${s%:*} ranges: $(grep -c "rgb:${s%:*}" nvtx.log)"
  done
  # Every node of every profiled run (probe + 2 frames), named <op>:<node>.
  [ "$(grep -c '^push edgebench@' nvtx.log)" = $((3 * nodes)) ] ||
    fail "$(grep -c '^push edgebench@' nvtx.log) op ranges for $nodes nodes x 3 runs"
  grep -q '^push edgebench@Conv:\.model\.0\.conv\.Conv$' nvtx.log || fail "no Conv:.model.0.conv.Conv"
  [ "$(grep -c '^pop edgebench$' nvtx.log)" = "$(grep -c '^push edgebench@' nvtx.log)" ] ||
    fail "op pushes and pops differ"
  [ "$(grep -c '^pop edgebench.stage$' nvtx.log)" = "$(grep -c '^push edgebench.stage@' nvtx.log)" ] ||
    fail "stage pushes and pops differ"
  # Without --profile the timed run carries no per-op ranges (the stages stay).
  rm -rf out nvtx.log
  NVTX_INJECTION64_PATH=$EB_NVTX_INJECT EB_NVTX_LOG=$PWD/nvtx.log \
    eb_run "${PROFILE_ARGS[@]}" 2>e.txt || fail "run failed: $(cat e.txt)"
  grep -q '^push edgebench.stage@rgb:infer$' nvtx.log || fail "no stage range without --profile"
  ! grep -q '^push edgebench@' nvtx.log || fail "op ranges without --profile"
}

# write_hanging_ncu DIR: DIR/ncu, an ncu that never returns: it starts a child (named after
# this case's folder, so that pgrep finds it and nothing else) and waits for it.
write_hanging_ncu() {
  mkdir -p "$1" fake
  cat >"$1/ncu" <<EOF
#!/usr/bin/env bash
printf '%s\n' "\$*" >>'$PWD/fake/calls.txt'
(exec -a '$PWD/hanging-ncu-child' sleep 100000) &
wait
EOF
  chmod +x "$1/ncu"
}

# no_process_left: no process of this case's folder is running (or a zombie), e.g. ncu's child.
no_process_left() {
  local i
  for ((i = 0; i < 50; i++)); do # the kernel may take a moment to reap what SIGKILL ended
    pgrep -f "$PWD/" >/dev/null || return 0
    sleep 0.1
  done
  fail "left running: $(pgrep -af "$PWD/")"
}

case_ncu_timeout_stops_and_reaps_ncu() {
  write_hanging_ncu bin
  PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu --ncu_timeout_s 1 "${PROFILE_ARGS[@]}" \
    >o.txt 2>e.txt
  local rc=$?
  [ "$rc" = 2 ] || fail "exit $rc when ncu times out, expected 2: $(cat e.txt)"
  [ "$(grep -c '^edgebench: error: ' e.txt)" = 1 ] || fail "expected one error line: $(cat e.txt)"
  grep -q '^edgebench: error: ncu did not finish within 1 s (--ncu_timeout_s): stopped' e.txt ||
    fail "stderr: $(cat e.txt)"
  [ -s fake/calls.txt ] || fail "ncu was not started"
  no_process_left
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/profile/frames)" = 2 ] || fail "report.json lacks the profile"
  [ "$(jq_get "$d/ncu.json" status)" = timeout ] || fail "ncu.json status"
  grep -q 'did not finish within 1 s' "$d/ncu.md" || fail "ncu.md does not say why"
}

case_ncu_sigint_is_forwarded_and_reaped() {
  write_hanging_ncu bin
  PATH="$PWD/bin:$PATH" "$EB_BIN" profile --ncu "${PROFILE_ARGS[@]}" >o.txt 2>e.txt &
  local pid=$! i
  for ((i = 0; i < 600; i++)); do # until ncu's child runs (at most 60 s)
    pgrep -f "$PWD/hanging-ncu-child" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || fail "profile ended before ncu ran: $(cat e.txt)"
    sleep 0.1
  done
  pgrep -f "$PWD/hanging-ncu-child" >/dev/null || fail "ncu's child did not start within 60 s"
  kill -INT "$pid"
  for ((i = 0; i < 150; i++)); do # SIGINT reaches the group at once; 15 s is generous
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    fail "still running 15 s after SIGINT"
  fi
  wait "$pid"
  local rc=$?
  [ "$rc" = 130 ] || fail "exit $rc after SIGINT, expected 130: $(cat e.txt)"
  no_process_left
  local d; d=$(run_dir out)
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "report.json does not parse"
  [ "$(jq_get "$d/ncu.json" status)" = interrupted ] || fail "ncu.json status"
  grep -q '^edgebench: error: ncu: interrupted; stopped' e.txt || fail "stderr: $(cat e.txt)"
}
