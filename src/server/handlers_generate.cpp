// server/handlers_generate.cpp — POST /v1/chat/completions and /v1/completions: parse, build the
// prompt (chat template or text or token ids), fit it into the context (or truncate when asked),
// submit to the engine and answer from its events, streamed (SSE) or whole. A client that goes
// away is noticed within one wait slice and its request cancelled.
#include <chrono>
#include <cstdio>

#include "core/strings.h"
#include "sampling/context_plan.h"
#include "server/api_response.h"
#include "server/server_impl.h"
#include "server/socket_util.h"

namespace nt::server {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSlice = std::chrono::milliseconds(100);  // how often a waiting handler checks its client

// One request in flight: frees its queue slot when the answer is done (whoever drops it last),
// cancelling the engine request if it has not finished (the client left).
struct Flight {
  Server::Impl& s;
  RequestId id = 0;
  int fd = -1;  // the client's socket, watched for a close
  std::shared_ptr<RequestChannel> ch = std::make_shared<RequestChannel>();
  bool finished = false;
  explicit Flight(Server::Impl& srv) : s(srv) {}
  ~Flight() {
    if (id != 0) {
      if (!finished) s.model.engine->cancel(id);
      std::lock_guard<std::mutex> lk(s.active_mu);
      s.active.erase(id);
    }
    --s.inflight;
  }
  bool client_gone() const { return fd >= 0 && peer_closed(fd); }
};

// What the engine thread keeps per request for metrics and the log line.
struct Tracker {
  Clock::time_point t0 = Clock::now();
  Clock::time_point last_token;
  bool got_token = false;
};

void log_request(const Server::Impl& s, const std::string& id, const TokenEvent& ev) {
  if (s.opt.log_quiet) return;
  const RequestStats& st = ev.stats;
  const char* reason = finish_reason_name(ev.finish_reason);
  if (s.opt.log_json) {
    nlohmann::json j = {{"id", id},
                        {"prompt_tokens", st.prompt_tokens},
                        {"cached_tokens", st.cached_tokens},
                        {"generated_tokens", st.generated_tokens},
                        {"ttft_ms", st.ttft_ms},
                        {"tokens_per_s", st.decode_tokens_per_s},
                        {"finish_reason", reason}};
    std::fprintf(stderr, "%s\n", dump_json(j).c_str());
  } else {
    std::fprintf(stderr, "serve: %s | prompt %lld (cached %lld) | generated %lld | ttft %.1f ms | %.1f tok/s | %s\n",
                 id.c_str(), static_cast<long long>(st.prompt_tokens), static_cast<long long>(st.cached_tokens),
                 static_cast<long long>(st.generated_tokens), st.ttft_ms, st.decode_tokens_per_s, reason);
  }
}

// The prompt's token ids: the rendered conversation, the text, or the ids as given.
Result<std::vector<int32_t>> build_prompt(const Server::Impl& s, const ApiRequest& ar) {
  const Tokenizer& tok = *s.model.tokenizer;
  std::vector<int32_t> ids;
  if (ar.kind == ApiKind::Chat) {
    auto text = s.model.renderer->render(ar.messages, ar.chat_template_kwargs);
    if (!text) return make_error("messages: the chat template failed: %s", text.error().message.c_str());
    ids = tok.encode(*text, false, true);  // the template writes BOS itself when the model wants it
  } else if (ar.prompt_text) {
    ids = tok.encode(*ar.prompt_text, true, true);
  } else {
    ids = ar.prompt_ids;
  }
  if (ids.empty()) return make_error("prompt: empty after tokenization");
  return ids;
}

TruncateMode truncate_mode(Truncate t) {
  return t == Truncate::Start ? TruncateMode::Start : t == Truncate::Middle ? TruncateMode::Middle : TruncateMode::None;
}

ApiError final_error(const TokenEvent& ev) {
  if (ev.finish_reason == FinishReason::Cancelled) return api_error(503, "the request was cancelled: the server is shutting down", "unavailable_error");
  return to_api_error(ev.error);
}

}  // namespace

