#include "engine/forward_model.h"

#include "core/check.h"
#include "core/strings.h"

namespace nt {
namespace {

class ModelForward final : public ForwardModel {
 public:
  explicit ModelForward(std::unique_ptr<Model> m) : model_(std::move(m)) {}
  const ModelConfig& config() const override { return model_->config(); }
  std::string identity() const override {
    const ModelConfig& c = model_->config();
    return str_printf("%s|%llu|%s|%d|%d|%d|%d|%d", model_->gguf().path().c_str(),
                      static_cast<unsigned long long>(model_->gguf().file_size()), c.arch_name.c_str(), c.n_layer,
                      c.n_embd, c.n_head_kv, c.head_dim, c.n_vocab);
  }
  Status forward(const Batch& batch, KvStore& kv, ThreadPool& pool, float* logits) override {
    return model_->forward(batch, kv, pool, scratch_, logits);
  }
  const Model* model() const override { return model_.get(); }

 private:
  std::unique_ptr<Model> model_;
  ForwardScratch scratch_;
};

}  // namespace

std::unique_ptr<ForwardModel> wrap_model(std::unique_ptr<Model> model) {
  NT_CHECK(model != nullptr);
  return std::make_unique<ModelForward>(std::move(model));
}

}  // namespace nt
