// cli/bench_server_process.cpp — see bench_server_process.h.
#include "cli/bench_server_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "cli/sse_client.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

using Clock = std::chrono::steady_clock;

// The process group of the server running now (one at a time), for the signal handler.
std::atomic<pid_t> g_group{0};
struct sigaction g_old_int, g_old_term;

void on_stop_signal(int sig) {
  if (const pid_t g = g_group.load(); g > 0) ::kill(-g, SIGTERM);
  ::sigaction(sig, sig == SIGINT ? &g_old_int : &g_old_term, nullptr);
  ::raise(sig);
}

void watch_signals(pid_t group) {
  g_group = group;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
}

void unwatch_signals() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  g_group = 0;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return str_printf("exit status %d", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return str_printf("signal %d (%s)", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  return "an unknown status";
}

bool group_alive(pid_t group) { return ::kill(-group, 0) == 0 || errno == EPERM; }

// The child's side of start(): only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const char* command, int out_fd, int null_fd, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the bench killed outright: the shell gets SIGTERM
  if (::getppid() != parent) ::_exit(127);
  ::dup2(null_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(out_fd, 2);
#ifdef SYS_close_range
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
#else
  for (int fd = 3; fd < 4096; ++fd) ::close(fd);
#endif
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execl("/bin/sh", "sh", "-c", command, static_cast<char*>(nullptr));
  ::_exit(127);
}

}  // namespace

Result<std::unique_ptr<ServerProcess>> ServerProcess::start(const std::string& name, const std::string& command) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/nexttok-server-XXXXXX";
  const int out_fd = ::mkstemp(path.data());
  if (out_fd < 0)
    return make_error("cannot create a file for server %s's output: %s", name.c_str(), std::strerror(errno));
  ::unlink(path.c_str());
  ::fcntl(out_fd, F_SETFD, FD_CLOEXEC);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Orphans of the command's shell are reparented to this process, so stop() can reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(command.c_str(), out_fd, null_fd, parent);
  const int fork_errno = errno;
  if (null_fd >= 0) ::close(null_fd);
  if (pid < 0) {
    ::close(out_fd);
    return make_error("cannot start server %s: %s", name.c_str(), std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also here: the group must exist before a signal is sent to it
  watch_signals(pid);
  return std::unique_ptr<ServerProcess>(new ServerProcess(name, pid, out_fd));
}

ServerProcess::~ServerProcess() {
  stop();
  ::close(output_fd_);
}

std::optional<std::string> ServerProcess::exited() {
  if (ended_) return ended_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) ended_ = describe_status(status);
  return ended_;
}

Status ServerProcess::wait_healthy(const ServerUrl& url, const std::string& api_key, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  auto cli = make_client(url.scheme_host_port(), 2.0, api_key);
  const std::string health = url.base_path + "/health";
  std::string last = "no answer yet";
  for (;;) {
    if (auto how = exited())
      return make_error("server %s exited (%s) before GET %s/health answered 200; its output ends with:\n%s",
                        name_.c_str(), how->c_str(), url.display().c_str(), output_tail().c_str());
    httplib::Result r = cli->Get(health);
    if (r && r->status == 200) return {};
    last = r ? str_printf("HTTP %d", r->status) : describe_http_error(r.error());
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_until(std::min(deadline, Clock::now() + std::chrono::milliseconds(100)));
  }
  return make_error("server %s did not answer 200 at GET %s/health within %g s (--server-wait); the last answer: "
                    "%s; its output ends with:\n%s",
                    name_.c_str(), url.display().c_str(), timeout_s, last.c_str(), output_tail().c_str());
}

std::string ServerProcess::stop(double grace_s) {
  if (g_group == pid_) unwatch_signals();
  auto reap = [&] {  // the leader and any other member of the group that ended
    int status = 0;
    for (pid_t r; (r = ::waitpid(-pid_, &status, WNOHANG)) > 0;)
      if (r == pid_ && !ended_) ended_ = describe_status(status);
    if (!ended_) exited();
    return ended_.has_value() && !group_alive(pid_);
  };
  if (reap()) return *ended_;
  ::kill(-pid_, SIGTERM);
  const auto term_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(grace_s));
  while (!reap() && Clock::now() < term_deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!reap()) {
    ::kill(-pid_, SIGKILL);
    const auto kill_deadline = Clock::now() + std::chrono::seconds(5);
    while (!reap() && Clock::now() < kill_deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!ended_) {  // SIGKILL cannot be refused: only a process stuck in the kernel gets here
    int status = 0;
    if (::waitpid(pid_, &status, 0) == pid_) ended_ = describe_status(status);
    else ended_ = "an unknown status";
  }
  return *ended_;
}

std::string ServerProcess::output_tail(size_t max_bytes) const {
  struct stat st {};
  if (::fstat(output_fd_, &st) != 0 || st.st_size <= 0) return "(no output)";
  const off_t from = std::max<off_t>(0, st.st_size - static_cast<off_t>(max_bytes));
  std::string text(static_cast<size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(output_fd_, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (from > 0) {  // start at a whole line
    const size_t nl = text.find('\n');
    if (nl != std::string::npos && nl + 1 < text.size()) text.erase(0, nl + 1);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "(no output)" : text;
}

}  // namespace nt::cli
