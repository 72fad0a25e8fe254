// tests/hub/fake_hub.cpp — the fake Hub's routes.
#include "hub/fake_hub.h"

#include <httplib.h>
#include <openssl/evp.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <cstdlib>

#include "support/test_support.h"

namespace nt::test {
namespace {

std::string openssl_sha256(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::string git_blob_sha1_like(const std::string& data) {  // any 40-hex id will do for non-LFS ETags
  return openssl_sha256("blob " + data).substr(0, 40);
}

struct Bytes {
  std::string b;
  template <class T> void put(T v) {
    char tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof(T));
    b.append(tmp, sizeof(T));
  }
  void str(const std::string& s) { put<uint64_t>(s.size()); b += s; }
  void pad(size_t a) { while (b.size() % a) b.push_back('\0'); }
};

}  // namespace

std::string isolate_hub_env(const std::string& endpoint) {
  for (const char* v : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_TOKEN_PATH", "HUGGINGFACE_HUB_CACHE",
                        "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"})
    ::unsetenv(v);
  const std::string home = temp_dir();
  ::setenv("HF_HOME", home.c_str(), 1);
  ::setenv("HF_HUB_CACHE", (home + "/cache").c_str(), 1);
  ::setenv("HF_ENDPOINT", endpoint.c_str(), 1);
  return home;
}

std::string make_tiny_gguf(const std::string& name, size_t n_floats) {
  Bytes w;
  w.put<uint32_t>(0x46554747);  // "GGUF"
  w.put<uint32_t>(3);
  w.put<uint64_t>(1);  // tensors
  w.put<uint64_t>(2);  // kvs
  w.str("general.architecture"); w.put<uint32_t>(8); w.str("llama");
  w.str("general.name"); w.put<uint32_t>(8); w.str(name);
  w.str("w"); w.put<uint32_t>(1); w.put<uint64_t>(n_floats); w.put<uint32_t>(0); w.put<uint64_t>(0);
  w.pad(32);
  for (size_t i = 0; i < n_floats; ++i) w.put<float>(static_cast<float>(i % 97) + static_cast<float>(name.size()));
  return w.b;
}

