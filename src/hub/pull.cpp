// hub/pull.cpp — `pull`: list the repo, pick the GGUF(s), fetch what the cache lacks, link the
// snapshot, record the ref, validate as GGUF; or answer from the cache alone when offline.
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "gguf/gguf.h"
#include "hub/cache.h"
#include "hub/download.h"
#include "hub/hub.h"
#include "hub/repo_spec.h"
#include "hub/sha256.h"

namespace nt::hub {
namespace {

std::string strip_etag(std::string e) {
  if (starts_with(e, "W/")) e = e.substr(2);
  if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
  return e;
}

bool safe_blob_name(const std::string& b) {
  if (b.empty() || b.size() > 128) return false;
  for (char c : b)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

Status check_gguf(const std::string& path, const std::string& file) {
  auto g = GgufFile::open(path);
  if (!g.ok()) return Error{file + " is not a usable GGUF file: " + g.error().message};
  return {};
}

// The cache alone: refs/<rev> -> snapshot -> selected files.
Result<PullResult> from_cache(const RepoSpec& spec, const std::string& rev, const RepoCache& cache) {
  if (!path_exists(cache.dir()))
    return Error{spec.repo + " is not in the cache (" + cache.dir() + " does not exist)"};
  auto commit = cache.resolve_revision(rev);
  if (!commit.ok()) return Error{spec.repo + ": " + commit.error().message};
  auto files = select_gguf_files(spec, cache.snapshot_files(*commit));
  if (!files.ok()) return Error{"in the cached snapshot " + *commit + ": " + files.error().message};
  PullResult r;
  r.repo = spec.repo;
  r.revision = rev;
  r.commit = *commit;
  r.offline = true;
  for (const auto& f : *files) {
    PulledFile pf;
    pf.file = f;
    pf.path = cache.snapshot_path(*commit, f);
    std::string blob = cache.snapshot_blob(*commit, f);
    pf.sha256 = is_sha256_hex(blob) ? to_lower(blob) : "";
    pf.bytes = static_cast<uint64_t>(file_size_or(pf.path, 0));
    pf.cached = true;
    NT_TRY(check_gguf(pf.path, f));
    r.files.push_back(pf);
  }
  return r;
}

struct Listing {
  std::string commit;
  std::vector<std::string> files;
};

Result<Listing> list_repo(const HttpClient& http, const std::string& endpoint, const RepoSpec& spec,
                          const std::string& rev, bool have_token, bool* network_error) {
  std::string url = endpoint + "/api/models/" + spec.repo;
  if (rev != "main") url += "/revision/" + url_encode_path(rev, false);
  HttpResponse r = http.get(url);
  *network_error = !r.ok_transport();
  if (!r.ok()) return Error{describe_http_failure(r, spec.repo, spec.repo + "@" + rev, have_token, endpoint)};
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"the Hub's answer for " + url + " is not JSON"};
  Listing l;
  if (j.contains("sha") && j["sha"].is_string()) l.commit = j["sha"].get<std::string>();
  if (j.contains("siblings") && j["siblings"].is_array())
    for (const auto& s : j["siblings"])
      if (s.is_object() && s.contains("rfilename") && s["rfilename"].is_string())
        l.files.push_back(s["rfilename"].get<std::string>());
  if (!j.contains("siblings")) return Error{"the Hub's answer for " + url + " has no file list (siblings)"};
  return l;
}

struct FileMeta {
  std::string blob, commit;
  uint64_t size = 0;
};

Result<FileMeta> file_meta(const HttpClient& http, const std::string& url, const RepoSpec& spec,
                           const std::string& file, bool have_token, const std::string& endpoint) {
  HttpResponse r = http.head(url, false);
  // A redirect without the Hub's file headers (a renamed repo): follow it to the real answer.
  if (r.ok_transport() && r.status >= 300 && r.status < 400 && r.header("x-linked-etag").empty() &&
      r.header("etag").empty())
    r = http.head(url, true);
  if (!r.ok_transport() || r.status >= 400 || r.status < 200)
    return Error{describe_http_failure(r, spec.repo, file + " in " + spec.repo, have_token, endpoint)};
  FileMeta m;
  m.blob = strip_etag(r.header("x-linked-etag"));
  if (m.blob.empty()) m.blob = strip_etag(r.header("etag"));
  m.commit = r.header("x-repo-commit");
  std::string size = r.header("x-linked-size");
  if (size.empty() && r.status < 300) size = r.header("content-length");
  m.size = size.empty() ? 0 : std::strtoull(size.c_str(), nullptr, 10);
  if (!safe_blob_name(m.blob))
    return Error{"the Hub gave no usable ETag for " + file + " in " + spec.repo + " (" + url + ")"};
  return m;
}

}  // namespace

uint64_t PullResult::bytes() const {
  uint64_t n = 0;
  for (const auto& f : files) n += f.bytes;
  return n;
}

bool PullResult::cached() const {
  for (const auto& f : files)
    if (!f.cached) return false;
  return true;
}

Result<PullResult> pull(const PullOptions& opts) {
  auto spec = parse_repo_spec(opts.spec);
  if (!spec.ok()) return spec.error();
  const std::string rev = opts.revision.empty() ? "main" : opts.revision;
  if (rev.find("..") != std::string::npos || starts_with(rev, "/"))
    return Error{"bad revision '" + rev + "'"};
  RepoCache cache(opts.cache_dir.empty() ? hub_cache_dir() : opts.cache_dir, spec->repo);
  const bool offline = opts.offline || hub_offline_env();
  if (offline) {
    auto r = from_cache(*spec, rev, cache);
    if (!r.ok())
      return Error{"offline mode (HF_HUB_OFFLINE=1 or --offline): " + r.error().message +
                   "\nfetch it once while online with `nexttok pull " + opts.spec + "`"};
    return r;
  }
  // A commit id with everything cached needs no network at all.
  if (is_commit_hash(rev))
    if (auto r = from_cache(*spec, rev, cache); r.ok()) return r;

  const std::string endpoint = opts.endpoint.empty() ? hub_endpoint() : opts.endpoint;
  HttpOptions hopts = opts.http;
  hopts.token = opts.token.empty() ? hub_token() : opts.token;
  const bool have_token = !hopts.token.empty();
  HttpClient http(hopts);

  bool network_error = false;
  auto listing = list_repo(http, endpoint, *spec, rev, have_token, &network_error);
  if (!listing.ok()) {
    if (network_error) {  // the Hub is unreachable: a cached copy is better than nothing
      if (auto r = from_cache(*spec, rev, cache); r.ok()) {
        if (opts.progress)
          std::fprintf(stderr, "note: cannot reach %s (%s); using the cached copy of %s\n", endpoint.c_str(),
                       listing.error().message.c_str(), spec->repo.c_str());
        return r;
      }
    }
    return listing.error();
  }
  auto files = select_gguf_files(*spec, listing->files);
  if (!files.ok()) return files.error();

  PullResult res;
  res.repo = spec->repo;
  res.revision = rev;
  res.commit = listing->commit;
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  for (const auto& file : *files) {
    PulledFile pf;
    pf.file = file;
    // Already in the snapshot of this very commit: nothing to ask.
    if (is_commit_hash(res.commit) && path_exists(cache.snapshot_path(res.commit, file))) {
      pf.path = cache.snapshot_path(res.commit, file);
      std::string blob = cache.snapshot_blob(res.commit, file);
      pf.sha256 = is_sha256_hex(blob) ? to_lower(blob) : "";
      pf.bytes = static_cast<uint64_t>(file_size_or(pf.path, 0));
      pf.cached = true;
      res.files.push_back(pf);
      continue;
    }
    const std::string at = res.commit.empty() ? rev : res.commit;
    const std::string url = endpoint + "/" + spec->repo + "/resolve/" + url_encode_path(at, false) + "/" +
                            url_encode_path(file);
    auto meta = file_meta(http, url, *spec, file, have_token, endpoint);
    if (!meta.ok()) return meta.error();
    if (res.commit.empty()) res.commit = meta->commit;
    if (!is_commit_hash(res.commit)) return Error{"the Hub did not say which commit " + spec->repo + "@" + rev + " is"};
    const std::string blob_path = cache.blob_path(meta->blob);
    int64_t have = file_size_or(blob_path, -1);
    if (have < 0 || (meta->size && static_cast<uint64_t>(have) != meta->size)) {
      FileLock lock;
      NT_TRY(lock.acquire(cache.lock_path(meta->blob), [&] {
        if (opts.progress) std::fprintf(stderr, "waiting for another process downloading %s...\n", file.c_str());
      }));
      have = file_size_or(blob_path, -1);  // it may have finished while we waited
      if (have < 0 || (meta->size && static_cast<uint64_t>(have) != meta->size)) {
        BlobRequest req{url, file, meta->blob, meta->size, spec->repo, endpoint, have_token};
        BlobOptions bo{opts.max_retries, opts.progress, tty};
        auto sha = download_blob(http, cache, req, bo);
        if (!sha.ok()) return sha.error();
        pf.sha256 = *sha;
      } else {
        pf.cached = true;
      }
    } else {
      pf.cached = true;
    }
    if (pf.sha256.empty() && is_sha256_hex(meta->blob)) pf.sha256 = to_lower(meta->blob);
    NT_TRY(cache.link_snapshot(res.commit, file, meta->blob));
    pf.path = cache.snapshot_path(res.commit, file);
    pf.bytes = static_cast<uint64_t>(file_size_or(pf.path, 0));
    res.files.push_back(pf);
  }
  if (rev != res.commit) NT_TRY(cache.write_ref(rev, res.commit));
  for (const auto& f : res.files) NT_TRY(check_gguf(f.path, f.file));
  return res;
}

}  // namespace nt::hub
