// cli/cmd_count.cpp — `nexttok count`: token arithmetic before running anything. For each
// tokenizer (-m repeated) and text: characters (code points), bytes, tokens, tokens per 100
// characters and per KiB; optionally whether requests fit the context, the cache memory they need
// (from the model shape the GGUF declares, by kind of layer: model/cache_footprint.h) and what they
// cost. With several tokenizers a
// closing summary gives each one's total and its ratio to the first.
// Must not know: tokenizer internals, the engine.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/tokenizer_cli.h"
#include "core/strings.h"
#include "gguf/gguf.h"
#include "model/cache_footprint.h"
#include "model/model_shape.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

namespace {

using nlohmann::json;

// The KV cache type the memory projection assumes (the engine's default).
constexpr DType kCacheType = DType::F16;

struct Text {
  std::string name;
  std::string bytes;
};

struct Row {
  std::string name;
  uint64_t chars = 0, bytes = 0, tokens = 0;
  double per_100_chars() const { return chars ? 100.0 * double(tokens) / double(chars) : 0.0; }
  double per_kib() const { return bytes ? 1024.0 * double(tokens) / double(bytes) : 0.0; }
  json to_json() const {
    return {{"text", name}, {"chars", chars}, {"bytes", bytes}, {"tokens", tokens},
            {"tokens_per_100_chars", per_100_chars()}, {"tokens_per_kib", per_kib()}};
  }
};

// Unicode code points; a byte that does not begin a complete UTF-8 sequence counts as one (as
// the U+FFFD it decodes to would).
uint64_t count_chars(std::string_view s) {
  uint64_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    i += ok ? len : 1;
  }
  return n;
}

struct Options {
  std::optional<uint64_t> per_request, concurrency, ctx;
  std::optional<double> price_in, price_out;
  std::string currency = "USD";
  bool projection() const { return per_request || concurrency || ctx || price_in || price_out; }
  bool priced() const { return price_in || price_out; }
};

// What one -m gives: its tokenizer and, for a GGUF, the model shape it declares and the cache that
// shape needs.
struct Source {
  std::string path, name;
  std::unique_ptr<Tokenizer> tok;
  std::optional<ModelShape> shape;
  std::optional<CacheFootprint> cache;  // set with shape
  std::string no_shape_why = "no model shape in this file";
  bool vocab_only = false;  // a GGUF without tensors: its shape may be a placeholder
};

// A GGUF is named by general.name, else its file name; a tokenizer.json by its folder.
std::string source_name(const std::string& path, const GgufFile* g) {
  if (g)
    if (auto n = g->get_str("general.name"); n && !n->empty()) return std::string(*n);
  const size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (!g && slash != std::string::npos && slash > 0) {
    const std::string dir = path.substr(0, slash);
    return dir.substr(dir.find_last_of('/') + 1);
  }
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".gguf") == 0) base.resize(base.size() - 5);
  return base;
}

Result<Source> open_source(const std::string& m) {
  Source s;
  auto path = resolve_model(m);
  if (!path.ok()) return path.error();
  s.path = path.value();
  auto g = GgufFile::open(s.path);
  auto tok = g.ok() ? Tokenizer::from_gguf(*g) : Tokenizer::from_file(s.path);
  if (!tok.ok()) return tok.error();
  s.tok = std::move(tok.value());
  s.name = source_name(s.path, g.ok() ? &*g : nullptr);
  if (!g.ok()) return s;
  s.vocab_only = g->tensors().empty();
  auto shape = read_model_shape(*g);
  if (!shape.ok()) {
    s.no_shape_why = shape.error().message;
    return s;
  }
  if (auto fp = cache_footprint(*g, *shape, kCacheType, kCacheType); fp && fp->kv_bytes_per_token() > 0) {
    s.shape = std::move(shape.value());
    s.cache = std::move(fp);
  }
  return s;
}