FakeHub::FakeHub() : srv_(std::make_unique<httplib::Server>()) {
  auto& s = *srv_;
  auto json_error = [](httplib::Response& res, int status, const std::string& code, const std::string& msg) {
    res.status = status;
    res.set_header("X-Error-Code", code);
    res.set_header("X-Error-Message", msg);
    res.set_content(nlohmann::json{{"error", msg}}.dump(), "application/json");
  };
  auto model_info = [this, json_error](const httplib::Request& req, httplib::Response& res) {
    ++api_calls;
    if (down) { res.status = 503; return; }
    std::string id = req.matches[1].str() + "/" + req.matches[2].str();
    std::string rev = req.matches.size() > 3 ? req.matches[3].str() : "main";
    std::lock_guard<std::mutex> lk(mu_);
    auto it = repos_.find(id);
    if (it == repos_.end()) return json_error(res, 401, "RepoNotFound", "Repository not found");
    const FakeRepo& r = it->second;
    if (rev != "main" && rev != r.commit) return json_error(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
    nlohmann::json j;
    j["id"] = r.id;
    j["sha"] = r.commit;
    j["gated"] = r.gated ? nlohmann::json("manual") : nlohmann::json(false);
    j["siblings"] = nlohmann::json::array();
    for (const auto& f : r.files) j["siblings"].push_back({{"rfilename", f.name}});
    res.set_content(j.dump(), "application/json");
  };
  s.Get(R"(/api/models/([^/]+)/([^/]+))", model_info);
  s.Get(R"(/api/models/([^/]+)/([^/]+)/revision/([^/]+))", model_info);

  // HEAD falls back to this GET handler in cpp-httplib (the body is not sent).
  s.Get(R"(/([^/]+)/([^/]+)/resolve/([^/]+)/(.+))", [this, json_error](const httplib::Request& req,
                                                                      httplib::Response& res) {
    if (req.method == "HEAD") ++head_calls;
    if (down) { res.status = 503; return; }
    std::string id = req.matches[1].str() + "/" + req.matches[2].str();
    const FakeRepo* repo = nullptr;
    const FakeFile* f = find_file(id, req.matches[3].str(), req.matches[4].str(), &repo);
    if (!repo) return json_error(res, 401, "RepoNotFound", "Repository not found");
    if (repo->gated && req.get_header_value("Authorization") != std::string("Bearer ") + kToken)
      return json_error(res, 401, "GatedRepo", "Access to model " + id + " is restricted.");
    if (!f) return json_error(res, 404, "EntryNotFound", "Entry not found");
    res.set_header("X-Repo-Commit", repo->commit);
    if (f->lfs) {
      std::string sha = openssl_sha256(f->data);
      res.status = 302;
      res.set_header("Location", "/cdn/" + sha + "?sig=fake");
      res.set_header("ETag", "\"" + sha + "\"");
      res.set_header("X-Linked-Etag", "\"" + sha + "\"");
      res.set_header("X-Linked-Size", std::to_string(f->data.size()));
    } else {
      res.set_header("ETag", "\"" + git_blob_sha1_like(f->data) + "\"");
      res.set_content(f->data, "application/octet-stream");
    }
  });

  s.Get(R"(/cdn/([0-9a-f]{64}))", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "HEAD") return;
    std::string data;
    {
      std::lock_guard<std::mutex> lk(mu_);
      auto it = blobs_.find(req.matches[1].str());
      if (it == blobs_.end()) { res.status = 404; return; }
      data = it->second;
      ranges_.push_back(req.get_header_value("Range"));
    }
    ++blob_gets;
    bool cut = false;
    if (cut_downloads > 0) { --cut_downloads; cut = true; }
    if (corrupt_downloads > 0) { --corrupt_downloads; data[data.size() / 2] ^= 0x5a; }
    size_t cut_pos = cut_at;
    auto shared = std::make_shared<std::string>(std::move(data));
    // cpp-httplib applies a single Range itself (206 + Content-Range) and asks for that window.
    res.set_content_provider(shared->size(), "application/octet-stream",
                             [this, shared, cut, cut_pos](size_t offset, size_t length, httplib::DataSink& sink) {
                               if (int us = chunk_delay_us; us > 0)
                                 std::this_thread::sleep_for(std::chrono::microseconds(us));
                               size_t n = std::min<size_t>(length, 4096);
                               if (cut) {
                                 if (offset >= cut_pos) return false;  // drop the connection
                                 n = std::min(n, cut_pos - offset);
                               }
                               sink.write(shared->data() + offset, n);
                               return true;
                             });
  });

  port_ = s.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { srv_->listen_after_bind(); });
}

FakeHub::~FakeHub() {
  srv_->stop();
  if (thread_.joinable()) thread_.join();
}

void FakeHub::add_repo(const FakeRepo& repo) {
  std::lock_guard<std::mutex> lk(mu_);
  repos_[repo.id] = repo;
  for (const auto& f : repo.files)
    if (f.lfs) blobs_[openssl_sha256(f.data)] = f.data;
}

std::string FakeHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::vector<std::string> FakeHub::ranges() const {
  std::lock_guard<std::mutex> lk(mu_);
  return ranges_;
}

const FakeFile* FakeHub::find_file(const std::string& id, const std::string& rev, const std::string& file,
                                   const FakeRepo** out_repo) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = repos_.find(id);
  *out_repo = nullptr;
  if (it == repos_.end()) return nullptr;
  *out_repo = &it->second;  // repos are never removed while serving
  if (rev != "main" && rev != it->second.commit) return nullptr;
  for (const auto& f : it->second.files)
    if (f.name == file) return &f;
  return nullptr;
}

std::string sha256_oracle(const std::string& data) { return openssl_sha256(data); }

}  // namespace nt::test
