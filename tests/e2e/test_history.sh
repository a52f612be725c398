# The run history: `edgebench run` appends to a SQLite database, `edgebench history` lists it,
# `edgebench diff` compares two runs (exit 4 on a regression, 2 on bad input). Each case_* is one
# ctest entry. The runs are small (the embedded yolov8n at 64x64 on the native CPU backend).

# hrun ARGS...: a short rgb run of the embedded default.
hrun() {
  eb_run --mode rgb --backend native --imgsz 64 --frames 24 --warmup 2 --output out --quiet "$@"
}

case_two_runs_then_history_and_diff() {
  hrun --db h.db 2>err1.txt || fail "run 1 failed: $(cat err1.txt)"
  hrun --db h.db --warmup auto 2>err2.txt || fail "run 2 failed: $(cat err2.txt)"
  [ -s h.db ] || fail "no database written"
  # each report names its run in the history; `ls` lists the run folders in run order, also
  # when both runs fall in one second (eb_run_make_dir; tests/unit/test_run_dir.c)
  local d1 d2
  [ "$(ls -d out/*/ | wc -l)" -eq 2 ] || fail "expected two run folders: $(ls out)"
  d1=$(ls -d out/*/ | head -1); d2=$(ls -d out/*/ | tail -1)
  [ "$(jq_get "$d1/report.json" history/run_id)" = 1 ] || fail "run 1's report lacks its id"
  [ "$(jq_get "$d2/report.json" history/run_id)" = 2 ] || fail "run 2's report lacks its id"
  grep -q '^History: run 2 in `h.db`' "$d2/report.md" || fail "report.md lacks the history line"
  # and its key across databases: a version-4 uuid, the database's own for that run
  local u1
  u1=$(jq_get "$d1/report.json" history/uuid)
  echo "$u1" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ||
    fail "run 1's report: uuid '$u1'"
  "$EB_BIN" history --db h.db --format csv >hu.csv 2>huerr.txt || fail "csv: $(cat huerr.txt)"
  grep -q "^1,$u1," hu.csv || fail "run 1's uuid is not the database's: $u1 / $(cat hu.csv)"
  [ "$(jq_get "$d2/report.json" history/uuid)" != "$u1" ] || fail "two runs, one uuid"
  # 24 frames: INVALID, with the reason, in report.json and up front in report.md
  [ "$(jq_get "$d1/report.json" validity/verdict)" = INVALID ] || fail "24 frames must be INVALID"
  grep -q "24 measured frames, fewer than --min_frames 200" "$d1/report.json" ||
    fail "the frames reason is missing"
  head -5 "$d1/report.md" | grep -q '^> \*\*Verdict: INVALID\*\*' || fail "no verdict at the top"
  [ "$(jq_get "$d2/report.json" slots/0/warmup/mode)" = auto ] || fail "warm-up mode"
  [ "$(jq_get "$d2/report.json" config/warmup)" = auto ] || fail "config echo of --warmup auto"
  [ "$(jq_get "$d1/report.json" slots/0/latency_ms/end_to_end/ci_method)" = \
    "order-statistic binomial, 95%" ] || fail "ci_method"
  [ "$(jq_get "$d1/report.json" slots/0/latency_ms/end_to_end/p99_ci)" = null ] ||
    fail "24 frames cannot bound p99"
  jq_get "$d1/report.json" slots/0/latency_ms/end_to_end/p50_ci/low >/dev/null

  "$EB_BIN" history --db h.db >hist.txt 2>herr.txt || fail "history failed: $(cat herr.txt)"
  [ "$(wc -l <hist.txt)" -eq 3 ] || fail "history must list a header and 2 runs: $(cat hist.txt)"
  head -1 hist.txt | grep -q "p50 ms" || fail "history header"
  sed -n 2p hist.txt | grep -Eq '^ +2 .* rgb +embedded:yolov8n-64 +native +cpu +fp32 +fp32 +[0-9.]+ +[0-9.]+ +INVALID$' ||
    fail "history row: $(sed -n 2p hist.txt)"
  "$EB_BIN" history --db h.db --limit 1 --backend native --model yolov8n >h1.txt || fail "filters"
  [ "$(wc -l <h1.txt)" -eq 2 ] || fail "--limit 1: $(cat h1.txt)"
  "$EB_BIN" history --db h.db --device cuda >h0.txt || fail "empty filter result must exit 0"
  grep -q "no run in h.db matches" h0.txt || fail "empty list says so"

  # A run against itself: identical CIs overlap, no regression
  "$EB_BIN" diff 1 1 --db h.db >same.txt 2>serr.txt
  [ $? -eq 0 ] || fail "diff of a run with itself must exit 0: $(cat same.txt serr.txt)"
  grep -q "end_to_end p50 ms" same.txt || fail "diff lacks the end-to-end p50"
  grep -q "0 regressions" same.txt || fail "diff 1 1 found regressions"
  # Two real runs: 0 or 4 depending on this machine's noise, never anything else
  "$EB_BIN" diff 1 2 --db h.db --threshold 5 >d.txt 2>derr.txt
  local rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "diff exit $rc: $(cat derr.txt)"
  if [ "$rc" -eq 4 ]; then grep -q REGRESSION d.txt || fail "exit 4 without a REGRESSION row"; fi
  grep -q "INVALID" d.txt || fail "diff must warn that the runs are INVALID"

  # Bad input: exit 2 and one line
  "$EB_BIN" diff 1 99 --db h.db >o.txt 2>e.txt
  [ $? -eq 2 ] || fail "unknown id must exit 2"
  [ "$(wc -l <e.txt)" -eq 1 ] && grep -q "no run 99 in h.db" e.txt || fail "unknown id: $(cat e.txt)"
  "$EB_BIN" diff 1 --db h.db 2>e.txt; [ $? -eq 2 ] || fail "one id must exit 2"
  "$EB_BIN" history --db missing.db 2>e.txt; [ $? -eq 2 ] || fail "missing db must exit 2"
  grep -q "no history database at missing.db" e.txt || fail "missing db: $(cat e.txt)"
}

