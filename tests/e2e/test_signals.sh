# Signals end a run with its report: SIGTERM during a paced wait, SIGHUP (the terminal closed)
# and SIGPIPE (the console's reader gone) are interruptions like SIGINT: the report is written,
# marked interrupted with the signal's name, and the exit code is 130. Cases whose name
# contains "dual" also run under ThreadSanitizer.

mkmodel() { "$EB_BIN" model synth --imgsz 64 -o m64.onnx >/dev/null && echo m64.onnx; }

# start_run ARGS...: the binary itself in the background (not eb_run, whose subshell would take
# the signal), stderr to err.txt; sets $pid. $EB_TEST_RUN_ARGS is split on purpose.
start_run() {
  # shellcheck disable=SC2086
  "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} "$@" --output out 2>err.txt >stdout.txt &
  pid=$!
}

# wait_measuring: until run.log says the measured pass began (at most 60 s).
wait_measuring() {
  local i
  for ((i = 0; i < 600; i++)); do
    grep -qs "INFO measuring" out/*/run.log && return 0
    kill -0 "$pid" 2>/dev/null || fail "the run ended before measuring: $(cat err.txt)"
    sleep 0.1
  done
  fail "the measured pass did not begin within 60 s"
}

# wait_gone SECONDS WHAT: the run must have ended within SECONDS; then its exit code is 130.
wait_gone() {
  local i
  for ((i = 0; i < $1 * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    fail "still running $1 s after $2"
  fi
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 130 ] || fail "exit $rc after $2, expected 130: $(cat err.txt)"
}

# expect_interrupted SIGNAL: the five reports exist and parse, marked interrupted by SIGNAL.
expect_interrupted() {
  local d; d=$(run_dir out)
  for f in report.json report.md report.html run.log env.json; do
    [ -s "$d/$f" ] || fail "$d/$f missing or empty"
  done
  "$EB_JSONQ" "$d/report.json" >/dev/null || fail "report.json does not parse"
  [ "$(jq_get "$d/report.json" interrupted)" = true ] || fail "report not marked interrupted"
  [ "$(jq_get "$d/report.json" interrupt_signal)" = "$1" ] ||
    fail "interrupt_signal is $(jq_get "$d/report.json" interrupt_signal), expected $1"
  [ "$(jq_get "$d/report.json" exit_code)" = 130 ] || fail "report.json exit_code is not 130"
  grep -q "Interrupted\*\* ($1)" "$d/report.md" || fail "report.md does not name $1"
}

case_paced_slow_run_ends_promptly_on_sigterm() {
  # 0.1 FPS, the slowest rate accepted: frame 1 is due 10 s after the pass began. The signal
  # comes 1 s in, while the slot waits, so a wait that slept through it would end 9 s later;
  # a sliced wait ends within 20 ms and then writes the report (5 s is generous for that).
  start_run --mode rgb --backend native --model0 "$(mkmodel)" --source synthetic=64x64@0.1 \
    --warmup 0 --quiet
  wait_measuring
  sleep 1
  kill -TERM "$pid"
  wait_gone 5 SIGTERM
  expect_interrupted SIGTERM
  local d; d=$(run_dir out)
  # Frame 1 (due at 10 s) must not have run; frame 0 (due at once) has, unless the machine
  # was too busy to run it within the second, which the exit time above does not depend on.
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" -le 1 ] ||
    fail "frame 1 (due at 10 s) ran: the wait did not end on SIGTERM"
}

case_dual_sighup_writes_interrupted_report() {
  # The terminal closed: both slots (paced, so they are waiting as often as running) stop.
  mkmodel >/dev/null
  start_run --mode dual --backend native --model0 m64.onnx --model1 m64.onnx \
    --rgb_source synthetic=64x64@5 --thermal_source synthetic=64x64@5 --warmup 0 --quiet
  wait_measuring
  sleep 1
  kill -HUP "$pid"
  wait_gone 60 SIGHUP
  expect_interrupted SIGHUP
  local d; d=$(run_dir out)
  for i in 0 1; do
    [ "$(jq_get "$d/report.json" slots/$i/status)" = ok ] || fail "slot $i did not end ok"
  done
}

# A pipe with no reader on fd 4 (a FIFO opened read-write, then for writing, then its read end
# closed): every write to it raises SIGPIPE, as `edgebench run 2>&1 | head -1` does once head
# has exited, but deterministically from the first write on.
open_broken_pipe() {
  mkfifo fifo || fail "mkfifo"
  exec 3<>fifo 4>fifo 3<&-
}

case_console_pipe_closed_writes_interrupted_report() {
  # Console (stderr) and stdout both go to the dead pipe: the first console line raises SIGPIPE,
  # which interrupts the run like SIGINT; the process is not killed, the report is written.
  open_broken_pipe
  # shellcheck disable=SC2086
  "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} --mode rgb --backend native --model0 "$(mkmodel)" \
    --source synthetic=64x64 --warmup 0 --frames 100000 --output out >&4 2>&4
  local rc=$?
  exec 4>&-
  [ "$rc" -eq 130 ] || fail "exit $rc with the console's reader gone, expected 130"
  expect_interrupted SIGPIPE
}

case_stdout_pipe_closed_after_the_run_is_no_crash() {
  # Only the final `report: PATH` line goes to the dead pipe: the run is complete by then, so
  # it is not interrupted and exits as it would have (0), not killed by SIGPIPE (141).
  open_broken_pipe
  # shellcheck disable=SC2086
  "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} --mode rgb --backend native --model0 "$(mkmodel)" \
    --source synthetic=64x64 --warmup 0 --frames 3 --min_frames 0 --min_duration_s 0 \
    --max_others_cpu_pct 100 --output out --quiet >&4 2>err.txt
  local rc=$?
  exec 4>&-
  [ "$rc" -eq 0 ] || fail "exit $rc with stdout's reader gone, expected 0: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" interrupted)" = false ] || fail "a complete run marked interrupted"
}
