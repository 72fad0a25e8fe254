#!/usr/bin/env bash
# bench/compare_llama.sh — nexttok bench and llama.cpp's llama-bench side by side on the same GGUF
# files, interleaved in rounds (the machine's speed drifts; each round runs both engines back to
# back per model and thread count), then a table of each engine's best and median round and their
# ratios. llama-bench is not part of this project: build it yourself and pass its path.
#
#   LLAMA_BENCH=/path/to/llama-bench bench/compare_llama.sh [-r ROUNDS] [-t 1,2] MODEL.gguf...
#
# Environment: NEXTTOK (default build/nexttok), P (prompt tokens, 512), N (generated tokens, 128),
# REPS (repetitions inside each tool per round, 2). Raw results: one JSON object per line in
# $OUT (default compare_llama.jsonl).
set -euo pipefail

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
rounds=3
threads=1,2
while getopts "r:t:h" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    h) usage 0 ;;
    *) usage 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "error: no model files given" >&2; usage 2; }
nt=${NEXTTOK:-build/nexttok}
lb=${LLAMA_BENCH:-}
[ -x "$nt" ] || { echo "error: nexttok not found at '$nt' (set NEXTTOK)" >&2; exit 2; }
[ -n "$lb" ] && [ -x "$lb" ] || { echo "error: set LLAMA_BENCH to an executable llama-bench" >&2; exit 2; }
for m in "$@"; do [ -r "$m" ] || { echo "error: cannot read model '$m'" >&2; exit 2; }; done
out=${OUT:-compare_llama.jsonl}
: > "$out"

# Tags each row of a tool's JSON array with the engine and round.
tag() {
  python3 -c '
import json, sys
engine, rnd = sys.argv[1], int(sys.argv[2])
for r in json.load(sys.stdin):
    test = "pp%d" % r["n_prompt"] if r["n_prompt"] else "tg%d" % r["n_gen"]
    print(json.dumps({"round": rnd, "engine": engine, "model": r["model_filename"].split("/")[-1],
                      "threads": r["n_threads"], "test": test, "ts": r["avg_ts"]}))' "$1" "$2"
}

for ((round = 1; round <= rounds; round++)); do
  for m in "$@"; do
    for t in ${threads//,/ }; do
      echo "round $round/$rounds: $(basename "$m") -t $t" >&2
      "$nt" bench -m "$m" -p "${P:-512}" -n "${N:-128}" -t "$t" -r "${REPS:-2}" -o json 2>/dev/null | tag nexttok "$round" >> "$out"
      "$lb" -m "$m" -p "${P:-512}" -n "${N:-128}" -t "$t" -r "${REPS:-2}" -o json 2>/dev/null | tag llama.cpp "$round" >> "$out"
    done
  done
done

python3 - "$out" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault((r["model"], r["threads"], r["test"], r["engine"]), []).append(r["ts"])
print("| model | threads | test | nexttok t/s best (median) | llama.cpp t/s best (median) | ratio best | ratio median |")
print("|---|---:|---|---:|---:|---:|---:|")
for key in sorted({k[:3] for k in runs}):
    a, b = runs.get(key + ("nexttok",)), runs.get(key + ("llama.cpp",))
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {max(a):.1f} ({ma:.1f}) | {max(b):.1f} ({mb:.1f}) | "
          f"{max(a) / max(b):.2f}x | {ma / mb:.2f}x |")
PY
