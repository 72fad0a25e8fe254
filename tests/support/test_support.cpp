#include "support/test_support.h"

#include "core/check.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace nt::test {

std::string shared_path(const std::string& rel) {
  std::string base = NT_SHARED_DIR;
  if (const char* env = std::getenv("NEXTTOK_SHARED_DIR"); env && *env) base = env;
  return rel.empty() ? base : base + "/" + rel;
}

bool shared_available() {
  struct stat st {};
  return ::stat(shared_path("models").c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string nexttok_bin() { return NT_NEXTTOK_BIN; }

namespace {
// Every directory temp_dir() made, removed when the test process exits (NT_KEEP_TEST_TMP=1 keeps
// them for debugging). Tests write models of up to a few hundred MB there.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    if (std::getenv("NT_KEEP_TEST_TMP")) return;
    for (const std::string& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};
TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}
}  // namespace

long resident_kib(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool in = false;
  while (std::getline(f, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      in = addr >= lo && addr < hi;
      continue;
    }
    if (in && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
  }
  return -1;
}

const std::string& qwen35_f32_model() {
  static const std::string path = [] {
    const std::string p = temp_dir() + "/qwen35-f32.gguf";
    const CmdResult r = run_nexttok({"synth", "--arch", "qwen35", "--n-embd", "64", "--n-layer", "4", "--n-head", "2",
                                     "--n-head-kv", "1", "--head-dim", "48", "--n-ff", "128", "--rope-dims", "12",
                                     "--ssm-state", "16", "--ssm-groups", "2", "--ssm-heads", "4",
                                     "--full-attn-interval", "2", "-c", "1024", "--tie-embeddings", "--type", "f32",
                                     "--seed", "5", "--vocab", shared_path("vocab/ggml-vocab-llama-spm.gguf"), "-o", p});
    EXPECT_EQ(r.rc, 0) << r.err;
    return p;
  }();
  return path;
}

std::string temp_dir() {
  std::string tmpl = "/tmp/nexttok-test-XXXXXX";
  char* p = ::mkdtemp(tmpl.data());
  NT_CHECK(p != nullptr && "cannot create a temporary directory under /tmp");
  temp_dirs().dirs.emplace_back(p);
  return std::string(p);
}

CmdResult run_program(const std::vector<std::string>& argv, const std::string& stdin_data) {
  CmdResult r;
  int in_p[2], out_p[2], err_p[2];
  if (pipe(in_p) || pipe(out_p) || pipe(err_p)) return r;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_p[0], 0);
    dup2(out_p[1], 1);
    dup2(err_p[1], 2);
    close(in_p[0]); close(in_p[1]); close(out_p[0]); close(out_p[1]); close(err_p[0]); close(err_p[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in_p[0]); close(out_p[1]); close(err_p[1]);
  size_t written = 0;
  bool in_open = true;
  if (stdin_data.empty()) { close(in_p[1]); in_open = false; }
  else fcntl(in_p[1], F_SETFL, O_NONBLOCK);
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd fds[3];
    int n = 0;
    int io = -1, oo = -1, eo = -1;
    if (in_open) { io = n; fds[n++] = {in_p[1], POLLOUT, 0}; }
    if (out_open) { oo = n; fds[n++] = {out_p[0], POLLIN, 0}; }
    if (err_open) { eo = n; fds[n++] = {err_p[0], POLLIN, 0}; }
    if (poll(fds, static_cast<nfds_t>(n), -1) < 0) break;
    if (io >= 0 && fds[io].revents) {
      ssize_t w = write(in_p[1], stdin_data.data() + written, stdin_data.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 || written == stdin_data.size()) { close(in_p[1]); in_open = false; }
    }
    if (oo >= 0 && fds[oo].revents) {
      ssize_t k = read(out_p[0], buf, sizeof(buf));
      if (k > 0) r.out.append(buf, static_cast<size_t>(k)); else { close(out_p[0]); out_open = false; }
    }
    if (eo >= 0 && fds[eo].revents) {
      ssize_t k = read(err_p[0], buf, sizeof(buf));
      if (k > 0) r.err.append(buf, static_cast<size_t>(k)); else { close(err_p[0]); err_open = false; }
    }
  }
  if (in_open) close(in_p[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

CmdResult run_nexttok(const std::vector<std::string>& args, const std::string& stdin_data) {
  std::vector<std::string> argv{nexttok_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, stdin_data);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
}

}  // namespace nt::test
