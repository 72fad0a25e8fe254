#!/usr/bin/env bash
# Runs the official OpenAI JS SDK (pinned in tests/server/openai_sdk/package-lock.json) against
# `nexttok serve` on the default test model: tests/server/openai_sdk/sdk_test.mjs starts the
# server, checks responses and errors through the SDK, and stops it. Fails if any test fails.
# Skips (exit 0) only when ../shared/models is absent and NEXTTOK_MODEL is not set.
# Env: NEXTTOK_SHARED_DIR (default ../shared), NEXTTOK_BIN (default build/nexttok), NEXTTOK_MODEL.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=tests/server/openai_sdk
shared=${NEXTTOK_SHARED_DIR:-../shared}

if [ -z "${NEXTTOK_MODEL:-}" ]; then
  if [ ! -d "$shared/models" ]; then
    echo "sdk_test: SKIP: $shared/models is absent (set NEXTTOK_SHARED_DIR or NEXTTOK_MODEL)" >&2
    exit 0
  fi
  export NEXTTOK_MODEL="$(realpath "$shared/models")/stories15M-q8_0.gguf"
fi
[ -f "$NEXTTOK_MODEL" ] || { echo "sdk_test: model $NEXTTOK_MODEL not found" >&2; exit 1; }
export NEXTTOK_BIN="${NEXTTOK_BIN:-$PWD/build/nexttok}"
[ -x "$NEXTTOK_BIN" ] || { echo "sdk_test: $NEXTTOK_BIN not built (scripts/build.sh release)" >&2; exit 1; }

for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "sdk_test: '$tool' not found: install Node.js 18 or later with npm (scripts/deps.sh installs Debian's npm when absent)" >&2
    exit 1; }
done
# node:test, --test-reporter and global fetch need Node.js 18 (Debian 12's nodejs: 18.20, which the
# pinned SDK runs on too, though it documents 20+; openai 7.x requires 22, hence 6.x pinned).
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 18 ]; then
  echo "sdk_test: Node.js $(node --version) is too old: the OpenAI SDK test needs Node.js 18 or later" >&2
  exit 1
fi

echo "sdk_test: npm ci in $dir" >&2
(cd "$dir" && timeout 300 npm ci --no-audit --no-fund --loglevel=error >&2)
echo "sdk_test: OpenAI SDK $(node -p "require('./$dir/node_modules/openai/package.json').version") on Node.js $(node --version), $NEXTTOK_BIN, $NEXTTOK_MODEL" >&2
timeout -k 10 300 node --test --test-reporter=spec "$dir/sdk_test.mjs"
