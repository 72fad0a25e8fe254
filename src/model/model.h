// model/model.h — a loaded decoder-only transformer (see arch_table.h) and its forward pass over a
// batch of tokens drawn from any number of sequences. Owns: weight views into the mmapped GGUF (never
// copied, except small norm/bias vectors stored in other types) and the layer loop.
// Must not know: tokenizers, sampling, scheduling, how the KV cache allocates blocks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/thread_pool.h"
#include "gguf/gguf.h"
#include "kernels/kernels.h"
#include "model/batch.h"
#include "model/kv_store.h"
#include "model/model_config.h"

namespace nt {

struct LayerWeights {
  const float* attn_norm = nullptr;  // [n_embd]
  MatView wq, wk, wv, wo;            // wq [n_head*head_dim rows, n_embd cols], wo [n_embd, n_head*head_dim]
  const float* bq = nullptr;         // [n_head*head_dim] (qwen2)
  const float* bk = nullptr;         // [n_head_kv*head_dim]
  const float* bv = nullptr;
  const float* q_norm = nullptr;     // [head_dim] (qwen3)
  const float* k_norm = nullptr;
  const float* ffn_norm = nullptr;   // [n_embd]
  MatView w_gate, w_up, w_down;      // gate/up [n_ff, n_embd], down [n_embd, n_ff]
  const float* attn_post_norm = nullptr;  // [n_embd] (gemma3): norms the attention output before the add
  const float* ffn_post_norm = nullptr;   // [n_embd] (gemma3): norms the FFN output before the add
  // Gated DeltaNet layer (qwen35 recurrent layers; wq..wo and the Q/K norms unused there).
  MatView ssm_qkv;                   // [conv channels, n_embd]: q, k, v of every head, before the convolution
  MatView ssm_gate;                  // [n_v_heads * head_v_dim, n_embd]: z, the output gate
  MatView ssm_beta, ssm_alpha;       // [n_v_heads, n_embd]
  MatView ssm_out;                   // [n_embd, n_v_heads * head_v_dim]
  const float* ssm_conv = nullptr;   // [kernel][conv channels], time-major (owned copy)
  const float* ssm_dt_bias = nullptr;  // [n_v_heads]
  const float* ssm_a = nullptr;        // [n_v_heads]: -exp(A_log)
  const float* ssm_norm = nullptr;     // [head_v_dim]
};

struct ModelWeights {
  MatView tok_embd;                  // [n_vocab rows, n_embd]
  const float* output_norm = nullptr;
  MatView output;                    // [n_vocab, n_embd]; tok_embd when tied
  bool tied_output = false;
  std::vector<LayerWeights> layers;
  std::vector<float> rope_freqs;     // Llama 3 frequency factors, empty if none
  // LongRoPE (phi3) frequency factors [n_rot/2]: long when a sequence's context exceeds the
  // original training context (RopeParams::n_ctx_orig), else short; empty if none.
  std::vector<float> rope_long, rope_short;
  std::vector<std::vector<float>> owned;  // f32 copies of small non-F32 vectors
};

// Scratch for one forward call, reused across calls (grown as needed). Owned by the engine thread.
// x, q, att, qg and the RoPE angles hold every token of a step; the per-token parts of a layer use
// the rest for sub-chunks of the step's tokens (forward.cpp).
struct ForwardScratch {
  std::vector<float> x, xn, q, k, v, att, gate, up, out_rows, rope, rope_swa;
  std::vector<float> qg, ssm_qkv, ssm_conv, ssm_z, ssm_ab, ssm_o;  // gated attention and recurrent layers
  std::vector<KvSpan> spans;

  size_t bytes() const;  // the capacity of every buffer
};

class Model {
 public:
  // Opens the GGUF, validates config and every tensor's presence, type and shape.
  static Result<std::unique_ptr<Model>> load(const std::string& path);

  const ModelConfig& config() const { return cfg_; }
  const ModelWeights& weights() const { return w_; }
  const GgufFile& gguf() const { return gguf_; }
  uint64_t weight_bytes() const;  // bytes of all tensors in the file

  // Runs the batch: writes each token's K/V at (seq, pos) into the cache (positions must already be
  // reserved there, and every earlier position of that seq must be cached or in this batch), and
  // writes logits for tokens with batch.logits[i] set, in batch order: logits [n_out, n_vocab].
  Status forward(const Batch& batch, KvStore& kv, ThreadPool& pool, ForwardScratch& s, float* logits) const;

  // One Gated DeltaNet layer (qwen35.cpp): x += out(gated_norm(delta_rule(conv(qkv(xn))), z)) for
  // every batch token, each sequence's tokens in order through its recurrent state (kv).
  void delta_net_layer(int il, const Batch& batch, KvStore& kv, ThreadPool& pool, ForwardScratch& s, const float* xn,
                       float* x) const;

 private:
  GgufFile gguf_;
  ModelConfig cfg_;
  ModelWeights w_;
};

}  // namespace nt
