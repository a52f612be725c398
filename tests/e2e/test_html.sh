# report.html opened in headless Chromium (Debian's `chromium`; scripts/setup.sh installs it).
# Each case_* is one ctest entry (none is named "dual": the ThreadSanitizer suite would run it and
# learn nothing more); without Chromium they skip (exit 77) and say why.
#
# How the page is checked:
# 1. The report as written: no <script>, no external reference, the Content-Security-Policy
#    that forbids fetching and scripts; Chromium loads it (--dump-dom, console messages on
#    stderr through --enable-logging) and the page logs nothing to the console: no error, no
#    policy violation.
# 2. A copy with a probe: a script with a nonce that the copy's policy allows (the policy is
#    otherwise unchanged, so a fetch would still be blocked and reported) records errors,
#    exceptions and policy violations, and on load writes into the DOM, per <svg>, its id, its
#    rendered size (getBoundingClientRect), the size of what it draws (getBBox) and its number
#    of marks (lines, bars, dots). The dumped DOM is read back here.

# chromium_bin: the browser to use ($EB_CHROMIUM, else chromium or chromium-browser on PATH).
chromium_bin() {
  local c
  for c in "${EB_CHROMIUM:-}" chromium chromium-browser; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return 0; }
  done
  return 1
}

# chrome_dump FILE OUT ERR: loads FILE headless, the DOM after load into OUT, the log into ERR.
chrome_dump() {
  local profile
  profile=$(mktemp -d "$TMP/chrome-profile.XXXXXX")
  timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
    --no-first-run --disable-extensions --enable-logging=stderr --v=0 \
    --virtual-time-budget=5000 --dump-dom "file://$1" >"$2" 2>"$3"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "chromium exited $rc on $1: $(grep -v -i dbus "$3" | tail -5)"
}

# check_report_html DIR MIN_CHARTS IDS...: check_html on DIR/report.html.
check_report_html() {
  local d=$1
  shift
  check_html "$d/report.html" "$@"
}

