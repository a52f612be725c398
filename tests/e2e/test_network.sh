# End-to-end cases of network sources (src/harness/pipeline/source_video.c): an RTSP stream
# served on the loopback, the server going away mid-run (reconnected, or the slot ends with the
# reason while the other slot runs on), a server that never answers, a UDP sender that stops.
#
# The stream: `ffmpeg -re` encodes a 160x120 test pattern at 25 frames/s to MPEG-4 and sends
# it as RTP to eb_rtsp_relay (tests/support/rtsp_relay.c), which serves it over RTSP/TCP;
# FFmpeg's RTSP muxer cannot listen for players itself. Every case is bounded by `timeout`.

# model SIZE: a synthesized yolov8n at SIZE (seeded), in the case's folder.
model() {
  [ -f "m$1.onnx" ] ||
    "$EB_BIN" model synth --arch yolov8 --scale n --imgsz "$1" -o "m$1.onnx" >/dev/null 2>&1 ||
    fail "model synth $1"
  echo "m$1.onnx"
}

need_ffmpeg() {
  command -v ffmpeg >/dev/null || skip "the ffmpeg command is absent (scripts/setup.sh --for test)"
}

# A short run: no history, no validity minimums; the machine may be busy (other tests), so
# neither other processes' CPU use nor drift is judged.
short() {
  timeout 60 "$EB_BIN" run ${EB_TEST_RUN_ARGS:-} --db none --min_frames 0 --min_duration_s 0 \
    --max_others_cpu_pct 100 --max_drift_pct 1000 --output out --quiet "$@"
}

