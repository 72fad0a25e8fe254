// tests/hub/fake_hub.h — a small Hugging Face Hub served on 127.0.0.1 (ephemeral port) by the test
// itself with cpp-httplib: the model-info API (siblings + sha), resolve URLs answering 302 to a blob
// URL with ETag / X-Linked-Etag / X-Linked-Size / X-Repo-Commit, blob downloads with Range, gated
// repos (401 without the token), and knobs to cut or corrupt a transfer. Also tiny valid GGUF bytes.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace nt::test {

// A valid GGUF (v3) whose metadata carries `name`, with one F32 tensor of n_floats values.
std::string make_tiny_gguf(const std::string& name, size_t n_floats = 4096);

// Points the Hub client of `nexttok` child processes at `endpoint`, with a fresh HF_HOME (returned, its
// cache under /cache) and no token, offline switch or proxy from the caller's environment.
std::string isolate_hub_env(const std::string& endpoint);
// SHA-256 hex by OpenSSL: an oracle independent of hub/sha256.
std::string sha256_oracle(const std::string& data);

struct FakeFile {
  std::string name;  // path in the repo
  std::string data;
  bool lfs = true;   // LFS files redirect to /cdn/<sha256>; others are answered directly
};

struct FakeRepo {
  std::string id;      // org/name
  std::string commit;  // 40 hex digits
  std::vector<FakeFile> files;
  bool gated = false;  // resolve needs "Authorization: Bearer <FakeHub::kToken>"
};

class FakeHub {
 public:
  static constexpr const char* kToken = "hf_test_token";
  FakeHub();
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  void add_repo(const FakeRepo& repo);
  std::string endpoint() const;  // http://127.0.0.1:<port>

  // Knobs (read by the server thread).
  std::atomic<int> cut_downloads{0};     // this many next blob GETs stop after cut_at bytes
  std::atomic<size_t> cut_at{0};
  std::atomic<int> corrupt_downloads{0};  // this many next blob GETs flip one byte
  std::atomic<bool> down{false};          // answer every request with 503
  std::atomic<int> chunk_delay_us{0};     // pause before each 4 KiB of a blob (a slow download)

  // Records.
  std::atomic<int> api_calls{0};
  std::atomic<int> head_calls{0};
  std::atomic<int> blob_gets{0};
  std::vector<std::string> ranges() const;  // Range header of each blob GET ("" when none)

 private:
  const FakeFile* find_file(const std::string& repo, const std::string& rev, const std::string& file,
                            const FakeRepo** out_repo) const;
  std::unique_ptr<httplib::Server> srv_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, FakeRepo> repos_;
  std::map<std::string, std::string> blobs_;  // sha256 -> data
  std::vector<std::string> ranges_;
};

}  // namespace nt::test
