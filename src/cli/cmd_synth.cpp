// cli/cmd_synth.cpp — `nexttok synth`: a random-weight model of any shape of a supported
// architecture (model/arch_table.h), in any quantize preset, with the tokenizer copied from a
// vocab GGUF — for benchmarks at real sizes.
// Weights are uniform with standard deviation 1/sqrt(fan-in) (norm weights 1), so activations stay
// finite through the layers. Generation and quantization run on all threads, slab by slab, and
// stream to disk (the file never sits in memory). Output is deterministic for a given --seed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/strings.h"
#include "core/thread_pool.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/arch_table.h"
#include "model/quant_mix.h"
#include "tensor/quantize.h"

namespace nt::cli {

namespace {

// kFactors: uniform in [1, 4] (LongRoPE); kDecay: uniform in [-1.5, -0.5] (qwen35's ssm_a = -exp(A_log))
enum class Fill { kRandom, kOnes, kSmall, kFactors, kDecay };

struct SynthTensor {
  std::string name;
  std::vector<uint64_t> ne;
  Fill fill;
};

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Row r of tensor t: uniform in [-a, a] from a generator seeded by (seed, tensor, row), so the
// bytes do not depend on the thread count.
void fill_row(float* x, int64_t n, Fill fill, float a, uint64_t seed, uint64_t tensor, uint64_t row) {
  if (fill == Fill::kOnes) {
    std::fill(x, x + n, 1.0f);
    return;
  }
  if (fill == Fill::kFactors) {
    fill_row(x, n, Fill::kRandom, 1.5f, seed, tensor, row);
    for (int64_t i = 0; i < n; ++i) x[i] += 2.5f;
    return;
  }
  if (fill == Fill::kDecay) {
    fill_row(x, n, Fill::kRandom, 0.5f, seed, tensor, row);
    for (int64_t i = 0; i < n; ++i) x[i] -= 1.0f;
    return;
  }
  uint64_t s = seed ^ (tensor * 0xD1B54A32D192ED03ull) ^ (row * 0x8CB92BA72F3D8DD7ull);
  splitmix64(s);
  const float scale = 2.0f * a / 4294967296.0f;
  int64_t i = 0;
  for (; i + 1 < n; i += 2) {
    const uint64_t v = splitmix64(s);
    x[i] = static_cast<float>(static_cast<uint32_t>(v)) * scale - a;
    x[i + 1] = static_cast<float>(static_cast<uint32_t>(v >> 32)) * scale - a;
  }
  if (i < n) x[i] = static_cast<float>(static_cast<uint32_t>(splitmix64(s))) * scale - a;
}

}  // namespace

int cmd_synth(int argc, char** argv) {
  CLI::App app{"Write a random-weight model of a given shape (for benchmarks at real sizes when no such\n"
               "trained model is at hand). Example:\n"
               "  nexttok synth --arch llama --n-embd 1536 --n-layer 20 --n-head 12 --n-head-kv 4 --n-ff 4096 \\\n"
               "    --ctx 4096 --vocab ../shared/vocab/ggml-vocab-llama-spm.gguf --type q8_0 -o medium-q8_0.gguf",
               "nexttok synth"};
  std::string arch, vocab_path, type_name = "f16", out;
  int64_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0, head_dim = 0, n_ctx = 4096;
  int64_t rope_dims = 0, rope_orig_ctx = 0, n_swa = 512, swa_pattern = 6;
  int64_t ssm_state = 128, ssm_groups = 16, ssm_heads = 0, ssm_conv = 4, full_attn_interval = 4;
  uint64_t seed = 42;
  int n_threads = 0;
  bool tied = false, best = false;
  double rope_base = 0, rope_base_swa = 10000.0, softcap = 0, rope_scale = 0;
  std::vector<std::string> arch_names;
  std::string arch_help = "architecture:", rope_help = "rope.freq_base (default:";
  for (const ArchInfo& a : arch_table()) {
    arch_names.emplace_back(a.name);
    arch_help += str_printf("%s %s%s%s%s", arch_names.size() > 1 ? "," : "", a.name, *a.summary ? " (" : "", a.summary,
                            *a.summary ? ")" : "");
    rope_help += str_printf("%s %.0f %s", arch_names.size() > 1 ? "," : "", a.synth_rope_freq_base, a.name);
  }
  rope_help += ")";
  app.add_option("--arch", arch, arch_help)->required();
  app.add_option("--n-embd", n_embd, "embedding size")->required();
  app.add_option("--n-layer", n_layer, "layers")->required();
  app.add_option("--n-head", n_head, "attention heads")->required();
  app.add_option("--n-head-kv", n_head_kv, "KV heads (default: n_head)");
  app.add_option("--n-ff", n_ff, "feed-forward size")->required();
  app.add_option("--head-dim", head_dim, "head size (default n_embd / n_head; written as attention.key_length)");
  app.add_option("-c,--ctx", n_ctx, "training context length recorded in the file");
  app.add_option("--vocab", vocab_path, "GGUF whose tokenizer.* keys are copied (e.g. ../shared/vocab/*.gguf)")->required();
  app.add_option("--type", type_name, "weight type: " + quant_preset_names() + " (default f16)");
  app.add_option("-o,--output", out, "output GGUF")->required();
  app.add_option("--seed", seed, "seed of the random weights (default 42)");
  app.add_option("--rope-freq-base", rope_base, rope_help);
  app.add_option("--rope-dims", rope_dims, "rotated dimensions per head, rope.dimension_count (default head_dim)");
  app.add_option("--rope-scale", rope_scale, "linear RoPE scaling factor (rope.scaling.*; gemma3: global layers only)");
  app.add_option("--rope-orig-ctx", rope_orig_ctx,
                 "phi3: rope.scaling.original_context_length; LongRoPE's long factors apply to sequence contexts "
                 "beyond it (default: -c)");
  app.add_option("--swa", n_swa, "gemma3: attention.sliding_window in positions, 0 = none (default 512)");
  app.add_option("--swa-pattern", swa_pattern, "gemma3: every layer but each N-th slides (default 6)");
  app.add_option("--rope-freq-base-swa", rope_base_swa, "gemma3: rope.freq_base_swa of sliding layers (default 10000)");
  app.add_option("--softcap", softcap, "gemma3: final_logit_softcapping, 0 = none (default 0)");
  app.add_option("--ssm-state", ssm_state, "qwen35: ssm.state_size, the key and value size of a DeltaNet head (default 128)");
  app.add_option("--ssm-groups", ssm_groups, "qwen35: ssm.group_count, DeltaNet q/k heads (default 16)");
  app.add_option("--ssm-heads", ssm_heads, "qwen35: ssm.time_step_rank, DeltaNet v heads (default --ssm-groups)");
  app.add_option("--ssm-conv", ssm_conv, "qwen35: ssm.conv_kernel, taps of the short convolution (default 4)");
  app.add_option("--full-attn-interval", full_attn_interval,
                 "qwen35: every N-th layer is full attention, the others Gated DeltaNet (default 4)");
  app.add_flag("--tie-embeddings", tied, "no output.weight: the output projection reuses token_embd");
  app.add_flag("--best", best, "full quantizer search (slower; random weights do not need it)");
  app.add_option("-t,--threads", n_threads, "threads; 0 = all physical cores (default 0)");
  auto check = [&]() -> Status {
    if (!find_arch(arch))
      return make_error("--arch '%s' is not supported (choose from: %s)", arch.c_str(), supported_arch_names().c_str());
    NT_TRY(check_range("--n-embd", n_embd, 1, int64_t(1) << 20));
    NT_TRY(check_range("--n-layer", n_layer, 1, 4096));
    NT_TRY(check_range("--n-head", n_head, 1, int64_t(1) << 14));
    if (n_head_kv != 0) NT_TRY(check_range("--n-head-kv", n_head_kv, 1, int64_t(1) << 14));
    NT_TRY(check_range("--n-ff", n_ff, 1, int64_t(1) << 22));
    if (head_dim != 0) NT_TRY(check_range("--head-dim", head_dim, 1, int64_t(1) << 14));
    NT_TRY(check_range("-c", n_ctx, 1, int64_t(1) << 30));
    if (rope_dims != 0) NT_TRY(check_range("--rope-dims", rope_dims, 2, int64_t(1) << 14));
    if (rope_orig_ctx != 0) NT_TRY(check_range("--rope-orig-ctx", rope_orig_ctx, 1, int64_t(1) << 30));
    NT_TRY(check_range("--swa", n_swa, 0, int64_t(1) << 30));
    NT_TRY(check_range("--swa-pattern", swa_pattern, 1, 4096));
    if (!(rope_base_swa > 0)) return make_error("--rope-freq-base-swa must be positive");
    if (!(softcap >= 0)) return make_error("--softcap must not be negative");
    if (!(rope_scale >= 0)) return make_error("--rope-scale must not be negative");
    NT_TRY(check_range("--ssm-state", ssm_state, 1, 4096));
    NT_TRY(check_range("--ssm-groups", ssm_groups, 1, 4096));
    if (ssm_heads != 0) NT_TRY(check_range("--ssm-heads", ssm_heads, 1, 4096));
    NT_TRY(check_range("--ssm-conv", ssm_conv, 2, 64));
    NT_TRY(check_range("--full-attn-interval", full_attn_interval, 1, 4096));
    return check_threads("-t", n_threads);
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;

  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "nexttok synth: %s\n", msg.c_str());
    return kExitUsage;
  };
  auto preset = quant_preset_from_name(type_name);
  if (!preset) return usage(str_printf("unknown --type '%s' (choose from: %s)", type_name.c_str(), quant_preset_names().c_str()));
  if (n_head_kv == 0) n_head_kv = n_head;
  if (n_head % n_head_kv != 0) return usage("--n-head must be a multiple of --n-head-kv");
  if (head_dim == 0) {
    if (n_embd % n_head != 0) return usage("--n-embd is not a multiple of --n-head; give --head-dim");
    head_dim = n_embd / n_head;
  }
  if (head_dim % 2 != 0) return usage("head_dim must be even (RoPE rotates pairs)");
  if (rope_dims == 0) rope_dims = head_dim;
  if (rope_dims % 2 != 0 || rope_dims > head_dim) return usage("--rope-dims must be even and at most head_dim");
  const ArchInfo& info = *find_arch(arch);  // --arch was checked against the table
  const SynthLayout layout = info.synth_layout;
  if (layout == SynthLayout::Fused && head_dim * n_head != n_embd)
    return usage("phi3 needs n_head * head_dim = n_embd (its output projection is square)");
  if (rope_orig_ctx == 0) rope_orig_ctx = n_ctx;
  for (const char* flag : {"--swa", "--swa-pattern", "--rope-freq-base-swa", "--softcap"})
    if (app.count(flag) > 0 && layout != SynthLayout::Sliding) return usage(str_printf("%s is for gemma3 only", flag));
  if (app.count("--rope-orig-ctx") > 0 && layout != SynthLayout::Fused) return usage("--rope-orig-ctx is for phi3 only");
  for (const char* flag : {"--ssm-state", "--ssm-groups", "--ssm-heads", "--ssm-conv", "--full-attn-interval"})
    if (app.count(flag) > 0 && layout != SynthLayout::Hybrid) return usage(str_printf("%s is for qwen35 only", flag));
  if (ssm_heads == 0) ssm_heads = ssm_groups;
  if (ssm_heads % ssm_groups != 0) return usage("--ssm-heads must be a multiple of --ssm-groups");