// The special tokens the tokenizer adds to every text ("BOS <s>", "[CLS] [SEP]").
std::string describe_specials(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) {
    if (!out.empty()) out += " ";
    if (id == t.bos()) out += "BOS ";
    else if (id == t.eos()) out += "EOS ";
    out += visible_piece(t.token_text(id));
  }
  return out;
}

// The memory and cost projection of one tokenizer's texts: a table on `out`, an object returned.
json project(const Options& o, const Source& src, const std::vector<Row>& rows, int w, std::string& out) {
  const uint64_t n_out = o.per_request.value_or(0);
  const uint64_t n_conc = o.concurrency.value_or(1);
  std::optional<uint64_t> n_ctx = o.ctx;
  const ModelShape* s = src.shape ? &*src.shape : nullptr;
  const CacheFootprint* fp = src.cache ? &*src.cache : nullptr;
  if (!n_ctx && s && s->n_ctx_train) n_ctx = *s->n_ctx_train;
  const std::string cache_type = dtype_info(kCacheType).name;
  json jp;
  jp["per_request_output_tokens"] = n_out;
  jp["concurrency"] = n_conc;
  jp["ctx"] = n_ctx ? json(*n_ctx) : json(nullptr);
  jp["kv_cache_type"] = to_lower(cache_type);
  // What every token adds for good (the full-attention layers), what it adds while inside the
  // sliding layers' window, and the recurrent state each request holds whatever its length.
  jp["kv_bytes_per_token"] = fp ? json(fp->full_bytes_per_token()) : json(nullptr);
  jp["sliding_kv_bytes_per_token"] = fp ? json(fp->sliding_bytes_per_token()) : json(nullptr);
  jp["sliding_window"] = fp && fp->n_sliding ? json(fp->n_swa) : json(nullptr);
  jp["recurrent_state_bytes_per_seq"] = fp ? json(fp->state_bytes_per_seq) : json(nullptr);
  jp["layers"] = fp ? json{{"full_attention", fp->n_full}, {"sliding_attention", fp->n_sliding},
                           {"recurrent", fp->n_recurrent}}
                    : json(nullptr);
  jp["shape"] = s ? json{{"n_layer", *s->n_layer}, {"n_head_kv", *s->n_head_kv}, {"head_dim", *s->head_dim},
                         {"head_dim_v", *s->head_dim_v}}
                  : json(nullptr);
  jp["shape_from_vocab_only_file"] = s && src.vocab_only;
  jp["currency"] = o.currency;
  jp["price_in_per_million"] = o.price_in ? json(*o.price_in) : json(nullptr);
  jp["price_out_per_million"] = o.price_out ? json(*o.price_out) : json(nullptr);

  out += str_printf("  projection: %s output tokens per request, %s concurrent, context %s",
                    format_thousands(n_out).c_str(), format_thousands(n_conc).c_str(),
                    n_ctx ? format_thousands(*n_ctx).c_str() : "unknown");
  if (fp) {
    const std::string dims = *s->head_dim == *s->head_dim_v
                                 ? std::to_string(*s->head_dim)
                                 : std::to_string(*s->head_dim) + "/" + std::to_string(*s->head_dim_v);
    const char* kind = fp->n_sliding ? " global" : fp->n_recurrent ? " attention" : "";
    out += str_printf(", KV cache %s per token (%s K+V: %llu%s layers x %llu KV heads x %s dims)",
                      format_bytes(fp->full_bytes_per_token()).c_str(), cache_type.c_str(),
                      (unsigned long long)fp->n_full, kind, (unsigned long long)*s->n_head_kv, dims.c_str());
    if (fp->n_sliding)
      out += str_printf(" + %s per token up to the %llu-position window of the %llu sliding layers",
                        format_bytes(fp->sliding_bytes_per_token()).c_str(), (unsigned long long)fp->n_swa,
                        (unsigned long long)fp->n_sliding);
    if (fp->n_recurrent)
      out += str_printf(" + recurrent state %s per sequence (%llu Gated DeltaNet layers)",
                        format_bytes(fp->state_bytes_per_seq).c_str(), (unsigned long long)fp->n_recurrent);
  } else {
    out += str_printf(", KV cache unknown (%s)", src.no_shape_why.c_str());
  }
  out += "\n";
  if (s && src.vocab_only)
    out += str_printf("  note: KV figures use the shape declared in this vocab-only file (%llu layers, %llu KV heads, "
                      "head_dim %llu); the model this tokenizer belongs to may differ\n",
                      (unsigned long long)*s->n_layer, (unsigned long long)*s->n_head_kv,
                      (unsigned long long)*s->head_dim);
  if (fp && fp->n_sliding)
    out += str_printf("  KV/request: the global layers at every position, the sliding layers at their last %llu "
                      "at most\n", (unsigned long long)fp->n_swa);
  if (fp && fp->n_recurrent)
    out += "  KV/request: the attention layers at every position + one recurrent state; KV total: one state "
           "per request\n";
  const std::string cost_hdr = "cost per request (" + o.currency + ")";
  const std::string cost_k_hdr = "per 1,000 requests (" + o.currency + ")";
  const int wc = int(std::max<size_t>(12, cost_hdr.size())), wk = int(std::max<size_t>(12, cost_k_hdr.size()));
  if (o.priced())
    out += str_printf("  prices: %g %s per million input tokens, %g %s per million output tokens\n",
                      o.price_in.value_or(0), o.currency.c_str(), o.price_out.value_or(0), o.currency.c_str());
  out += str_printf("  %-*s %12s %12s %5s %12s %12s", w, "request", "prompt", "total", "fits", "KV/request",
                    "KV total");
  if (o.priced()) out += str_printf("  %*s  %*s", wc, cost_hdr.c_str(), wk, cost_k_hdr.c_str());
  out += "\n";
  json jr = json::array();
  for (const auto& r : rows) {
    const uint64_t tot = r.tokens + n_out;
    std::optional<bool> fits;
    if (n_ctx) fits = tot <= *n_ctx;
    const double cost =
        double(r.tokens) * o.price_in.value_or(0) / 1e6 + double(n_out) * o.price_out.value_or(0) / 1e6;
    // One request's cache: its KV (sliding layers capped at the window) and its recurrent state.
    const uint64_t kv_req = fp ? fp->seq_bytes(tot) : 0;
    const uint64_t kv_all = saturating_mul(kv_req, n_conc);
    out += str_printf("  %-*s %12s %12s %5s %12s %12s", w, r.name.c_str(), format_thousands(r.tokens).c_str(),
                      format_thousands(tot).c_str(), fits ? (*fits ? "yes" : "NO") : "?",
                      fp ? format_bytes(kv_req).c_str() : "?", fp ? format_bytes(kv_all).c_str() : "?");
    if (o.priced()) out += str_printf("  %*.6f  %*.4f", wc, cost, wk, cost * 1000);
    out += "\n";
    json e = {{"text", r.name}, {"prompt_tokens", r.tokens}, {"total_tokens", tot},
              {"fits", fits ? json(*fits) : json(nullptr)}, {"kv_bytes", fp ? json(kv_req) : json(nullptr)},
              {"kv_bytes_total", fp ? json(kv_all) : json(nullptr)},
              {"attention_kv_bytes", fp ? json(fp->kv_bytes(tot)) : json(nullptr)},
              {"recurrent_state_bytes", fp ? json(fp->state_bytes_per_seq) : json(nullptr)}};
    if (o.priced()) {
      e["cost_per_request"] = cost;
      e["cost_per_1000_requests"] = cost * 1000;
    }
    jr.push_back(e);
  }
  jp["requests"] = jr;
  return jp;
}

}  // namespace

