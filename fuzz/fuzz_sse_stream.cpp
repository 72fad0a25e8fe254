// libFuzzer target over the server's stream writer (server/api_response.*): token texts of any
// bytes (invalid UTF-8, a multi-byte character split across tokens) go through chunk_json,
// logprobs, usage and error bodies, dump_json and sse_data exactly as handlers_generate writes a
// stream. Every "data:" line must hold one JSON document (or [DONE] last), the whole stream must be
// valid UTF-8, logprob bytes must be the token's exact bytes, and valid text must pass unchanged.
// Input: byte 0 = flags, then pieces, each a length byte (low 3 bits) and that many bytes; with
// flag 0x20 and a vocabulary ($NT_FUZZ_VOCAB_DIR or ../shared/vocab) the pieces are instead real
// tokens (two bytes an id) decoded by the engine's StreamDecoder.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_response.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

using namespace nt::server;
using nlohmann::json;

const nt::Tokenizer* vocab() {
  static const std::unique_ptr<nt::Tokenizer> tok = [] {
    const char* env = std::getenv("NT_FUZZ_VOCAB_DIR");
#ifdef NEXTTOK_SOURCE_DIR
    std::string dir = env ? env : std::string(NEXTTOK_SOURCE_DIR) + "/../shared/vocab";
#else
    std::string dir = env ? env : "../shared/vocab";
#endif
    // Byte-fallback SentencePiece: many tokens are single bytes of a multi-byte character.
    auto t = nt::Tokenizer::from_file(dir + "/ggml-vocab-llama-spm.gguf");
    return t.ok() ? std::move(t.value()) : nullptr;
  }();
  return tok.get();
}

// Splits the stream back into its events; aborts unless each is "data: <JSON>" or a final [DONE].
std::vector<json> parse_stream(const std::string& out, bool* done) {
  std::vector<json> events;
  *done = false;
  size_t p = 0;
  while (p < out.size()) {
    if (*done) std::abort();  // nothing after [DONE]
    const size_t e = out.find("\n\n", p);
    if (e == std::string::npos || out.compare(p, 6, "data: ") != 0) std::abort();
    const std::string payload = out.substr(p + 6, e - p - 6);
    if (payload.find('\n') != std::string::npos) std::abort();
    if (payload == "[DONE]") {
      *done = true;
    } else {
      json j = json::parse(payload, nullptr, false);
      if (j.is_discarded() || !j.is_object()) std::abort();
      events.push_back(std::move(j));
    }
    p = e + 2;
  }
  return events;
}

}  // namespace

// The vocabulary loads before the first input, outside its timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vocab();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 8192) return 0;
  const uint8_t flags = data[0];
  const bool chat = flags & 1, want_lp = flags & 2, usage = flags & 4, fail = flags & 8, failed_msg_raw = flags & 16;
  const nt::Tokenizer* tok = (flags & 32) ? vocab() : nullptr;
  const int n_top = (flags >> 6) & 3;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);

  // The events' token pieces (id i -> pieces[i]) and texts.
  std::vector<std::string> pieces;
  std::vector<std::string> texts;
  if (tok) {
    nt::StreamDecoder sd(*tok, true);
    for (size_t i = 0; i + 1 < in.size(); i += 2) {
      const int32_t id = int32_t((uint8_t(in[i]) << 8 | uint8_t(in[i + 1])) % uint32_t(tok->n_vocab()));
      pieces.push_back(tok->token_to_piece(id));
      texts.push_back(sd.push(id));
    }
    if (!texts.empty()) texts.back() += sd.flush();
  } else {
    for (size_t i = 0; i < in.size();) {
      const size_t len = uint8_t(in[i]) & 7;
      pieces.emplace_back(in.substr(i + 1, len));
      texts.push_back(pieces.back());
      i += 1 + len;
    }
  }
  if (pieces.empty()) return 0;
  const PieceFn piece = [&pieces](int32_t id) { return pieces[size_t(id) % pieces.size()]; };

  ResponseMeta meta{chat ? ApiKind::Chat : ApiKind::Completion, chat ? "chatcmpl-fuzz" : "cmpl-fuzz",
                    std::string(in.substr(0, 8)), 1};
  // As handlers_generate's stream writer: a chunk per event, then usage and [DONE] (or an error).
  std::string out;
  bool first = true;
  int64_t offset = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    nt::TokenEvent ev;
    ev.token = int32_t(i);
    ev.text = texts[i];
    ev.logprob = -float(i) * 0.25f;
    for (int k = 0; k < n_top; ++k) ev.top_logprobs.push_back({int32_t((i + size_t(k) * 7) % pieces.size()), -float(k)});
    ev.finished = i + 1 == pieces.size();
    ev.stats.prompt_tokens = 3;
    ev.stats.generated_tokens = int64_t(i + 1);
    if (ev.finished && fail) {
      nt::Error e{failed_msg_raw ? texts[i] : "engine failed: " + pieces[i]};
      out += sse_data(error_body(to_api_error(e)));
    } else {
      const json c = chunk_json(meta, ev, first, want_lp, piece, offset);
      if (sse_data(c) != "data: " + dump_json(c) + "\n\n") std::abort();
      out += sse_data(c);
      first = false;
      offset += int64_t(ev.text.size());
    }
    if (ev.finished) {
      if (usage && !fail) out += sse_data(usage_chunk_json(meta, ev.stats));
      out += "data: [DONE]\n\n";
    }
  }

  if (!nt::tok::utf8_is_valid(out)) std::abort();
  bool done = false;
  const std::vector<json> events = parse_stream(out, &done);
  if (!done) std::abort();
  // Chunks carry the texts (exactly, when valid UTF-8) and logprobs with the exact piece bytes.
  size_t k = 0;
  int64_t expect_offset = 0;
  for (const json& e : events) {
    if (e.contains("error")) {
      if (!fail || k + 1 != pieces.size() || !e["error"]["message"].is_string()) std::abort();
      continue;
    }
    if (e["choices"].empty()) {  // the usage chunk
      if (!usage || !e.contains("usage")) std::abort();
      continue;
    }
    if (k >= pieces.size()) std::abort();
    const json& c = e["choices"][0];
    const json* text = chat ? (c["delta"].contains("content") ? &c["delta"]["content"] : nullptr) : &c["text"];
    if (text && !text->is_string()) std::abort();
    if (text && nt::tok::utf8_is_valid(texts[k]) && text->get<std::string>() != texts[k]) std::abort();
    if (want_lp) {
      const json& lp = c["logprobs"];
      if (chat) {
        const json& bytes = lp["content"][0]["bytes"];
        if (bytes.size() != pieces[k].size()) std::abort();
        for (size_t b = 0; b < bytes.size(); ++b)
          if (bytes[b].get<int>() != int(uint8_t(pieces[k][b]))) std::abort();
        if (lp["content"][0]["top_logprobs"].size() != size_t(n_top)) std::abort();
      } else {
        if (lp["text_offset"][0].get<int64_t>() != expect_offset) std::abort();
        if (lp["tokens"].size() != 1) std::abort();
      }
    } else if (!c["logprobs"].is_null()) {
      std::abort();
    }
    expect_offset += int64_t(texts[k].size());
    ++k;
  }
  if (k + (fail ? 1 : 0) != pieces.size()) std::abort();
  return 0;
}
