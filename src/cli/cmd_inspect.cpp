// cli/cmd_inspect.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_inspect(int argc, char** argv) {
  CLI::App app{"inspect (not yet available)", "inspect"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("inspect", "not implemented in this build yet");
}

}  // namespace nt::cli
