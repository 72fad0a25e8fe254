// cli/bench_server_process.h — a server that `bench --url --server-cmd` starts for a measurement:
// the command runs under /bin/sh -c in its own process group with its output kept in an unlinked
// temporary file (its tail goes into error messages); ready once GET /health answers 200; stopped
// with SIGTERM to the whole group, then SIGKILL after a grace period. While one runs, SIGINT and
// SIGTERM to the bench stop it too (a group of its own gets no Ctrl-C from the terminal).
// Must not know: scenarios, output formats.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cli/bench_url.h"
#include "core/result.h"

namespace nt::cli {

constexpr double kServerStopGraceS = 10;  // SIGTERM to SIGKILL

class ServerProcess {
 public:
  // Starts `command`; name ("A") is for messages. An error: the process could not be created.
  static Result<std::unique_ptr<ServerProcess>> start(const std::string& name, const std::string& command);
  ~ServerProcess();  // stops it
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Polls GET <url>/health until it answers 200, for at most timeout_s. An error (the server
  // exited, or never answered 200) names the last answer and ends with the tail of its output.
  Status wait_healthy(const ServerUrl& url, const std::string& api_key, double timeout_s);
  // How it ended when it exited by itself ("exit status 1", "signal 9"); nullopt while it runs.
  std::optional<std::string> exited();
  // SIGTERM to its process group, SIGKILL to the group when it has not ended after grace_s; waits
  // for the group to be gone. Returns how it ended (as exited()); a second call returns the same.
  std::string stop(double grace_s = kServerStopGraceS);
  // The last lines of its stdout and stderr, at most max_bytes, "(no output)" when it wrote none.
  std::string output_tail(size_t max_bytes = 1500) const;
  pid_t pid() const { return pid_; }

 private:
  ServerProcess(std::string name, pid_t pid, int output_fd)
      : name_(std::move(name)), pid_(pid), output_fd_(output_fd) {}
  std::string name_;
  pid_t pid_;
  int output_fd_;
  std::optional<std::string> ended_;  // set once the leader was reaped
};

}  // namespace nt::cli