PIDS=""
cleanup() { for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap 'cleanup; rm -rf "$TMP"' EXIT # run_case.sh's trap, and the servers

# serve_rtsp [RELAY ARGS...]: starts the relay and the ffmpeg sender; sets RTSP_URL.
serve_rtsp() {
  local relay; relay="$(dirname "$EB_JSONQ")/eb_rtsp_relay"
  [ -x "$relay" ] || fail "eb_rtsp_relay not built beside eb_jsonq"
  "$relay" ports stream.sdp "$@" 2>relay.err &
  PIDS="$PIDS $!"
  local i
  for i in $(seq 100); do [ -s ports ] && break; sleep 0.05; done
  [ -s ports ] || fail "the relay did not start: $(cat relay.err)"
  local rtsp rtp rtcp
  read -r rtsp rtp rtcp <ports
  if [ "${1:-}" != --silent ]; then
    ffmpeg -nostdin -hide_banner -loglevel error -re -f lavfi -i testsrc=size=160x120:rate=25 \
      -c:v mpeg4 -g 10 -f rtp "rtp://127.0.0.1:$rtp?rtcpport=$rtcp" -sdp_file stream.sdp \
      >ffmpeg.log 2>&1 &
    PIDS="$PIDS $!"
    for i in $(seq 200); do [ -s stream.sdp ] && break; sleep 0.05; done
    [ -s stream.sdp ] || fail "ffmpeg did not start streaming: $(cat ffmpeg.log)"
  fi
  RTSP_URL="rtsp://127.0.0.1:$rtsp/live"
}

case_rtsp_stream_runs() {
  need_ffmpeg
  serve_rtsp
  short --mode rgb --model0 "$(model 64)" --source "$RTSP_URL" --frames 20 --warmup 1 \
    2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot status"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 20 ] || fail "frames measured"
  [ "$(jq_get "$d/report.json" slots/0/validity/verdict)" = VALID ] ||
    fail "not VALID: $(grep -i verdict "$d/report.md")"
  [ "$(jq_get "$d/report.json" slots/0/source)" = "video=$RTSP_URL" ] || fail "source"
  [ "$(jq_get "$d/report.json" slots/0/source_stream/reconnects)" = 0 ] || fail "reconnects"
  [ "$(jq_get "$d/report.json" slots/0/source_stream/frames_lost)" = 0 ] || fail "frames_lost"
  [ "$(jq_get "$d/report.json" slots/1/source_stream)" = null ] || fail "skipped slot's stream"
  grep -q "| Network stream | 0 reconnections" "$d/report.md" || fail "report.md stream row"
}

case_rtsp_server_stops_and_comes_back() {
  # The server closes the connection 1.5 s after PLAY and refuses connections for 1 s: the
  # slot reconnects (0.5 s, then 1 s of backoff) and counts the frames the outage cost. The
  # least delay among the first connection's frames dates the last one before the loss, so at
  # least one of them must be read as it comes: the stream opens once the model has loaded
  # (case rtsp_opens_after_every_model_loads); when it opened before, an ASan build on a loaded
  # machine read every frame of a connection dropped 0.5 s after PLAY late and put the outage
  # at 0.88 s.
  need_ffmpeg
  serve_rtsp --drop_after 1.5 --down 1
  short --mode rgb --model0 "$(model 64)" --source "$RTSP_URL" --frames 70 --warmup 1 \
    --reconnect 3 --source_timeout_s 3 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot status"
  [ "$(jq_get "$d/report.json" slots/0/frames/measured)" = 70 ] || fail "frames measured"
  [ "$(jq_get "$d/report.json" slots/0/source_stream/reconnects)" = 1 ] || fail "reconnects"
  local att lost out
  att=$(jq_get "$d/report.json" slots/0/source_stream/reconnect_attempts)
  lost=$(jq_get "$d/report.json" slots/0/source_stream/frames_lost)
  out=$(jq_get "$d/report.json" slots/0/source_stream/outage_s)
  [ "$att" -ge 1 ] && [ "$att" -le 3 ] || fail "attempts $att"
  # At least the 1 s the server was down at 25 frames/s, less the frame the gap spans.
  [ "$lost" -ge 24 ] || fail "frames_lost $lost after an outage of $out s"
  awk -v o="$out" -v l="$lost" 'BEGIN { d = o * 25 - 1 - l; exit !(o >= 1 && d < 1 && d > -1) }' ||
    fail "frames_lost $lost is not 25/s x outage $out s - 1"
  [ "$(jq_get "$d/report.json" slots/0/source_stream/frames_lost_from)" = nominal_rate ] ||
    fail "frames_lost_from"
  grep -q "lost stream $RTSP_URL (the server ended the stream); reconnecting in 0.5 s" \
    "$d/run.log" || fail "run.log lacks the loss: $(grep -i stream "$d/run.log")"
  grep -q "| Network stream | 1 reconnections ($att attempts), about $lost frames lost" \
    "$d/report.md" || fail "report.md stream row"
}

case_rtsp_opens_after_every_model_loads() {
  # Two slots, the network stream on the first: it opens once both models have loaded, so its
  # frames do not wait in the socket's buffer while the other slot's model loads (they would
  # all be read late, and an outage among them estimated short).
  need_ffmpeg
  serve_rtsp
  short --mode dual --model0 "$(model 64)" --model1 "$(model 96)" --rgb_source "$RTSP_URL" \
    --thermal_source synthetic=96x96 --frames 5 --warmup 0 2>err.txt ||
    fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = ok ] || fail "slot 0 status"
  [ "$(jq_get "$d/report.json" slots/1/status)" = ok ] || fail "slot 1 status"
  local loaded opened
  loaded=$(grep -n "INFO slot thermal: backend native (" "$d/run.log" | cut -d: -f1)
  opened=$(grep -n "INFO slot rgb: $RTSP_URL opened (every model loaded)" "$d/run.log" |
    cut -d: -f1)
  [ -n "$loaded" ] && [ -n "$opened" ] || fail "run.log lacks the lines: $(cat "$d/run.log")"
  [ "$opened" -gt "$loaded" ] || fail "the stream opened before the thermal model loaded"
}

case_rtsp_outage_behind_a_slow_pipeline() {
  # A 640 model on one thread takes 50 to 200 ms a frame (more under a sanitizer) while the
  # server sends one every 40 ms: the frames sent before the loss wait in the socket's buffer
  # and are read long after the server went. The outage still counts from when the last of them
  # came (the stream's timestamps), not from when the pipeline got to it: the 1 s the server was
  # down, less up to two frame intervals (80 ms) by which the estimate of when that frame came
  # can run late (it is the frame's timestamp plus the least delay seen among the frames read;
  # one run of this case gave 0.98 s).
  need_ffmpeg
  serve_rtsp --drop_after 0.5 --down 1
  short --mode rgb --model0 "$(model 640)" --threads 1 --source "$RTSP_URL" --frames 14 \
    --warmup 1 --reconnect 3 --source_timeout_s 3 2>err.txt || fail "run failed: $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/source_stream/reconnects)" = 1 ] || fail "reconnects"
  local lost out
  lost=$(jq_get "$d/report.json" slots/0/source_stream/frames_lost)
  out=$(jq_get "$d/report.json" slots/0/source_stream/outage_s)
  awk -v o="$out" 'BEGIN { exit !(o >= 0.92) }' ||
    fail "an outage of $out s ($lost frames) after the server was down 1 s"
  [ "$lost" -ge 22 ] || fail "frames_lost $lost after an outage of $out s"
}

