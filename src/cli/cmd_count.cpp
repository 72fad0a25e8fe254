// cli/cmd_count.cpp — `nexttok count`: token arithmetic before running anything. For each
// tokenizer (-m repeated) and text: characters, bytes, tokens, tokens per 100 characters and per
// KB; optionally whether requests fit the context, the KV-cache memory they need (from the
// model's shape) and what they cost. Must not know: tokenizer internals, the engine.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/tokenizer_cli.h"
#include "core/strings.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

namespace {

using nlohmann::json;

struct Text {
  std::string name;
  std::string bytes;
};

struct Row {
  std::string name;
  uint64_t chars = 0, bytes = 0, tokens = 0;
  double per_100_chars() const { return chars ? 100.0 * double(tokens) / double(chars) : 0.0; }
  double per_kb() const { return bytes ? 1024.0 * double(tokens) / double(bytes) : 0.0; }
  json to_json() const {
    return {{"text", name}, {"chars", chars}, {"bytes", bytes}, {"tokens", tokens},
            {"tokens_per_100_chars", per_100_chars()}, {"tokens_per_kb", per_kb()}};
  }
};

uint64_t count_chars(const std::string& s) {
  uint64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // lead bytes (stray bytes count as one each)
  return n;
}

struct Options {
  std::optional<uint64_t> per_request, concurrency, ctx;
  std::optional<double> price_in, price_out;
  bool projection() const { return per_request || concurrency || ctx || price_in || price_out; }
};

}  // namespace

