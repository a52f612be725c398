# Soak runs (README "Soak runs"): a long run's memory must not grow with its length. The case
# samples the process's RSS (/proc/PID/status VmRSS) and its open descriptors (/proc/PID/fd)
# every second from outside; it is left out of the sanitizer suites (their shadow memory and
# quarantine grow by design) and holds the "soak" resource lock so that no other heavy test
# runs beside it (tests/CMakeLists.txt).

# soak_watch PID SECONDS OUT: about once a second while PID lives, "t rss_kb fds": t the whole
# seconds since the watch began, fds the open descriptors that are not procfs or sysfs files
# (the sampler thread opens and closes those every interval: a moment's extra descriptor).
soak_watch() {
  local pid=$1 n=$2 out=$3 start=$SECONDS rss fds
  : >"$out"
  while [ $((SECONDS - start)) -lt "$n" ] && [ -d "/proc/$pid" ]; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    fds=$(for f in /proc/"$pid"/fd/*; do readlink "$f"; done 2>/dev/null | grep -cv '^/proc/\|^/sys/')
    [ -n "$rss" ] && echo "$((SECONDS - start)) $rss $fds" >>"$out"
    sleep 1
  done
}

case_soak_60s_memory_flat() {
  [ -n "${EB_MKONNX:-}" ] || skip "EB_MKONNX not set (run through ctest)"
  "$EB_MKONNX" v5 tiny.onnx || fail "eb_mkonnx failed"
  # A tiny detector on a synthetic source: thousands of frames a second, so that anything kept
  # per frame shows within the minute. A short sampling interval and a small --metrics_max_mb
  # make the sampler's file rotate during the run too (when the binary knows the option).
  local extra=""
  if "$EB_BIN" run --help 2>&1 | grep -q -- '--metrics_max_mb'; then
    extra="--metrics_max_mb 0.2 --checkpoint_s 5"
  fi
  # shellcheck disable=SC2086
  "$EB_BIN" run --backend native --mode rgb --model0 tiny.onnx --source synthetic=64x64 \
    --duration "${EB_SOAK_S:-60}" --warmup 10 --interval_ms 20 --output out --quiet $extra \
    >stdout.txt 2>stderr.txt &
  local pid=$!
  soak_watch "$pid" $(( ${EB_SOAK_S:-60} + 30 )) rss.txt
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "exit $rc: $(cat stderr.txt)"
  # After the warm-up (the first 15 s: the model loads, buffers are allocated) the RSS must stay
  # within 1% of its first value from 15 s on and the descriptor count must not move, up to 3 s
  # before the process ended (then the pass is over and the report is being built).
  local last; last=$(( $(tail -1 rss.txt | cut -d' ' -f1) - 3 ))
  [ "$last" -ge 40 ] || fail "the run ended after $last s; it should have measured for ${EB_SOAK_S:-60} s"
  awk -v last="$last" '
    base == "" && $1 >= 15 { base = $2; fd = $3 }
    base != "" && $1 <= last { if ($2 > max) max = $2; if (min == "" || $2 < min) min = $2;
                             if ($3 != fd) fdmove = fdmove " " $1 ":" $3 }
    END {
      if (base == "") { print "no sample at 15 s"; exit 1 }
      printf "RSS after warm-up: %d kB at 15 s, to %d s: min %d, max %d kB (%+.2f%%); fds %d%s\n",
             base, last, min, max, 100 * (max - base) / base, fd, fdmove == "" ? " constant" : " moved:" fdmove
      if (max > base * 1.01 || min < base * 0.99 || fdmove != "") exit 1
    }' rss.txt || fail "memory or descriptors grew during the soak (rss.txt: $(tr '\n' ';' <rss.txt))"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot not ok"
  [ -n "$extra" ] || return 0
  # Thousands of frames a second: past the exact prefix, so the streamed statistics say so; the
  # 1 MB metrics file rotated; the final report replaced the checkpoints.
  [ "$(jq_get "$d/report.json" slots/0/statistics/mode)" = streamed ] ||
    fail "a minute of a tiny model should be past the exact prefix"
  [ "$(jq_get "$d/report.json" slots/0/statistics/samples_kept)" = 131072 ] || fail "samples_kept"
  [ "$(jq_get "$d/report.json" checkpoint)" = false ] || fail "the final report is a checkpoint"
  [ -s "$d/metrics.jsonl.1" ] || fail "metrics.jsonl was not rotated"
  [ ! -e "$d/metrics.jsonl.5" ] || fail "more than 4 rotated metrics files kept"
  "$EB_JSONQ" -l "$d/metrics.jsonl.1" >/dev/null || fail "a rotated metrics file has a bad line"
  ! grep -q -- "--checkpoint_s: " "$d/run.log" ||
    fail "a checkpoint failed: $(grep -- "--checkpoint_s: " "$d/run.log")"
  return 0
}
