// cli/cmd_check.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_check(int argc, char** argv) {
  CLI::App app{"check (not yet available)", "check"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("check", "not implemented in this build yet");
}

}  // namespace nt::cli
