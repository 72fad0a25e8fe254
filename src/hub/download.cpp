// hub/download.cpp — resumable, verified blob download.
#include "hub/download.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/strings.h"
#include "hub/hub.h"
#include "hub/progress.h"
#include "hub/sha256.h"

namespace nt::hub {
namespace {

// Hashes the first `n` bytes already in `f` (a resumed partial file).
Status hash_prefix(FILE* f, uint64_t n, Sha256& h, const std::string& path) {
  std::vector<char> buf(1 << 20);
  std::rewind(f);
  uint64_t left = n;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
    size_t got = std::fread(buf.data(), 1, want, f);
    if (got != want) return Error{path + ": read error while checking the partial download"};
    h.update(buf.data(), got);
    left -= got;
  }
  return {};
}

// "bytes 100-199/200" -> 100 (or -1).
int64_t content_range_start(const std::string& v) {
  size_t p = v.find("bytes ");
  if (p == std::string::npos) return -1;
  return std::strtoll(v.c_str() + p + 6, nullptr, 10);
}

}  // namespace

Result<std::string> download_blob(const HttpClient& http, const RepoCache& cache, const BlobRequest& req,
                                  const BlobOptions& opts) {
  const std::string tmp = cache.incomplete_path(req.blob);
  const std::string final_path = cache.blob_path(req.blob);
  NT_TRY(make_dirs(final_path.substr(0, final_path.rfind('/'))));
  const bool verify_sha = is_sha256_hex(req.blob);
  const std::string want_sha = to_lower(req.blob);

  FILE* f = std::fopen(tmp.c_str(), "a+b");
  if (!f) return Error{"cannot write " + tmp + ": " + std::strerror(errno)};
  std::fseek(f, 0, SEEK_END);
  uint64_t have = static_cast<uint64_t>(std::ftell(f));
  Sha256 hasher;
  if (req.expected_size && have > req.expected_size) {  // junk: start over
    if (::ftruncate(fileno(f), 0) != 0) { std::fclose(f); return Error{"cannot truncate " + tmp}; }
    have = 0;
  }
  if (req.expected_size > have) {  // refuse early rather than fail near the end
    struct statvfs vfs {};
    if (::statvfs(final_path.substr(0, final_path.rfind('/')).c_str(), &vfs) == 0) {
      uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
      uint64_t need = req.expected_size - have;
      if (free_bytes < need) {
        std::fclose(f);
        return Error{"not enough disk space for " + req.label + ": it needs " + format_bytes(need) + " more, " +
                     format_bytes(free_bytes) + " is free under " + cache.dir() +
                     " (set HF_HUB_CACHE to use another disk)"};
      }
    }
  }
  if (have > 0) {
    if (opts.progress) std::fprintf(stderr, "resuming %s from %s\n", req.label.c_str(), format_bytes(have).c_str());
    Status st = hash_prefix(f, have, hasher, tmp);
    if (!st.ok()) { std::fclose(f); return st.error(); }
  }
  std::fseek(f, 0, SEEK_END);

  Progress prog(req.label, req.expected_size, have, opts.progress, opts.tty);
  std::string failure;
  bool write_error = false;
  bool done = false;
  for (int attempt = 0; attempt <= opts.max_retries && !done; ++attempt) {
    if (req.expected_size && have == req.expected_size) { done = true; break; }
    uint64_t start = have;
    std::string bad_range;
    StreamSink sink;
    sink.on_start = [&](const HttpResponse& r) {
      if (r.status == 206) {
        int64_t s = content_range_start(r.header("content-range"));
        if (s != static_cast<int64_t>(start)) {
          bad_range = "the server answered range " + r.header("content-range") + " to a request from byte " +
                      std::to_string(start);
          return false;
        }
      } else if (r.status >= 200 && r.status < 300 && start > 0) {
        // The server ignored Range and sends everything: start the file over.
        if (::ftruncate(fileno(f), 0) != 0) return false;
        std::fseek(f, 0, SEEK_SET);
        hasher = Sha256();
        have = 0;
      }
      return true;
    };
    sink.on_data = [&](const char* d, size_t n) {
      if (std::fwrite(d, 1, n, f) != n) { write_error = true; return false; }
      hasher.update(d, n);
      have += n;
      return true;
    };
    sink.on_progress = [&](uint64_t, uint64_t) { prog.update(have); };
    HttpResponse r = http.stream(req.url, start, sink);
    std::fflush(f);
    if (write_error) { failure = "cannot write " + tmp + ": " + std::strerror(errno) + " (disk full?)"; break; }
    if (!bad_range.empty()) {  // inconsistent server: drop the partial and try once more from zero
      if (::ftruncate(fileno(f), 0) != 0) break;
      std::fseek(f, 0, SEEK_SET);
      hasher = Sha256();
      have = 0;
      failure = bad_range;
      continue;
    }
    if (r.ok_transport() && r.status == 416 && req.expected_size && have >= req.expected_size) { done = true; break; }
    if (r.ok_transport() && !r.ok()) {
      failure = describe_http_failure(r, req.repo, req.label, req.have_token, req.endpoint);
      break;  // an HTTP refusal does not improve by retrying
    }
    if (!r.ok_transport()) {
      failure = r.transport_error;
      if (!r.partial && have == start) break;  // nothing arrived: connection-level failure
      if (opts.progress && attempt < opts.max_retries)
        std::fprintf(stderr, "\n%s: %s; resuming at %s\n", req.label.c_str(), r.transport_error.c_str(),
                     format_bytes(have).c_str());
      continue;
    }
    if (req.expected_size && have < req.expected_size) {
      failure = "the transfer ended early (" + std::to_string(have) + " of " + std::to_string(req.expected_size) + " bytes)";
      continue;
    }
    done = true;
  }
  std::fclose(f);
  prog.finish(done);
  if (!done)
    return Error{"downloading " + req.label + " failed: " + failure + "; the partial file " + tmp +
                 " is kept: run the same command again to resume"};

  if (req.expected_size && have != req.expected_size) {
    ::unlink(tmp.c_str());
    return Error{"downloading " + req.label + " failed: got " + std::to_string(have) + " bytes, expected " +
                 std::to_string(req.expected_size) + "; the partial file was deleted: run the command again"};
  }
  std::string got_sha = hasher.hex_digest();
  if (verify_sha && got_sha != want_sha) {
    ::unlink(tmp.c_str());
    return Error{"checksum mismatch for " + req.label + ": expected sha256 " + want_sha + ", got " + got_sha +
                 "; the corrupted partial file was deleted: run the command again to download it afresh"};
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0)
    return Error{"cannot move " + tmp + " to " + final_path + ": " + std::strerror(errno)};
  return got_sha;
}

}  // namespace nt::hub
