#!/usr/bin/env bash
# Runs every libFuzzer target in build-fuzz/ for a bounded total time, seeded from fuzz/seeds/<name>
# and ../shared. A crash, leak or timeout fails the run (the reproducer is kept in build-fuzz/).
#   scripts/fuzz.sh [TOTAL_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-60}
shared=${NEXTTOK_SHARED_DIR:-../shared}
targets=(build-fuzz/fuzz_*)
[ -e "${targets[0]}" ] || { echo "fuzz: no targets built (scripts/build.sh fuzz)" >&2; exit 1; }
per=$(( total / ${#targets[@]} )); [ $per -lt 10 ] && per=10
# The tokenizer, chat-request and stream targets use real vocabularies from ../shared/vocab; the
# chat-request target renders with real templates from ../shared/templates.
if [ -d "$shared/vocab" ]; then export NT_FUZZ_VOCAB_DIR="$(realpath "$shared/vocab")"; fi
if [ -d "$shared/templates" ]; then export NT_FUZZ_TEMPLATE_DIR="$(realpath "$shared/templates")"; fi
for t in "${targets[@]}"; do
  name=$(basename "$t")
  if [ "$name" = fuzz_tokenizer ] && [ -z "${NT_FUZZ_VOCAB_DIR:-}" ]; then
    echo "fuzz: skipping $name: no vocabularies ($shared/vocab absent)" >&2; continue
  fi
  if [ "$name" = fuzz_chat_request ] && [ -z "${NT_FUZZ_VOCAB_DIR:-}" ]; then
    echo "fuzz: skipping $name: no vocabularies ($shared/vocab absent)" >&2; continue
  fi
  corpus=build-fuzz/corpus-$name
  mkdir -p "$corpus"
  seeds=()
  [ -d "fuzz/seeds/$name" ] && seeds+=("$(realpath "fuzz/seeds/$name")")
  # A target may name extra seed folders (relative to ../shared) in fuzz/<name>.seeds.
  if [ -f "fuzz/$name.seeds" ] && [ -d "$shared" ]; then
    while read -r d; do [ -n "$d" ] && [ -d "$shared/$d" ] && seeds+=("$(realpath "$shared/$d")"); done < "fuzz/$name.seeds"
  fi
  echo "fuzz: $name for ${per}s (seeds: ${seeds[*]:-none})" >&2
  (cd build-fuzz && ./"$name" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
     -print_final_stats=1 "corpus-$name" "${seeds[@]}" 2>"fuzz-$name.log") || {
    echo "fuzz: $name FAILED; log: build-fuzz/fuzz-$name.log" >&2; tail -40 "build-fuzz/fuzz-$name.log" >&2; exit 1; }
  grep -E "stat::number_of_executed_units|Done" "build-fuzz/fuzz-$name.log" | tail -2 >&2 || true
done
