#include "cli/common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "core/strings.h"
#include "core/thread_pool.h"
#include "hub/hub.h"

namespace nt::cli {

std::vector<std::string> normalize_args(int argc, char** argv) {
  static const std::map<std::string, std::string> kLong = {
      {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"}, {"-hf", "--hf-repo"},
      {"-hff", "--hf-file"},      {"-ngl", "--n-gpu-layers"}, {"-fa", "--flash-attn"},
      {"-tb", "--threads-batch"}, {"-ub", "--ubatch-size"}, {"-np", "--parallel"},
  };
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(argc));
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    auto it = kLong.find(a);
    out.push_back(i > 0 && it != kLong.end() ? it->second : a);
  }
  return out;
}

int parse_args(CLI::App& app, int argc, char** argv, const FlagCheck& check) {
  std::vector<std::string> args = normalize_args(argc, argv);
  std::vector<std::string> rev(args.rbegin(), args.rend() - 1);  // CLI11 takes reversed args
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", app.get_name().c_str(), e.what(),
                 app.get_name().c_str());
    return kExitUsage;
  }
  if (check) {
    if (Status st = check(); !st) {
      std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", app.get_name().c_str(),
                   st.error().message.c_str(), app.get_name().c_str());
      return kExitUsage;
    }
  }
  return -1;
}

Status check_range(const char* flag, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return {};
  return make_error("%s must be between %lld and %lld (got %lld)", flag, static_cast<long long>(lo),
                    static_cast<long long>(hi), static_cast<long long>(value));
}

Status check_threads(const char* flag, int64_t n) {
  if (n < 0 || n > 1024)
    return make_error("%s must be between 0 (all physical cores) and 1024 (got %lld)", flag, static_cast<long long>(n));
  const int64_t cores = std::thread::hardware_concurrency();
  if (cores > 0 && n > cores)
    std::fprintf(stderr, "warning: %s %lld is more than the %lld logical cores of this machine; threads will "
                 "share cores and run slower\n", flag, static_cast<long long>(n), static_cast<long long>(cores));
  return {};
}

int resolve_threads(int n) { return n == 0 ? ThreadPool::default_threads() : n; }

std::string plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

static bool file_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string default_model_path() {
  if (const char* env = std::getenv("NEXTTOK_MODEL"); env && *env) return env;
  const char* rel = "models/stories15M-q8_0.gguf";
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = '\0';
    std::string exe(buf);
    std::string dir = exe.substr(0, exe.rfind('/'));
    // build/nexttok -> <project>/models/..., printed without the "build/.." (the folder is
    // resolved, not the file, which may be a link)
    std::string cand = dir + "/../" + rel;
    char real[PATH_MAX];
    if (file_exists(cand) && ::realpath((dir + "/..").c_str(), real)) return std::string(real) + "/" + rel;
    if (file_exists(cand)) return cand;
  }
#ifdef NEXTTOK_SOURCE_DIR
  std::string src = std::string(NEXTTOK_SOURCE_DIR) + "/" + rel;
  if (file_exists(src)) return src;
#endif
  return rel;
}

Result<std::string> resolve_model(const std::string& m) {
  std::string path = m.empty() ? default_model_path() : m;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (m.empty())
      return Error{"no model given and the default model " + path +
                   " does not exist; run scripts/setup.sh or pass -m MODEL.gguf"};
    return Error{path + ": no such file"};
  }
  if (S_ISDIR(st.st_mode)) return Error{path + ": is a directory (give the model's .gguf file)"};
  if (!S_ISREG(st.st_mode)) return Error{path + ": not a regular file"};
  return path;
}

void add_model_options(CLI::App& app, ModelArgs& args) {
  app.add_option("-m,--model", args.model, "model file (GGUF); default: the default model");
  app.add_option("--hf-repo", args.hf_repo, "-hf org/repo[:QUANT|/FILE.gguf]: model from the Hugging Face Hub");
}

Result<std::string> resolve_model(const ModelArgs& args) {
  if (!args.hf_repo.empty()) {
    if (!args.model.empty()) return Error{"give either -m or -hf, not both"};
    // Pulls into the HF cache when missing (progress on stderr); HF_HUB_OFFLINE=1 uses the cache only.
    hub::PullOptions o;
    o.spec = args.hf_repo;
    auto r = hub::pull(o);
    if (!r.ok()) return Error{"-hf " + args.hf_repo + ": " + r.error().message};
    return r->path();
  }
  return resolve_model(args.model);
}

int fail(const char* cmd, const std::string& message) {
  std::fprintf(stderr, "nexttok %s: %s\n", cmd, message.c_str());
  return kExitBadInput;
}

bool stdout_is_tty() { return ::isatty(STDOUT_FILENO) == 1; }
bool stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace nt::cli