int cmd_count(int argc, char** argv) {
  CLI::App app{"Count tokens across texts and tokenizers; with --per-request/--concurrency/--ctx, "
               "whether requests fit and the KV-cache memory they need; with --price-in/--price-out, "
               "what they cost. Texts: FILES ('-' = stdin), --stdin, or -p TEXT (repeatable).",
               "count"};
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
  auto* o_cc = app.add_option("--concurrency", concurrency, "requests served at once")->check(CLI::PositiveNumber);
  auto* o_ctx = app.add_option("-c,--ctx", ctx, "context window (default: the model's training context)");
  auto* o_pi = app.add_option("--price-in", price_in, "price per million input tokens");
  auto* o_po = app.add_option("--price-out", price_out, "price per million output tokens");
  app.add_flag("--json", as_json, "one JSON document");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (o_pr->count()) o.per_request = per_request;
  if (o_cc->count()) o.concurrency = concurrency;
  if (o_ctx->count()) o.ctx = ctx;
  if (o_pi->count()) o.price_in = price_in;
  if (o_po->count()) o.price_out = price_out;

  std::vector<Text> texts;
  for (size_t i = 0; i < prompts.size(); ++i)
    texts.push_back({prompts.size() == 1 ? "-p" : "-p#" + std::to_string(i + 1), prompts[i]});
  bool stdin_used = false;
  for (const auto& f : files) {
    if (f == "-") {
      from_stdin = true;
      continue;
    }
    auto r = read_file(f);
    if (!r.ok()) return fail("count", r.error().message);
    texts.push_back({f, std::move(r.value())});
  }
  if (from_stdin && !stdin_used) {
    texts.push_back({"stdin", std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>())});
    stdin_used = true;
  }
  if (texts.empty()) {
    std::fprintf(stderr, "nexttok count: give texts as FILES, --stdin or -p TEXT\n");
    return kExitUsage;
  }
  if (models.empty()) models.emplace_back();

  json jmodels = json::array();
  std::string out;
  for (const auto& m : models) {
    auto path = resolve_model(m);
    if (!path.ok()) return fail("count", path.error().message);
    std::optional<GgufFile> gguf;
    std::optional<KvShape> shape;
    Result<std::unique_ptr<Tokenizer>> tok = Error{""};
    {
      auto g = GgufFile::open(path.value());
      if (g.ok()) {
        gguf.emplace(std::move(g.value()));
        tok = Tokenizer::from_gguf(*gguf);
        shape = kv_shape(*gguf);
      } else {
        tok = Tokenizer::from_file(path.value());
      }
    }
    if (!tok.ok()) return fail("count", tok.error().message);
    const Tokenizer& t = *tok.value();

    std::vector<Row> rows;
    Row total{"total"};
    for (const auto& tx : texts) {
      Row r{tx.name, count_chars(tx.bytes), tx.bytes.size(), t.encode(tx.bytes, !no_bos, !no_parse_special).size()};
      total.chars += r.chars;
      total.bytes += r.bytes;
      total.tokens += r.tokens;
      rows.push_back(r);
    }

    json jm;
    jm["model"] = path.value();
    jm["tokenizer"] = std::string(t.model_type());
    jm["pre"] = std::string(t.pre_type());
    jm["n_vocab"] = t.n_vocab();
    json jt = json::array();
    for (const auto& r : rows) jt.push_back(r.to_json());
    jm["texts"] = jt;
    jm["total"] = total.to_json();

    size_t w = 5;
    for (const auto& r : rows) w = std::max(w, r.name.size());
    out += str_printf("model %s (%s%s%s, n_vocab %d)\n", path.value().c_str(), std::string(t.model_type()).c_str(),
                      t.pre_type().empty() ? "" : "/", std::string(t.pre_type()).c_str(), t.n_vocab());
    out += str_printf("  %-*s %12s %12s %12s %10s %8s\n", int(w), "text", "chars", "bytes", "tokens", "tok/100ch",
                      "tok/KB");
    auto line = [&](const Row& r) {
      out += str_printf("  %-*s %12s %12s %12s %10.2f %8.1f\n", int(w), r.name.c_str(),
                        format_thousands(r.chars).c_str(), format_thousands(r.bytes).c_str(),
                        format_thousands(r.tokens).c_str(), r.per_100_chars(), r.per_kb());
    };
    for (const auto& r : rows) line(r);
    if (rows.size() > 1) line(total);

    if (o.projection()) {
      const uint64_t n_out = o.per_request.value_or(0);
      const uint64_t n_conc = o.concurrency.value_or(1);
      std::optional<uint64_t> n_ctx = o.ctx;
      if (!n_ctx && shape && shape->n_ctx_train) n_ctx = shape->n_ctx_train;
      const uint64_t kv_tok = shape ? shape->kv_bytes_per_token() : 0;
      json jp;
      jp["per_request_output_tokens"] = n_out;
      jp["concurrency"] = n_conc;
      jp["ctx"] = n_ctx ? json(*n_ctx) : json(nullptr);
      jp["kv_bytes_per_token"] = shape ? json(kv_tok) : json(nullptr);
      out += str_printf("  projection: %s output tokens per request, %s concurrent, context %s",
                        format_thousands(n_out).c_str(), format_thousands(n_conc).c_str(),
                        n_ctx ? format_thousands(*n_ctx).c_str() : "unknown");
      if (shape)
        out += str_printf(", KV cache %s per token (F16: 2 x %llu layers x %llu kv heads x %llu dims x 2 B)",
                          format_bytes(kv_tok).c_str(), (unsigned long long)shape->n_layer,
                          (unsigned long long)shape->n_head_kv, (unsigned long long)shape->head_dim);
      else
        out += ", KV cache unknown (no model shape in this file)";
      out += "\n";
      out += str_printf("  %-*s %12s %12s %5s %12s %12s", int(w), "request", "prompt", "total", "fits",
                        "KV/request", "KV total");
      const bool priced = o.price_in || o.price_out;
      if (priced) out += str_printf(" %12s %14s", "cost", "cost/1000");
      out += "\n";
      json jr = json::array();
      for (const auto& r : rows) {
        const uint64_t tot = r.tokens + n_out;
        std::optional<bool> fits;
        if (n_ctx) fits = tot <= *n_ctx;
        const double cost = double(r.tokens) * o.price_in.value_or(0) / 1e6 + double(n_out) * o.price_out.value_or(0) / 1e6;
        const uint64_t kv_req = tot * kv_tok;
        out += str_printf("  %-*s %12s %12s %5s %12s %12s", int(w), r.name.c_str(), format_thousands(r.tokens).c_str(),
                          format_thousands(tot).c_str(), fits ? (*fits ? "yes" : "NO") : "?",
                          shape ? format_bytes(kv_req).c_str() : "?",
                          shape ? format_bytes(kv_req * n_conc).c_str() : "?");
        if (priced) out += str_printf(" %12.6f %14.4f", cost, cost * 1000);
        out += "\n";
        json e = {{"text", r.name}, {"prompt_tokens", r.tokens}, {"total_tokens", tot},
                  {"fits", fits ? json(*fits) : json(nullptr)},
                  {"kv_bytes", shape ? json(kv_req) : json(nullptr)},
                  {"kv_bytes_total", shape ? json(kv_req * n_conc) : json(nullptr)}};
        if (priced) {
          e["cost"] = cost;
          e["cost_per_1000"] = cost * 1000;
        }
        jr.push_back(e);
      }
      jp["requests"] = jr;
      jm["projection"] = jp;
    }
    out += "\n";
    jmodels.push_back(jm);
  }
  if (as_json) {
    json j;
    j["models"] = jmodels;
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace nt::cli
