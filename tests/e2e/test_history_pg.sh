# The run history in PostgreSQL (--db postgresql://...): each case starts its own server from
# Debian's postgresql package (initdb in the case's folder, listening only on a Unix socket
# there, stopped at the end), run as an unprivileged user when the test runs as root (initdb
# refuses root). Skipped with the reason when the server's binaries are absent or edgebench was
# built without PostgreSQL. Runs are small: the embedded yolov8n at 64x64 on the native CPU, and
# (where any run will do, being the cheapest) `edgebench llm` of a tiny synthesized decoder.

# hrun ARGS...: a short rgb run of the embedded default.
hrun() {
  eb_run --mode rgb --backend native --imgsz 64 --frames 24 --warmup 2 --output out --quiet "$@"
}

# lrun ARGS...: a short `edgebench llm` of tiny.onnx (made on first use) on the native CPU; its
# warnings (the history's among them) go to stderr.
lrun() {
  [ -s tiny.onnx ] || "$EB_BIN" model synth --arch llama --size tiny --ctx 64 -o tiny.onnx \
    >/dev/null || fail "model synth failed"
  "$EB_BIN" llm --model tiny.onnx --backend native --prompt 8 --gen 4 --reps 3 --warmup 0 \
    --output lout "$@" >/dev/null
}

# pg_start: a fresh server in $TMP/pg; sets PGURL (a postgresql:// URI naming the socket folder)
# and PSQL (psql on it); stops the server when the case ends.
pg_start() {
  PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ] ||
    skip "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (Debian postgresql; scripts/setup.sh --for test installs it)"
  "$EB_BIN" history --db "host=/nonexistent" 2>&1 | grep -q "built without PostgreSQL" &&
    skip "this edgebench was built without PostgreSQL (-DEB_POSTGRES=OFF)"
  PGDIR=$TMP/pg
  mkdir -p "$PGDIR"
  AS=()
  if [ "$(id -u)" = 0 ]; then
    # initdb and postgres refuse root: the server runs as Debian's postgres user (or nobody),
    # which needs to reach its folder inside the case's private one.
    local user=postgres
    id -u postgres >/dev/null 2>&1 || user=nobody
    command -v runuser >/dev/null || skip "running as root without runuser to start PostgreSQL as $user"
    chmod 711 "$TMP"
    chown "$user" "$PGDIR"
    AS=(runuser -u "$user" --)
  fi
  "${AS[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -U eb -A trust -N >"$PGDIR/initdb.log" 2>&1 ||
    fail "initdb failed: $(tail -5 "$PGDIR/initdb.log")"
  trap 'pg_down; rm -rf "$TMP"' EXIT
  pg_up
  PGURL="postgresql:///postgres?host=$PGDIR&user=eb"
  PSQL=("$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$PGURL")
}

pg_up() {
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -s \
    -o "-c listen_addresses='' -k $PGDIR -c fsync=off -c full_page_writes=off" start ||
    fail "the PostgreSQL server did not start: $(tail -5 "$PGDIR/server.log")"
}

pg_down() {
  [ -f "$PGDIR/data/postmaster.pid" ] || return 0
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w -s stop >/dev/null 2>&1
}

