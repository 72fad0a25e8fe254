#!/usr/bin/env bash
# The test command (README): installs deps, builds, runs the whole suite, then the unit tests
# under ASan+UBSan, the engine's tests under TSan, then each libFuzzer target for a bounded time.
# Exits non-zero on any failure.
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    release build + tests only
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1
bash scripts/deps.sh
start=$(date +%s)
echo "== release build ==" >&2
bash scripts/build.sh release
echo "== tests (release) ==" >&2
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
echo "== OpenAI SDK against nexttok serve ==" >&2
bash scripts/sdk_test.sh
bash scripts/browser_test.sh  # the bench reports in headless Chromium (puppeteer-core)
[ $quick -eq 1 ] && exit 0
echo "== tests (ASan + UBSan) ==" >&2
bash scripts/build.sh asan
# Whole-model golden runs are covered by the release pass; under ASan they only cost time.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)" --timeout 900 -LE slow
echo "== engine and server tests (ThreadSanitizer) ==" >&2
bash scripts/build.sh tsan
TSAN_OPTIONS=halt_on_error=1:suppressions=scripts/tsan.supp build-tsan/tests/engine/test_engine
TSAN_OPTIONS=halt_on_error=1:suppressions=scripts/tsan.supp build-tsan/tests/server/test_server
echo "== fuzzing ==" >&2
bash scripts/build.sh fuzz
bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"
echo "== all tests passed in $(( $(date +%s) - start )) s ==" >&2
