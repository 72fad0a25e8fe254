// cli/cmd_chat.cpp — placeholder until its issue lands; replaced by the real command.
#include "cli/commands.h"
#include "cli/common.h"

namespace nt::cli {

int cmd_chat(int argc, char** argv) {
  CLI::App app{"chat (not yet available)", "chat"};
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  return fail("chat", "not implemented in this build yet");
}

}  // namespace nt::cli
