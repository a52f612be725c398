#!/usr/bin/env bash
# Before/after of `edgebench llm` on the GPU, side by side in one run: two edgebench binaries
# (e.g. build-dev/edgebench-base and build-dev/edgebench from scripts/device_bundle.sh --base)
# alternate on one model, ROUNDS times each, and the table gives each run's prefill p50, decode
# per-token p50 and decode tokens/s, then each binary's median and the ratio after/before.
# With --peer, bench/peer_llm_torch.py (PyTorch torch.compile, static cache) runs after them on
# the default configuration below (qwen2 0.5b fp16, prompt 512, gen 128, 5 repetitions).
#
# Usage: bench/gpu_llm_ab.sh [--rounds N] [--peer] [--model M.onnx] BEFORE AFTER [-- LLM ARGS]
#   M.onnx defaults to a Qwen2.5-0.5B-shaped fp32 decoder synthesized by AFTER (ctx 1024) into
#   a temporary folder; LLM ARGS default to the issue's configuration:
#   --backend native --device cuda --precision fp16 --prompt 512 --gen 128 --reps 5
set -euo pipefail

rounds=3
peer=0
model=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --peer) peer=1; shift ;;
    --model) model=$2; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "gpu_llm_ab: give two edgebench binaries (see --help)" >&2; exit 2; }
before=$1 after=$2
shift 2
[ "${1:-}" = -- ] && shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--backend native --device cuda --precision fp16 --prompt 512
  --gen 128 --reps 5)
for b in "$before" "$after"; do
  [ -x "$b" ] || { echo "gpu_llm_ab: $b is not an executable" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$model" ]; then
  model=$tmp/q05.onnx
  "$after" model synth --arch qwen2 --size 0.5b --ctx 1024 -o "$model" >/dev/null
fi

# one BIN TAG: one `edgebench llm` run; prints its row.
one() {
  local out=$tmp/out-$2
  rm -rf "$out"
  "$1" llm --model "$model" "${args[@]}" --db none --output "$out" --quiet >"$tmp/log" 2>&1 ||
    { echo "gpu_llm_ab: $1 llm failed:" >&2; tail -5 "$tmp/log" >&2; exit 1; }
  python3 - "$out"/*/report.json "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print("| %s | %.3f | %.4f | %.1f |" % (sys.argv[2], r["prefill_ms"]["p50"],
      r["decode_token_ms"]["p50"], r["decode_tokens_per_s"]["mean"]))
EOF
}

echo "model $model; edgebench llm ${args[*]}"
echo
echo "| binary | prefill p50 ms | decode p50 ms/token | decode tokens/s |"
echo "| --- | ---: | ---: | ---: |"
for i in $(seq "$rounds"); do
  one "$before" before
  one "$after" after
done | tee "$tmp/rows"
python3 - "$tmp/rows" <<'EOF'
import statistics, sys
rows = {"before": [], "after": []}
for line in open(sys.argv[1]):
    f = [c.strip() for c in line.strip().strip("|").split("|")]
    rows[f[0]].append([float(x) for x in f[1:]])
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
for k in ("before", "after"):
    print("| %s (median) | %.3f | %.4f | %.1f |" % (k, *med[k]))
print("| after / before | %.3f | %.3f | %.3f |" %
      tuple(a / b for a, b in zip(med["after"], med["before"])))
EOF

if [ "$peer" = 1 ]; then
  echo
  python3 "$(dirname "$0")/peer_llm_torch.py" --arch qwen2 --size 0.5b --dtype fp16 --prompt 512 \
    --gen 128 --reps 5 --modes compiled
fi
