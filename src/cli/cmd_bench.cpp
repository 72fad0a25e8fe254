// cli/cmd_bench.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_bench(int argc, char** argv) {
  CLI::App app{"bench (not yet available)", "bench"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("bench", "not implemented in this build yet");
}

}  // namespace nt::cli
