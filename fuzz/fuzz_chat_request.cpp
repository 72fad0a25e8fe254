// libFuzzer target over the chat path of the server: a request body (JSON of any shape) is parsed
// as /v1/chat/completions does, its messages rendered by the server's ChatRenderer with real
// model templates and built-in formats, and the text tokenized as the server does (special tokens
// parsed). Any body must parse or fail with a 400; a render must succeed or fail with a message;
// every id must be in range, and a byte-level vocabulary must decode the ids back to the text.
// Data: $NT_FUZZ_VOCAB_DIR / $NT_FUZZ_TEMPLATE_DIR (else ../shared/vocab and ../shared/templates);
// without them every input is a no-op (a note is printed once).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_request.h"
#include "server/chat_renderer.h"
#include "tokenizer/unicode.h"

namespace {

using namespace nt::server;

struct Pipeline {
  std::string name;
  std::shared_ptr<nt::Tokenizer> tok;  // a vocabulary shared by its pipelines
  std::unique_ptr<ChatRenderer> renderer;
  bool byte_level;  // decodes any UTF-8 text back exactly
};

std::string data_dir(const char* env, const char* sub) {
  if (const char* e = std::getenv(env)) return e;
#ifdef NEXTTOK_SOURCE_DIR
  return std::string(NEXTTOK_SOURCE_DIR) + "/../shared/" + sub;
#else
  return std::string("../shared/") + sub;
#endif
}

std::vector<Pipeline>& pipelines() {
  static std::vector<Pipeline> v = [] {
    const std::string vocab = data_dir("NT_FUZZ_VOCAB_DIR", "vocab");
    const std::string tmpl = data_dir("NT_FUZZ_TEMPLATE_DIR", "templates");
    // A model's vocabulary with its own template (the file), or with a built-in format (a name).
    struct Spec {
      const char* vocab;
      const char* template_file;
      const char* format;
      bool byte_level;
    };
    const Spec specs[] = {
        {"qwen2", "Qwen-Qwen2.5-7B-Instruct.jinja", "", true},
        {"llama-bpe", "meta-llama-Llama-3.1-8B-Instruct.jinja", "", true},
        {"llama-spm", "mistralai-Mistral-Nemo-Instruct-2407.jinja", "", false},
        {"llama-spm", "google-gemma-2-2b-it.jinja", "", false},
        {"phi-3", "microsoft-Phi-3.5-mini-instruct.jinja", "", false},
        {"llama-spm", "", "llama2", false},
        {"qwen2", "", "chatml", true},
    };
    std::vector<Pipeline> out;
    std::map<std::string, std::pair<std::shared_ptr<nt::GgufFile>, std::shared_ptr<nt::Tokenizer>>> loaded;
    for (const Spec& s : specs) {
      auto& [gguf, tok] = loaded[s.vocab];
      if (!gguf) {
        auto g = nt::GgufFile::open(vocab + "/ggml-vocab-" + s.vocab + ".gguf");
        if (!g) continue;
        auto t = nt::Tokenizer::from_gguf(*g);
        if (!t) continue;
        gguf = std::make_shared<nt::GgufFile>(std::move(*g));
        tok = std::move(*t);
      }
      ChatRendererOptions o;
      o.chat_format = s.format;
      if (*s.template_file) o.template_file = tmpl + "/" + s.template_file;
      auto r = ChatRenderer::create(o, *tok, *gguf, nullptr);
      if (!r) continue;
      out.push_back({std::string(s.vocab) + " + " + (*s.template_file ? s.template_file : s.format), tok,
                     std::make_unique<ChatRenderer>(std::move(*r)), s.byte_level});
    }
    if (out.empty())
      std::fprintf(stderr, "fuzz_chat_request: no vocabulary or template under %s / %s: nothing is fuzzed\n",
                   vocab.c_str(), tmpl.c_str());
    for (const Pipeline& p : out) std::fprintf(stderr, "fuzz_chat_request: %s\n", p.name.c_str());
    return out;
  }();
  return v;
}

}  // namespace

// Loading the vocabularies takes seconds under ASan: before the first input, outside its timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pipelines();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // a render and an encode per pipeline: keep each input fast
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto& ps = pipelines();
  if (ps.empty()) return 0;
  auto r = parse_api_request(ApiKind::Chat, body);
  if (!r) {
    const ApiError e = to_api_error(r.error());
    if (e.status != 400 || e.message.empty()) std::abort();
    return 0;
  }
  if (!r->messages.is_array()) std::abort();
  for (const Pipeline& p : ps) {
    auto text = p.renderer->render(r->messages, r->chat_template_kwargs);
    if (!text) {
      if (text.error().message.empty()) std::abort();
      continue;
    }
    const std::vector<int32_t> ids = p.tok->encode(*text, false, true);
    for (int32_t id : ids)
      if (id < 0 || id >= p.tok->n_vocab()) std::abort();
    if (p.byte_level && nt::tok::utf8_is_valid(*text) && p.tok->decode(ids, false) != *text) {
      std::fprintf(stderr, "fuzz_chat_request: %s: decode(encode(text)) != text\n", p.name.c_str());
      std::abort();
    }
  }
  return 0;
}
