// cli/cmd_pull.cpp — `nexttok pull org/repo[:QUANT|/FILE.gguf]`: download a GGUF (or a multi-part
// set) from the Hugging Face Hub into the shared HF cache and print its local path.
// Must not know: HTTP or the cache layout (hub/hub.h does that).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/strings.h"
#include "hub/hub.h"

namespace nt::cli {

int cmd_pull(int argc, char** argv) {
  CLI::App app{"Download a GGUF from the Hugging Face Hub into the shared cache and print its path.\n"
               "  nexttok pull bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M\n"
               "Cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (shared with\n"
               "huggingface_hub and llama.cpp). Token: --token, $HF_TOKEN or the huggingface-cli login file.\n"
               "Endpoint: $HF_ENDPOINT (default https://huggingface.co). Offline: --offline or HF_HUB_OFFLINE=1.",
               "nexttok pull"};
  hub::PullOptions o;
  bool json_out = false;
  bool quiet = false;
  app.add_option("repo", o.spec, "org/repo:QUANT (e.g. Q4_K_M, case-insensitive), org/repo/FILE.gguf, or org/repo")
      ->required();
  app.add_option("--revision", o.revision, "branch, tag or commit (default: main)");
  app.add_option("--token", o.token, "Hugging Face access token (default: $HF_TOKEN)");
  app.add_flag("--offline", o.offline, "use the local cache only (like HF_HUB_OFFLINE=1)");
  app.add_option("--retries", o.max_retries, "resumed attempts after a cut transfer, 0 to 100 (default 3)");
  app.add_flag("-q,--quiet", quiet, "no progress on stderr");
  app.add_flag("--json", json_out, "print one JSON document (repo, files, revision, commit, path, bytes, sha256, cached)");
  if (int rc = parse_args(app, argc, argv, [&] { return check_range("--retries", o.max_retries, 0, 100); }); rc >= 0)
    return rc;
  o.progress = !quiet;

  auto r = hub::pull(o);
  if (!r.ok()) return fail("pull", r.error().message);
  if (json_out) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : r->files)
      files.push_back({{"file", f.file}, {"path", f.path}, {"bytes", f.bytes},
                       {"sha256", f.sha256.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.sha256)},
                       {"cached", f.cached}});
    const auto& first = r->files.front();
    nlohmann::json j = {
        {"repo", r->repo},
        {"file", first.file},
        {"files", files},
        {"revision", r->revision},
        {"commit", r->commit},
        {"path", r->path()},
        {"bytes", r->bytes()},
        {"sha256", first.sha256.empty() ? nlohmann::json(nullptr) : nlohmann::json(first.sha256)},
        {"cached", r->cached()},
        {"offline", r->offline},
    };
    std::puts(j.dump().c_str());
    return kExitOk;
  }
  if (!quiet) {
    std::string what = r->files.size() > 1 ? std::to_string(r->files.size()) + " parts, " : "";
    std::fprintf(stderr, "%s %s@%s (%s%s, commit %.12s)\n", r->cached() ? "cached:" : "pulled:", r->repo.c_str(),
                 r->revision.c_str(), what.c_str(), format_bytes(r->bytes()).c_str(), r->commit.c_str());
  }
  std::puts(r->path().c_str());
  return kExitOk;
}

}  // namespace nt::cli
