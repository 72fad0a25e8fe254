// model/forward.cpp — the shared decoder forward pass over a multi-sequence batch:
//   x = embed(tokens)                                   // [n_tokens, n_embd]
//   per layer: x += Wo · attn(rope(Wq·norm(x)), cache(rope(Wk·norm(x)), Wv·norm(x)))
//              x += Wdown · (silu(Wgate·norm(x)) * Wup·norm(x))
//   logits = Wout · norm(x)  for the tokens that asked for them
// Architectures add to it (model_config.h): scaled embeddings, post-norms of the attention and FFN
// outputs, a GELU gate, sliding-window layers with their own RoPE, LongRoPE factors, logit capping,
// a sigmoid output gate on attention, and Gated DeltaNet layers with a per-sequence recurrent state
// in place of attention (qwen35.cpp).
// Every per-token value depends only on that token's inputs and cache (the kernels' determinism
// contract), so results do not change with batch composition, chunk size or thread count.
#include <algorithm>
#include <cmath>

#include "core/check.h"
#include "core/strings.h"
#include "model/model.h"

namespace nt {

namespace {

void grow(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
}

// y[t] = rms_norm(x[t]) * w for each row, parallel over rows.
void norm_rows(const float* x, const float* w, float* y, int64_t n_tokens, int64_t n, float eps, ThreadPool& pool) {
  pool.run(static_cast<int>(n_tokens), [&](int t, int) { rms_norm(x + t * n, w, y + t * n, n, eps); });
}

void add_bias(float* y, const float* b, int64_t n_tokens, int64_t n) {
  if (!b) return;
  for (int64_t t = 0; t < n_tokens; ++t) add_inplace(y + t * n, b, n);
}

// x[t] += rms_norm(y[t]) * w for each row (a post-norm before the residual add; y is overwritten).
void add_normed(float* x, float* y, const float* w, int64_t n_tokens, int64_t n, float eps, ThreadPool& pool) {
  pool.run(static_cast<int>(n_tokens), [&](int t, int) {
    rms_norm(y + t * n, w, y + t * n, n, eps);
    add_inplace(x + t * n, y + t * n, n);
  });
}

// The spans of positions [start, ...) of `spans` (rows k_bytes / v_bytes apart within a span).
void skip_positions(const std::vector<KvSpan>& spans, int32_t start, size_t k_bytes, size_t v_bytes,
                    std::vector<KvSpan>& out) {
  out.clear();
  for (KvSpan sp : spans) {
    if (start >= sp.n) {
      start -= sp.n;
      continue;
    }
    sp.k += static_cast<size_t>(start) * k_bytes;
    sp.v += static_cast<size_t>(start) * v_bytes;
    sp.n -= start;
    start = 0;
    out.push_back(sp);
  }
}

}  // namespace

size_t ForwardScratch::bytes() const {
  size_t n = spans.capacity() * sizeof(KvSpan);
  for (const std::vector<float>* b : {&x, &xn, &q, &k, &v, &att, &gate, &up, &out_rows, &rope, &rope_swa, &qg, &ssm_qkv,
                                      &ssm_conv, &ssm_z, &ssm_ab, &ssm_o})
    n += b->capacity() * sizeof(float);
  return n;
}

Status Model::forward(const Batch& batch, KvStore& kv, ThreadPool& pool, ForwardScratch& s, float* logits) const {
  const ModelConfig& c = cfg_;
  const int64_t n_tokens = batch.size();
  if (n_tokens == 0) return {};
  NT_CHECK(batch.pos.size() == batch.tokens.size() && batch.seq.size() == batch.tokens.size() &&
           batch.logits.size() == batch.tokens.size());
  const int64_t n_embd = c.n_embd, hd = c.head_dim;
  const int64_t q_dim = int64_t(c.n_head) * hd, kv_dim = int64_t(c.n_head_kv) * hd;
  const KvLayout& lay = kv.layout();
  NT_CHECK(lay.n_layer == c.n_kv_layers() && lay.n_head_kv == c.n_head_kv && lay.head_dim == c.head_dim);
  NT_CHECK(lay.recurrent_floats == c.recurrent_floats());

  for (int64_t t = 0; t < n_tokens; ++t)
    if (batch.tokens[t] < 0 || batch.tokens[t] >= c.n_vocab)
      return make_error("token id %d is outside the vocabulary [0, %d)", batch.tokens[t], c.n_vocab);

  // Recurrent layers fold each sequence's tokens into its state: a sequence must continue where its
  // state stands (position 0 starts it afresh).
  if (lay.recurrent_floats > 0) {
    struct SeqRun { int32_t seq, first, next; };
    std::vector<SeqRun> runs;
    for (int64_t t = 0; t < n_tokens; ++t) {
      const int32_t sq = batch.seq[size_t(t)], p = batch.pos[size_t(t)];
      auto it = std::find_if(runs.begin(), runs.end(), [&](const SeqRun& e) { return e.seq == sq; });
      if (it == runs.end()) {
        const int32_t have = *kv.recurrent_pos(sq);
        if (p != 0 && p != have)
          return make_error("sequence %d's recurrent state holds %d positions; it cannot continue at position %d "
                            "(a recurrent state cannot be rewound; a cached prefix resumes only from a state snapshot)", sq, have, p);
        runs.push_back({sq, p, p + 1});
      } else if (p != it->next) {
        return make_error("sequence %d's tokens in a batch must have consecutive positions (%d after %d)", sq, p,
                          it->next - 1);
      } else {
        ++it->next;
      }
    }
    for (const SeqRun& r : runs) {
      if (r.first == 0) std::fill_n(kv.recurrent_state(r.seq), lay.recurrent_floats, 0.0f);
      *kv.recurrent_pos(r.seq) = r.next;
    }
  }
  // The per-token parts of a layer (norms, projections, FFN) run over sub-chunks of at most
  // kSubChunk tokens (the matmul's token block), balanced, so their scratch is sized for a sub-chunk;
  // attention needs every token's query and output at once.
  constexpr int64_t kSubChunk = 64;
  const int64_t n_sub = (n_tokens + kSubChunk - 1) / kSubChunk;
  const int64_t sub_rows = (n_tokens + n_sub - 1) / n_sub;  // the largest sub-chunk
  auto sub_begin = [&](int64_t i) { return n_tokens * i / n_sub; };
  grow(s.x, n_tokens * n_embd);
  grow(s.q, n_tokens * q_dim);
  grow(s.att, n_tokens * q_dim);
  if (c.attn_output_gate) grow(s.qg, n_tokens * 2 * q_dim);
  grow(s.gate, sub_rows * c.n_ff);
  grow(s.up, sub_rows * c.n_ff);
  float* x = s.x.data();      // [n_tokens, n_embd] residual stream
  float* q = s.q.data();      // [n_tokens, n_head * head_dim]
  float* att = s.att.data();  // [n_tokens, n_head * head_dim]
  float* gate = s.gate.data();  // [sub-chunk, n_ff]
  float* up = s.up.data();      // [sub-chunk, n_ff]

  for (int64_t t = 0; t < n_tokens; ++t) {
    convert_row_to_f32(w_.tok_embd.type, w_.tok_embd.data + size_t(batch.tokens[t]) * w_.tok_embd.row_bytes,
                       x + t * n_embd, n_embd);
    if (c.embd_scale != 1.0f)
      for (int64_t i = 0; i < n_embd; ++i) x[t * n_embd + i] *= c.embd_scale;
  }

  // Distinct sequences of this batch and how far each must be attended.
  std::vector<int32_t> seq_ids;
  for (int32_t sq : batch.seq)
    if (std::find(seq_ids.begin(), seq_ids.end(), sq) == seq_ids.end()) seq_ids.push_back(sq);
  std::vector<std::vector<KvSpan>> seq_spans(seq_ids.size());
  std::vector<int32_t> seq_max_kv(seq_ids.size(), 0);
  std::vector<int32_t> tok_seq_idx(static_cast<size_t>(n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) {
    size_t si = static_cast<size_t>(std::find(seq_ids.begin(), seq_ids.end(), batch.seq[t]) - seq_ids.begin());
    tok_seq_idx[static_cast<size_t>(t)] = static_cast<int32_t>(si);
    seq_max_kv[si] = std::max(seq_max_kv[si], batch.pos[t] + 1);
  }

  // Prefill attention blocks: runs of up to kAttnBlock consecutive tokens of one sequence (8: never
  // worse than 4, 16 no better; docs/kernels.md).
  constexpr int kAttnBlock = 8;
  std::vector<std::pair<int64_t, int>> blocks;
  for (int64_t t = 0; t < n_tokens;) {
    int nb = 1;
    while (nb < kAttnBlock && t + nb < n_tokens && batch.seq[t + nb] == batch.seq[t]) ++nb;
    blocks.emplace_back(t, nb);
    t += nb;
  }

  const float scale = c.attn_scale > 0 ? c.attn_scale : 1.0f / std::sqrt(static_cast<float>(hd));
  const int n_group = c.n_head / c.n_head_kv;
  // LongRoPE: the long factors when a sequence may hold more than the original training context
  // (the KV layout's n_ctx_seq, else the training context), as llama.cpp chooses: it compares its
  // context rounded up to a multiple of 256.
  RopeParams rope = c.rope;
  if (!rope.freq_factors) {
    const int64_t n_ctx_seq = ((lay.n_ctx_seq > 0 ? lay.n_ctx_seq : c.n_ctx_train) + 255) / 256 * 256;
    const std::vector<float>& f = n_ctx_seq > rope.n_ctx_orig ? w_.rope_long : w_.rope_short;
    if (!f.empty()) rope.freq_factors = f.data();
  }
  // RoPE angles once per token for all layers and heads: [n_tokens][cos, sin][n_pairs], and for
  // the sliding-window layers' RoPE when the model has them.
  const int64_t n_pairs = rope_pairs(static_cast<int>(hd), rope);
  NT_CHECK(c.n_swa == 0 || rope_pairs(static_cast<int>(hd), c.rope_swa) == n_pairs);
  grow(s.rope, n_tokens * 2 * n_pairs);
  if (c.n_swa > 0) grow(s.rope_swa, n_tokens * 2 * n_pairs);
  pool.run(static_cast<int>(n_tokens), [&](int t, int) {
    float* cs = s.rope.data() + t * 2 * n_pairs;
    rope_angles(static_cast<int>(hd), batch.pos[t], rope, cs, cs + n_pairs);
    if (c.n_swa > 0) {
      cs = s.rope_swa.data() + t * 2 * n_pairs;
      rope_angles(static_cast<int>(hd), batch.pos[t], c.rope_swa, cs, cs + n_pairs);
    }
  });
  // Per-head cache writes need whole KV blocks per head.
  const bool place_per_head = seq_ids.size() == static_cast<size_t>(n_tokens) &&
                              hd % dtype_info(lay.k_type).block_size == 0 &&
                              hd % dtype_info(lay.v_type).block_size == 0;
  // K and V hold a sub-chunk's rows until they are placed in the cache, except in decode steps
  // placed per head (inside the attention tasks: every token's). Recurrent layers norm every token.
  const int64_t kv_rows = place_per_head ? n_tokens : sub_rows;
  grow(s.xn, (place_per_head || lay.recurrent_floats > 0 ? n_tokens : sub_rows) * n_embd);
  grow(s.k, kv_rows * kv_dim);
  grow(s.v, kv_rows * kv_dim);
  float* xn = s.xn.data();  // [sub-chunk, n_embd] normed input (or every token's, as K and V / recurrent layers)
  float* k = s.k.data();    // [kv_rows, n_head_kv * head_dim]
  float* v = s.v.data();    // [kv_rows, n_head_kv * head_dim]
  for (int il = 0; il < c.n_layer; ++il) {
    const LayerWeights& l = w_.layers[static_cast<size_t>(il)];
    const bool swa = c.is_swa(il);
    const float* rope_cs = swa ? s.rope_swa.data() : s.rope.data();
    const bool recurrent = c.is_recurrent(il);
    if (recurrent) {
      norm_rows(x, l.attn_norm, xn, n_tokens, n_embd, c.rms_eps, pool);
      delta_net_layer(il, batch, kv, pool, s, xn, x);
    } else {
      const int kl = c.kv_layer(il);  // this layer's index in the KV cache
      int64_t kv_t0 = 0;              // the first token whose K / V rows k and v hold
      // Token t's query heads [hq, hq + nq) and KV heads [hk, hk + nk): Q/K norms, RoPE, and the
      // K/V heads written to the cache.
      auto place = [&](int64_t t, int hq, int nq, int hk, int nk) {
        float* qt = q + t * q_dim + hq * hd;
        float* kt = k + (t - kv_t0) * kv_dim + hk * hd;
        if (l.q_norm) {
          for (int h = 0; h < nq; ++h) rms_norm(qt + h * hd, l.q_norm, qt + h * hd, hd, c.rms_eps);
          for (int h = 0; h < nk; ++h) rms_norm(kt + h * hd, l.k_norm, kt + h * hd, hd, c.rms_eps);
        }
        const float* cs = rope_cs + t * 2 * n_pairs;
        rope_apply(qt, nq, static_cast<int>(hd), rope, cs, cs + n_pairs);
        rope_apply(kt, nk, static_cast<int>(hd), rope, cs, cs + n_pairs);
        const int32_t sq = batch.seq[t], pos = batch.pos[t];
        convert_row_from_f32(lay.k_type, kt, kv.k_row(kl, sq, pos) + dtype_row_bytes(lay.k_type, uint64_t(hk * hd)), nk * hd);
        convert_row_from_f32(lay.v_type, v + (t - kv_t0) * kv_dim + hk * hd,
                             kv.v_row(kl, sq, pos) + dtype_row_bytes(lay.v_type, uint64_t(hk * hd)), nk * hd);
      };
      // Token t's query heads of KV head g over its sequence's cache.
      // Tokens [t0, t0 + nb) of one sequence, their query heads of KV head g, over its cache.
      // A sliding-window layer's token at pos sees positions [pos + 1 - n_swa, pos]: tokens past the
      // first window attend one by one over the spans from their window's start.
      auto attend = [&](int64_t t0, int nb, int g) {
        const auto& sp = seq_spans[static_cast<size_t>(tok_seq_idx[static_cast<size_t>(t0)])];
        int32_t n_kv[kAttnBlock];
        bool windowed = false;
        for (int j = 0; j < nb; ++j) {
          n_kv[j] = batch.pos[t0 + j] + 1;
          windowed = windowed || (swa && n_kv[j] > c.n_swa);
        }
        if (windowed) {
          thread_local std::vector<KvSpan> tail;
          for (int j = 0; j < nb; ++j) {
            const int32_t start = swa ? std::max(0, n_kv[j] - c.n_swa) : 0;
            skip_positions(sp, start, lay.k_row_bytes(), lay.v_row_bytes(), tail);
            attention(q + (t0 + j) * q_dim, c.n_head, c.n_head_kv, static_cast<int>(hd), g * n_group, (g + 1) * n_group,
                      lay.k_type, lay.k_row_bytes(), lay.v_type, lay.v_row_bytes(), tail.data(),
                      static_cast<int>(tail.size()), n_kv[j] - start, scale, att + (t0 + j) * q_dim);
          }
          return;
        }
        attention_block(q + t0 * q_dim, q_dim, nb, n_kv, c.n_head, c.n_head_kv, static_cast<int>(hd), g * n_group,
                        (g + 1) * n_group, lay.k_type, lay.k_row_bytes(), lay.v_type, lay.v_row_bytes(), sp.data(),
                        static_cast<int>(sp.size()), scale, att + t0 * q_dim, q_dim);
      };
      for (int64_t i = 0, n_qkv = place_per_head ? 1 : n_sub; i < n_qkv; ++i) {
        const int64_t t0 = place_per_head ? 0 : sub_begin(i), nt = (place_per_head ? n_tokens : sub_begin(i + 1)) - t0;
        norm_rows(x + t0 * n_embd, l.attn_norm, xn, nt, n_embd, c.rms_eps, pool);
        // With an output gate (qwen35) Q's rows hold per head head_dim Q rows, then head_dim gate rows.
        float* q_out = c.attn_output_gate ? s.qg.data() + t0 * 2 * q_dim : q + t0 * q_dim;
        const MatmulOut qkv[3] = {{&l.wq, q_out, c.attn_output_gate ? 2 * q_dim : q_dim}, {&l.wk, k, kv_dim}, {&l.wv, v, kv_dim}};
        matmul_multi(qkv, 3, xn, n_embd, nt, pool);  // one parallel pass, activations quantized once
        if (c.attn_output_gate)
          for (int64_t t = 0; t < nt; ++t)
            for (int h = 0; h < c.n_head; ++h)
              std::copy_n(q_out + t * 2 * q_dim + 2 * h * hd, hd, q + (t0 + t) * q_dim + h * hd);
        add_bias(q + t0 * q_dim, l.bq, nt, q_dim);
        add_bias(k, l.bk, nt, kv_dim);
        add_bias(v, l.bv, nt, kv_dim);
        kv_t0 = t0;
        if (!place_per_head) pool.run(static_cast<int>(nt), [&](int j, int) { place(t0 + j, 0, c.n_head, 0, c.n_head_kv); });
      }
      for (size_t si = 0; si < seq_ids.size(); ++si) kv.spans(kl, seq_ids[si], seq_max_kv[si], seq_spans[si]);
      if (place_per_head) {
        // Decode steps (every token its sequence's only one): a (token, KV head) task reads no cache
        // row another task of this pass writes, so it places its own heads and attends in one job.
        pool.run(static_cast<int>(n_tokens * c.n_head_kv), [&](int task, int) {
          const int64_t t = task / c.n_head_kv;
          const int g = task % c.n_head_kv;
          place(t, g * n_group, n_group, g, 1);
          attend(t, 1, g);
        });
      } else {
        // One task per (KV head, block of tokens), KV head outer: the block's query heads of that
        // KV head, each K / V row loaded once for the whole block (attention_block).
        pool.run(static_cast<int>(blocks.size()) * c.n_head_kv, [&](int task, int) {
          const auto [t0, nb] = blocks[static_cast<size_t>(task) % blocks.size()];
          attend(t0, nb, static_cast<int>(static_cast<size_t>(task) / blocks.size()));
        });
      }
    }

    // The rest of the layer, a sub-chunk of tokens [t0, t0 + nt) at a time (their rows of x, xn).
    for (int64_t i = 0; i < n_sub; ++i) {
      const int64_t t0 = sub_begin(i), nt = sub_begin(i + 1) - t0;
      float* xc = x + t0 * n_embd;
      if (!recurrent) {  // x += Wo · att, added per rectangle by the thread that computed it (or post-normed first)
        float* ac = att + t0 * q_dim;
        if (c.attn_output_gate)  // att *= sigmoid(gate)
          pool.run(static_cast<int>(nt), [&](int t, int) {
            for (int h = 0; h < c.n_head; ++h) {
              float* a = ac + t * q_dim + h * hd;
              const float* g = s.qg.data() + (t0 + t) * 2 * q_dim + (2 * h + 1) * hd;
              for (int64_t j = 0; j < hd; ++j) a[j] *= 1.0f / (1.0f + std::exp(-g[j]));
            }
          });
        const MatmulOut wo{&l.wo, xn, n_embd, l.attn_post_norm ? nullptr : xc};
        matmul_multi(&wo, 1, ac, q_dim, nt, pool);
        if (l.attn_post_norm) add_normed(xc, xn, l.attn_post_norm, nt, n_embd, c.rms_eps, pool);
      }
      norm_rows(xc, l.ffn_norm, xn, nt, n_embd, c.rms_eps, pool);
      if (c.ffn_act == FfnAct::Silu) {  // gate = silu(gate) * up, per rectangle as both halves finish
        const MatmulOut gate_up[2] = {{&l.w_gate, gate, c.n_ff, nullptr, 1}, {&l.w_up, up, c.n_ff}};
        matmul_multi(gate_up, 2, xn, n_embd, nt, pool);
      } else {  // gate = gelu(gate) * up
        const MatmulOut gate_up[2] = {{&l.w_gate, gate, c.n_ff}, {&l.w_up, up, c.n_ff}};
        matmul_multi(gate_up, 2, xn, n_embd, nt, pool);
        pool.run(static_cast<int>(nt), [&](int t, int) { gelu_mul(gate + t * c.n_ff, up + t * c.n_ff, gate + t * c.n_ff, c.n_ff); });
      }
      // x += Wdown · gate (or post-normed first)
      const MatmulOut down{&l.w_down, xn, n_embd, l.ffn_post_norm ? nullptr : xc};
      matmul_multi(&down, 1, gate, c.n_ff, nt, pool);
      if (l.ffn_post_norm) add_normed(xc, xn, l.ffn_post_norm, nt, n_embd, c.rms_eps, pool);
    }
  }

  // Only the rows that want logits go through the output norm and projection.
  const int64_t n_out = batch.n_outputs();
  if (n_out == 0) return {};
  grow(s.out_rows, n_out * n_embd);
  float* rows = s.out_rows.data();  // [n_out, n_embd]
  for (int64_t t = 0, o = 0; t < n_tokens; ++t)
    if (batch.logits[static_cast<size_t>(t)]) rms_norm(x + t * n_embd, w_.output_norm, rows + (o++) * n_embd, n_embd, c.rms_eps);
  matmul(w_.output, rows, n_embd, logits, c.n_vocab, n_out, pool);
  if (c.final_logit_softcap > 0) {
    const float cap = c.final_logit_softcap, inv = 1.0f / cap;
    for (int64_t i = 0; i < n_out * c.n_vocab; ++i) logits[i] = std::tanh(logits[i] * inv) * cap;
  }
  return {};
}

}  // namespace nt
