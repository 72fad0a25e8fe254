// tests/server/server_harness.h — a real nexttok server on 127.0.0.1 (any free port) for tests:
// over stories15M, or over a fake model whose steps take a set time (with stories15M's
// tokenizer), plus small HTTP helpers (JSON posts, SSE streams, /metrics values).
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/fake_model.h"
#include "model/model.h"
#include "server/server.h"
#include "support/test_support.h"

namespace nt::test {

inline std::string stories_path() { return shared_path("models/stories15M-q8_0.gguf"); }

// A fake model whose forward calls each sleep `step_ms` (for timing-independent checks of what
// answers during a step).
class SlowModel final : public ForwardModel {
 public:
  SlowModel(int n_vocab, int step_ms) : inner_(n_vocab, 256), step_ms_(step_ms) {}
  const ModelConfig& config() const override { return inner_.config(); }
  std::string identity() const override { return "slow-fake"; }
  Status forward(const Batch& b, KvStore& kv, ThreadPool& pool, float* logits) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms_));
    return inner_.forward(b, kv, pool, logits);
  }

 private:
  FakeModel inner_;
  int step_ms_;
};

struct ModelSpec {
  int slow_step_ms = 0;  // > 0: the slow fake model instead of stories15M's weights
  int load_delay_ms = 0;
  EngineOptions engine;
};

inline server::ModelLoader stories_loader(ModelSpec spec) {
  return [spec]() -> Result<server::ServedModel> {
    if (spec.load_delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(spec.load_delay_ms));
    auto model = Model::load(stories_path());
    if (!model) return model.error();
    auto tok = Tokenizer::from_gguf((*model)->gguf());
    if (!tok) return tok.error();
    auto r = server::ChatRenderer::create({}, **tok, (*model)->gguf(), nullptr);
    if (!r) return r.error();
    server::ServedModel sm;
    sm.name = "stories15M";
    sm.renderer = std::make_unique<server::ChatRenderer>(std::move(*r));
    EngineOptions eo = spec.engine;
    if (eo.n_threads == 0) eo.n_threads = 2;
    if (spec.slow_step_ms > 0) eo.cache_k = eo.cache_v = DType::F32;  // the fake writes F32 rows
    Result<std::unique_ptr<Engine>> eng =
        spec.slow_step_ms > 0
            ? Engine::create(std::make_unique<SlowModel>((*tok)->n_vocab(), spec.slow_step_ms), eo, tok->get())
            : Engine::create(std::move(*model), eo, tok->get());
    if (!eng) return eng.error();
    sm.tokenizer = std::move(*tok);
    sm.engine = std::move(*eng);
    return sm;
  };
}

class TestServer {
 public:
  TestServer(server::ServerOptions opt, ModelSpec spec, bool wait_ready = true) {
    opt.host = "127.0.0.1";
    opt.port = 0;
    opt.log_quiet = true;
    srv_ = std::make_unique<server::Server>(opt);
    status_ = srv_->start(stories_loader(spec));
    if (!status_) return;
    for (int i = 0; wait_ready && i < 3000 && !srv_->ready(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~TestServer() { stop(); }
  void stop() {
    if (!srv_) return;
    srv_->request_stop();
    (void)srv_->wait();
    srv_.reset();
  }
  bool ok() const { return status_.ok() && srv_ && srv_->ready(); }
  int port() const { return srv_->port(); }
  server::Server& server() { return *srv_; }
  std::unique_ptr<httplib::Client> client(double timeout_s = 30) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port());
    c->set_read_timeout(std::chrono::milliseconds(int(timeout_s * 1000)));
    c->set_write_timeout(std::chrono::milliseconds(int(timeout_s * 1000)));
    return c;
  }

 private:
  std::unique_ptr<server::Server> srv_;
  Status status_;
};

struct HttpAnswer {
  int status = 0;
  nlohmann::json body;  // null when not JSON
  std::string raw;
};

inline HttpAnswer post_json(httplib::Client& c, const std::string& path, const std::string& body,
                            const httplib::Headers& h = {}) {
  HttpAnswer a;
  auto r = c.Post(path, h, body, "application/json");
  if (!r) return a;
  a.status = r->status;
  a.raw = r->body;
  a.body = nlohmann::json::parse(r->body, nullptr, false);
  if (a.body.is_discarded()) a.body = nullptr;
  return a;
}

inline HttpAnswer get(httplib::Client& c, const std::string& path, const httplib::Headers& h = {}) {
  HttpAnswer a;
  auto r = c.Get(path, h);
  if (!r) return a;
  a.status = r->status;
  a.raw = r->body;
  a.body = nlohmann::json::parse(r->body, nullptr, false);
  if (a.body.is_discarded()) a.body = nullptr;
  return a;
}

// A streamed request: every `data:` payload in order (the last is normally "[DONE]"). Stops
// reading (closing the connection) after `stop_after` payloads when > 0.
struct StreamAnswer {
  int status = 0;
  std::vector<std::string> data;
  bool aborted = false;
};
inline StreamAnswer post_stream(httplib::Client& c, const std::string& path, const std::string& body,
                                size_t stop_after = 0) {
  StreamAnswer a;
  std::string buf;
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body;
  req.set_header("Content-Type", "application/json");
  req.response_handler = [&](const httplib::Response& r) {
    a.status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* d, size_t n, uint64_t, uint64_t) {
    buf.append(d, n);
    size_t pos;
    while ((pos = buf.find("\n\n")) != std::string::npos) {
      std::string ev = buf.substr(0, pos);
      buf.erase(0, pos + 2);
      if (ev.rfind("data: ", 0) == 0) a.data.push_back(ev.substr(6));
      if (stop_after > 0 && a.data.size() >= stop_after) {
        a.aborted = true;
        return false;
      }
    }
    return true;
  };
  httplib::Response res;
  httplib::Error err;
  c.send(req, res, err);
  if (a.status == 0) a.status = res.status;
  return a;
}

// The value of one sample in Prometheus text ("name{labels} value" or "name value"); -1 if absent.
inline double metric_value(const std::string& text, const std::string& series) {
  size_t pos = 0;
  while ((pos = text.find(series, pos)) != std::string::npos) {
    const bool line_start = pos == 0 || text[pos - 1] == '\n';
    const size_t after = pos + series.size();
    if (line_start && after < text.size() && text[after] == ' ') return std::stod(text.substr(after + 1));
    pos = after;
  }
  return -1;
}

}  // namespace nt::test
