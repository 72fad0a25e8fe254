// tests/engine/fake_model.h — a ForwardModel for scheduler and engine tests. Each token's K row
// holds (token id, position, layer); a token's logits hash every K row of its sequence, positions
// 0..pos, read back through the cache's spans, after checking each row's position and layer. So a
// wrong block table, a bad prefix-cache hit or a wrong recompute changes (or fails) the output.
// Optionally an oracle picks the one high logit from the context (scripted text for stop tests).
// With n_swa > 0, layer 1 is a sliding-window layer: it reads only its last n_swa positions, and
// the cache may give null rows for the blocks wholly before them (never for one inside).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "engine/forward_model.h"

namespace nt::test {

struct FakeChunk {  // one sequence's run of tokens in one forward call
  int seq = 0;
  int32_t pos = 0;  // first position
  int32_t n = 0;
};

class FakeModel final : public ForwardModel {
 public:
  explicit FakeModel(int n_vocab = 64, int n_ctx_train = 4096, int n_swa = 0) {
    cfg_.arch_name = "fake";
    cfg_.n_vocab = n_vocab;
    cfg_.n_embd = 4;
    cfg_.n_layer = 2;
    cfg_.n_head = 1;
    cfg_.n_head_kv = 1;
    cfg_.head_dim = 4;
    cfg_.n_ff = 4;
    cfg_.n_ctx_train = n_ctx_train;
    if (n_swa > 0) {
      cfg_.n_swa = n_swa;
      cfg_.swa_layers = {0, 1};
    }
  }
  const ModelConfig& config() const override { return cfg_; }
  std::string identity() const override { return "fake"; }

  Status forward(const Batch& b, KvStore& kv, ThreadPool&, float* logits) override {
    std::vector<FakeChunk> chunks;
    for (int64_t i = 0; i < b.size(); ++i) {
      if (!chunks.empty() && chunks.back().seq == b.seq[i] && chunks.back().pos + chunks.back().n == b.pos[i])
        ++chunks.back().n;
      else
        chunks.push_back({b.seq[i], b.pos[i], 1});
    }
    steps.push_back(std::move(chunks));
    for (int layer = 0; layer < cfg_.n_layer; ++layer)
      for (int64_t i = 0; i < b.size(); ++i) {
        float* k = reinterpret_cast<float*>(kv.k_row(layer, b.seq[i], b.pos[i]));
        float* v = reinterpret_cast<float*>(kv.v_row(layer, b.seq[i], b.pos[i]));
        const float row[4] = {float(b.tokens[i]), float(b.pos[i]), float(layer), 1.0f};
        std::memcpy(k, row, sizeof(row));
        std::memcpy(v, row, sizeof(row));
      }
    const int V = cfg_.n_vocab;
    std::vector<KvSpan> spans;
    std::vector<int32_t> ctx;
    int64_t out = 0;
    for (int64_t i = 0; i < b.size(); ++i) {
      if (!b.logits[i]) continue;
      ctx.clear();
      uint64_t h = 1469598103934665603ull;
      for (int layer = 0; layer < cfg_.n_layer; ++layer) {
        kv.spans(layer, b.seq[i], b.pos[i] + 1, spans);
        const int32_t start = cfg_.is_swa(layer) ? std::max(0, b.pos[i] + 1 - cfg_.n_swa) : 0;
        int32_t p = 0;
        for (const KvSpan& s : spans) {
          if (p + s.n <= start) {  // wholly out of the window: never read
            p += s.n;
            continue;
          }
          if (!s.k || !s.v)
            return make_error(ErrorKind::Internal, "fake: seq %d layer %d: rows at %d..%d were dropped", b.seq[i],
                              layer, p, p + s.n - 1);
          for (int32_t j = 0; j < s.n; ++j, ++p) {
            if (p < start) continue;
            float row[4];
            std::memcpy(row, s.k + size_t(j) * sizeof(row), sizeof(row));
            if (row[1] != float(p) || row[2] != float(layer) || row[3] != 1.0f)
              return make_error(ErrorKind::Internal, "fake: seq %d layer %d: row %d holds position %g layer %g",
                                b.seq[i], layer, p, double(row[1]), double(row[2]));
            if (layer == 0) ctx.push_back(static_cast<int32_t>(row[0]));
            h = (h ^ uint64_t(int64_t(row[0]))) * 1099511628211ull;
          }
        }
        if (p != b.pos[i] + 1)
          return make_error(ErrorKind::Internal, "fake: seq %d has %d rows for position %d", b.seq[i], p, b.pos[i]);
      }
      float* lg = logits + out * V;
      if (oracle) {
        const int32_t want = oracle(ctx);
        for (int v = 0; v < V; ++v) lg[v] = v == want ? 10.0f : -10.0f + float(v % 7) * 0.01f;
      } else {
        for (int v = 0; v < V; ++v) {
          uint64_t x = (h + uint64_t(v) * 0x9E3779B97F4A7C15ull) ^ (h >> 29);
          x *= 0xBF58476D1CE4E5B9ull;
          x ^= x >> 31;
          lg[v] = float(x % 4001) / 400.0f - 5.0f;  // [-5, 5], steps of 1/400: ties are rare
        }
      }
      ++out;
    }
    return {};
  }

  std::function<int32_t(const std::vector<int32_t>& context)> oracle;
  std::vector<std::vector<FakeChunk>> steps;  // every forward call's chunks

 private:
  ModelConfig cfg_;
};

}  // namespace nt::test
