#!/usr/bin/env bash
# Opens nexttok's bench reports (`bench --report`) in headless Chromium, driven by puppeteer-core
# (pinned in tests/web/package-lock.json): tests/web/report_test.mjs renders each saved run in
# tests/web/fixtures with `nexttok bench --report-from`, checks there is no console error and no
# request beyond the page, that each chart's drawn points equal the numbers of the JSON, and writes
# a screenshot of each report to a temporary directory (its path is printed). Fails if a check fails.
# Skips (exit 0) only when Chromium is absent and cannot be installed (scripts/deps.sh installs it).
# Env: NEXTTOK_BIN (default build/nexttok), CHROMIUM_BIN (default: chromium on the PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=tests/web

export NEXTTOK_BIN="${NEXTTOK_BIN:-$PWD/build/nexttok}"
[ -x "$NEXTTOK_BIN" ] || { echo "browser_test: $NEXTTOK_BIN not built (scripts/build.sh release)" >&2; exit 1; }
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "browser_test: '$tool' not found: install Node.js 18 or later with npm (scripts/deps.sh installs Debian's npm when absent)" >&2
    exit 1; }
done

if [ -n "${CHROMIUM_BIN:-}" ]; then
  [ -x "$CHROMIUM_BIN" ] || { echo "browser_test: CHROMIUM_BIN=$CHROMIUM_BIN is not an executable" >&2; exit 1; }
else
  if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
    echo "browser_test: chromium not found; installing Debian's chromium" >&2
    { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } >&2 || true
  fi
  CHROMIUM_BIN="$(command -v chromium || true)"
  if [ -z "$CHROMIUM_BIN" ]; then
    echo "browser_test: SKIP: chromium is not installed and could not be (apt-get install chromium, or set CHROMIUM_BIN)" >&2
    exit 0
  fi
fi
export CHROMIUM_BIN

echo "browser_test: npm ci in $dir" >&2
(cd "$dir" && timeout 300 npm ci --no-audit --no-fund --loglevel=error >&2)
timeout -k 10 300 node "$dir/report_test.mjs"
