// cli/cmd_run.cpp — `nexttok run`: tokenize the prompt, check it fits (or --truncate it), prefill,
// then sample token by token (the sampler chain of sampling/sampler.h) while streaming text to
// stdout; timings and whether the prompt was truncated to stderr. `--top-logits K --json` prints
// the golden-file format instead (prompt_ids, steps with token and the K highest raw logits);
// `--show-probs` prints each chosen token with its probability and the top alternatives after
// the sampling transforms.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/generate.h"
#include "cli/model_setup.h"
#include "cli/prompt_setup.h"
#include "core/strings.h"

namespace nt::cli {

namespace {

struct RunArgs {
  ModelArgs model;
  EngineArgs engine;
  SamplingArgs sampling;
  PromptArgs prompt;
  int64_t n_predict = -1;
  int top_logits = 0;
  bool json = false;
  bool show_probs = false;
  int n_probs = 5;
};


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
  CLI::App app{"Generate text: prefill the prompt, then sample token by token, streaming to stdout.\n"
               "Sampling chain (each stage optional, in this order): logit bias, repetition/presence/\n"
               "frequency penalties, top-k, typical, top-p, min-p, temperature, draw. --temp 0 = greedy.\n"
               "Same binary, CPU features (the simd level printed), model, prompt, settings and --seed give\n"
               "byte-identical output for any -t and -b.\n"
               "Timings (time to first token, prefill and decode tokens/s, KV cache) go to stderr.",
               "nexttok run"};
  add_model_options(app, a.model);
  add_engine_options(app, a.engine);
  add_sampling_options(app, a.sampling);
  add_prompt_options(app, a.prompt);
  app.add_option("-n,--n-predict", a.n_predict,
                 "tokens to generate; -1 = until an end-of-generation token or a full context (default -1)");
  app.add_option("--top-logits", a.top_logits, "with --json: report the K highest raw logits per step (default 0)");
  app.add_flag("--json", a.json, "print one JSON object (golden-file format) instead of streaming text");
  app.add_flag("--show-probs", a.show_probs,
               "print each chosen token with its probability and the top alternatives after the "
               "sampling transforms (colored by confidence on a terminal)");
  app.add_option("--n-probs", a.n_probs, "alternatives shown per token by --show-probs, 1 to 100 (default 5)");
  auto check = [&]() -> Status {
    NT_TRY(check_engine_args(a.engine));
    NT_TRY(check_sampling_args(a.sampling));
    NT_TRY(check_prompt_args(a.prompt));
    NT_TRY(check_n_predict(a.n_predict));
    NT_TRY(check_range("--top-logits", a.top_logits, 0, 1 << 20));
    return check_range("--n-probs", a.n_probs, 1, 100);
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;

  auto text = read_prompt(a.prompt);
  if (!text) return fail("run", text.error().message);
  auto lm = load_model(a.model, a.engine, a.json);
  if (!lm) return fail("run", lm.error().message);
  Engine& eng = *lm->engine;
  const Tokenizer& tok = *lm->tokenizer;
  const int32_t n_vocab = eng.config().n_vocab;
  const SamplerParams& params = a.sampling.p;
  if (Status st = validate_for_vocab(params, n_vocab); !st) return fail("run", in_flag_words(st.error()).message);
  auto plan = plan_prompt("run", *text, a.prompt, tok, a.n_predict, eng.context_limit());
  if (!plan) return fail("run", plan.error().message);
  const std::vector<int32_t>& prompt = plan->prompt;

  RequestParams rp;
  rp.prompt = prompt;
  rp.sampling = params;
  rp.stop = a.sampling.stops;
  rp.max_tokens = a.n_predict < 0 ? -1 : plan->n_predict;
  rp.n_top_logits = a.json ? a.top_logits : 0;
  rp.want_step_info = a.show_probs;
  rp.n_step_top = a.show_probs ? a.n_probs : 0;

  nlohmann::json steps = nlohmann::json::array();
  const bool tty = stdout_is_tty();
  int64_t step_index = 0;
  std::function<void(const TokenEvent&)> print;
  if (a.json) {
    // Golden format: each step's token, piece and the K highest raw logits (+ probs on request).
    print = [&](const TokenEvent& ev) {
      if (ev.token < 0) return;
      nlohmann::json top = nlohmann::json::array();
      for (const TokenLogit& t : ev.top_logits) top.push_back({t.token, t.logit});
      const std::string piece = tok.token_to_piece(ev.token);
      nlohmann::json st = {{"token", ev.token}, {"piece", piece_json(piece)}, {"top", top}};
      if (st["piece"].is_null()) st["hex"] = to_hex(piece);
      if (a.show_probs) {
        st["prob"] = ev.step.prob;
        st["entropy"] = ev.step.entropy;
        nlohmann::json probs = nlohmann::json::array();
        for (const TokenProb& t : ev.step.top) probs.push_back({t.token, t.prob});
        st["probs"] = std::move(probs);
      }
      steps.push_back(std::move(st));
    };
  } else if (a.show_probs) {
    print = [&](const TokenEvent& ev) {
      if (ev.token < 0) return;
      std::printf("%s\n", format_step(tok, step_index++, ev.step, tty).c_str());
      std::fflush(stdout);
    };
  } else {
    print = [](const TokenEvent& ev) {
      std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
      std::fflush(stdout);
    };
  }
  RequestRun res;
  if (auto id = submit_request(eng, std::move(rp), res, print); !id) return fail("run", id.error().message);
  eng.run_until_idle();
  if (Status st = request_status(res); !st) return fail("run", st.error().message);
  if (!a.json) {
    if (a.show_probs) std::printf("\n%s", res.text.c_str());
    std::fputc('\n', stdout);
    std::fflush(stdout);  // the text before the stats line when both go to one terminal
  }

  const RequestStats& rs = res.stats;
  const double prefill_tps = rs.prefill_ms > 0 ? rs.computed_prompt_tokens / (rs.prefill_ms / 1000.0) : 0.0;
  // The last token needs no forward pass: the KV cache holds the prompt and all but one generated token.
  const size_t kv_used = eng.kv_bytes_for(int64_t(prompt.size()) + std::max<int64_t>(rs.generated_tokens - 1, 0));
  const std::string stop = finish_reason_name(res.reason);
  const std::string trunc = plan->dropped > 0
                                ? str_printf("yes (%lld prompt tokens dropped, --truncate %s)",
                                             static_cast<long long>(plan->dropped), a.prompt.truncate.c_str())
                                : std::string("no");
  if (a.json) {
    nlohmann::json j;
    j["prompt"] = *text;
    j["prompt_ids"] = prompt;
    j["steps"] = std::move(steps);
    j["text"] = piece_json(res.text);
    j["stats"] = {{"prompt_tokens", prompt.size()},
                  {"cached_prompt_tokens", rs.cached_tokens},
                  {"generated_tokens", res.tokens.size()},
                  {"ttft_ms", rs.ttft_ms},
                  {"prefill_tokens_per_s", prefill_tps},
                  {"decode_tokens_per_s", rs.decode_tokens_per_s},
                  {"kv_cache_bytes_used", kv_used},
                  {"kv_cache_bytes_allocated", eng.kv_bytes()},
                  {"n_ctx", eng.n_ctx()},
                  {"truncated", plan->dropped > 0},
                  {"truncated_tokens", plan->dropped},
                  {"seed", rs.seed},
                  {"simd", kernels_simd_level()},
                  {"sampler", describe(params)},
                  {"stop_reason", stop}};
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::fprintf(stderr,
                 "\nprompt: %s | time to first token: %.1f ms | prefill: %.1f tok/s | decode: %.1f tok/s "
                 "(%s, %.0f ms) | KV cache: %s used of %s | truncated: %s\n"
                 "sampler: %s | seed: %llu | simd: %s | stop: %s\n",
                 plural(int64_t(prompt.size()), "token", "tokens").c_str(), rs.ttft_ms, prefill_tps,
                 rs.decode_tokens_per_s, plural(int64_t(res.tokens.size()), "token", "tokens").c_str(), rs.decode_ms,
                 format_bytes(kv_used).c_str(), format_bytes(eng.kv_bytes()).c_str(), trunc.c_str(),
                 describe(params).c_str(), static_cast<unsigned long long>(rs.seed), kernels_simd_level(),
                 stop.c_str());
  }
  return 0;
}

}  // namespace nt::cli
