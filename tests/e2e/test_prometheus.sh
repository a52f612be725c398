# The live metrics endpoint (--prometheus, docs/prometheus.md): a run is scraped with curl while
# it goes, every page passes `promtool check metrics`, and the figures are checked against the
# run's report.json. Scrapes during a run can only be checked with <= against the final
# figures; what makes the checks unable to pass by luck: each scrape is one snapshot (frames
# equal every stage histogram's _count and +Inf bucket), three scrapes with growing frame counts
# are required (the test waits for them, so no timing can fail it), and the mean latency of the
# scraped frames, a subset of the report's frames, must lie within the report's min..max.

# pv FILE PREFIX [SUBSTRING]: the value of the first sample line that starts with PREFIX (and
# holds SUBSTRING).
pv() { awk -v p="$2" -v s="${3:-}" 'index($0, p) == 1 && index($0, s) { print $NF; exit }' "$1"; }

SLOT='{slot="rgb"'

# check_scrape FILE: promtool accepts it; every stage histogram is cumulative, ends in +Inf and
# counts the slot's frames; prints the frame count.
check_scrape() {
  local f=$1 frames st inf
  promtool check metrics <"$f" >promtool.txt 2>&1 || fail "promtool check metrics $f: $(cat promtool.txt)"
  grep -v '^#' "$f" | grep -v '^edgebench_' | grep -q . && fail "$f: a sample without the edgebench_ prefix"
  frames=$(pv "$f" "edgebench_slot_frames_total$SLOT")
  [ -n "$frames" ] || fail "$f: no edgebench_slot_frames_total for slot rgb"
  for st in read preprocess inference postprocess end_to_end; do
    inf=$(awk -v st="stage=\"$st\"" 'index($0, "edgebench_slot_stage_latency_seconds_bucket{") == 1 && index($0, st) {
            if ($NF + 0 < prev + 0) bad = 1; prev = $NF; last = $0; n++ }
          END { if (bad || n != 17 || index(last, "le=\"+Inf\"") == 0) exit 1; print prev }' "$f") ||
      fail "$f: the $st histogram is not 17 cumulative buckets ending in +Inf"
    [ "$inf" = "$frames" ] || fail "$f: $st +Inf bucket $inf, frames $frames"
    [ "$(pv "$f" "edgebench_slot_stage_latency_seconds_count$SLOT" "stage=\"$st\"")" = "$frames" ] ||
      fail "$f: $st _count is not the frame count $frames"
  done
  echo "$frames"
}

