// cli/cmd_chat.cpp — `nexttok chat`: an interactive multi-turn conversation over stdin (works with
// a pipe too, for scripted sessions). Each turn renders the whole conversation (the model's own
// Jinja template, or a built-in format), keeps the KV cache's common prefix with it and prefills
// only the rest; the per-turn stats line shows tokens reused vs. prefilled and time to first token.
// Commands: /reset /stats /save FILE /load FILE /help /quit.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/generate.h"
#include "cli/json_input.h"
#include "cli/model_setup.h"
#include "core/atomic_file.h"
#include "core/files.h"
#include "core/strings.h"
#include "engine/chat_format.h"
#include "server/chat_renderer.h"

namespace nt::cli {

namespace {


constexpr const char* kChatCommands = "/reset, /stats, /save FILE, /load FILE, /help, /quit";

struct ChatArgs {
  ModelArgs model;
  EngineArgs engine;
  SamplingArgs sampling;
  int64_t n_predict = -1;
  std::string chat_format;
  std::string chat_template_file;
  std::string system;
};

struct SessionStats {
  int turns = 0;
  int64_t reused = 0, prefilled = 0, generated = 0;
  int64_t context = 0;  // tokens of the conversation after the last turn
  double last_ttft_ms = 0, decode_ms = 0;
  int64_t decoded = 0;  // tokens after each turn's first (the decode rate's numerator)
};

// `inputs`: the files this session reads (the model is mmapped: overwriting it would crash the engine).
Status save_conversation(const std::string& path, const server::ChatRenderer& r, const std::vector<ChatMessage>& msgs,
                         const std::vector<std::string>& inputs) {
  NT_TRY(check_output_path(path, inputs));
  nlohmann::ordered_json j;
  j["format"] = r.name();
  j["messages"] = nlohmann::ordered_json::array();
  for (const ChatMessage& m : msgs) j["messages"].push_back({{"role", m.role}, {"content", m.content}});
  // written whole or not at all: a session killed mid-save leaves the previous file intact
  return write_file_atomic(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", inputs);
}

Result<std::vector<ChatMessage>> load_conversation(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto doc = parse_json_input(*text, path);
  if (!doc) return doc.error();
  const nlohmann::ordered_json& j = *doc;
  const nlohmann::ordered_json* arr = &j;
  if (j.is_object() && j.contains("messages")) arr = &j.at("messages");
  if (!arr->is_array()) return make_error("%s: expected {\"messages\": [...]} or a JSON array of messages", path.c_str());
  std::vector<ChatMessage> msgs;
  for (const auto& m : *arr) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
        !m["content"].is_string())
      return make_error("%s: each message needs string \"role\" and \"content\"", path.c_str());
    msgs.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  }
  return msgs;
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  ChatArgs a;
  CLI::App app{"Interactive multi-turn chat over stdin (a pipe works too). Each turn prefills only the\n"
               "tokens not already in the KV cache. Commands: /reset /stats /save FILE /load FILE /quit.",
               "nexttok chat"};
  add_model_options(app, a.model);
  add_engine_options(app, a.engine);
  add_sampling_options(app, a.sampling);
  app.add_option("-n,--n-predict", a.n_predict, "max tokens per reply; -1 = until the end of the turn or a full "
                 "context (default -1)");
  app.add_option("--chat-format", a.chat_format, "built-in format: chatml, llama2, llama3, mistral, plain");
  app.add_option("--chat-template-file", a.chat_template_file, "Jinja chat template to use instead of the model's");
  app.add_option("--system", a.system, "system message at the start of the conversation");
  auto check = [&]() -> Status {
    NT_TRY(check_engine_args(a.engine));
    NT_TRY(check_sampling_args(a.sampling));
    NT_TRY(check_n_predict(a.n_predict));
    if (!a.chat_format.empty())
      if (auto f = parse_chat_format(a.chat_format); !f) return in_flag_words(f.error());
    return {};
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;

  auto lm = load_model(a.model, a.engine, false);
  if (!lm) return fail("chat", lm.error().message);
  Engine& eng = *lm->engine;
  const Tokenizer& tok = *lm->tokenizer;
  const int32_t n_vocab = eng.config().n_vocab;
  const SamplerParams& params = a.sampling.p;
  if (Status st = validate_for_vocab(params, n_vocab); !st) return fail("chat", in_flag_words(st.error()).message);
  std::string warning;
  auto renderer = server::ChatRenderer::create({a.chat_format, a.chat_template_file}, tok, eng.model().gguf(), &warning);
  if (!renderer) return fail("chat", renderer.error().message);
  if (!warning.empty()) std::fprintf(stderr, "chat: warning: %s\n", warning.c_str());
  const server::ChatRenderer& rend = *renderer;

  std::vector<std::string> stops = a.sampling.stops;
  // End-of-turn markers of the format (detected from the Jinja template's text when there is one)
  // back up the model's end-of-generation tokens.
  for (const std::string& s : rend.stops()) stops.push_back(s);
  const bool tty_in = isatty(0) != 0;
  const std::string seed = params.seed ? std::to_string(*params.seed) : std::string("random per turn");
  std::fprintf(stderr, "chat: format %s | sampler %s | seed %s | simd %s | /help for commands\n",
               rend.name().c_str(), describe(params).c_str(), seed.c_str(), kernels_simd_level());

  std::vector<ChatMessage> messages;
  if (!a.system.empty()) messages.push_back({"system", a.system});
  SessionStats stats;
  std::string line;
  for (;;) {
    if (tty_in) {
      std::fputs("> ", stdout);
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '/') {
      const size_t sp = line.find(' ');
      const std::string cmd = line.substr(0, sp);
      const std::string arg = sp == std::string::npos ? "" : line.substr(sp + 1);
      if (cmd == "/quit" || cmd == "/exit") break;
      if (cmd == "/reset") {
        messages.clear();
        if (!a.system.empty()) messages.push_back({"system", a.system});
        stats.context = 0;
        std::printf("[conversation reset; the prefix cache keeps what other turns can share]\n");
      } else if (cmd == "/stats") {
        std::printf("[stats: turns %d | messages %zu | context %lld/%lld tokens | reused %lld, prefilled %lld, "
                    "generated %lld tokens | last time to first token %.1f ms | decode %.1f tok/s]\n",
                    stats.turns, messages.size(), static_cast<long long>(stats.context),
                    static_cast<long long>(eng.context_limit()),
                    static_cast<long long>(stats.reused), static_cast<long long>(stats.prefilled),
                    static_cast<long long>(stats.generated), stats.last_ttft_ms,
                    stats.decode_ms > 0 ? stats.decoded / (stats.decode_ms / 1000.0) : 0.0);
      } else if ((cmd == "/save" || cmd == "/load") && arg.empty()) {
        std::fprintf(stderr, "[error: %s needs a file name: %s FILE]\n", cmd.c_str(), cmd.c_str());
      } else if (cmd == "/save") {
        if (auto s = save_conversation(arg, rend, messages, {lm->path, a.chat_template_file}); !s) std::fprintf(stderr, "[error: %s]\n", s.error().message.c_str());
        else std::printf("[saved %s to %s]\n", plural(int64_t(messages.size()), "message", "messages").c_str(), arg.c_str());
      } else if (cmd == "/load") {
        auto msgs = load_conversation(arg);
        if (!msgs) {
          std::fprintf(stderr, "[error: %s]\n", msgs.error().message.c_str());
        } else {
          messages = std::move(*msgs);
          std::printf("[loaded %s from %s; the next turn reuses what the cache still holds]\n",
                      plural(int64_t(messages.size()), "message", "messages").c_str(), arg.c_str());
        }
      } else if (cmd == "/help") {
        std::printf("[commands: %s]\n", kChatCommands);
      } else {
        std::fprintf(stderr, "[error: unknown command '%s'; commands: %s]\n", cmd.c_str(), kChatCommands);
      }
      std::fflush(stdout);
      continue;
    }

    messages.push_back({"user", line});
    auto text = rend.render(messages);
    if (!text) {
      messages.pop_back();
      std::fprintf(stderr, "[error: %s]\n", text.error().message.c_str());
      continue;
    }
    std::vector<int32_t> tokens = tok.encode(*text, false, true);
    if (tok.add_bos() && tok.bos() >= 0 && (tokens.empty() || tokens[0] != tok.bos()))
      tokens.insert(tokens.begin(), tok.bos());
    const int64_t n_tokens = static_cast<int64_t>(tokens.size());
    const int64_t limit = eng.context_limit();
    if (n_tokens + 1 > limit) {
      messages.pop_back();
      std::fprintf(stderr, "[error: the conversation is %lld tokens, %lld over the context of %lld; /reset or raise -c]\n",
                   static_cast<long long>(n_tokens), static_cast<long long>(n_tokens + 1 - limit),
                   static_cast<long long>(limit));
      continue;
    }
    RequestParams rp;
    rp.prompt = std::move(tokens);
    rp.sampling = params;
    rp.stop = stops;
    rp.max_tokens = a.n_predict < 0 ? -1 : std::min(a.n_predict, limit - n_tokens);
    RequestRun res;
    auto id = submit_request(eng, std::move(rp), res, [](const TokenEvent& ev) {
      std::fwrite(ev.text.data(), 1, ev.text.size(), stdout);
      std::fflush(stdout);
    });
    if (!id) return fail("chat", id.error().message);
    eng.run_until_idle();
    if (Status st = request_status(res); !st) return fail("chat", st.error().message);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    messages.push_back({"assistant", res.text});

    const RequestStats& rs = res.stats;
    ++stats.turns;
    stats.reused += rs.cached_tokens;
    stats.prefilled += rs.computed_prompt_tokens;
    stats.generated += rs.generated_tokens;
    stats.context = n_tokens + rs.generated_tokens;
    stats.last_ttft_ms = rs.ttft_ms;
    stats.decode_ms += rs.decode_ms;
    stats.decoded += std::max<int64_t>(rs.generated_tokens - 1, 0);
    std::fprintf(stderr,
                 "[turn %d: %lld tokens reused from the prefix cache, %lld prefilled | time to first token %.1f ms | "
                 "%lld tokens generated, %.1f tok/s | context %lld/%lld | seed %llu | stop: %s]\n",
                 stats.turns, static_cast<long long>(rs.cached_tokens), static_cast<long long>(rs.computed_prompt_tokens),
                 rs.ttft_ms, static_cast<long long>(rs.generated_tokens), rs.decode_tokens_per_s,
                 static_cast<long long>(stats.context), static_cast<long long>(limit),
                 static_cast<unsigned long long>(rs.seed), finish_reason_name(res.reason));
  }
  return 0;
}

}  // namespace nt::cli
