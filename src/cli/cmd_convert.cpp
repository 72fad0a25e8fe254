// cli/cmd_convert.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_convert(int argc, char** argv) {
  CLI::App app{"convert (not yet available)", "convert"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("convert", "not implemented in this build yet");
}

}  // namespace nt::cli