# check_html FILE MIN_CHARTS IDS...: the checks above on an edgebench page; at least MIN_CHARTS
# charts, each with a non-zero size, and one chart with each id in IDS.
check_html() {
  local html=$1 min=$2
  shift 2
  [ -s "$html" ] || fail "$html missing or empty"
  grep -q '<script' "$html" && fail "$html has a script"
  grep -Eq '(src|href)="[^#]' "$html" && fail "$html refers to something outside itself"
  grep -Eq 'url\(|@import' "$html" && fail "$html's CSS fetches something"
  grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$html" ||
    fail "$html lacks its Content-Security-Policy"

  # 1. as written
  case $html in /*) ;; *) html="$PWD/$html" ;; esac
  chrome_dump "$html" dom.html chrome.log
  grep -q ':CONSOLE' chrome.log && fail "the page logged to the console: $(grep ':CONSOLE' chrome.log | head -3)"
  [ "$(grep -o '<svg ' dom.html | wc -l)" -eq "$(grep -o '<svg ' "$html" | wc -l)" ] ||
    fail "Chromium's DOM does not have every chart of $html"
  grep -q '</html>' dom.html || fail "Chromium's DOM is incomplete"

  # 2. a copy with the probe, right after the policy (which it then governs as well)
  local probe='<script nonce="ebprobe">(function () {
  var errors = [];
  function note(s) { errors.push(String(s).replace(/\n/g, " ")); }
  window.addEventListener("error", function (e) {
    note("error: " + (e.message || (e.target && e.target.tagName) || "unknown"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { note("rejection: " + e.reason); });
  document.addEventListener("securitypolicyviolation", function (e) {
    note("policy violation: " + e.violatedDirective + " " + e.blockedURI);
  });
  var ce = console.error;
  console.error = function () { note("console.error: " + Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); };
  window.addEventListener("load", function () {
    var lines = [], svgs = document.querySelectorAll("svg");
    for (var i = 0; i < svgs.length; i++) {
      var s = svgs[i], r = s.getBoundingClientRect(), b = s.getBBox();
      var marks = s.querySelectorAll(".series, .bars rect").length;
      lines.push("chart " + (s.id || "-") + " " + Math.round(r.width) + " " + Math.round(r.height) +
                 " " + Math.round(b.width) + " " + Math.round(b.height) + " " + marks);
    }
    for (var j = 0; j < errors.length; j++) lines.push("problem " + errors[j]);
    var pre = document.createElement("pre");
    pre.id = "eb-probe";
    pre.textContent = "\nprobe-begin\n" + lines.join("\n") + "\nprobe-end\n";
    document.body.appendChild(pre);
  });
})();</script>'
  # The copy: the policy also allows the probe's nonce; everything else is the report's bytes.
  # (ENVIRON, not awk -v, which would turn the probe's \n escapes into newlines.)
  PROBE=$probe awk '
    { print }
    /http-equiv="Content-Security-Policy"/ && !done { print ENVIRON["PROBE"]; done = 1 }
  ' "$html" | sed "s/default-src 'none'; style-src 'unsafe-inline'\"/default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-ebprobe'\"/" \
    >probe.html
  grep -q "nonce-ebprobe'" probe.html || fail "could not add the probe to the copy's policy"
  chrome_dump "$PWD/probe.html" probe-dom.html probe.log
  sed -n '/^probe-begin$/,/^probe-end$/p' probe-dom.html >probe.txt
  grep -q '^probe-end$' probe.txt || fail "the probe did not run: $(grep ':CONSOLE' probe.log | head -3)"
  grep '^problem ' probe.txt && fail "the page has errors (above)"
  grep -q ':CONSOLE' probe.log && fail "the page logged to the console: $(grep ':CONSOLE' probe.log | head -3)"
  local n id w h bw bh
  n=$(grep -c '^chart ' probe.txt)
  [ "$n" -ge "$min" ] || fail "$n charts rendered, expected at least $min: $(cat probe.txt)"
  while read -r _ id w h bw bh _; do
    if [ "$w" -le 0 ] || [ "$h" -le 0 ]; then fail "chart $id has no size (${w}x${h})"; fi
    if [ "$bw" -le 0 ] || [ "$bh" -le 0 ]; then fail "chart $id draws nothing (content ${bw}x${bh})"; fi
  done < <(grep '^chart ' probe.txt)
  for id in "$@"; do
    grep -q "^chart $id " probe.txt || fail "no chart $id: $(cat probe.txt)"
  done
}

# marks_of ID: the number of data marks (lines, bars, dots) the probe counted in chart ID.
marks_of() { awk -v id="$1" '$1 == "chart" && $2 == id { print $7 }' probe.txt; }

case_both_slots_report_html_loads_in_chromium() {
  CHROME=$(chromium_bin) || skip "Chromium is not installed (Debian package chromium; scripts/setup.sh installs it)"
  # Small and short (320x320 inputs, 12 frames): the page, not the numbers, is under test.
  eb_run --mode dual --backend native --imgsz 320 --frames 12 --warmup 1 --interval_ms 50 --output out \
    --quiet 2>err.txt || fail "edgebench run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  check_report_html "$d" 9 chart-stages chart-memory chart-rgb-hist chart-rgb-cdf \
    chart-rgb-stages chart-thermal-hist chart-thermal-cdf chart-thermal-stages
  # Latency over time: with temperature, clock or power where this machine reports them.
  grep -Eq '^chart chart-latency-(time|temperature|clock|power) ' probe.txt ||
    fail "no latency-over-time chart"
  local id
  for id in chart-stages chart-memory chart-rgb-hist chart-rgb-cdf chart-rgb-stages \
    chart-thermal-hist chart-thermal-cdf chart-thermal-stages; do
    [ "$(marks_of "$id")" -gt 0 ] || fail "chart $id has no data marks"
  done
}

case_failed_slot_report_html_loads_in_chromium() {
  # Slot 0 has no model (skipped), slot 1's model does not exist (failed): nothing is measured,
  # and the page still shows both slots and every run chart, saying there is no data.
  CHROME=$(chromium_bin) || skip "Chromium is not installed (Debian package chromium; scripts/setup.sh installs it)"
  eb_run --mode dual --model1 "$TMP/no <such> & \"model\".onnx" --rgb_source synthetic=64x64 \
    --thermal_source synthetic=64x64 --frames 5 --output out --quiet >/dev/null 2>err.txt
  local d; d=$(run_dir out)
  check_report_html "$d" 3 chart-stages chart-memory chart-latency-time
  grep -q 'class="st st-skipped"' "$d/report.html" || fail "slot 0 is not shown as skipped"
  grep -q 'class="st st-failed"' "$d/report.html" || fail "slot 1 is not shown as failed"
  grep -q 'no &lt;such&gt; &amp; &quot;model&quot;.onnx' "$d/report.html" ||
    fail "the model path is not escaped as text"
  grep -q 'chart-thermal-' "$d/report.html" && fail "a failed slot has latency charts"
  [ "$(grep -c '>no measured frames</text>' probe-dom.html)" -eq 2 ] ||
    fail "the charts over time must say that nothing was measured"
}

case_compare_html_loads_in_chromium() {
  # A sweep's page: grouped bars of p50 per configuration; with coco128 at hand, the
  # latency-vs-mAP scatter too (the embedded model's random weights score near 0: the page, not
  # the number, is under test).
  CHROME=$(chromium_bin) || skip "Chromium is not installed (Debian package chromium; scripts/setup.sh installs it)"
  local data=() ids=(p50_bars) min=1
  if [ -d "${EB_SHARED_DATA:-}/datasets/coco128" ]; then
    data=(--data "$EB_SHARED_DATA/datasets/coco128")
    ids+=(latency_map)
    min=2
  fi
  "$EB_BIN" compare --imgsz 160 --backends native,ort --frames 8 --warmup 1 --min_frames 5 \
    --db none --out out "${data[@]}" >stdout.txt 2>err.txt || fail "edgebench compare failed: $(cat err.txt)"
  check_html out/compare.html "$min" "${ids[@]}"
  [ "$(marks_of p50_bars)" -gt 0 ] || fail "the p50 bars have no data marks"
}

case_val_html_loads_in_chromium() {
  # val.html of the real model on 16 coco128 images: the PR curve of all classes and one per
  # class with boxes, the confusion matrix, each drawn (non-zero size, data marks).
  CHROME=$(chromium_bin) || skip "Chromium is not installed (Debian package chromium; scripts/setup.sh installs it)"
  need_shared
  "$EB_BIN" val --model "$DATA/models/yolov8n_int8_dynamic.onnx" --data "$DATA/datasets/coco128" \
    --max_images 16 --out out --quiet >stdout.txt 2>err.txt || fail "edgebench val failed: $(cat err.txt)"
  local classes
  classes=$(grep -c '^chart-pr-[0-9]' <(grep -o 'id="chart-pr-[0-9]*"' out/val.html | sed 's/id="//; s/"$//'))
  [ "$classes" -ge 5 ] || fail "expected a PR chart per class with boxes, got $classes"
  check_html out/val.html $((classes + 2)) chart-pr-all chart-confusion chart-pr-0
  [ "$(marks_of chart-pr-all)" -gt "$classes" ] || fail "the all-classes PR chart lacks curves"
  [ "$(marks_of chart-confusion)" -gt 0 ] || fail "the confusion matrix has no cells"
  grep -q '<td>all</td>' out/val.html || fail "the table lacks its all row"
  [ -s out/val.md ] || fail "val.md missing"
  grep -q '^| all |' out/val.md || fail "val.md lacks the all row"
}
