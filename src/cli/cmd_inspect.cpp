// cli/cmd_inspect.cpp — `nexttok inspect MODEL.gguf`: the model spec page (shape, tensor types,
// tokenizer summary) and the memory picture (weights + KV cache for context x sequences).
// Must not know: how models run (reads ModelShape and the GGUF directory only).
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/strings.h"
#include "gguf/gguf.h"
#include "model/cache_footprint.h"
#include "model/model_config.h"
#include "model/model_shape.h"
#include "model/quant_mix.h"

namespace nt::cli {

namespace {

using nlohmann::json;

struct SpecialToken {
  const char* role;  // "bos", "eos", ...
  const char* key;   // tokenizer.ggml.<key>
};
constexpr SpecialToken kSpecial[] = {
    {"bos", "tokenizer.ggml.bos_token_id"},       {"eos", "tokenizer.ggml.eos_token_id"},
    {"eot", "tokenizer.ggml.eot_token_id"},       {"eom", "tokenizer.ggml.eom_token_id"},
    {"unk", "tokenizer.ggml.unknown_token_id"},   {"sep", "tokenizer.ggml.seperator_token_id"},
    {"pad", "tokenizer.ggml.padding_token_id"},   {"mask", "tokenizer.ggml.mask_token_id"},
    {"fim_pre", "tokenizer.ggml.fim_pre_token_id"}, {"fim_suf", "tokenizer.ggml.fim_suf_token_id"},
    {"fim_mid", "tokenizer.ggml.fim_mid_token_id"},
};

// Context lengths for the memory table: 512, 1024, ... below n_ctx_train, then n_ctx_train.
// The doubling stops before it could overflow (a damaged file may declare 2^64 - 1).
std::vector<uint64_t> table_contexts(uint64_t n_ctx_train) {
  std::vector<uint64_t> v;
  for (uint64_t c = 512; c < n_ctx_train; c *= 2) {
    v.push_back(c);
    if (c > n_ctx_train / 2) break;
  }
  v.push_back(n_ctx_train);
  return v;
}

constexpr int kSeqs[] = {1, 4, 16};

template <class T>
json opt_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string opt_str(const std::optional<uint64_t>& v) {
  return v ? format_thousands(*v) : std::string("-");
}

std::string token_text(const GgufFile& f, int64_t id) {
  const GgufValue* toks = f.get_array("tokenizer.ggml.tokens");
  if (!toks || id < 0 || static_cast<uint64_t>(id) >= toks->strs.size()) return "";
  return std::string(toks->strs[static_cast<size_t>(id)]);
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out += c;
  }
  return out + "'";
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  CLI::App app{"Show a GGUF model's spec page: name, shape, tensor types, tokenizer, and the memory\n"
               "it needs (weights + KV cache for context lengths x parallel sequences).\n"
               "Works on vocab-only files too (model fields then show as '-' / null).",
               "nexttok inspect"};
  std::string pos_model;
  ModelArgs margs;
  bool as_json = false;
  app.add_option("model", pos_model, "GGUF file (or -m); default: the default model");
  add_model_options(app, margs);
  app.add_flag("--json", as_json, "print one JSON object on one line");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (!pos_model.empty() && !margs.model.empty() && pos_model != margs.model)
    return fail("inspect", "give the model either as an argument or with -m, not both"), kExitUsage;
  if (!pos_model.empty()) margs.model = pos_model;
  auto path = resolve_model(margs);
  if (!path) return fail("inspect", path.error().message);

  auto file = GgufFile::open(*path);
  if (!file) return fail("inspect", file.error().message);
  const GgufFile& f = *file;
  auto shape_r = read_model_shape(f);
  if (!shape_r) return fail("inspect", shape_r.error().message);
  const ModelShape& s = *shape_r;

