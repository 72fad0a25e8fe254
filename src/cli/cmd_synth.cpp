// cli/cmd_synth.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_synth(int argc, char** argv) {
  CLI::App app{"synth (not yet available)", "synth"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("synth", "not implemented in this build yet");
}

}  // namespace nt::cli
