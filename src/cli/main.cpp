// nexttok — one executable, many subcommands (see cli/commands.h).
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "model/arch_table.h"

using nt::cli::kCommands;

static void print_usage(FILE* out) {
  std::fputs(
      "nexttok — a CPU-first LLM inference engine and toolkit\n\n"
      "usage: nexttok <command> [options]   (nexttok <command> --help for its options)\n\ncommands:\n",
      out);
  for (const auto& c : kCommands) std::fprintf(out, "  %-11s %s\n", c.name, c.summary);
  std::fprintf(out, "\nmodel architectures (GGUF general.architecture): %s\n", nt::supported_arch_names().c_str());
  std::fputs("(qwen35 keeps a recurrent state per sequence instead of a KV cache in 3 of 4 layers: the prefix\n"
             "cache resumes a prompt at the latest state snapshot inside the shared prefix, taken at each prompt's\n"
             "end and every --state-snapshot-every tokens; the rest is recomputed)\n", out);
  std::fputs("\nWithout -m, commands use the default model (models/stories15M-q8_0.gguf, made by "
             "scripts/setup.sh)\nor $NEXTTOK_MODEL.\n", out);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    print_usage(stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::puts("nexttok 0.1.0");
    return 0;
  }
  for (const auto& c : kCommands)
    if (cmd == c.name) return c.fn(argc - 1, argv + 1);
  std::fprintf(stderr, "nexttok: unknown command '%s'\n\n", cmd.c_str());
  print_usage(stderr);
  return 2;
}
