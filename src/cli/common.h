// cli/common.h — what every subcommand shares: flag parsing with the exit-code convention,
// llama.cpp-style short flags, the default model, and output helpers.
// Must not know: any one command's logic.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"

namespace nt::cli {

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

// Rewrites llama.cpp's multi-letter single-dash flags (-ctk, -ctv, -hf, -ngl...) to their long
// forms so CLI11 accepts them. Returns the rewritten argument list (argv[0] kept).
std::vector<std::string> normalize_args(int argc, char** argv);

// Checks of flag values that run right after parsing, before any file is read (a model can take
// minutes to load); an error is a usage error.
using FlagCheck = std::function<Status()>;

// Parses args into app (named "nexttok CMD"), then runs `check`. Returns -1 to continue, otherwise
// the exit code to return now (0 after --help, 2 after a usage error, with the message on stderr).
int parse_args(CLI::App& app, int argc, char** argv, const FlagCheck& check = {});

// "-b must be between 1 and 65536 (got 0)" when value is outside [lo, hi].
Status check_range(const char* flag, int64_t value, int64_t lo, int64_t hi);
// -t N: 0 means all physical cores; more than the machine's cores is allowed but warned about.
Status check_threads(const char* flag, int64_t n);
// A checked -t value as a thread count (0 -> the physical cores).
int resolve_threads(int n);
// "1 thread", "2 threads".
std::string plural(int64_t n, const char* one, const char* many);

// The model options every model-taking command shares: -m FILE and -hf org/repo[:QUANT].
struct ModelArgs {
  std::string model;    // -m, --model
  std::string hf_repo;  // -hf, --hf-repo (resolved through the hub layer)
};
void add_model_options(CLI::App& app, ModelArgs& args);
// Resolves ModelArgs to a local GGUF path: -hf pulls (or finds in the HF cache), -m is checked to
// exist, neither -> the default model.
Result<std::string> resolve_model(const ModelArgs& args);

// The model used when -m is not given: $NEXTTOK_MODEL, else models/stories15M-q8_0.gguf of the
// project this executable was built from (found from the executable's own path).
std::string default_model_path();
// Resolves a -m value (empty -> default model). Later: `-hf org/repo:QUANT` resolution.
Result<std::string> resolve_model(const std::string& m);

// Prints "nexttok <cmd>: <message>" to stderr and returns kExitBadInput.
int fail(const char* cmd, const std::string& message);

// True when stdout/stderr is a terminal (colors, progress bars).
bool stdout_is_tty();
bool stderr_is_tty();

}  // namespace nt::cli
