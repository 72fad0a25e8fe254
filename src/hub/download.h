// hub/download.h — one blob from a URL into the cache: resumable (Range from the size of
// blobs/<sha>.incomplete), retried after cuts, size- and sha256-checked, moved into place only when
// verified. Owns: the .incomplete file's life. Must not know: the Hub's API, GGUF, the CLI.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"
#include "hub/cache.h"
#include "hub/http.h"

namespace nt::hub {

struct BlobRequest {
  std::string url;             // where to GET it (redirects followed)
  std::string label;           // file name for messages and progress
  std::string blob;            // blob name: the LFS sha256 (checked) or another ETag (not checked)
  uint64_t expected_size = 0;  // 0: unknown
  std::string repo, endpoint;  // for error messages
  bool have_token = false;
};

struct BlobOptions {
  int max_retries = 3;  // further attempts after a cut transfer (each resumes where it stopped)
  bool progress = true;
  bool tty = false;
};

// Downloads req into cache.blob_path(req.blob) and returns the sha256 of the bytes. A checksum or
// size mismatch deletes the partial file and says so.
Result<std::string> download_blob(const HttpClient& http, const RepoCache& cache, const BlobRequest& req,
                                  const BlobOptions& opts);

}  // namespace nt::hub