  std::map<std::string, uint64_t> types;
  for (const auto& t : f.tensors()) types[std::string(dtype_name(t.type))]++;
  std::optional<std::string> file_type;
  if (auto ft = f.get_u64("general.file_type")) file_type = ftype_name(static_cast<uint32_t>(*ft));
  const bool has_template = f.get_str("tokenizer.chat_template").has_value();
  // The cache by kind of layer: sliding layers (gemma3) keep their window, recurrent layers (qwen35)
  // a state per sequence instead of KV. The config decides whether a file's sliding_window counts.
  auto cfg = read_model_config(f);
  const ModelConfig* c = cfg ? &*cfg : nullptr;
  const std::optional<CacheFootprint> fp = cache_footprint(s, c, DType::F16, DType::F16);
  const std::optional<CacheFootprint> fp_q8 = cache_footprint(s, c, DType::Q8_0, DType::Q8_0);
  std::optional<uint64_t> kv_f16, kv_q8;  // every attention layer, per token
  if (fp) kv_f16 = fp->kv_bytes_per_token();
  if (fp_q8) kv_q8 = fp_q8->kv_bytes_per_token();
  const bool swa = fp && fp->n_sliding > 0;
  const bool hyb = fp && fp->n_recurrent > 0;
  const uint64_t state_bytes = fp ? fp->state_bytes_per_seq : 0;  // per sequence, constant in context
  // One memory figure: n_seq sequences of n_ctx tokens, windows capped or every layer at every position.
  auto seq_kv = [&](uint64_t n_ctx, int n_seq, bool capped) {
    const uint64_t one = capped ? fp->seq_bytes(n_ctx) : saturating_add(fp->kv_bytes_uncapped(n_ctx), state_bytes);
    return saturating_mul(one, static_cast<uint64_t>(n_seq));
  };
  const double bpw = s.n_params ? 8.0 * static_cast<double>(s.weight_bytes) / static_cast<double>(s.n_params) : 0;

  std::vector<std::pair<std::string, int64_t>> specials;
  for (const auto& sp : kSpecial)
    if (auto id = f.get_i64(sp.key)) specials.emplace_back(sp.role, *id);

  if (as_json) {
    json j;
    j["file"] = *path;
    j["gguf_version"] = f.version();
    j["architecture"] = opt_json(s.architecture);
    j["name"] = opt_json(s.name);
    j["n_params"] = s.n_params;
    j["file_bytes"] = f.file_size();
    j["n_tensors"] = s.n_tensors;
    j["vocab_only"] = s.n_tensors == 0;
    j["tensor_types"] = json::object();
    for (const auto& [k, v] : types) j["tensor_types"][k] = v;
    j["file_type"] = opt_json(file_type);
    j["bits_per_weight"] = s.n_params ? json(bpw) : json(nullptr);
    j["n_ctx_train"] = opt_json(s.n_ctx_train);
    j["n_layer"] = opt_json(s.n_layer);
    j["n_embd"] = opt_json(s.n_embd);
    j["n_head"] = opt_json(s.n_head);
    j["n_head_kv"] = opt_json(s.n_head_kv);
    j["head_dim"] = opt_json(s.head_dim);
    j["head_dim_v"] = opt_json(s.head_dim_v);
    j["n_ff"] = opt_json(s.n_ff);
    j["rms_eps"] = opt_json(s.rms_eps);
    j["rope"] = {{"freq_base", opt_json(s.rope_freq_base)},
                 {"dimension_count", opt_json(s.rope_dims)},
                 {"scaling_type", opt_json(s.rope_scaling_type)},
                 {"scaling_factor", opt_json(s.rope_scaling_factor)},
                 {"original_context_length", opt_json(s.rope_scaling_orig_ctx)}};
    j["sliding_window"] = swa ? json{{"n_swa", fp->n_swa}, {"n_swa_layers", fp->n_sliding},
                                     {"freq_base_swa", c->rope_swa.freq_base}}
                              : json(nullptr);
    j["n_vocab"] = opt_json(s.n_vocab);
    j["tokenizer_model"] = opt_json(s.tokenizer_model);
    auto pre = f.get_str("tokenizer.ggml.pre");
    j["tokenizer_pre"] = pre ? json(std::string(*pre)) : json(nullptr);
    j["special_tokens"] = json::object();
    for (const auto& [role, id] : specials)
      j["special_tokens"][role] = {{"id", id}, {"text", token_text(f, id)}};
    j["chat_template"] = has_template;
    j["weight_bytes"] = s.weight_bytes;
    j["kv_bytes_per_token_f16"] = opt_json(kv_f16);
    j["kv_bytes_per_token_q8_0"] = opt_json(kv_q8);
    json mem = json::array();
    if (kv_f16 && s.n_ctx_train && *s.n_ctx_train > 0 && s.n_tensors > 0) {
      for (uint64_t n_ctx : table_contexts(*s.n_ctx_train))
        for (int n_seq : kSeqs) {
          const uint64_t kv = seq_kv(n_ctx, n_seq, false);
          mem.push_back({{"n_ctx", n_ctx}, {"n_seq", n_seq}, {"kv_bytes_f16", kv},
                         {"total_bytes", saturating_add(kv, s.weight_bytes)},
                         {"kv_exceeds_weights", kv > s.weight_bytes}});
          if (swa) mem.back()["kv_bytes_f16_window_capped"] = seq_kv(n_ctx, n_seq, true);
        }
    }
    j["memory"] = mem;
    j["hybrid"] = hyb ? json{{"n_recurrent_layers", fp->n_recurrent}, {"attention_layers", fp->attention_layers},
                             {"recurrent_state_bytes_per_seq", fp->state_bytes_per_seq},
                             {"prefix_cache_reuse", true}}
                      : json(nullptr);
    std::fputs((j.dump() + "\n").c_str(), stdout);
    return kExitOk;
  }

