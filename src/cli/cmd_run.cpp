// cli/cmd_run.cpp — `nexttok run`: tokenize the prompt, prefill it, decode token by token while
// streaming text to stdout; timings to stderr. `--top-logits K --json` prints the golden-file
// format instead (prompt_ids, steps with token and the K highest raw logits).
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/model_setup.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

struct RunArgs {
  ModelArgs model;
  EngineArgs engine;
  std::string prompt;
  std::string prompt_file;
  int n_predict = -1;
  float temp = 0.8f;
  int top_logits = 0;
  bool json = false;
  bool no_bos = false;
  bool parse_special = false;
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Valid UTF-8 or null (the golden format gives null and the hex bytes otherwise).
nlohmann::json piece_json(const std::string& s) {
  nlohmann::json j = s;
  try {
    (void)j.dump();
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
  return j;
}

std::string to_hex(const std::string& s) {
  std::string h;
  for (unsigned char c : s) h += str_printf("%02x", c);
  return h;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  RunArgs a;
  CLI::App app{"Generate text: prefill the prompt, then decode token by token, streaming to stdout.\n"
               "Timings (time to first token, prefill and decode tokens/s, KV cache) go to stderr.",
               "run"};
  add_model_options(app, a.model);
  add_engine_options(app, a.engine);
  app.add_option("-p,--prompt", a.prompt, "prompt text");
  app.add_option("-f,--file", a.prompt_file, "read the prompt from a file");
  app.add_option("-n,--n-predict", a.n_predict, "tokens to generate (-1: until end of generation or full context)");
  app.add_option("--temp", a.temp, "temperature; 0 = greedy (default 0.8)");
  app.add_option("--top-logits", a.top_logits, "with --json: report the K highest raw logits per step")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--json", a.json, "print one JSON object (golden-file format) instead of streaming text");
  app.add_flag("--no-bos", a.no_bos, "do not add the BOS token");
  app.add_flag("--parse-special", a.parse_special, "recognise special tokens written in the prompt");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;

  if (!a.prompt_file.empty()) {
    if (!a.prompt.empty()) return fail("run", "give either -p or -f, not both");
    auto text = read_file(a.prompt_file);
    if (!text) return fail("run", text.error().message);
    a.prompt = *text;
  }
  if (a.temp != 0.0f) std::fprintf(stderr, "run: note: only greedy decoding (--temp 0) is available in this build\n");

  auto lm = load_model(a.model, a.engine, a.json);
  if (!lm) return fail("run", lm.error().message);
  Engine& eng = *lm->engine;
  const Tokenizer& tok = *lm->tokenizer;
  const int32_t n_vocab = eng.config().n_vocab;

  std::vector<int32_t> prompt = tok.encode(a.prompt, !a.no_bos, a.parse_special);
  if (prompt.empty()) return fail("run", "the prompt is empty (no tokens); give -p TEXT");
  const int64_t n_ctx = eng.n_ctx();
  int64_t n_predict = a.n_predict < 0 ? n_ctx - static_cast<int64_t>(prompt.size()) : a.n_predict;
  if (static_cast<int64_t>(prompt.size()) + n_predict > n_ctx) {
    return fail("run", str_printf("prompt (%zu tokens) + -n %lld exceeds the context of %lld tokens by %lld; "
                                  "raise -c or lower -n",
                                  prompt.size(), static_cast<long long>(n_predict), static_cast<long long>(n_ctx),
                                  static_cast<long long>(static_cast<int64_t>(prompt.size()) + n_predict - n_ctx)));
  }

  const int seq = eng.new_sequence();
  const auto t_start = Clock::now();
  auto logits = eng.append(seq, prompt.data(), static_cast<int64_t>(prompt.size()));
  if (!logits) return fail("run", logits.error().message);
  const double prefill_ms = ms_since(t_start);
  double ttft_ms = 0;

  nlohmann::json steps = nlohmann::json::array();
  std::string text;
  StreamDecoder stream(tok);
  int64_t n_gen = 0;
  const auto t_decode = Clock::now();
  double decode_ms = 0;
  for (int64_t i = 0; i < n_predict; ++i) {
    const float* lg = *logits;
    const int32_t next = top_k_indices(lg, n_vocab, 1)[0];  // greedy
    if (i == 0) ttft_ms = ms_since(t_start);
    if (a.json) {
      nlohmann::json top = nlohmann::json::array();
      for (int32_t id : top_k_indices(lg, n_vocab, a.top_logits)) top.push_back({id, lg[id]});
      std::string piece = tok.token_to_piece(next);
      nlohmann::json st = {{"token", next}, {"piece", piece_json(piece)}, {"top", top}};
      if (st["piece"].is_null()) st["hex"] = to_hex(piece);
      steps.push_back(std::move(st));
    }
    ++n_gen;
    if (tok.is_eog(next)) break;
    std::string out = stream.push(next);
    text += out;
    if (!a.json && !out.empty()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
    if (i + 1 == n_predict) break;  // the last token needs no evaluation
    logits = eng.append(seq, &next, 1);
    if (!logits) return fail("run", logits.error().message);
  }
  decode_ms = ms_since(t_decode);
  std::string rest = stream.flush();
  text += rest;
  if (!a.json) {
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fputc('\n', stdout);
  }

  const double prefill_tps = prompt.size() / (prefill_ms / 1000.0);
  const EngineCounters& cnt = eng.counters();
  const double decode_tps = cnt.decode_tokens > 0 ? cnt.decode_tokens / cnt.decode_seconds : 0.0;
  const size_t kv_used = eng.kv_bytes_for(eng.seq_len(seq));
  if (a.json) {
    nlohmann::json j;
    j["prompt"] = a.prompt;
    j["prompt_ids"] = prompt;
    j["steps"] = std::move(steps);
    j["text"] = piece_json(text);
    j["stats"] = {{"prompt_tokens", prompt.size()}, {"generated_tokens", n_gen}, {"ttft_ms", ttft_ms},
                  {"prefill_tokens_per_s", prefill_tps}, {"decode_tokens_per_s", decode_tps},
                  {"kv_cache_bytes_used", kv_used}, {"kv_cache_bytes_allocated", eng.kv_bytes()},
                  {"n_ctx", n_ctx}, {"truncated", false}};
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fprintf(stderr,
                 "\nprompt: %zu tokens | time to first token: %.1f ms | prefill: %.1f tok/s | decode: %.1f tok/s "
                 "(%lld tokens, %.0f ms) | KV cache: %s used of %s | truncated: no\n",
                 prompt.size(), ttft_ms, prefill_tps, decode_tps, static_cast<long long>(n_gen), decode_ms,
                 format_bytes(kv_used).c_str(), format_bytes(eng.kv_bytes()).c_str());
  }
  return 0;
}

}  // namespace nt::cli