void Server::Impl::handle_generate(ApiKind kind, const httplib::Request& req, httplib::Response& res) {
  if (refuse_if_unavailable(*this, res)) return;
  auto parsed = parse_api_request(kind, req.body);
  if (!parsed) return send_error(res, to_api_error(parsed.error()));
  ApiRequest& ar = *parsed;
  Engine& eng = *model.engine;
  const Tokenizer& tok = *model.tokenizer;

  auto prompt = build_prompt(*this, ar);
  if (!prompt) return send_error(res, to_api_error(prompt.error()));
  const bool has_bos = tok.bos() >= 0 && (*prompt)[0] == tok.bos();
  auto plan = plan_context(*prompt, has_bos, ar.params.max_tokens, eng.context_limit(), truncate_mode(ar.truncate));
  if (!plan) return send_error(res, to_api_error(plan.error()));
  RequestParams params = ar.params;
  params.prompt = std::move(plan->prompt);
  if (kind == ApiKind::Chat)
    for (const std::string& st : model.renderer->stops()) params.stop.push_back(st);

  auto fl = std::make_shared<Flight>(*this);
  if (inflight.fetch_add(1) >= int64_t(eng.n_parallel()) + opt.max_queue)
    return send_error(res, api_error(429, str_printf("too many requests: %d running and %d waiting (--max-queue)", eng.n_parallel(),
                                            opt.max_queue),
                            "rate_limit_error", "", "queue_full"));
  fl->fd = find_connection_socket(req.local_port, req.remote_addr, req.remote_port);

  ResponseMeta meta{kind, new_response_id(kind), model.name,
                    int64_t(std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count())};
  auto tracker = std::make_shared<Tracker>();
  auto ch = fl->ch;
  const std::string rid = meta.id;
  auto sink = [this, ch, tracker, rid](const TokenEvent& ev) {
    const auto now = Clock::now();
    if (ev.token >= 0) {
      if (tracker->got_token) metrics.observe_itl(std::chrono::duration<double>(now - tracker->last_token).count());
      tracker->got_token = true;
      tracker->last_token = now;
    }
    if (ev.finished) {
      metrics.request_finished(ev.finish_reason);
      if (ev.stats.generated_tokens > 0) metrics.observe_ttft(ev.stats.ttft_ms / 1000.0);
      metrics.observe_queue(ev.stats.queue_ms / 1000.0);
      metrics.observe_e2e(std::chrono::duration<double>(now - tracker->t0).count());
      log_request(*this, rid, ev);
    }
    ch->push(ev);
  };
  {
    std::lock_guard<std::mutex> lk(active_mu);
    auto id = eng.submit(std::move(params), sink);
    if (!id) return send_error(res, to_api_error(id.error()));
    fl->id = *id;
    active.emplace(*id, 0);
  }

  PieceFn piece = [&tok](int32_t id) { return tok.token_to_piece(id); };
  if (ar.stream) {
    struct StreamState {
      bool first = true;
      int64_t offset = 0;
      std::vector<TokenEvent> evs;
    };
    auto st = std::make_shared<StreamState>();
    const bool want_lp = ar.logprobs, usage = ar.include_usage;
    res.set_chunked_content_provider(
        "text/event-stream", [fl, st, meta, piece, want_lp, usage](size_t, httplib::DataSink& sink) {
          fl->ch->pop_all(st->evs, kSlice);
          if (st->evs.empty()) return !fl->client_gone();
          std::string out;
          for (const TokenEvent& ev : st->evs) {
            const bool failed = ev.finished && (ev.finish_reason == FinishReason::Error ||
                                                ev.finish_reason == FinishReason::Cancelled);
            if (failed) {
              out += sse_data(error_body(final_error(ev)));
            } else {
              out += sse_data(chunk_json(meta, ev, st->first, want_lp, piece, st->offset));
              st->first = false;
              st->offset += int64_t(ev.text.size());
            }
            if (ev.finished) {
              fl->finished = true;
              if (usage && !failed) out += sse_data(usage_chunk_json(meta, ev.stats));
              out += "data: [DONE]\n\n";
              break;
            }
          }
          if (!sink.write(out.data(), out.size())) return false;
          if (fl->finished) sink.done();
          return true;
        });
    res.set_header("Cache-Control", "no-cache");
    return;
  }

  Accumulated acc;
  acc.truncated_tokens = plan->dropped;
  std::vector<TokenEvent> evs;
  while (!acc.finished) {
    fl->ch->pop_all(evs, kSlice);
    // Checked after every wait, not only an empty one: tokens arriving faster than the slice
    // would otherwise keep a departed client's request running to its end.
    if (fl->client_gone()) return;  // Flight cancels the request
    for (TokenEvent& ev : evs) {
      acc.text += ev.text;
      if (ev.finished) {
        acc.finished = true;
        fl->finished = true;
        acc.reason = ev.finish_reason;
        acc.stats = ev.stats;
        if (ev.finish_reason == FinishReason::Error || ev.finish_reason == FinishReason::Cancelled)
          return send_error(res, final_error(ev));
      }
      if (ar.logprobs && ev.token >= 0) acc.token_events.push_back(std::move(ev));
    }
  }
  send_json(res, response_json(meta, acc, ar.logprobs, piece));
}

}  // namespace nt::server
