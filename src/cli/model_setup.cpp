#include "cli/model_setup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "core/strings.h"
#include "kernels/kv_types.h"

namespace nt::cli {

void add_engine_options(CLI::App& app, EngineArgs& a) {
  app.add_option("-t,--threads", a.n_threads, "compute threads; 0 = all physical cores (default 0)");
  app.add_option("-c,--ctx-size", a.n_ctx, "KV-cache size in tokens; 0 = the training context, capped by memory "
                 "(default 0)");
  app.add_option("-b,--batch-size", a.n_batch,
                 "tokens per engine step (one forward pass: prompt chunks and decode tokens), 1 to 65536 "
                 "(default 512); hybrid models (qwen35) cut prompt chunks at multiples of 64 positions, and "
                 "below 64 run their recurrent layers token by token");
  app.add_option("--parallel", a.n_parallel,
                 "-np: requests run at once; more wait (default " + std::to_string(a.n_parallel) + ")");
  const std::string types = kv_cache_type_names();
  app.add_option("--cache-type-k", a.cache_type_k, "-ctk: KV cache type for K: " + types + " (default " + a.cache_type_k + ")");
  app.add_option("--cache-type-v", a.cache_type_v, "-ctv: KV cache type for V: " + types + " (default " + a.cache_type_v + ")");
  app.add_option("--state-snapshot-every", a.state_snapshot_every,
                 "hybrid models (qwen35): keep the recurrent state at every N tokens as well as at each prompt's "
                 "end, so a later prompt sharing the prefix resumes there; a multiple of " +
                     std::to_string(KvLayout{}.block_size) + ", 0 = prompt ends only (default " +
                     std::to_string(a.state_snapshot_every) + ")");
  app.add_option("--state-snapshots", a.state_snapshots,
                 "hybrid models: recurrent-state snapshots kept for prefix reuse, least recently used dropped "
                 "first (prompt ends off the 64-token prefill windows before any other); -1 = -np + 2, 0 = no "
                 "prefix reuse (default -1)");
}

Status check_engine_args(const EngineArgs& a) {
  NT_TRY(check_threads("-t", a.n_threads));
  NT_TRY(check_range("-c", a.n_ctx, 0, int64_t(1) << 30));
  NT_TRY(check_range("-b", a.n_batch, 1, 65536));
  NT_TRY(check_range("-np", a.n_parallel, 1, 4096));
  NT_TRY(parse_kv_cache_type(a.cache_type_k));
  NT_TRY(parse_kv_cache_type(a.cache_type_v));
  NT_TRY(check_range("--state-snapshot-every", a.state_snapshot_every, 0, 1 << 30));
  if (a.state_snapshot_every % KvLayout{}.block_size != 0)
    return make_error("--state-snapshot-every must be a multiple of the KV block size %d (got %d)",
                      KvLayout{}.block_size, a.state_snapshot_every);
  NT_TRY(check_range("--state-snapshots", a.state_snapshots, -1, 1 << 20));
  return {};
}

Result<LoadedModel> load_model(const ModelArgs& m, const EngineArgs& e, bool quiet) {
  auto path = resolve_model(m);
  if (!path) return path.error();
  const auto t0 = std::chrono::steady_clock::now();
  auto model = Model::load(*path);
  if (!model) return model.error();
  auto tok = Tokenizer::from_gguf((*model)->gguf());
  if (!tok) return Error{*path + ": " + tok.error().message};
  (*model)->gguf().release_metadata_pages();  // read into the tokenizer; only tensors are used from here on
  EngineOptions opt;
  opt.n_threads = e.n_threads;
  opt.n_ctx = e.n_ctx;
  opt.n_batch = e.n_batch;
  opt.n_parallel = e.n_parallel;
  opt.default_ctx_seqs = e.default_ctx_seqs;
  opt.state_snapshot_every = e.state_snapshot_every;
  opt.state_snapshots = e.state_snapshots;
  auto ck = parse_kv_cache_type(e.cache_type_k);
  if (!ck) return ck.error();
  auto cv = parse_kv_cache_type(e.cache_type_v);
  if (!cv) return cv.error();
  opt.cache_k = *ck;
  opt.cache_v = *cv;
  const uint64_t wbytes = (*model)->weight_bytes();
  auto eng = Engine::create(std::move(*model), opt, tok->get());
  if (!eng) return eng.error();
  LoadedModel lm{*path, std::move(*tok), std::move(*eng)};
  if (!quiet) {
    const ModelConfig& c = lm.engine->config();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr,
                 "model: %s (%s, %d layers, n_embd %d, %d/%d heads, vocab %d) weights %s, loaded in %.0f ms\n"
                 "context: %lld tokens, KV cache %s/%s %s%s, %s, batch %d, simd %s\n",
                 path->c_str(), c.arch_name.c_str(), c.n_layer, c.n_embd, c.n_head, c.n_head_kv, c.n_vocab,
                 format_bytes(wbytes).c_str(), ms, static_cast<long long>(lm.engine->n_ctx()),
                 e.cache_type_k.c_str(), e.cache_type_v.c_str(), format_bytes(lm.engine->kv_bytes()).c_str(),
                 lm.engine->ctx_capped() ? " (capped to fit memory; set -c to change)" : "",
                 plural(lm.engine->n_threads(), "thread", "threads").c_str(), lm.engine->n_batch(),
                 kernels_simd_level());
  }
  return lm;
}

}  // namespace nt::cli
