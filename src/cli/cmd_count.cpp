// cli/cmd_count.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_count(int argc, char** argv) {
  CLI::App app{"count (not yet available)", "count"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("count", "not implemented in this build yet");
}

}  // namespace nt::cli
