// cli/cmd_run.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_run(int argc, char** argv) {
  CLI::App app{"run (not yet available)", "run"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("run", "not implemented in this build yet");
}

}  // namespace nt::cli