  if (auto s = GgufWriter::check_destination(out, {vocab_path}); !s) return fail("synth", s.error().message);
  auto vocab = GgufFile::open(vocab_path);
  if (!vocab) return fail("synth", vocab.error().message);
  const GgufValue* toks = vocab->get_array("tokenizer.ggml.tokens");
  if (!toks || toks->elem_type != GgufType::STRING || toks->n == 0)
    return fail("synth", vocab_path + ": no tokenizer.ggml.tokens array (not a vocab GGUF?)");
  const int64_t n_vocab = static_cast<int64_t>(toks->n);

  const int64_t q_dim = n_head * head_dim, kv_dim = n_head_kv * head_dim;
  const std::string a = arch + ".";
  GgufWriter w;
  w.set_str("general.architecture", arch);
  // The name leaves out the architecture: llama.cpp gives a model named "phi3" its vocabulary's
  // special-token attributes by name, and fails to load one whose vocabulary lacks those tokens.
  w.set_str("general.name", str_printf("synth-%lldx%lld", static_cast<long long>(n_embd), static_cast<long long>(n_layer)));
  w.set_str("general.description", str_printf("random weights (nexttok synth, seed %llu): for benchmarks only",
                                              static_cast<unsigned long long>(seed)));
  w.set_u32("general.alignment", 32);
  w.set_u32(a + "context_length", static_cast<uint32_t>(n_ctx));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(n_embd));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(n_ff));
  w.set_u32(a + "block_count", static_cast<uint32_t>(n_layer));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(n_head));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(n_head_kv));
  if (info.synth_key_length || head_dim * n_head != n_embd) {
    w.set_u32(a + "attention.key_length", static_cast<uint32_t>(head_dim));
    w.set_u32(a + "attention.value_length", static_cast<uint32_t>(head_dim));
  }
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(rope_dims));
  w.set_f32(a + "rope.freq_base", static_cast<float>(rope_base > 0 ? rope_base : info.synth_rope_freq_base));
  w.set_f32(a + "attention.layer_norm_rms_epsilon", info.synth_rms_eps);
  if (rope_scale > 0) {
    w.set_str(a + "rope.scaling.type", "linear");
    w.set_f32(a + "rope.scaling.factor", static_cast<float>(rope_scale));
  }
  w.set_u32(a + "vocab_size", static_cast<uint32_t>(n_vocab));
  if (layout == SynthLayout::Fused) {
    w.set_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(rope_orig_ctx));
    if (rope_orig_ctx < n_ctx && rope_orig_ctx > 1)  // LongRoPE's magnitude correction, as Phi-3.5 states it
      w.set_f32(a + "rope.scaling.attn_factor",
                static_cast<float>(std::sqrt(1.0 + std::log(double(n_ctx) / double(rope_orig_ctx)) / std::log(double(rope_orig_ctx)))));
  }
  if (layout == SynthLayout::Sliding) {
    if (n_swa > 0) {
      w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(n_swa));
      w.set_u32(a + "attention.sliding_window_pattern", static_cast<uint32_t>(swa_pattern));
      w.set_f32(a + "rope.freq_base_swa", static_cast<float>(rope_base_swa));
    }
    if (softcap > 0) w.set_f32(a + "final_logit_softcapping", static_cast<float>(softcap));
  }
  if (layout == SynthLayout::Hybrid) {
    w.set_u32(a + "ssm.conv_kernel", static_cast<uint32_t>(ssm_conv));
    w.set_u32(a + "ssm.state_size", static_cast<uint32_t>(ssm_state));
    w.set_u32(a + "ssm.group_count", static_cast<uint32_t>(ssm_groups));
    w.set_u32(a + "ssm.time_step_rank", static_cast<uint32_t>(ssm_heads));
    w.set_u32(a + "ssm.inner_size", static_cast<uint32_t>(ssm_heads * ssm_state));
    w.set_u32(a + "full_attention_interval", static_cast<uint32_t>(full_attn_interval));
    // M-RoPE sections over the rotated pairs (text tokens see one position in all of them).
    const auto pairs = static_cast<int32_t>(rope_dims / 2);
    w.set_i32_array(a + "rope.dimension_sections", {pairs - 2 * (pairs / 3), pairs / 3, pairs / 3, 0});
  }
  for (const auto& kv : vocab->kvs())
    if (starts_with(kv.key, "tokenizer.")) w.set_value(kv.key, kv.value);
  if (preset->base != DType::F32 && dtype_info(preset->base).block_size > 1) w.set_u32("general.quantization_version", 2);
  w.set_u32("general.file_type", preset->ftype);

  std::vector<SynthTensor> ts;
  auto add = [&](std::string name, std::vector<uint64_t> ne, Fill fill) { ts.push_back({std::move(name), std::move(ne), fill}); };
  const uint64_t E = static_cast<uint64_t>(n_embd), F = static_cast<uint64_t>(n_ff), V = static_cast<uint64_t>(n_vocab);
  const uint64_t Q = static_cast<uint64_t>(q_dim), K = static_cast<uint64_t>(kv_dim);
  add("token_embd.weight", {E, V}, Fill::kRandom);
  if (layout == SynthLayout::Fused) {
    add("rope_factors_long.weight", {static_cast<uint64_t>(rope_dims / 2)}, Fill::kFactors);
    add("rope_factors_short.weight", {static_cast<uint64_t>(rope_dims / 2)}, Fill::kFactors);
  }
  for (int64_t i = 0; i < n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    add(b + "attn_norm.weight", {E}, Fill::kOnes);
    if (layout == SynthLayout::Hybrid) {  // qwen35: a Gated DeltaNet or a gated attention layer
      const auto S = static_cast<uint64_t>(ssm_state), Hk = static_cast<uint64_t>(ssm_groups),
                 Hv = static_cast<uint64_t>(ssm_heads);
      if ((i + 1) % full_attn_interval != 0) {
        add(b + "attn_qkv.weight", {E, 2 * Hk * S + Hv * S}, Fill::kRandom);
        add(b + "attn_gate.weight", {E, Hv * S}, Fill::kRandom);
        add(b + "ssm_conv1d.weight", {static_cast<uint64_t>(ssm_conv), 2 * Hk * S + Hv * S}, Fill::kRandom);
        add(b + "ssm_dt.bias", {Hv}, Fill::kSmall);
        add(b + "ssm_a", {Hv}, Fill::kDecay);
        add(b + "ssm_beta.weight", {E, Hv}, Fill::kRandom);
        add(b + "ssm_alpha.weight", {E, Hv}, Fill::kRandom);
        add(b + "ssm_norm.weight", {S}, Fill::kOnes);
        add(b + "ssm_out.weight", {Hv * S, E}, Fill::kRandom);
      } else {
        add(b + "attn_q.weight", {E, 2 * Q}, Fill::kRandom);  // per head: Q rows, then gate rows
        add(b + "attn_k.weight", {E, K}, Fill::kRandom);
        add(b + "attn_v.weight", {E, K}, Fill::kRandom);
        add(b + "attn_q_norm.weight", {static_cast<uint64_t>(head_dim)}, Fill::kOnes);
        add(b + "attn_k_norm.weight", {static_cast<uint64_t>(head_dim)}, Fill::kOnes);
        add(b + "attn_output.weight", {Q, E}, Fill::kRandom);
      }
      add(b + info.ffn_norm_tensor, {E}, Fill::kOnes);
      add(b + "ffn_gate.weight", {E, F}, Fill::kRandom);
      add(b + "ffn_up.weight", {E, F}, Fill::kRandom);
      add(b + "ffn_down.weight", {F, E}, Fill::kRandom);
      continue;
    }
    if (layout == SynthLayout::Fused) {
      add(b + "attn_qkv.weight", {E, Q + 2 * K}, Fill::kRandom);
    } else {
      add(b + "attn_q.weight", {E, Q}, Fill::kRandom);
      add(b + "attn_k.weight", {E, K}, Fill::kRandom);
      add(b + "attn_v.weight", {E, K}, Fill::kRandom);
    }
    for (const LayerVector& v : info.layer_vectors)
      add(b + v.tensor, {static_cast<uint64_t>(vec_len(v.len, n_head, n_head_kv, head_dim, n_embd))},
          v.is_norm ? Fill::kOnes : Fill::kSmall);
    add(b + "attn_output.weight", {Q, E}, Fill::kRandom);
    add(b + "ffn_norm.weight", {E}, Fill::kOnes);
    if (layout == SynthLayout::Fused) {
      add(b + "ffn_up.weight", {E, 2 * F}, Fill::kRandom);  // gate rows, then up rows
    } else {
      add(b + "ffn_gate.weight", {E, F}, Fill::kRandom);
      add(b + "ffn_up.weight", {E, F}, Fill::kRandom);
    }
    add(b + "ffn_down.weight", {F, E}, Fill::kRandom);
  }
  add("output_norm.weight", {E}, Fill::kOnes);
  if (!tied) add("output.weight", {E, V}, Fill::kRandom);

  std::vector<TensorDesc> descs;
  for (const auto& t : ts) descs.push_back({t.name, static_cast<uint32_t>(t.ne.size()), t.ne[0], DType::F32});
  const std::vector<TensorPlan> plans = plan_quant_mix(*preset, descs, static_cast<uint64_t>(n_layer));
  for (size_t i = 0; i < ts.size(); ++i) w.add_tensor(ts[i].name, plans[i].type, ts[i].ne);
  std::fprintf(stderr, "synth: %s, n_embd %lld, %lld layers, %lld heads (%lld KV, head_dim %lld), n_ff %lld, vocab %lld, %s -> %s (%s)\n",
               arch.c_str(), static_cast<long long>(n_embd), static_cast<long long>(n_layer), static_cast<long long>(n_head),
               static_cast<long long>(n_head_kv), static_cast<long long>(head_dim), static_cast<long long>(n_ff),
               static_cast<long long>(n_vocab), preset->name, out.c_str(), format_bytes(w.total_bytes()).c_str());
  if (auto s = w.begin(out, {vocab_path}); !s) return fail("synth", s.error().message);

  const auto t0 = std::chrono::steady_clock::now();
  ThreadPool pool(resolve_threads(n_threads));
  const QuantEffort effort = best ? QuantEffort::kBest : QuantEffort::kFast;
  // two slabs: the pool fills one while a helper thread writes the other to disk
  std::vector<uint8_t> slabs[2];
  int cur = 0;
  std::future<Status> pending;
  std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.n_threads()));
  uint64_t written = 0;
  for (size_t ti = 0; ti < ts.size(); ++ti) {
    const SynthTensor& t = ts[ti];
    const DType type = plans[ti].type;
    const int64_t n_per_row = static_cast<int64_t>(t.ne[0]);
    const int64_t n_rows = static_cast<int64_t>(t.ne.size() > 1 ? t.ne[1] : 1);
    const uint64_t row_bytes = dtype_row_bytes(type, t.ne[0]);
    const float amp = t.fill == Fill::kSmall ? 0.02f * std::sqrt(3.0f) : std::sqrt(3.0f / static_cast<float>(n_per_row));
    const int64_t rows_per_slab = std::max<int64_t>(1, static_cast<int64_t>((16u << 20) / row_bytes));
    for (int64_t r0 = 0; r0 < n_rows; r0 += rows_per_slab) {
      const int64_t r1 = std::min(n_rows, r0 + rows_per_slab);
      std::vector<uint8_t>& slab = slabs[cur];
      slab.resize(row_bytes * static_cast<uint64_t>(r1 - r0));
      const int64_t rows_per_task = std::max<int64_t>(1, (r1 - r0) / (pool.n_threads() * 8));
      const int n_tasks = static_cast<int>((r1 - r0 + rows_per_task - 1) / rows_per_task);
      pool.run(n_tasks, [&](int task, int thread) {
        std::vector<float>& x = scratch[static_cast<size_t>(thread)];
        x.resize(static_cast<size_t>(n_per_row));
        const int64_t a0 = r0 + task * rows_per_task, a1 = std::min(r1, a0 + rows_per_task);
        for (int64_t r = a0; r < a1; ++r) {
          fill_row(x.data(), n_per_row, t.fill, amp, seed, ti, static_cast<uint64_t>(r));
          quantize_row(type, x.data(), slab.data() + row_bytes * static_cast<uint64_t>(r - r0), n_per_row, effort);
        }
      });
      if (pending.valid())
        if (Status s = pending.get(); !s) return fail("synth", s.error().message);
      pending = std::async(std::launch::async, [&w, &slab] { return w.write_tensor_chunk(slab.data(), slab.size()); });
      cur ^= 1;
      written += slab.size();
    }
    if (stderr_is_tty())
      std::fprintf(stderr, "\rsynth: %zu/%zu tensors, %s", ti + 1, ts.size(), format_bytes(written).c_str());
  }
  if (pending.valid())
    if (Status s = pending.get(); !s) return fail("synth", s.error().message);
  if (auto s = w.finish(); !s) return fail("synth", s.error().message);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "%ssynth: wrote %s: %zu tensors, %s in %.1f s (%.0f MiB/s)\n", stderr_is_tty() ? "\n" : "",
               out.c_str(), ts.size(), format_bytes(w.total_bytes()).c_str(), secs,
               static_cast<double>(w.total_bytes()) / (1 << 20) / std::max(secs, 1e-9));
  return kExitOk;
}

}  // namespace nt::cli
