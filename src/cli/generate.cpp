// cli/generate.cpp — see generate.h.
#include "cli/generate.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "core/strings.h"

namespace nt::cli {


void add_sampling_options(CLI::App& app, SamplingArgs& a) {
  SamplerParams& p = a.p;
  app.add_option("--temp", p.temp, "temperature; 0 or less = greedy (default 0.8)");
  app.add_option("--top-k", p.top_k, "keep the K most likely tokens; 0 = off (default 40)");
  app.add_option("--top-p", p.top_p, "nucleus: smallest set with this probability; 1 = off (default 0.95)");
  app.add_option("--min-p", p.min_p, "drop tokens below this fraction of the top probability; 0 = off (default 0.05)");
  app.add_option("--typical", p.typical_p, "locally typical sampling mass; 1 = off (default 1)");
  app.add_option("--repeat-penalty", p.repeat_penalty, "penalize repeated tokens; 1 = off (default 1)");
  app.add_option("--repeat-last-n", p.repeat_last_n,
                 "tokens the penalties look back over; 0 = off, -1 = context size (default 64)");
  app.add_option("--presence-penalty", p.presence_penalty, "subtract for tokens already present (default 0)");
  app.add_option("--frequency-penalty", p.frequency_penalty, "subtract per occurrence (default 0)");
  app.add_option("-s,--seed", a.seed, "random seed, 0 to 18446744073709551615; -1 = a fresh random seed, printed "
                 "so the run can be repeated (default -1)");
  app.add_option("--logit-bias", a.logit_bias, "TOKEN_ID(+|-)BIAS, e.g. 15043+1 or 2-inf (repeatable)");
  app.add_option("--stop", a.stops, "stop when this text appears; it is not printed (repeatable)");
}

Result<std::optional<uint64_t>> parse_seed(const std::string& s) {
  if (s == "-1") return std::optional<uint64_t>();
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (s.empty() || s[0] < '0' || s[0] > '9' || *end != '\0' || errno == ERANGE)
    return make_error("--seed must be -1 (random) or an integer from 0 to 18446744073709551615 (got '%s')", s.c_str());
  return std::optional<uint64_t>(v);
}

Error in_flag_words(Error e) {
  // The lower layers name parameters by their API names; the CLI's users know the flags.
  static const std::pair<const char*, const char*> kFlags[] = {
      {"temperature ", "--temp "},
      {"top_p ", "--top-p "},
      {"min_p ", "--min-p "},
      {"typical_p ", "--typical "},
      {"repeat_penalty ", "--repeat-penalty "},
      {"repeat_last_n ", "--repeat-last-n "},
      {"presence_penalty ", "--presence-penalty "},
      {"frequency_penalty ", "--frequency-penalty "},
      {"logit_bias ", "--logit-bias "},
      {"chat format ", "--chat-format "},
      {"truncate mode ", "--truncate "},
  };
  for (const auto& [api, flag] : kFlags)
    if (e.message.rfind(api, 0) == 0) {
      e.message = flag + e.message.substr(std::string_view(api).size());
      break;
    }
  return e;
}

Status check_sampling_args(SamplingArgs& a) {
  auto seed = parse_seed(a.seed);
  if (!seed) return seed.error();
  a.p.seed = *seed;
  a.p.logit_bias.clear();
  for (const std::string& s : a.logit_bias) {
    auto b = parse_logit_bias(s);
    if (!b) return in_flag_words(b.error());
    a.p.logit_bias.push_back(*b);
  }
  for (const std::string& s : a.stops)
    if (s.empty()) return make_error("--stop: the stop string is empty");
  if (Status st = validate(a.p); !st) return in_flag_words(st.error());
  return {};
}

Status check_n_predict(int64_t n, int64_t min) {
  if (n == -1 || n >= min) return {};
  return make_error("-n must be -1 (until the end) or a%s count (got %lld)", min > 0 ? " positive" : " non-negative",
                    static_cast<long long>(n));
}

Result<RequestId> submit_request(Engine& eng, RequestParams params, RequestRun& into,
                                 std::function<void(const TokenEvent&)> each) {
  return eng.submit(std::move(params), [&into, each = std::move(each)](const TokenEvent& ev) {
    if (ev.token >= 0) {
      into.tokens.push_back(ev.token);
      into.entropies.push_back(ev.step.entropy);
    }
    into.text += ev.text;
    if (ev.finished) {
      into.finished = true;
      into.reason = ev.finish_reason;
      into.error = ev.error;
      into.stats = ev.stats;
    }
    if (each) each(ev);
  });
}

Status request_status(const RequestRun& run) {
  if (!run.finished) return make_error(ErrorKind::Internal, "the request did not finish");
  if (run.reason == FinishReason::Error) return run.error;
  return {};
}

std::string format_step(const Tokenizer& tok, int64_t index, const StepInfo& s, bool color) {
  const std::string chosen = "'" + visible_piece(tok.token_to_piece(s.token)) + "'";
  std::string head = chosen;
  if (color) {
    const char* c = s.prob >= 0.7f ? "\033[32m" : s.prob >= 0.3f ? "\033[33m" : "\033[31m";
    head = std::string(c) + chosen + "\033[0m";
  }
  std::string out = str_printf("[%3lld] %s", static_cast<long long>(index), head.c_str());
  const int pad = 16 - static_cast<int>(chosen.size());
  if (pad > 0) out += std::string(static_cast<size_t>(pad), ' ');
  out += str_printf(" p=%.4f  H=%.2f bits  (%zu kept) |", s.prob, s.entropy, s.n_candidates);
  for (const TokenProb& t : s.top)
    out += str_printf(" '%s' %.3f", visible_piece(tok.token_to_piece(t.token)).c_str(), t.prob);
  return out;
}

}  // namespace nt::cli
