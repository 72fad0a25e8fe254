// cli/cmd_quantize.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_quantize(int argc, char** argv) {
  CLI::App app{"quantize (not yet available)", "quantize"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("quantize", "not implemented in this build yet");
}

}  // namespace nt::cli
