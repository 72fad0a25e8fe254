// tests/support/test_support.h — helpers every test folder shares: where ../shared is, skipping
// cleanly without it, temporary directories, and running the real `nexttok` binary.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nt::test {

// Path of ../shared (may not exist); shared_path("models/x.gguf").
std::string shared_path(const std::string& rel = "");
bool shared_available();
std::string nexttok_bin();
// A fresh temporary directory for this test (removed at process exit is not guaranteed).
std::string temp_dir();
// Resident KiB of this process's mapping that contains p (from /proc/self/smaps); -1 when not found.
long resident_kib(const void* p);

struct CmdResult {
  int rc = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};
// Runs nexttok with args (no shell), feeding `stdin_data` on stdin.
CmdResult run_nexttok(const std::vector<std::string>& args, const std::string& stdin_data = "");
// The model of GoldenSynth.Qwen35_F32 (tests/golden/data/synth_models.txt): a 4-layer qwen35
// (DeltaNet and attention alternating, head_dim 48 vs n_embd / n_head 32), F32, llama-spm vocabulary.
// Written once per process by `nexttok synth`; its path. Needs ../shared (NT_REQUIRE_SHARED first).
const std::string& qwen35_f32_model();
// Runs any program with args (no shell).
CmdResult run_program(const std::vector<std::string>& argv, const std::string& stdin_data = "");

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& data);

}  // namespace nt::test

// Skip (with a message) when ../shared is absent; never pass vacuously.
#define NT_REQUIRE_SHARED()                                                           \
  do {                                                                                \
    if (!::nt::test::shared_available())                                              \
      GTEST_SKIP() << "../shared not found at " << ::nt::test::shared_path()          \
                   << "; skipping test that needs shared models/vocab/golden data";  \
  } while (0)