case_runs_and_llm_rows_then_history_diff_host_format() {
  pg_start
  hrun --db "$PGURL" 2>e1.txt || fail "run failed: $(cat e1.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" history/run_id)" = 1 ] || fail "the run's report lacks its id"
  grep -q '"db": "postgresql:///postgres?host=' "$d/report.json" || fail "report.json: history db"
  lrun --db "$PGURL" 2>e2.txt || fail "llm 1 failed: $(cat e2.txt)"
  # $EB_DB stands for --db
  EB_DB=$PGURL lrun 2>e3.txt || fail "llm 2 failed: $(cat e3.txt)"
  [ ! -e "$XDG_DATA_HOME/edgebench/history.db" ] || fail "EB_DB: the default file was written"

  "$EB_BIN" history --db "$PGURL" >h.txt 2>he.txt || fail "history failed: $(cat he.txt)"
  [ "$(wc -l <h.txt)" -eq 5 ] || fail "history: a header, 2 llm runs and a run, a note: $(cat h.txt)"
  sed -n 2p h.txt | grep -Eq '^ +3 .* llm +tiny.onnx +native +cpu ' || fail "llm row: $(cat h.txt)"
  sed -n 4p h.txt | grep -Eq '^ +1 .* rgb +embedded:yolov8n-64 +native +cpu +fp32 +fp32 +[0-9.]+ +[0-9.]+ +INVALID$' ||
    fail "run row: $(sed -n 4p h.txt)"
  "$EB_BIN" diff 1 1 --db "$PGURL" >same.txt 2>de.txt || fail "diff 1 1: $(cat de.txt)"
  grep -q "end_to_end p50 ms" same.txt && grep -q "0 regressions" same.txt || fail "diff 1 1: $(cat same.txt)"
  "$EB_BIN" diff 2 3 --db "$PGURL" >d.txt 2>de.txt
  local rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "diff exit $rc: $(cat de.txt)"
  grep -q '^  decode tok/s ' d.txt || fail "llm diff: $(cat d.txt)"
  "$EB_BIN" diff 1 3 --db "$PGURL" >/dev/null 2>de.txt
  [ $? -eq 2 ] && grep -q "of kind run and run 3 of kind llm" de.txt || fail "run vs llm: $(cat de.txt)"

  # --host and --format
  local host; host=$(hostname)
  "$EB_BIN" history --db "$PGURL" --host "$host" --format csv >h.csv || fail "csv"
  [ "$(head -1 h.csv)" = "id,uuid,started_at,host,slot,model,backend,device,model_precision,computed,p50_ms,fps,verdict" ] ||
    fail "csv header: $(head -1 h.csv)"
  [ "$(wc -l <h.csv)" -eq 4 ] || fail "csv: a header and 3 rows: $(cat h.csv)"
  [ "$(tail -n +2 h.csv | cut -d, -f4 | sort -u)" = "$host" ] || fail "csv host column: $(cat h.csv)"
  [ "$(tail -n +2 h.csv | cut -d, -f2 | sort -u | grep -Ec '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$')" -eq 3 ] ||
    fail "csv: three distinct version-4 uuids: $(cat h.csv)"
  "$EB_BIN" history --db "$PGURL" --host no-such-board --format csv >h0.csv || fail "csv, no row"
  [ "$(wc -l <h0.csv)" -eq 1 ] || fail "--host no-such-board: $(cat h0.csv)"
  "$EB_BIN" history --db "$PGURL" --format json --limit 0 >h.json || fail "json"
  [ "$(jq_get h.json 0/id)" = 3 ] && [ "$(jq_get h.json 0/slot)" = llm ] || fail "json row 0: $(cat h.json)"
  [ "$(jq_get h.json 2/host)" = "$host" ] || fail "json host"
  [ "$(jq_get h.json 2/slot)" = rgb ] && [ "$(jq_get h.json 2/verdict)" = INVALID ] || fail "json run row"
  near "$(jq_get h.json 2/p50_ms)" "$(jq_get "$d/report.json" slots/0/latency_ms/end_to_end/p50)" 0 ||
    fail "json p50 differs from the report's"
  "$EB_BIN" history --db "$PGURL" --format xml 2>e.txt
  [ $? -eq 2 ] && grep -q "accepted: table, csv, json" e.txt || fail "--format xml: $(cat e.txt)"

  # A database of a newer schema than this edgebench knows is refused, never altered.
  "${PSQL[@]}" -c "UPDATE meta SET value = '99' WHERE key = 'schema_version'" || fail "psql"
  "$EB_BIN" history --db "$PGURL" >/dev/null 2>e.txt
  [ $? -eq 2 ] || fail "a newer schema must exit 2"
  [ "$(wc -l <e.txt)" -eq 1 ] && grep -q "has history schema 99, newer than this edgebench's" e.txt ||
    fail "newer schema: $(cat e.txt)"
  lrun --db "$PGURL" --output lout2 2>e.txt || fail "the llm run must not fail"
  [ "$(grep -c "history: the run was not recorded: .*schema 99, newer" e.txt)" -eq 1 ] ||
    fail "the run's warning: $(cat e.txt)"
  [ "$("${PSQL[@]}" -c "SELECT count(*) FROM runs")" = 3 ] || fail "a newer database was altered"
  [ ! -e "$XDG_DATA_HOME/edgebench/spool.db" ] || fail "a refused database is not a reason to spool"
}

