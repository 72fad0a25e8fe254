// cli/cmd_pull.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_pull(int argc, char** argv) {
  CLI::App app{"pull (not yet available)", "pull"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("pull", "not implemented in this build yet");
}

}  // namespace nt::cli
