#!/usr/bin/env python3
"""The user path, measured as a user runs it: `edgebench run ARGS...` (default: the embedded
dual demo), then one table per slot from its report.json: each stage's p50 and mean, its share
of the end-to-end mean, the source (read) against the pipeline (preprocess + inference +
postprocess), the verdict, the CoV and the drift; and the targets of issue 18 checked against
the figures.

  python3 bench/bench_run.py [--bin build/src/edgebench] [--out DIR] [-- run options...]

Examples:
  python3 bench/bench_run.py                                   # make demo's run, on the CPU
  python3 bench/bench_run.py -- --device cuda --precision fp16 --backend native
  python3 bench/bench_run.py -- --solo_baseline
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

STAGES = ["read", "preprocess", "inference", "postprocess"]
# Targets (issue 18): source read p50 <= 0.3 ms; pipeline p50 <= 1.0 ms per slot (GPU);
# everything in the pipeline but inference <= 5% of the pipeline.
READ_P50_MS = 0.3
PIPELINE_P50_MS = 1.0
NON_INFER_PCT = 5.0


def fmt(v, prec=3):
    return "n/a" if v is None else f"{v:.{prec}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "src",
                                                  "edgebench"))
    ap.add_argument("--out", default=None, help="where the run folder goes (default: a temp dir)")
    ap.add_argument("run_args", nargs="*", help="options of `edgebench run` (after --)")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="eb-bench-run-")
    cmd = [a.bin, "run", "--mode", "dual", "--db", "none", "--quiet", "--output", out] + a.run_args
    print("command:", " ".join(cmd))
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    runs = sorted(glob.glob(os.path.join(out, "*", "report.json")))
    if not runs:
        print(f"no report (exit {rc})", file=sys.stderr)
        return 1
    r = json.load(open(runs[-1]))
    print(f"exit {rc}; verdict {r['validity']['verdict'] if r.get('validity') else 'n/a'}")
    for reason in (r.get("validity") or {}).get("reasons", []):
        print("  -", reason)
    for s in r["slots"]:
        if s["status"] != "ok":
            print(f"\nslot {s['name']}: {s['status']} {s.get('message') or ''}")
            continue
        lat = s["latency_ms"]
        e2e_mean = lat["end_to_end"]["mean"] or 0.0
        print(f"\nslot {s['name']}: {s['model']} on {s['source']}, {s['backend']} "
              f"{s['device']}; {s['frames']['measured']} frames in {fmt(s['wall_s'], 2)} s "
              f"({s['frames']['left_out']} left out), {fmt(s['throughput_fps'], 1)} FPS, "
              f"end-to-end CoV {fmt(100 * (lat['end_to_end']['cov'] or 0), 2)}%, drift "
              f"{fmt((s.get('steady_state') or {}).get('drift_pct'), 2)}%")
        print("| stage | p50 ms | mean ms | share of end-to-end mean |")
        print("|---|---|---|---|")
        for st in STAGES + ["pipeline", "end_to_end"]:
            x = lat[st]
            share = 100.0 * x["mean"] / e2e_mean if e2e_mean > 0 and x["mean"] is not None else None
            print(f"| {st} | {fmt(x['p50'])} | {fmt(x['mean'])} | {fmt(share, 1)}% |")
        pipe = lat["pipeline"]["mean"] or 0.0
        non_infer = pipe - (lat["inference"]["mean"] or 0.0)
        non_infer_pct = 100.0 * non_infer / pipe if pipe > 0 else None
        print(f"dominant: {s['dominant']}")
        print(f"target read p50 <= {READ_P50_MS} ms: {fmt(lat['read']['p50'])} "
              f"({'met' if lat['read']['p50'] <= READ_P50_MS else 'NOT met'})")
        print(f"target pipeline p50 <= {PIPELINE_P50_MS} ms: {fmt(lat['pipeline']['p50'])} "
              f"({'met' if lat['pipeline']['p50'] <= PIPELINE_P50_MS else 'NOT met'})")
        print(f"target pipeline but inference <= {NON_INFER_PCT}%: {fmt(non_infer_pct, 2)}% "
              f"({'met' if non_infer_pct is not None and non_infer_pct <= NON_INFER_PCT else 'NOT met'})")
        if s.get("solo_baseline"):
            sb = s["solo_baseline"]
            print(f"solo end-to-end p50 {fmt(sb['end_to_end']['p50'])} ms, interference ratio "
                  f"{fmt(sb['interference_ratio'], 3)}")
    if r.get("pair") and r["pair"].get("pairs"):
        p = r["pair"]
        print(f"\npair: {p['pairs']} pairs, {fmt(p.get('pair_fps'), 1)} pair FPS")
    print("report:", os.path.dirname(runs[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