case_eight_writers_at_once() {
  pg_start
  # Eight boards end their runs at once against an empty database: the schema is created once,
  # each run is one transaction, nothing is lost or duplicated.
  lrun --db none --output warm 2>/dev/null || fail "llm failed" # tiny.onnx, made once
  local i pids=()
  for i in 1 2 3 4 5 6 7 8; do
    lrun --db "$PGURL" --output "out$i" 2>"e$i.txt" &
    pids+=($!)
  done
  for i in 1 2 3 4 5 6 7 8; do
    wait "${pids[$((i - 1))]}" || fail "writer $i failed: $(cat "e$i.txt")"
  done
  [ "$("${PSQL[@]}" -c "SELECT count(*), count(DISTINCT uuid), count(DISTINCT output_dir) FROM runs")" = "8|8|8" ] ||
    fail "runs: $("${PSQL[@]}" -c "SELECT id, uuid, output_dir FROM runs")"
  [ "$("${PSQL[@]}" -c "SELECT count(*) FROM llm_stats WHERE stage = 'decode' AND n = 12")" = 8 ] ||
    fail "llm_stats"
  [ "$("${PSQL[@]}" -c "SELECT value FROM meta WHERE key = 'schema_version'")" = 5 ] || fail "meta"
  "$EB_BIN" history --db "$PGURL" --limit 0 --format csv >h.csv || fail "history"
  [ "$(tail -n +2 h.csv | cut -d, -f1 | sort -u | wc -l)" -eq 8 ] || fail "history: $(cat h.csv)"
}

