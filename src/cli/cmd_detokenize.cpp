// cli/cmd_detokenize.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_detokenize(int argc, char** argv) {
  CLI::App app{"detokenize (not yet available)", "detokenize"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("detokenize", "not implemented in this build yet");
}

}  // namespace nt::cli