int cmd_count(int argc, char** argv) {
  CLI::App app{"Count tokens across texts and tokenizers; with --per-request/--concurrency/--ctx, "
               "whether requests fit and the KV-cache memory they need; with --price-in/--price-out, "
               "what they cost. Texts: FILES ('-' = stdin), --stdin, or -p TEXT (repeatable).\n"
               "The memory follows the layers' kinds: full-attention layers grow with every token "
               "(--json: kv_bytes_per_token), sliding-window layers up to their window "
               "(sliding_kv_bytes_per_token, sliding_window), and a hybrid model's recurrent layers hold "
               "one fixed state per request (recurrent_state_bytes_per_seq); a request's kv_bytes is "
               "their sum for its tokens (attention_kv_bytes + recurrent_state_bytes).",
               "nexttok count"};
  std::vector<std::string> models, files, prompts;
  bool from_stdin = false, no_bos = false, no_parse_special = false, as_json = false;
  Options o;
  uint64_t per_request = 0, concurrency = 1, ctx = 0;
  double price_in = 0, price_out = 0;
  app.add_option("-m,--model", models, "GGUF or tokenizer.json (repeat for several); default: the default model")
      ->allow_extra_args(false);
  app.add_option("files", files, "text files to count ('-' = stdin)");
  app.add_option("-p,--prompt", prompts, "a text to count (repeatable)")->allow_extra_args(false);
  app.add_flag("--stdin", from_stdin, "count standard input as one text");
  app.add_flag("--no-bos", no_bos, "count no special tokens (BOS/EOS/[CLS]/[SEP])");
  app.add_flag("--no-parse-special", no_parse_special, "treat control-token text as plain text");
  auto* o_pr = app.add_option("--per-request", per_request, "expected output tokens per request");
  auto* o_cc = app.add_option("--concurrency", concurrency, "requests served at once, 1 to 1000000 (default 1)");
  auto* o_ctx = app.add_option("-c,--ctx", ctx, "context window (default: the model's training context)");
  auto* o_pi = app.add_option("--price-in", price_in, "price per million input tokens, in --currency");
  auto* o_po = app.add_option("--price-out", price_out, "price per million output tokens, in --currency");
  app.add_option("--currency", o.currency, "currency the prices are in, shown with every cost (default USD)");
  app.add_flag("--json", as_json, "one JSON document");
  auto check = [&]() -> Status {
    NT_TRY(check_range("--concurrency", static_cast<int64_t>(std::min<uint64_t>(concurrency, INT64_MAX)), 1, 1000000));
    if (o.currency.empty()) return make_error("--currency must not be empty");
    for (auto [flag, v] : {std::pair{"--price-in", price_in}, std::pair{"--price-out", price_out}})
      if (!std::isfinite(v) || v < 0) return make_error("%s must be a non-negative number (got %g)", flag, v);
    return {};
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;
  if (o_pr->count()) o.per_request = per_request;
  if (o_cc->count()) o.concurrency = concurrency;
  if (o_ctx->count()) o.ctx = ctx;
  if (o_pi->count()) o.price_in = price_in;
  if (o_po->count()) o.price_out = price_out;

  std::vector<Text> texts;
  for (size_t i = 0; i < prompts.size(); ++i)
    texts.push_back({prompts.size() == 1 ? "-p" : "-p#" + std::to_string(i + 1), prompts[i]});
  for (const auto& f : files) {
    if (f == "-") {
      from_stdin = true;
      continue;
    }
    auto r = read_file(f);
    if (!r.ok()) return fail("count", r.error().message);
    texts.push_back({f, std::move(r.value())});
  }
  if (from_stdin)
    texts.push_back({"stdin", std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>())});
  if (texts.empty()) {
    std::fprintf(stderr, "nexttok count: give texts as FILES, --stdin or -p TEXT\n");
    return kExitUsage;
  }
  if (models.empty()) models.emplace_back();

  std::vector<Source> sources;
  for (const auto& m : models) {
    auto src = open_source(m);
    if (!src.ok()) return fail("count", src.error().message);
    sources.push_back(std::move(src.value()));
  }
  // Names label the summary; files that share one are told apart by their paths.
  std::vector<std::string> names;
  for (const auto& a : sources) names.push_back(a.name);
  for (auto& a : sources)
    if (std::count(names.begin(), names.end(), a.name) > 1) a.name = a.path;

  json jmodels = json::array(), jsummary = json::array();
  std::string out;
  std::vector<uint64_t> totals;
  for (const Source& src : sources) {
    const Tokenizer& t = *src.tok;
    const std::vector<int32_t> specials = no_bos ? std::vector<int32_t>() : t.encode("", true, false);
    const bool bos_counted = t.bos() >= 0 && std::find(specials.begin(), specials.end(), t.bos()) != specials.end();

    std::vector<Row> rows;
    Row total{"total"};
    for (const auto& tx : texts) {
      Row r{tx.name, count_chars(tx.bytes), tx.bytes.size(), t.encode(tx.bytes, !no_bos, !no_parse_special).size()};
      total.chars += r.chars;
      total.bytes += r.bytes;
      total.tokens += r.tokens;
      rows.push_back(r);
    }
    totals.push_back(total.tokens);

    json jm;
    jm["model"] = src.path;
    jm["name"] = src.name;
    jm["tokenizer"] = std::string(t.model_type());
    jm["pre"] = std::string(t.pre_type());
    jm["n_vocab"] = t.n_vocab();
    jm["vocab_only"] = src.vocab_only;
    jm["special_tokens_per_text"] = specials.size();
    jm["bos_counted"] = bos_counted;
    json jt = json::array();
    for (const auto& r : rows) jt.push_back(r.to_json());
    jm["texts"] = jt;
    jm["total"] = total.to_json();

    size_t w = 7;
    for (const auto& r : rows) w = std::max(w, r.name.size());
    out += str_printf("model %s (%s%s%s, n_vocab %d)\n", src.path.c_str(), std::string(t.model_type()).c_str(),
                      t.pre_type().empty() ? "" : "/", std::string(t.pre_type()).c_str(), t.n_vocab());
    out += str_printf("  %-*s %12s %12s %12s %10s %8s\n", int(w), "text", "chars", "bytes", "tokens", "tok/100ch",
                      "tok/KiB");
    auto line = [&](const Row& r) {
      out += str_printf("  %-*s %12s %12s %12s %10.2f %8.1f\n", int(w), r.name.c_str(),
                        format_thousands(r.chars).c_str(), format_thousands(r.bytes).c_str(),
                        format_thousands(r.tokens).c_str(), r.per_100_chars(), r.per_kib());
    };
    for (const auto& r : rows) line(r);
    if (rows.size() > 1) line(total);
    if (!specials.empty())
      out += str_printf("  note: each count includes %zu special token%s per text (%s); --no-bos leaves %s out\n",
                        specials.size(), specials.size() == 1 ? "" : "s", describe_specials(t, specials).c_str(),
                        specials.size() == 1 ? "it" : "them");
    if (o.projection()) jm["projection"] = project(o, src, rows, int(w), out);
    out += "\n";
    jmodels.push_back(jm);
  }

  // The closing summary: each tokenizer's total and its ratio to the first.
  size_t wn = 0, wt = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    wn = std::max(wn, sources[i].name.size());
    wt = std::max(wt, format_thousands(totals[i]).size());
  }
  if (sources.size() > 1)
    out += str_printf("summary: total tokens of the %zu text%s per tokenizer, and the ratio to the first\n",
                      texts.size(), texts.size() == 1 ? "" : "s");
  for (size_t i = 0; i < sources.size(); ++i) {
    std::optional<double> ratio;
    if (totals[0]) ratio = double(totals[i]) / double(totals[0]);
    jsummary.push_back({{"name", sources[i].name}, {"model", sources[i].path}, {"tokens", totals[i]},
                        {"ratio_to_first", ratio ? json(*ratio) : json(nullptr)}});
    if (sources.size() < 2) continue;
    out += str_printf("  %-*s  %*s tokens  ", int(wn), sources[i].name.c_str(), int(wt),
                      format_thousands(totals[i]).c_str());
    out += ratio ? str_printf("%.2fx", *ratio) : std::string("-");
    if (i) out += " of " + sources[0].name;
    out += "\n";
  }

  if (as_json) {
    json j;
    j["models"] = jmodels;
    j["summary"] = jsummary;
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace nt::cli
