// cli/cmd_check.cpp — `nexttok check`: the troubleshooting order as a command. Runs the same
// request -r times (each with a fresh random seed, as an API without a seed would; with --seed S
// every run uses S), then again at temperature 0, and reports how many distinct outputs, where
// they first diverge, the mean per-step entropy, whether the prompt was truncated, and a verdict
// (sampling_stats in sampling/check_report.h).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/generate.h"
#include "cli/model_setup.h"
#include "cli/prompt_setup.h"
#include "core/strings.h"
#include "sampling/check_report.h"

namespace nt::cli {

namespace {

struct CheckArgs {
  ModelArgs model;
  EngineArgs engine;
  SamplingArgs sampling;
  PromptArgs prompt;
  int64_t n_predict = 64;
  int runs = 5;
  bool json = false;
};

struct RunSet {
  std::vector<RunRecord> records;
  std::vector<std::string> texts;
  std::vector<uint64_t> seeds;
  RunSetSummary summary;
};

// Submits the request `runs` times at once (each with a fresh random seed unless one is fixed) and
// runs them together; after the first admission the prompt's full blocks come from the prefix cache.
Result<RunSet> run_set(Engine& eng, SamplerParams params, bool fresh_seeds, int runs,
                       const std::vector<int32_t>& prompt, int64_t max_tokens, const std::vector<std::string>& stops) {
  std::vector<RequestRun> out(static_cast<size_t>(runs));
  for (int r = 0; r < runs; ++r) {
    if (fresh_seeds) params.seed.reset();
    RequestParams rp;
    rp.prompt = prompt;
    rp.sampling = params;
    rp.stop = stops;
    rp.max_tokens = max_tokens;
    rp.want_step_info = true;  // the entropy of each step
    if (auto id = submit_request(eng, std::move(rp), out[static_cast<size_t>(r)]); !id) return id.error();
  }
  eng.run_until_idle();
  RunSet set;
  for (const RequestRun& run : out) {
    NT_TRY(request_status(run));
    set.records.push_back({run.tokens, run.entropies});
    set.texts.push_back(run.text);
    set.seeds.push_back(run.stats.seed);
  }
  set.summary = summarize_runs(set.records);
  return set;
}

nlohmann::json summary_json(const RunSetSummary& s) {
  nlohmann::json j;
  j["runs"] = s.runs;
  j["distinct_outputs"] = s.distinct_outputs;
  j["first_divergence"] = s.first_divergence ? nlohmann::json(*s.first_divergence) : nlohmann::json(nullptr);
  j["mean_entropy"] = s.mean_entropy;
  return j;
}

std::string summary_line(const RunSetSummary& s) {
  return str_printf("%d distinct output%s of %d | first divergence: %s | mean entropy %.3f bits/token",
                    s.distinct_outputs, s.distinct_outputs == 1 ? "" : "s", s.runs,
                    s.first_divergence ? str_printf("token %lld", static_cast<long long>(*s.first_divergence)).c_str()
                                       : "none",
                    s.mean_entropy);
}

std::string shorten(const std::string& s, size_t n) {
  std::string out;
  for (char c : s) out += c == '\n' ? ' ' : c;
  if (out.size() > n) {
    size_t cut = n;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
    out = out.substr(0, cut) + "...";
  }
  return out;
}

}  // namespace

int cmd_check(int argc, char** argv) {
  CheckArgs a;
  CLI::App app{"Why do answers differ? Runs the same request -r times (fresh random seed each, or --seed S\n"
               "for all), then again at temperature 0, and reports distinct outputs, first divergence,\n"
               "mean per-step entropy, truncation, and a verdict.",
               "nexttok check"};
  add_model_options(app, a.model);
  add_engine_options(app, a.engine);
  add_sampling_options(app, a.sampling);
  add_prompt_options(app, a.prompt);
  app.add_option("-n,--n-predict", a.n_predict,
                 "tokens to generate per run; -1 = until an end token or a full context (default 64)");
  app.add_option("-r,--runs", a.runs, "runs per setting, 1 to 1000 (default 5)");
  app.add_flag("--json", a.json, "print one JSON object");
  auto check = [&]() -> Status {
    NT_TRY(check_engine_args(a.engine));
    NT_TRY(check_sampling_args(a.sampling));
    NT_TRY(check_prompt_args(a.prompt));
    NT_TRY(check_n_predict(a.n_predict, 1));
    return check_range("-r", a.runs, 1, 1000);
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;

  auto text = read_prompt(a.prompt);
  if (!text) return fail("check", text.error().message);
  auto lm = load_model(a.model, a.engine, a.json);
  if (!lm) return fail("check", lm.error().message);
  Engine& eng = *lm->engine;
  const Tokenizer& tok = *lm->tokenizer;
  const int32_t n_vocab = eng.config().n_vocab;
  const SamplerParams& params = a.sampling.p;
  if (Status st = validate_for_vocab(params, n_vocab); !st) return fail("check", in_flag_words(st.error()).message);
  auto plan = plan_prompt("check", *text, a.prompt, tok, a.n_predict, eng.context_limit());
  if (!plan) return fail("check", plan.error().message);
  const int64_t max_tokens = a.n_predict < 0 ? -1 : plan->n_predict;

  const bool fixed_seed = params.seed.has_value();
  auto sampled = run_set(eng, params, !fixed_seed, a.runs, plan->prompt, max_tokens, a.sampling.stops);
  if (!sampled) return fail("check", sampled.error().message);
  SamplerParams greedy_params = params;
  greedy_params.temp = 0.0f;
  auto greedy = run_set(eng, greedy_params, !fixed_seed, a.runs, plan->prompt, max_tokens, a.sampling.stops);
  if (!greedy) return fail("check", greedy.error().message);

  CheckFacts facts;
  facts.sampled = sampled->summary;
  facts.greedy = greedy->summary;
  facts.sampled_is_greedy = params.temp <= 0.0f;
  facts.fixed_seed = fixed_seed;
  facts.truncated_by = plan->dropped;
  const std::string verdict = check_verdict(facts);

  if (a.json) {
    nlohmann::json j = summary_json(sampled->summary);
    j["truncated"] = plan->dropped > 0;
    j["truncated_tokens"] = plan->dropped;
    j["verdict"] = verdict;
    j["n_predict"] = plan->n_predict;
    j["prompt_tokens"] = plan->prompt.size();
    j["sampler"] = describe(params);
    j["seeds"] = sampled->seeds;
    j["simd"] = kernels_simd_level();
    j["fixed_seed"] = fixed_seed;
    j["outputs"] = sampled->texts;
    j["greedy"] = summary_json(greedy->summary);
    j["greedy"]["outputs"] = greedy->texts;
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("check: %s of -n %lld | prompt %s | sampler %s | %s | simd %s\n",
              plural(a.runs, "run", "runs").c_str(), static_cast<long long>(plan->n_predict),
              plural(int64_t(plan->prompt.size()), "token", "tokens").c_str(), describe(params).c_str(),
              fixed_seed ? str_printf("every run uses --seed %llu", static_cast<unsigned long long>(*params.seed)).c_str()
                         : "a fresh random seed per run",
              kernels_simd_level());
  for (size_t i = 0; i < sampled->texts.size(); ++i)
    std::printf("  run %zu (seed %llu): %s\n", i + 1, static_cast<unsigned long long>(sampled->seeds[i]),
                shorten(sampled->texts[i], 70).c_str());
  std::printf("sampled:        %s\n", summary_line(sampled->summary).c_str());
  std::printf("temperature 0:  %s\n", summary_line(greedy->summary).c_str());
  std::printf("truncated:      %s\n",
              plan->dropped > 0 ? str_printf("yes, %lld prompt tokens dropped", static_cast<long long>(plan->dropped)).c_str()
                                : "no");
  std::printf("verdict: %s\n", verdict.c_str());
  return 0;
}

}  // namespace nt::cli
