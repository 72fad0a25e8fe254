// Soak (issue 27): 16 clients send mixed traffic to the real `nexttok serve` over stories15M for
// NEXTTOK_SOAK_SECONDS (default 60, the CI version; the closing note's run uses 600): chat and
// completions, streamed and not, prompts and output lengths drawn at random, greedy and sampled, and
// 10% of the requests streamed and left mid-stream. Then: the server never crashed and exits 0 on
// SIGTERM, no answer was a 5xx, every answer not left mid-way is valid (greedy ones a prefix of the
// reference text), RSS at the end is within 5% of RSS after the first minute (after the first
// third for runs under 3 minutes: the 60-second CI version compares with 20 s), and no KV block is
// held by a request at the end. The figures are printed on one SOAK line.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>

#include "core/strings.h"
#include "load_support.h"

namespace nt::test {
namespace {

constexpr int kClients = 16;
constexpr int kMaxTokens = 96;          // each request asks for 1..kMaxTokens
constexpr double kRequestTimeoutS = 60;  // an answer slower than this counts as an error
constexpr double kRssTolerance = 0.05;

// Prompts of growing length (words of one story): the random prompt lengths.
const std::string kStory =
    "Once upon a time there was a little girl named Lily who lived in a small house near the woods with her "
    "mother and her dog Max. Every morning Lily and Max walked to the river to look at the fish and the ducks. "
    "One day they saw a big box floating on the water. Lily wanted to know what was inside, so she found a long "
    "stick and pulled the box to the shore. Inside the box there was a tiny kitten, wet and cold. Lily took the "
    "kitten home, gave it warm milk and a soft blanket, and named it Sunny. Max was not happy at first, but soon "
    "the dog and the kitten became the best of friends and played together in the garden every day.";
constexpr int kPromptWords[] = {3, 8, 15, 25, 40, 60, 85, 110};
constexpr int kVariants = int(std::size(kPromptWords));

std::string prompt_text(int variant) {
  size_t pos = 0;
  for (int w = 0; w < kPromptWords[variant] && pos != std::string::npos; ++w) pos = kStory.find(' ', pos + 1);
  return kStory.substr(0, pos);
}

struct Spec {
  bool chat = false, stream = false, greedy = true;
  int variant = 0, max_tokens = kMaxTokens;
  size_t leave_after = 0;  // > 0: streamed, the connection closed after this many chunks
  uint32_t seed = 0;
};

std::string path_of(const Spec& s) { return s.chat ? "/v1/chat/completions" : "/v1/completions"; }

std::string body_of(const Spec& s) {
  nlohmann::json b{{"max_tokens", s.max_tokens}, {"stream", s.stream}};
  if (s.stream) b["stream_options"] = {{"include_usage", true}};
  if (s.chat) b["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt_text(s.variant)}}});
  else b["prompt"] = prompt_text(s.variant);
  if (s.greedy) {
    b["temperature"] = 0;
  } else {
    b["temperature"] = 0.9;
    b["seed"] = s.seed;
  }
  return b.dump();
}

// One answer's content, from a whole response or from its stream's chunks.
struct Answer {
  int status = 0;
  bool left = false;  // the client closed the stream before its end
  std::string text, finish_reason, problem;  // problem: empty when the answer is valid
  int64_t completion_tokens = -1;
};

// The text of one choice: "text" (completions), "delta.content" (chat chunks), "message.content".
std::string choice_text(const nlohmann::json& choice, bool chat, bool stream) {
  const nlohmann::json* t = &choice;
  for (const char* key : chat ? std::vector<const char*>{stream ? "delta" : "message", "content"}
                              : std::vector<const char*>{"text"}) {
    if (!t->is_object() || !t->contains(key)) return "";
    t = &(*t)[key];
  }
  return t->is_string() ? t->get<std::string>() : "";
}

Answer ask(const ServeChild& srv, const Spec& s) {
  Answer a;
  auto c = srv.client(kRequestTimeoutS);
  if (!s.stream) {
    const HttpAnswer h = post_json(*c, path_of(s), body_of(s));
    a.status = h.status;
    if (h.status != 200) {
      a.problem = "HTTP " + std::to_string(h.status) + ": " + h.raw.substr(0, 200);
      return a;
    }
    if (!h.body.is_object() || !h.body.contains("choices") || h.body["choices"].size() != 1) {
      a.problem = "not a completion: " + h.raw.substr(0, 200);
      return a;
    }
    const nlohmann::json& ch = h.body["choices"][0];
    a.text = choice_text(ch, s.chat, false);
    if (ch.contains("finish_reason") && ch["finish_reason"].is_string()) a.finish_reason = ch["finish_reason"];
    if (h.body.contains("usage")) a.completion_tokens = h.body["usage"].value("completion_tokens", int64_t(-1));
    return a;
  }
  const StreamAnswer st = post_stream(*c, path_of(s), body_of(s), s.leave_after);
  a.status = st.status;
  a.left = st.aborted;
  if (st.status != 200) {
    a.problem = "HTTP " + std::to_string(st.status);
    return a;
  }
  int finishes = 0;
  for (size_t i = 0; i < st.data.size(); ++i) {
    if (st.data[i] == "[DONE]") {
      if (i + 1 != st.data.size()) a.problem = "data after [DONE]";
      break;
    }
    const auto j = nlohmann::json::parse(st.data[i], nullptr, false);
    if (!j.is_object() || j.contains("error") || !j.contains("choices")) {
      a.problem = "bad chunk: " + st.data[i].substr(0, 200);
      return a;
    }
    if (j["choices"].empty()) {  // the usage chunk
      if (j.contains("usage")) a.completion_tokens = j["usage"].value("completion_tokens", int64_t(-1));
      continue;
    }
    const nlohmann::json& ch = j["choices"][0];
    a.text += choice_text(ch, s.chat, true);
    if (ch.contains("finish_reason") && ch["finish_reason"].is_string()) {
      a.finish_reason = ch["finish_reason"];
      ++finishes;
    }
  }
  if (a.problem.empty() && !a.left) {
    if (st.data.empty() || st.data.back() != "[DONE]") a.problem = "the stream ended without [DONE]";
    else if (finishes != 1) a.problem = std::to_string(finishes) + " finish_reason chunks";
  }
  return a;
}

// Checks a finished answer; `ref` is the greedy text at kMaxTokens for the same prompt and route.
std::string check(const Spec& s, const Answer& a, const std::string& ref) {
  if (!a.problem.empty()) return a.problem;
  if (a.finish_reason != "length" && a.finish_reason != "stop") return "finish_reason '" + a.finish_reason + "'";
  if (a.completion_tokens > s.max_tokens) return "more tokens than max_tokens";
  if (a.finish_reason == "length" && a.completion_tokens >= 0 && a.completion_tokens != s.max_tokens)
    return "finish_reason length after " + std::to_string(a.completion_tokens) + " of " + std::to_string(s.max_tokens);
  if (!s.greedy) return "";
  if (ref.compare(0, a.text.size(), a.text) != 0)
    return "greedy text '" + a.text + "' is not a prefix of '" + ref + "'";
  if ((a.finish_reason == "stop" || s.max_tokens == kMaxTokens) && a.text != ref)
    return "greedy text '" + a.text + "' differs from '" + ref + "'";
  return "";
}

Spec draw(std::mt19937& rng) {
  Spec s;
  s.chat = rng() % 2;
  s.stream = rng() % 2;
  s.greedy = rng() % 5 != 0;  // 80% greedy (checked against the reference), 20% sampled
  s.variant = int(rng() % kVariants);
  s.max_tokens = 1 + int(rng() % kMaxTokens);
  s.seed = rng();
  if (rng() % 10 == 0) {  // 10%: streamed and left after 1..4 chunks of a longer answer
    s.stream = true;
    s.max_tokens = std::max(s.max_tokens, 32);
    s.leave_after = 1 + rng() % 4;
  }
  return s;
}

struct Tally {
  std::mutex mu;
  int requests = 0, left = 0, server_errors = 0, invalid = 0, by_route[2][2] = {};
  std::string first_invalid;
};

TEST(ServerLoad, SoakMixedTrafficAtConcurrency16) {
  NT_REQUIRE_SHARED();
  const double soak_s = env_seconds("NEXTTOK_SOAK_SECONDS", 60);
  // RSS "after the first minute"; a run under 3 minutes compares with its first third instead.
  const double rss_1_at_s = soak_s >= 180 ? 60 : soak_s / 3;
  ServeChild srv({"-np", std::to_string(kClients), "--timeout", "30", "--shutdown-timeout", "5"});
  ASSERT_TRUE(srv.wait_ready(30 * kSlowFactor)) << srv.log_tail();

  // The greedy references, per route and prompt, fetched in parallel.
  std::string ref[2][kVariants];
  {
    std::vector<std::thread> th;
    for (int chat = 0; chat < 2; ++chat)
      for (int v = 0; v < kVariants; ++v)
        th.emplace_back([&, chat, v] {
          Spec s;
          s.chat = chat;
          s.variant = v;
          const Answer a = ask(srv, s);
          ref[chat][v] = a.problem.empty() ? a.text : "<" + a.problem + ">";
        });
    for (auto& t : th) t.join();
    for (int chat = 0; chat < 2; ++chat)
      for (int v = 0; v < kVariants; ++v) ASSERT_NE(ref[chat][v].rfind("<", 0), 0u) << ref[chat][v];
  }

  Tally tally;
  const auto t0 = FaultClock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      std::mt19937 rng(2700 + unsigned(c));
      while (ms_since(t0) < soak_s * 1000) {
        const Spec s = draw(rng);
        const Answer a = ask(srv, s);
        const std::string problem = a.left ? "" : check(s, a, ref[s.chat][s.variant]);
        std::lock_guard<std::mutex> lock(tally.mu);
        ++tally.requests;
        ++tally.by_route[s.chat][s.stream];
        if (a.left) ++tally.left;
        if (a.status >= 500) ++tally.server_errors;
        if (!problem.empty() && tally.invalid++ == 0) tally.first_invalid = problem;
      }
    });
  // RSS every second while the traffic runs.
  long rss_1 = -1, rss_end = -1, rss_max = 0;
  std::string trace;  // RSS in MiB every 5 s
  bool crashed = false;
  while (ms_since(t0) < soak_s * 1000) {
    const auto left_ms = int64_t(soak_s * 1000 - ms_since(t0)) + 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(1000, left_ms)));
    if (!srv.alive()) {
      crashed = true;
      break;
    }
    const long rss = srv.rss_kib();
    rss_max = std::max(rss_max, rss);
    if (rss_1 < 0 && ms_since(t0) >= rss_1_at_s * 1000) rss_1 = rss;
    rss_end = rss;
    if (int(ms_since(t0) / 1000) % 5 == 0) trace += str_printf(" %.1f", rss / 1024.0);
  }
  for (auto& t : clients) t.join();
  const double traffic_s = ms_since(t0) / 1000;
  crashed = crashed || !srv.alive();
  const ServerGauges idle = wait_idle(*srv.client(10), 5 * kSlowFactor);
  const double aborted = aborted_requests(get(*srv.client(10), "/metrics").raw);
  const int exit_code = srv.stop(SIGTERM, 15);

  std::printf("soak: RSS MiB about every 5 s:%s\n", trace.c_str());
  std::printf(
      "SOAK seconds=%.0f clients=%d requests=%d (completions %d+%d streamed, chat %d+%d streamed) left_mid_stream=%d "
      "(%g cancelled by the server) errors=%d 5xx=%d crashed=%d rss_1=%.1f MiB (at %.0f s) rss_end=%.1f MiB "
      "rss_max=%.1f MiB kv_used_end=%g running_end=%g waiting_end=%g exit=%d\n",
      traffic_s, kClients, tally.requests, tally.by_route[0][0], tally.by_route[0][1], tally.by_route[1][0],
      tally.by_route[1][1], tally.left, aborted, tally.invalid, tally.server_errors, int(crashed), rss_1 / 1024.0,
      rss_1_at_s, rss_end / 1024.0, rss_max / 1024.0, idle.kv_used, idle.running, idle.waiting, exit_code);

  EXPECT_FALSE(crashed) << srv.log_tail();
  EXPECT_EQ(exit_code, 0) << srv.log_tail();
  EXPECT_EQ(tally.server_errors, 0);
  EXPECT_EQ(tally.invalid, 0) << "first: " << tally.first_invalid;
  EXPECT_GT(tally.left, 0);
  // Most streams left mid-way are cancelled (a few reach their end before the server notices).
  EXPECT_GE(aborted, tally.left / 2) << "streams left mid-way that the server did not cancel";
  EXPECT_LE(aborted, tally.left);
  for (int chat = 0; chat < 2; ++chat)
    for (int stream = 0; stream < 2; ++stream) EXPECT_GT(tally.by_route[chat][stream], 0);
  ASSERT_GT(rss_1, 0);
  EXPECT_LE(std::abs(rss_end - rss_1), long(rss_1 * kRssTolerance))
      << "RSS " << rss_1 << " KiB after " << rss_1_at_s << " s, " << rss_end << " at the end";
  EXPECT_EQ(idle.kv_used, 0) << "KV blocks still held by requests";
  EXPECT_EQ(idle.running, 0);
  EXPECT_EQ(idle.waiting, 0);
}

}  // namespace
}  // namespace nt::test
