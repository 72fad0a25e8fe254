// engine/forward_model.h — what the engine needs from a model: its config, an identity for the
// prefix cache's hash chains, and one forward pass over a mixed batch of sequences. The real
// Model is wrapped by wrap_model(); tests drive the engine with fakes.
// Must not know: scheduling, sampling, tokenizers.
#pragma once

#include <memory>
#include <string>

#include "core/result.h"
#include "core/thread_pool.h"
#include "model/batch.h"
#include "model/kv_store.h"
#include "model/model.h"
#include "model/model_config.h"

namespace nt {

class ForwardModel {
 public:
  virtual ~ForwardModel() = default;
  virtual const ModelConfig& config() const = 0;
  // Names the weights (cached K/V computed by another model must never match).
  virtual std::string identity() const = 0;
  // Model::forward's contract: writes every batch token's K/V at (seq, pos) in kv, then logits
  // [n_out, n_vocab] for the tokens with batch.logits set, in batch order.
  virtual Status forward(const Batch& batch, KvStore& kv, ThreadPool& pool, float* logits) = 0;
  // The wrapped Model, or null for a fake.
  virtual const Model* model() const { return nullptr; }
};

// The real model behind the interface (owns it and its forward scratch).
std::unique_ptr<ForwardModel> wrap_model(std::unique_ptr<Model> model);

}  // namespace nt