  std::string out;
  auto line = [&](const char* k, const std::string& v) { out += str_printf("  %-17s %s\n", k, v.c_str()); };
  out += *path + "\n";
  line("name", s.name.value_or("-"));
  line("architecture", s.architecture.value_or("-"));
  line("parameters", str_printf("%s (%.2f M)", format_thousands(s.n_params).c_str(), s.n_params / 1e6));
  line("file", str_printf("%s (%s bytes), GGUF v%u", format_bytes(f.file_size()).c_str(),
                          format_thousands(f.file_size()).c_str(), f.version()));
  std::string hist;
  for (const auto& [k, v] : types) hist += (hist.empty() ? "" : ", ") + k + " x" + std::to_string(v);
  line("tensors", str_printf("%llu%s%s", static_cast<unsigned long long>(s.n_tensors), hist.empty() ? "" : ": ", hist.c_str()));
  if (file_type || s.n_params)
    line("file type", str_printf("%s%s", file_type.value_or("-").c_str(),
                                 s.n_params ? str_printf(" (%.2f bits per weight)", bpw).c_str() : ""));
  out += "model\n";
  line("context (train)", opt_str(s.n_ctx_train));
  line("layers", opt_str(s.n_layer));
  line("n_embd", opt_str(s.n_embd));
  std::string heads = opt_str(s.n_head);
  if (s.n_head_kv) heads += str_printf("  (KV heads %llu", static_cast<unsigned long long>(*s.n_head_kv));
  if (s.n_head_kv && s.head_dim) heads += str_printf(", head_dim %llu", static_cast<unsigned long long>(*s.head_dim));
  if (s.n_head_kv && s.head_dim_v && s.head_dim && *s.head_dim_v != *s.head_dim)
    heads += str_printf(", V head_dim %llu", static_cast<unsigned long long>(*s.head_dim_v));
  if (s.n_head && s.n_head_kv && *s.n_head_kv)
    heads += str_printf(", GQA %llu)", static_cast<unsigned long long>(*s.n_head / *s.n_head_kv));
  else if (s.n_head_kv) heads += ")";
  line("heads", heads);
  line("n_ff", opt_str(s.n_ff));
  std::string rope = "-";
  if (s.rope_freq_base || s.rope_dims) {
    // llama.cpp uses 10000 when the file has no freq_base
    rope = s.rope_freq_base ? str_printf("freq_base %g", *s.rope_freq_base) : "freq_base 10000 (default)";
    if (s.rope_dims) rope += str_printf(", dims %llu", static_cast<unsigned long long>(*s.rope_dims));
    rope += ", scaling " + s.rope_scaling_type.value_or("none");
    if (s.rope_scaling_factor) rope += str_printf(" x%g", *s.rope_scaling_factor);
    if (s.rope_scaling_orig_ctx) rope += str_printf(" (original ctx %llu)", static_cast<unsigned long long>(*s.rope_scaling_orig_ctx));
  }
  line("rope", rope);
  line("rms eps", s.rms_eps ? str_printf("%g", *s.rms_eps) : "-");
  if (swa)
    line("sliding window", str_printf("%llu positions on %llu of %llu layers (their rope freq_base %g)",
                                      (unsigned long long)fp->n_swa, (unsigned long long)fp->n_sliding,
                                      (unsigned long long)fp->n_layer, c->rope_swa.freq_base));
  if (hyb) {
    std::string at;
    for (int il : fp->attention_layers) at += (at.empty() ? "" : ", ") + std::to_string(il);
    line("hybrid", str_printf("%llu Gated DeltaNet (recurrent) layers, %zu full attention: %s",
                              (unsigned long long)fp->n_recurrent, fp->attention_layers.size(), at.c_str()));
  }
  out += "tokenizer\n";
  std::string tok = s.tokenizer_model.value_or("-");
  if (auto pre = f.get_str("tokenizer.ggml.pre")) tok += " (pre: " + std::string(*pre) + ")";
  line("model", tok);
  line("n_vocab", opt_str(s.n_vocab));
  std::string sp;
  for (const auto& [role, id] : specials)
    sp += str_printf("%s%s %lld %s", sp.empty() ? "" : ", ", role.c_str(), static_cast<long long>(id),
                     quoted(token_text(f, id)).c_str());
  line("special tokens", sp.empty() ? "-" : sp);
  line("chat template", has_template ? "yes" : "no");
  out += "memory\n";
  if (s.n_tensors == 0) {
    line("weights", "none (vocab-only file: the shape above is what its metadata declares)");
  } else {
    line("weights", format_bytes(s.weight_bytes));
  }
  if (kv_f16 && kv_q8)
    line("KV cache / token", str_printf("%s (F16), %s (Q8_0)", format_bytes(static_cast<uint64_t>(*kv_f16)).c_str(),
                                        format_bytes(static_cast<uint64_t>(*kv_q8)).c_str()));
  else
    line("KV cache / token", "-");
  if (hyb) {
    line("recurrent state", str_printf("%s per sequence, constant in context (conv %s + delta %s; %llu layers)",
                                       format_bytes(fp->state_bytes_per_seq).c_str(),
                                       format_bytes(fp->conv_state_bytes_per_seq).c_str(),
                                       format_bytes(fp->state_bytes_per_seq - fp->conv_state_bytes_per_seq).c_str(),
                                       (unsigned long long)fp->n_recurrent));
    line("prefix cache", str_printf("reused up to the latest state snapshot in the shared prefix (one %s copy of the "
                                    "state at each prompt's end and every --state-snapshot-every tokens); the "
                                    "rest is recomputed", format_bytes(fp->state_bytes_per_seq).c_str()));
  }
  if (kv_f16 && s.n_ctx_train && *s.n_ctx_train > 0 && s.n_tensors > 0) {
    out += hyb ? "  total = weights + F16 KV cache of the attention layers for n_ctx tokens + the recurrent\n"
                 "  state, in each of n_seq sequences\n"
               : "  total = weights + F16 KV cache for n_ctx tokens in each of n_seq sequences\n";
    out += "  (* = KV cache outweighs the weights; compute buffers not included)\n";
    out += str_printf("  %10s %13s %13s %13s\n", "n_ctx", "n_seq=1", "n_seq=4", "n_seq=16");
    for (uint64_t n_ctx : table_contexts(*s.n_ctx_train)) {
      out += str_printf("  %10s", format_thousands(n_ctx).c_str());
      for (int n_seq : kSeqs) {
        const uint64_t kv = seq_kv(n_ctx, n_seq, false);
        out += str_printf(" %12s%s", format_bytes(saturating_add(kv, s.weight_bytes)).c_str(),
                          kv > s.weight_bytes ? "*" : " ");
      }
      out += "\n";
    }
    if (swa) {
      out += str_printf("  with the %d sliding layers capped at their window of %d positions (what they can see\n"
                        "  and all nexttok's cache keeps of them, in whole blocks, as llama.cpp does; the table\n"
                        "  above is every layer at every position):\n",
                        static_cast<int>(fp->n_sliding), static_cast<int>(fp->n_swa));
      for (uint64_t n_ctx : table_contexts(*s.n_ctx_train)) {
        out += str_printf("  %10s", format_thousands(n_ctx).c_str());
        for (int n_seq : kSeqs) {
          const uint64_t kv = seq_kv(n_ctx, n_seq, true);
          out += str_printf(" %12s%s", format_bytes(saturating_add(kv, s.weight_bytes)).c_str(),
                            kv > s.weight_bytes ? "*" : " ");
        }
        out += "\n";
      }
    }
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace nt::cli