case_server_gone_mid_run_spooled_then_synced() {
  pg_start
  local spool=$XDG_DATA_HOME/edgebench/spool.db n
  lrun --db "$PGURL" 2>e.txt || fail "run 1 failed: $(cat e.txt)"
  # The server goes away in the middle of a sweep that holds its connection: the rows after it
  # go to the spool, one line says so, nothing is lost.
  "$EB_BIN" compare --imgsz 64,96,128 --backends native --frames 24 --warmup 2 --min_frames 5 \
    --out cout --db "$PGURL" >c.txt 2>ce.txt &
  local pid=$! i
  for i in $(seq 600); do # the first row recorded (at most 60 s)
    [ "$("${PSQL[@]}" -c "SELECT count(*) FROM runs" 2>/dev/null)" = 2 ] && break
    sleep 0.1
  done
  pg_down
  wait "$pid" || fail "the sweep must not fail: $(cat ce.txt)"
  n=$(("$("$EB_BIN" history --db "$spool" --format csv | wc -l)" - 1))
  echo "sweep rows kept in the spool: $n"
  [ "$n" -le 2 ] || fail "at most the sweep's last 2 rows are spooled, not $n"
  if [ "$n" -gt 0 ]; then # (else the sweep ended before the server did: nothing to show)
    [ "$(grep -c "kept in the local spool $spool until .edgebench sync" ce.txt)" -eq 1 ] ||
      fail "the sweep must say once that it spools: $(cat ce.txt)"
  fi
  ! grep -q "not recorded" ce.txt || fail "a sweep row was lost: $(cat ce.txt)"
  # A run that ends while the server is down: spooled at once, one line.
  lrun --db "$PGURL" 2>e3.txt || fail "run 3 failed: $(cat e3.txt)"
  [ "$(grep -c "kept in the local spool $spool until" e3.txt)" -eq 1 ] || fail "run 3: $(cat e3.txt)"
  n=$((n + 1))
  # the server is down: history says so in one line; the spool lists the runs
  "$EB_BIN" history --db "$PGURL" >/dev/null 2>e.txt
  [ $? -eq 2 ] && [ "$(wc -l <e.txt)" -eq 1 ] && grep -q "cannot connect to history database" e.txt ||
    fail "history while down: $(cat e.txt)"
  [ "$("$EB_BIN" history --db "$spool" --format csv | wc -l)" -eq $((n + 1)) ] ||
    fail "the spool holds $n runs"
  [ "$(stat -c %a "$spool")" = 600 ] || fail "the spool must be the user's alone"
  "$EB_BIN" sync --db "$PGURL" >s.txt 2>se.txt
  [ $? -eq 1 ] && grep -q "cannot connect" se.txt || fail "sync while down must exit 1: $(cat s.txt se.txt)"

  pg_up
  cp "$spool" spool-before-sync.db
  "$EB_BIN" sync --db "$PGURL" >s.txt 2>se.txt || fail "sync failed: $(cat s.txt se.txt)"
  grep -q "^uploaded $n runs\{0,1\} to postgresql:///postgres?host=.* (0 of them were there already)$" s.txt ||
    fail "sync: $(cat s.txt)"
  [ "$("${PSQL[@]}" -c "SELECT count(*), count(DISTINCT uuid) FROM runs")" = "5|5" ] ||
    fail "after sync, run 1, the sweep's 3 rows and run 3: $("${PSQL[@]}" -c "SELECT id, kind, uuid FROM runs")"
  [ "$("$EB_BIN" history --db "$spool" --format csv | wc -l)" -eq 1 ] ||
    fail "the spool must hold no run after sync"
  # A crash between the server's commit and the spool's removal: the next sync finds the runs
  # there already and adds nothing.
  cp spool-before-sync.db "$spool"
  "$EB_BIN" sync >s.txt 2>se.txt || fail "second sync failed: $(cat s.txt se.txt)"
  grep -q "($n of them were there already)" s.txt || fail "second sync: $(cat s.txt)"
  [ "$("${PSQL[@]}" -c "SELECT count(*) FROM runs")" = 5 ] || fail "a run was uploaded twice"
  "$EB_BIN" sync --db "$PGURL" >s.txt || fail "sync with nothing pending"
  grep -q "nothing to upload: no run pending in $spool" s.txt || fail "nothing pending: $(cat s.txt)"

  # The next run that reaches the server uploads what is pending, then itself.
  pg_down
  lrun --db "$PGURL" --output lout4 2>/dev/null || fail "run 4 failed"
  pg_up
  lrun --db "$PGURL" --output lout5 2>e5.txt || fail "run 5 failed: $(cat e5.txt)"
  ! grep -q "warning" e5.txt || fail "run 5 warned: $(cat e5.txt)"
  grep -q "uploaded 1 run kept in the local spool $spool to postgresql:" "$(run_dir lout5)/run.log" ||
    fail "run 5's log: $(cat "$(run_dir lout5)/run.log")"
  [ "$("${PSQL[@]}" -c "SELECT count(*), count(DISTINCT uuid) FROM runs")" = "7|7" ] || fail "7 runs"
  # (PostgreSQL's ids have gaps after a crash: a sequence logs values ahead)
  "${PSQL[@]}" -c "SELECT output_dir FROM runs ORDER BY id DESC LIMIT 1" | grep -q "lout5" ||
    fail "run 5 must come last: $("${PSQL[@]}" -c "SELECT id, output_dir FROM runs")"
  "$EB_BIN" history --db "$PGURL" --limit 0 --format csv >h.csv || fail "history"
  [ "$(tail -n +2 h.csv | wc -l)" -eq 7 ] || fail "history after the upload: $(cat h.csv)"
}
