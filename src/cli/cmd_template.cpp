// cli/cmd_template.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_template(int argc, char** argv) {
  CLI::App app{"template (not yet available)", "template"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("template", "not implemented in this build yet");
}

}  // namespace nt::cli
