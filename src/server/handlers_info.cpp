// server/handlers_info.cpp — the routes besides generation: /health, /v1/models, /metrics, and
// llama.cpp's /tokenize, /detokenize and /apply-template (same request and response shapes).
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "server/api_response.h"
#include "server/server_impl.h"
#include "tokenizer/unicode.h"

namespace nt::server {

namespace {

// A boolean member, its default when absent; false with a 400 answered when it has another type.
bool get_bool(const nlohmann::ordered_json& j, const char* key, bool def, bool& out, httplib::Response& res) {
  out = def;
  if (!j.contains(key) || j[key].is_null()) return true;
  if (!j[key].is_boolean()) {
    send_error(res, api_error(400, std::string(key) + ": must be a boolean", "invalid_request_error", key));
    return false;
  }
  out = j[key].get<bool>();
  return true;
}

}  // namespace

void Server::Impl::handle_health(const httplib::Request&, httplib::Response& res) {
  if (draining) return send_error(res, api_error(503, "the server is shutting down", "unavailable_error"));
  if (!ready) return send_error(res, api_error(503, "the model is loading", "unavailable_error"));
  send_json(res, {{"status", "ok"}});
}

void Server::Impl::handle_models(const httplib::Request&, httplib::Response& res) {
  if (refuse_if_unavailable(*this, res)) return;
  const ModelConfig& c = model.engine->config();
  nlohmann::json m = {{"id", model.name},
                      {"object", "model"},
                      {"created", model.created},
                      {"owned_by", "nexttok"},
                      {"meta",
                       {{"arch", c.arch_name},
                        {"n_vocab", c.n_vocab},
                        {"n_ctx_train", c.n_ctx_train},
                        {"n_embd", c.n_embd},
                        {"n_ctx", model.engine->n_ctx()},
                        {"context_limit", model.engine->context_limit()},
                        {"n_parallel", model.engine->n_parallel()}}}};
  send_json(res, {{"object", "list"}, {"data", nlohmann::json::array({m})}});
}

void Server::Impl::handle_metrics(const httplib::Request&, httplib::Response& res) {
  MetricsInfo info;
  EngineStats st;
  if (ready) {
    info.model_name = model.name;
    info.n_parallel = model.engine->n_parallel();
    st = model.engine->stats();  // a snapshot under a short lock: never waits for a step
  }
  res.set_content(metrics.render(st, info), "text/plain; version=0.0.4; charset=utf-8");
}

void Server::Impl::handle_tokenize(const httplib::Request& req, httplib::Response& res) {
  if (refuse_if_unavailable(*this, res)) return;
  nlohmann::ordered_json j;
  if (!parse_body_object(req, res, j)) return;
  if (!j.contains("content") || !j["content"].is_string())
    return send_error(res, api_error(400, "content: must be a string", "invalid_request_error", "content"));
  bool add_special = false, parse_special = true, with_pieces = false;
  if (!get_bool(j, "add_special", false, add_special, res) || !get_bool(j, "parse_special", true, parse_special, res) ||
      !get_bool(j, "with_pieces", false, with_pieces, res))
    return;
  const Tokenizer& tok = *model.tokenizer;
  const auto ids = tok.encode(j["content"].get<std::string>(), add_special, parse_special);
  nlohmann::json tokens = nlohmann::json::array();
  for (int32_t id : ids) {
    if (!with_pieces) {
      tokens.push_back(id);
      continue;
    }
    const std::string p = tok.token_to_piece(id);
    nlohmann::json piece;
    if (tok::utf8_is_valid(p)) {
      piece = p;
    } else {  // a partial UTF-8 sequence: its bytes, as llama-server gives them
      piece = nlohmann::json::array();
      for (unsigned char c : p) piece.push_back(int(c));
    }
    tokens.push_back({{"id", id}, {"piece", piece}});
  }
  send_json(res, {{"tokens", tokens}});
}

void Server::Impl::handle_detokenize(const httplib::Request& req, httplib::Response& res) {
  if (refuse_if_unavailable(*this, res)) return;
  nlohmann::ordered_json j;
  if (!parse_body_object(req, res, j)) return;
  if (!j.contains("tokens") || !j["tokens"].is_array())
    return send_error(res, api_error(400, "tokens: must be an array of token ids", "invalid_request_error", "tokens"));
  const int32_t n_vocab = model.tokenizer->n_vocab();
  std::vector<int32_t> ids;
  for (const auto& t : j["tokens"]) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= n_vocab)
      return send_error(res, api_error(400, str_printf("tokens: each must be a token id in [0, %d)", n_vocab),
                              "invalid_request_error", "tokens"));
    ids.push_back(int32_t(t.get<int64_t>()));
  }
  send_json(res, {{"content", model.tokenizer->decode(ids)}});
}

void Server::Impl::handle_apply_template(const httplib::Request& req, httplib::Response& res) {
  if (refuse_if_unavailable(*this, res)) return;
  auto parsed = parse_api_request(ApiKind::Chat, req.body);
  if (!parsed) return send_error(res, to_api_error(parsed.error()));
  auto text = model.renderer->render(parsed->messages, parsed->chat_template_kwargs);
  if (!text) return send_error(res, api_error(400, "messages: the chat template failed: " + text.error().message,
                                     "invalid_request_error", "messages"));
  send_json(res, {{"prompt", *text}});
}

}  // namespace nt::server