case_default_database_and_none() {
  # the default follows $XDG_DATA_HOME (run_case.sh points it into this case's folder)
  hrun 2>err.txt || fail "run failed: $(cat err.txt)"
  [ -s "$XDG_DATA_HOME/edgebench/history.db" ] || fail "no default database"
  "$EB_BIN" history >h.txt || fail "history on the default database"
  [ "$(wc -l <h.txt)" -eq 2 ] || fail "the default database holds one run: $(cat h.txt)"
  # --db none records nothing
  rm -rf "$XDG_DATA_HOME" out
  hrun --db none 2>err.txt || fail "run failed: $(cat err.txt)"
  [ ! -e "$XDG_DATA_HOME" ] || fail "--db none wrote a database"
  [ "$(jq_get "$(run_dir out)/report.json" history)" = null ] || fail "--db none: history must be null"
}

case_unwritable_database_is_one_warning() {
  # A database that cannot be written never fails the run: one warning line.
  mkdir ro && printf 'not a database, some text\n%.0s' $(seq 50) >ro/h.db
  # hrun passes --quiet (errors only on the console): the warning is run.log's, once.
  hrun --db ro/h.db 2>err.txt
  local rc=$?
  [ "$rc" -eq 0 ] || fail "the run must not fail: exit $rc: $(cat err.txt)"
  [ ! -s err.txt ] || fail "--quiet printed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(grep -c 'WARN history: the run was not recorded' "$d/run.log")" -eq 1 ] ||
    fail "expected one warning line in run.log: $(cat "$d/run.log")"
  grep -q "ro/h.db" "$d/run.log" || fail "the warning names the database"
  [ "$(jq_get "$d/report.json" history)" = null ] || fail "history must be null"
  grep -q "history: the run was not recorded" "$d/report.json" || fail "report.json warning"
}
