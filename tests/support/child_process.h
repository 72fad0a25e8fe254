// tests/support/child_process.h — a child process the test controls while it runs: started with
// its output captured in the background, killed at a chosen moment, waited for with a deadline
// (a hang is a result, not a stuck test). Header-only: the CLI and hub tests both include it.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace nt::test {

// Time bounds are for a release build; sanitizer builds run several times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kChildSlowFactor = 5;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr double kChildSlowFactor = 5;
#else
constexpr double kChildSlowFactor = 1;
#endif
#else
constexpr double kChildSlowFactor = 1;
#endif

class Child {
 public:
  // Starts argv (argv[0] a path; no shell) with stdin from `stdin_path` ("" = /dev/null) and
  // stdout/stderr into files of `out_prefix` (read them with out()/err() after wait()).
  Child(const std::vector<std::string>& argv, const std::string& out_prefix, const std::string& stdin_path = "")
      : out_path_(out_prefix + ".out"), err_path_(out_prefix + ".err") {
    // everything the child needs is built before fork: the test may have other threads, and one
    // of them could hold the allocator's lock at the fork (the child would wait on it forever)
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const char* in_path = stdin_path.empty() ? "/dev/null" : stdin_path.c_str();
    start_ = std::chrono::steady_clock::now();
    pid_ = ::fork();
    if (pid_ == 0) {
      int in = ::open(in_path, O_RDONLY);
      int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) ::_exit(126);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (running()) kill_now();
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool running() { return pid_ > 0 && !reap(false); }
  // Seconds since start (until the exit once it has been seen).
  double seconds() const {
    auto end = done_ ? end_ : std::chrono::steady_clock::now();
    return std::chrono::duration<double>(end - start_).count();
  }

  // Waits up to `timeout_s`; true when the child exited (or was killed) by then.
  bool wait_for(double timeout_s) {
    const auto deadline = start_now() + std::chrono::duration<double>(timeout_s);
    while (!reap(false)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }
  // SIGKILL and reap.
  void kill_now() {
    if (pid_ <= 0 || done_) return;
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  bool exited() const { return done_ && WIFEXITED(status_); }
  bool killed() const { return done_ && WIFSIGNALED(status_); }
  // The exit code; 128 + signal when killed; -1 while running.
  int rc() const {
    if (!done_) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  std::string out() const { return slurp(out_path_); }
  std::string err() const { return slurp(err_path_); }

 private:
  static std::chrono::steady_clock::time_point start_now() { return std::chrono::steady_clock::now(); }
  bool reap(bool block) {
    if (done_) return true;
    if (pid_ <= 0) return true;
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, block ? 0 : WNOHANG);
    if (r == pid_) {
      done_ = true;
      status_ = st;
      end_ = std::chrono::steady_clock::now();
    }
    return done_;
  }
  static std::string slurp(const std::string& path) {
    std::string s;
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return s;
    char buf[65536];
    for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) s.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return s;
  }

  pid_t pid_ = -1;
  bool done_ = false;
  int status_ = 0;
  std::string out_path_, err_path_;
  std::chrono::steady_clock::time_point start_, end_;
};

}  // namespace nt::test