case_scraped_during_run_matches_report() {
  command -v promtool >/dev/null 2>&1 || skip "promtool is absent (Debian package prometheus)"
  command -v curl >/dev/null 2>&1 || skip "curl is absent (Debian package curl)"
  "$EB_BIN" model synth --imgsz 64 -o m64.onnx >/dev/null || fail "model synth failed"
  # Paced, and long enough to outlast the scrapes: SIGINT ends it once they are taken.
  # shellcheck disable=SC2086
  "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} --mode rgb --model0 m64.onnx --source synthetic=64x64 \
    --fps 100 --frames 60000 --warmup 2 --min_frames 0 --min_duration_s 0 --interval_ms 100 \
    --prometheus 127.0.0.1:0 --output out --db none >stdout.txt 2>err.txt &
  local pid=$! url="" i n=0 last=0 frames rc
  for ((i = 0; i < 600; i++)); do
    url=$(sed -n 's/^prometheus: //p' stdout.txt)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || fail "the run ended before serving: $(cat err.txt)"
    sleep 0.1
  done
  [ -n "$url" ] || { kill -KILL "$pid"; fail "no 'prometheus: URL' line within 60 s"; }
  local addr=${url#http://}
  addr=${addr%/metrics}
  case "$addr" in 127.0.0.1:[1-9]*) ;; *) kill -KILL "$pid"; fail "printed address '$addr'" ;; esac

  # The same address again: refused before anything is made, one line naming it.
  "$EB_BIN" run --mode rgb --model0 m64.onnx --source synthetic=64x64 --prometheus "$addr" \
    --output out2 --db none \
    >/dev/null 2>err2.txt
  rc=$?
  [ "$rc" -eq 2 ] || fail "second run on $addr: exit $rc, expected 2: $(cat err2.txt)"
  [ "$(wc -l <err2.txt)" -eq 1 ] || fail "second run: not one line: $(cat err2.txt)"
  grep -qF "failed to listen on $addr: Address already in use" err2.txt || fail "second run: $(cat err2.txt)"
  [ ! -e out2 ] || fail "the refused run made its output folder"
  "$EB_BIN" run --mode rgb --model0 m64.onnx --source synthetic=64x64 \
    --prometheus 127.0.0.1:99999 --output out2 \
    --db none >/dev/null 2>err3.txt
  rc=$?
  [ "$rc" -eq 2 ] && [ "$(wc -l <err3.txt)" -eq 1 ] && grep -q "0 to 65535" err3.txt ||
    fail "bad port: exit $rc: $(cat err3.txt)"

  # Three scrapes whose frame counts grow (a wait, at most 2 minutes, not a timing).
  for ((i = 0; i < 600 && n < 3; i++)); do
    kill -0 "$pid" 2>/dev/null || fail "the run ended before three scrapes: $(cat err.txt)"
    curl -sf --max-time 10 "$url" >scrape.txt || fail "curl $url failed"
    frames=$(check_scrape scrape.txt) || exit 1
    if [ "$frames" -gt "$last" ]; then
      n=$((n + 1))
      cp scrape.txt "scrape_$n.txt"
      last=$frames
    fi
    sleep 0.2
  done
  [ "$n" -eq 3 ] || { kill -KILL "$pid"; fail "3 scrapes with growing frame counts not seen"; }
  # Not GET, not /metrics.
  [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")" = 405 ] || fail "POST was not 405"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/")" = 404 ] || fail "/ was not 404"
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq 130 ] || fail "exit $rc after SIGINT, expected 130: $(cat err.txt)"
  curl -s --max-time 5 "$url" >/dev/null && fail "still serving after the run ended"

  local d r s=scrape_3.txt
  d=$(run_dir out)
  r="$d/report.json"
  # Labels as the report names the slot.
  grep -qF "edgebench_slot_frames_total{slot=\"rgb\",model=\"$(jq_get "$r" slots/0/model)\",backend=\"$(jq_get "$r" slots/0/backend)\",device=\"$(jq_get "$r" slots/0/device)\",host=\"$(uname -n)\"} $last" "$s" ||
    fail "labels differ from report.json: $(grep '^edgebench_slot_frames_total' "$s")"
  local measured left_out
  measured=$(jq_get "$r" slots/0/frames/measured)
  left_out=$(jq_get "$r" slots/0/frames/left_out)
  [ "$last" -le $((measured + left_out)) ] || fail "scraped $last frames, report $measured + $left_out"
  [ "$last" -gt 0 ] || fail "no frame scraped"
  local sum mean min max
  sum=$(pv "$s" "edgebench_slot_stage_latency_seconds_sum$SLOT" 'stage="end_to_end"')
  mean=$(awk -v a="$sum" -v n="$last" 'BEGIN { printf "%.9f", a / n * 1000 }')
  min=$(jq_get "$r" slots/0/latency_ms/end_to_end/min)
  max=$(jq_get "$r" slots/0/latency_ms/end_to_end/max)
  awk -v m="$mean" -v lo="$min" -v hi="$max" 'BEGIN { exit !(m >= lo - 1e-6 && m <= hi + 1e-6) }' ||
    fail "scraped mean end-to-end $mean ms outside the report's $min..$max ms"
  [ "$(pv "$s" "edgebench_slot_target_frames_per_second$SLOT")" = 100 ] || fail "target FPS"
  [ "$(pv "$s" "edgebench_slot_dropped_frames_total$SLOT")" -le "$(jq_get "$r" slots/0/pacing/dropped)" ] ||
    fail "more drops scraped than reported"
  [ "$(pv "$s" "edgebench_slot_deadline_misses_total$SLOT")" -le "$(jq_get "$r" slots/0/pacing/deadline_misses)" ] ||
    fail "more deadline misses scraped than reported"
  local limit peak
  limit=$(jq_get "$r" memory/limit_gb)
  awk -v a="$(pv "$s" 'edgebench_memory_limit_bytes{')" -v b="$limit" 'BEGIN { exit !(a == b * 1e9) }' ||
    fail "memory limit $(pv "$s" 'edgebench_memory_limit_bytes{') bytes, report $limit GB"
  peak=$(jq_get "$r" slots/0/memory/peak_gb)
  awk -v a="$(pv "$s" "edgebench_slot_memory_peak_bytes$SLOT")" -v b="$peak" 'BEGIN { exit !(a > 0 && a <= b * 1e9 + 1) }' ||
    fail "scraped memory peak above the report's $peak GB"
  # The sampler's figures are there (procfs on every Linux machine).
  [ -n "$(pv "$s" 'edgebench_memory_total_bytes{')" ] || fail "no system memory figure"
  [ -n "$(pv "$s" 'edgebench_cpu_load_ratio{')" ] || fail "no CPU load"
}
