// hub/hub.h — getting GGUF models from the Hugging Face Hub into the shared HF cache:
// `nexttok pull` and `-hf org/repo:QUANT`. Owns: the Hub's HTTP API (model info / file listing,
// resolve URLs and their X-Linked-Etag / X-Linked-Size / X-Repo-Commit headers), the token and
// endpoint from the environment, resumable verified downloads, offline use of the cache.
// Must not know: the CLI's flags and output formats, what the model is used for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "hub/http.h"

namespace nt::hub {

struct PullOptions {
  std::string spec;                 // org/repo[:QUANT|/FILE.gguf]
  std::string revision = "main";    // branch, tag or commit
  std::string token;                // empty: $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN, then the token file
  std::string endpoint;             // empty: $HF_ENDPOINT, else https://huggingface.co
  std::string cache_dir;            // empty: hub_cache_dir()
  bool offline = false;             // also on when $HF_HUB_OFFLINE is 1/true/yes/on
  int max_retries = 3;              // resumed attempts after a transfer is cut
  bool progress = true;             // progress and notes on stderr
  HttpOptions http;                 // timeouts (token is filled from the fields above)
};

struct PulledFile {
  std::string file;    // path inside the repo
  std::string path;    // local path (the snapshot entry)
  std::string sha256;  // LFS sha256 (the blob name) or "" when unknown
  uint64_t bytes = 0;
  bool cached = false;  // was already there: nothing was downloaded
};

struct PullResult {
  std::string repo, revision, commit;
  std::vector<PulledFile> files;  // multi-part sets: every part, first part first
  bool offline = false;           // answered from the cache without asking the Hub
  const std::string& path() const { return files.front().path; }  // what to open
  uint64_t bytes() const;
  bool cached() const;            // every file was already there
};

// Resolves the spec, downloads what is missing (resuming partial files), verifies size and sha256,
// links the snapshot, updates refs/<revision> and checks every file opens as a GGUF.
Result<PullResult> pull(const PullOptions& opts);

// Environment.
std::string hub_endpoint();  // $HF_ENDPOINT or https://huggingface.co, no trailing slash
std::string hub_token();     // $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN, else $HF_TOKEN_PATH / $HF_HOME/token file
bool hub_offline_env();      // $HF_HUB_OFFLINE truthy

// Turns a failed Hub answer into a message a user can act on (401/403 gated or private: set
// HF_TOKEN; 404 not found; 429; 5xx; network errors). `what` names the thing asked for.
std::string describe_http_failure(const HttpResponse& r, const std::string& repo, const std::string& what,
                                  bool have_token, const std::string& endpoint);

}  // namespace nt::hub