case_rtsp_lost_without_reconnect_dual() {
  # --reconnect 0: the rtsp slot ends with the reason when the server goes; the thermal slot
  # (synthetic) runs to its length, and the report of what ran is written.
  need_ffmpeg
  serve_rtsp --drop_after 0.5 --down -1
  short --mode dual --model0 "$(model 64)" --model1 "$(model 64)" --rgb_source "$RTSP_URL" \
    --thermal_source synthetic=64x64@50 --frames 60 --warmup 1 --reconnect 0 2>err.txt
  local rc=$?
  [ "$rc" -eq 3 ] || fail "exit $rc, expected 3 (one slot failed): $(cat err.txt)"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = failed ] || fail "rgb slot status"
  local msg; msg=$(jq_get "$d/report.json" slots/0/message)
  case "$msg" in
  *"lost stream $RTSP_URL: the server ended the stream; not reconnected (--reconnect 0)"*) ;;
  *) fail "message: $msg" ;;
  esac
  grep -qF "not reconnected (--reconnect 0)" err.txt || fail "stderr lacks the reason"
  grep -qF "not reconnected (--reconnect 0)" "$d/report.md" || fail "report.md lacks the reason"
  [ "$(jq_get "$d/report.json" slots/0/source_stream/reconnect_attempts)" = 0 ] || fail "attempts"
  [ "$(jq_get "$d/report.json" slots/1/status)" = ok ] || fail "thermal slot status"
  [ "$(jq_get "$d/report.json" slots/1/frames/measured)" = 60 ] || fail "thermal frames"
}

case_rtsp_server_never_answers() {
  # A server that accepts and stays silent: a clear error after --source_timeout_s, not a
  # hang; then a port where nothing listens: refused at once.
  need_ffmpeg
  serve_rtsp --silent
  local t0 t1
  t0=$(date +%s%N)
  short --mode rgb --model0 "$(model 64)" --source "$RTSP_URL" --frames 5 --warmup 0 \
    --source_timeout_s 1 2>err.txt
  [ $? -eq 1 ] || fail "a silent server must fail the slot: $(cat err.txt)"
  t1=$(date +%s%N)
  grep -qF "failed to open stream $RTSP_URL: no answer within 1 s" err.txt ||
    fail "stderr: $(cat err.txt)"
  [ $(((t1 - t0) / 1000000000)) -lt 30 ] || fail "took $(((t1 - t0) / 1000000000)) s"
  local d; d=$(run_dir out)
  [ "$(jq_get "$d/report.json" slots/0/status)" = failed ] || fail "slot status"
  rm -rf out
  local port; read -r port _ <ports
  cleanup
  PIDS=""
  short --mode rgb --model0 "$(model 64)" --source "rtsp://127.0.0.1:$port/live" --frames 5 \
    --warmup 0 2>err.txt
  [ $? -eq 1 ] || fail "a refused connection must fail the slot"
  grep -qF "failed to open stream rtsp://127.0.0.1:$port/live: Connection refused" err.txt ||
    fail "stderr: $(cat err.txt)"
}

case_udp_sender_stops() {
  # An MPEG-TS stream over UDP whose sender stops after 2 s: frames arrive, then the read
  # timeout (1 s; what a camera that stops sending gets too) ends the slot with the reason.
  need_ffmpeg
  local port=$((20000 + RANDOM % 30000)) m; m=$(model 64)
  ffmpeg -nostdin -hide_banner -loglevel error -re -f lavfi -i testsrc=size=160x120:rate=25 \
    -t 2 -c:v mpeg4 -g 10 -f mpegts "udp://127.0.0.1:$port?pkt_size=1316" >ffmpeg.log 2>&1 &
  PIDS="$PIDS $!"
  short --mode rgb --model0 "$m" --source "udp://127.0.0.1:$port" --frames 100000 \
    --warmup 1 --reconnect 0 --source_timeout_s 1 2>err.txt
  [ $? -eq 1 ] || fail "a stopped sender must fail the slot: $(cat err.txt)"
  local d; d=$(run_dir out)
  local msg; msg=$(jq_get "$d/report.json" slots/0/message)
  case "$msg" in
  *"lost stream udp://127.0.0.1:$port: no data for 1 s; not reconnected"*) ;;
  *) fail "message: $msg" ;;
  esac
  [ "$(jq_get "$d/report.json" slots/0/frames/warmup)" = 1 ] || fail "no frames arrived"
}
