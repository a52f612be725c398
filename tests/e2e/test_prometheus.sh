# The live metrics endpoint (--prometheus, docs/prometheus.md): a run is scraped with curl while
# it goes, every page passes `promtool check metrics`, and the figures are checked against the
# run's report.json. Scrapes during a run can only be checked with <= against the final
# figures; what makes the checks unable to pass by luck: each scrape is one snapshot (frames
# equal every stage histogram's _count and +Inf bucket), three scrapes with growing frame counts
# are required (the test waits for them, so no timing can fail it), the scraped histograms must
# hold exactly the first frames of frames_<slot>.csv (sums equal, buckets within the CSV's
# rounding), and the mean latency of the scraped frames, a subset of the report's frames, must
# lie within the report's min..max. The
# run is dual (both slot threads, the sampler and the server at once), so the case also runs
# under ThreadSanitizer.

# pv FILE PREFIX [SUBSTRING]: the value of the first sample line that starts with PREFIX (and
# holds SUBSTRING).
pv() { awk -v p="$2" -v s="${3:-}" 'index($0, p) == 1 && index($0, s) { print $NF; exit }' "$1"; }

# check_scrape FILE: every sample is edgebench_*; for each slot, each stage histogram is 17
# cumulative buckets ending in +Inf whose last bucket and _count equal the slot's frames (one
# snapshot); prints "RGB THERMAL" frame counts, or "- -" while the page has no slot figures yet
# (before the measured pass).
# One awk: this machine may be loaded, and a process per check adds up.
check_scrape() {
  awk '
    function slot_of(l) { match(l, /slot="[a-z]+"/); return substr(l, RSTART + 6, RLENGTH - 7) }
    function stage_of(l) { match(l, /stage="[a-z_]+"/); return substr(l, RSTART + 7, RLENGTH - 8) }
    !/^#/ && !/^edgebench_/ { bad = bad " a sample without the edgebench_ prefix;" }
    /^edgebench_slot_frames_total\{/ { frames[slot_of($0)] = $NF }
    /^edgebench_slot_stage_latency_seconds_bucket\{/ {
      k = slot_of($0) SUBSEP stage_of($0)
      if ($NF + 0 < last[k] + 0) bad = bad " " k " not cumulative;"
      last[k] = $NF; n[k]++; inf[k] = index($0, "le=\"+Inf\"") > 0
    }
    /^edgebench_slot_stage_latency_seconds_count\{/ { cnt[slot_of($0) SUBSEP stage_of($0)] = $NF }
    END {
      if (bad != "") { print "scrape:" bad > "/dev/stderr"; exit 1 }
      if (!("rgb" in frames) || !("thermal" in frames)) { print "- -"; exit 0 }
      split("rgb thermal", sl, " "); split("read preprocess inference postprocess end_to_end", st, " ")
      for (i = 1; i <= 2; i++) for (j = 1; j <= 5; j++) {
        k = sl[i] SUBSEP st[j]
        if (n[k] != 17 || !inf[k] || last[k] != frames[sl[i]] || cnt[k] != frames[sl[i]])
          bad = bad " " sl[i] " " st[j] ": " n[k] " buckets, +Inf " last[k] ", _count " cnt[k] ", frames " frames[sl[i]] ";"
      }
      if (bad != "") { print "histograms:" bad > "/dev/stderr"; exit 1 }
      print frames["rgb"], frames["thermal"]
    }' "$1"
}

# check_csv SCRAPE CSV SLOT FRAMES: the scraped histograms of SLOT hold exactly the first FRAMES
# frames of its frames_<slot>.csv (the same frames, in the order they were booked): each stage's
# _sum equals their sum, and each cumulative bucket lies between the counts of frames at most
# the bound less and plus the CSV's rounding (its ms have 4 decimals: a frame that close to a
# bound may fall either side).
check_csv() {
  awk -F, -v slot="{slot=\"$3\"" -v f="$4" '
    function stage_of(l) { match(l, /stage="[a-z_]+"/); return substr(l, RSTART + 7, RLENGTH - 8) }
    function le_of(l) { match(l, /le="[^"]+"/); return substr(l, RSTART + 4, RLENGTH - 5) }
    FNR == NR {
      split($0, w, " ")
      if (index($0, "edgebench_slot_stage_latency_seconds_bucket" slot) == 1 && le_of($0) != "+Inf")
        got[stage_of($0), le_of($0) * 1000] = w[2]
      if (index($0, "edgebench_slot_stage_latency_seconds_sum" slot) == 1)
        sum[stage_of($0)] = w[2] * 1000
      next
    }
    FNR == 1 { next }
    $1 < f {
      rows++
      for (c = 4; c <= 8; c++) {
        csv[c] += $c
        for (b = 1; b <= nb; b++) {
          lo[c, b] += $c <= bound[b] - 0.00005
          hi[c, b] += $c <= bound[b] + 0.00005
        }
      }
    }
    BEGIN {
      nb = split("0.1 0.25 0.5 1 2.5 5 10 25 50 100 250 500 1000 2500 5000 10000", bound, " ")
      split("read preprocess inference postprocess end_to_end", name, " ")
    }
    END {
      if (rows != f) { print "the CSV has " rows " of the " f " scraped frames"; exit 1 }
      for (c = 4; c <= 8; c++) {
        st = name[c - 3]
        d = sum[st] - csv[c]
        if (d > f * 0.00005 + 1e-6 || -d > f * 0.00005 + 1e-6) {
          print st ": scraped sum " sum[st] " ms, the CSV frames " csv[c] " ms"; exit 1
        }
        for (b = 1; b <= nb; b++) {
          g = got[st, bound[b]]
          if (g == "" || g < lo[c, b] || g > hi[c, b]) {
            print st " le " bound[b] " ms: scraped " g ", the CSV " lo[c, b] ".." hi[c, b]; exit 1
          }
        }
      }
    }' "$1" "$2"
}

# check_slot SCRAPE REPORT INDEX NAME FRAMES: the scraped slot against report.json's slot INDEX
# (taken after the scrape: counts <=, constants equal, the mean latency within min..max).
check_slot() {
  local s=$1 r=$2 i=$3 slot="{slot=\"$4\"" last=$5
  grep -qF "edgebench_slot_frames_total{slot=\"$4\",model=\"$(jq_get "$r" slots/"$i"/model)\",backend=\"$(jq_get "$r" slots/"$i"/backend)\",device=\"$(jq_get "$r" slots/"$i"/device)\",host=\"$(uname -n)\"} $last" "$s" ||
    fail "slot $4: labels differ from report.json: $(grep '^edgebench_slot_frames_total' "$s")"
  local measured left_out
  measured=$(jq_get "$r" slots/"$i"/frames/measured)
  left_out=$(jq_get "$r" slots/"$i"/frames/left_out)
  [ "$last" -gt 0 ] || fail "slot $4: no frame scraped"
  # Every frame of the third scrape ended before a later frame of each slot: counted.
  [ "$last" -le "$measured" ] || fail "slot $4: scraped $last frames, report $measured (+ $left_out left out)"
  local why
  why=$(check_csv "$s" "$(dirname "$r")/frames_$4.csv" "$4" "$last") ||
    fail "slot $4: the scraped histograms are not the CSV's first $last frames: $why"
  local sum mean min max
  sum=$(pv "$s" "edgebench_slot_stage_latency_seconds_sum$slot" 'stage="end_to_end"')
  mean=$(awk -v a="$sum" -v n="$last" 'BEGIN { printf "%.9f", a / n * 1000 }')
  min=$(jq_get "$r" slots/"$i"/latency_ms/end_to_end/min)
  max=$(jq_get "$r" slots/"$i"/latency_ms/end_to_end/max)
  awk -v m="$mean" -v lo="$min" -v hi="$max" 'BEGIN { exit !(m >= lo - 1e-6 && m <= hi + 1e-6) }' ||
    fail "slot $4: scraped mean end-to-end $mean ms outside the report's $min..$max ms"
  [ "$(pv "$s" "edgebench_slot_target_frames_per_second$slot")" = 100 ] || fail "slot $4: target FPS"
  [ "$(pv "$s" "edgebench_slot_dropped_frames_total$slot")" -le "$(jq_get "$r" slots/"$i"/pacing/dropped)" ] ||
    fail "slot $4: more drops scraped than reported"
  [ "$(pv "$s" "edgebench_slot_deadline_misses_total$slot")" -le "$(jq_get "$r" slots/"$i"/pacing/deadline_misses)" ] ||
    fail "slot $4: more deadline misses scraped than reported"
  local peak
  peak=$(jq_get "$r" slots/"$i"/memory/peak_gb)
  awk -v a="$(pv "$s" "edgebench_slot_memory_peak_bytes$slot")" -v b="$peak" 'BEGIN { exit !(a > 0 && a <= b * 1e9 + 1) }' ||
    fail "slot $4: scraped memory peak above the report's $peak GB"
}

case_dual_scraped_during_run_matches_report() {
  command -v promtool >/dev/null 2>&1 || skip "promtool is absent (Debian package prometheus)"
  command -v curl >/dev/null 2>&1 || skip "curl is absent (Debian package curl)"
  "$EB_BIN" model synth --imgsz 64 -o m64.onnx >/dev/null || fail "model synth failed"
  # Paced, and long enough to outlast the scrapes: SIGINT ends it once they are taken.
  # shellcheck disable=SC2086
  "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} --mode dual --model0 m64.onnx --model1 m64.onnx \
    --rgb_source synthetic=64x64 --thermal_source synthetic=64x64 --fps 100 --frames 60000 \
    --warmup 2 --min_frames 0 --min_duration_s 0 --interval_ms 100 \
    --prometheus 127.0.0.1:0 --output out --db none >stdout.txt 2>err.txt &
  local pid=$! url="" i n=0 last=0 last1=0 frames frames1 rc
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
  if [ "$rc" -ne 2 ] || [ "$(wc -l <err3.txt)" -ne 1 ] || ! grep -q "0 to 65535" err3.txt; then
    fail "bad port: exit $rc: $(cat err3.txt)"
  fi

  # Four scrapes whose frame counts grow in both slots (a wait, at most 2 minutes, not a
  # timing). The third is checked against the report: the fourth shows that each slot ended a
  # frame after it, so the measured window (to the earliest slot's last frame) holds every frame
  # the third counted.
  for ((i = 0; i < 600 && n < 4; i++)); do
    kill -0 "$pid" 2>/dev/null || fail "the run ended before four scrapes: $(cat err.txt)"
    curl -sf --max-time 10 "$url" >scrape.txt || fail "curl $url failed"
    promtool check metrics <scrape.txt >promtool.txt 2>&1 ||
      fail "promtool check metrics: $(cat promtool.txt)"
    read -r frames frames1 < <(check_scrape scrape.txt) || fail "scrape $i: see above"
    [ -n "$frames1" ] || fail "scrape $i: histograms inconsistent"
    if [ "$frames" = - ]; then # before the measured pass: no slot figures yet
      sleep 0.1
      continue
    fi
    if [ "$frames" -gt "$last" ] && [ "$frames1" -gt "$last1" ]; then
      n=$((n + 1))
      cp scrape.txt "scrape_$n.txt"
      [ "$n" -eq 4 ] || { last=$frames; last1=$frames1; }
    fi
    sleep 0.1
  done
  [ "$n" -eq 4 ] || { kill -KILL "$pid"; fail "4 scrapes with growing frame counts not seen"; }
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
  check_slot "$s" "$r" 0 rgb "$last"
  check_slot "$s" "$r" 1 thermal "$last1"
  local limit
  limit=$(jq_get "$r" memory/limit_gb)
  awk -v a="$(pv "$s" 'edgebench_memory_limit_bytes{')" -v b="$limit" 'BEGIN { exit !(a == b * 1e9) }' ||
    fail "memory limit $(pv "$s" 'edgebench_memory_limit_bytes{') bytes, report $limit GB"
  # The sampler's figures are there (procfs on every Linux machine).
  [ -n "$(pv "$s" 'edgebench_memory_total_bytes{')" ] || fail "no system memory figure"
  [ -n "$(pv "$s" 'edgebench_cpu_load_ratio{')" ] || fail "no CPU load"
}
