#!/usr/bin/env bash
# Configures and builds one flavour of nexttok.
#   scripts/build.sh [release|asan|tsan|fuzz]   -> build/, build-asan/, build-tsan/, build-fuzz/
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=$(nproc)
target=()
case "$flavour" in
  release) dir=build; args=(-DCMAKE_BUILD_TYPE=Release) ;;
  # -O1 -g1 (line tables: ASan/UBSan reports keep file:line): a fresh build in 8 min instead of 13.6
  # with -O2 -g on 2 cores, and the same ctest time (83 s).
  # The CLI layer and the test code at -O0 (NEXTTOK_COLD_OPT): their files took 22-25 s each at -O1
  # under ASan+UBSan, about 15 s at -O0.
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTTOK_SANITIZE=ON -DNEXTTOK_COLD_OPT=-O0
                             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG") ;;
  # ThreadSanitizer for the threaded code: the engine's tests (submit / cancel / stats from other
  # threads while the engine thread steps) and the server's (HTTP threads, the engine thread).
  # The tests that run the `nexttok` executable use the release build's (built first by test.sh),
  # so the TSan build does not build the CLI.
  tsan) dir=build-tsan; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTTOK_COLD_OPT=-O0
                             "-DNEXTTOK_TEST_BIN=$PWD/build/nexttok"
                             "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG -fsanitize=thread"
                             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG -fsanitize=thread"
                             -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread)
        target=(--target test_engine test_server) ;;
  fuzz) dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEXTTOK_FUZZ=ON
                             -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
        target=(--target fuzz_all) ;;
  *) echo "usage: scripts/build.sh [release|asan|tsan|fuzz]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
cmake --build "$dir" -j "$jobs" "${target[@]}"
