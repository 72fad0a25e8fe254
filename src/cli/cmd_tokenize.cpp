// cli/cmd_tokenize.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_tokenize(int argc, char** argv) {
  CLI::App app{"tokenize (not yet available)", "tokenize"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("tokenize", "not implemented in this build yet");
}

}  // namespace nt::cli
