// libFuzzer target over the tokenizers: arbitrary bytes are encoded (with and without special
// tokens) by a SentencePiece, a byte-level BPE and a WordPiece vocabulary; every id must be in
// range, byte-level/byte-fallback vocabularies must decode back to the input exactly, and the
// streaming decoder must only emit valid UTF-8. Vocabularies: $NT_FUZZ_VOCAB_DIR or ../shared/vocab.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

std::vector<std::unique_ptr<nt::Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<nt::Tokenizer>> v = [] {
    std::vector<std::unique_ptr<nt::Tokenizer>> out;
    std::string dir = std::getenv("NT_FUZZ_VOCAB_DIR") ? std::getenv("NT_FUZZ_VOCAB_DIR") : "";
    if (dir.empty()) {
#ifdef NEXTTOK_SOURCE_DIR
      dir = std::string(NEXTTOK_SOURCE_DIR) + "/../shared/vocab";
#else
      dir = "../shared/vocab";
#endif
    }
    for (const char* n : {"llama-spm", "llama-bpe", "qwen2", "falcon", "bert-bge"}) {
      auto t = nt::Tokenizer::from_file(dir + "/ggml-vocab-" + n + ".gguf");
      if (t.ok()) out.push_back(std::move(t.value()));
    }
    if (out.empty()) std::abort();  // no vocabularies: fuzzing would test nothing
    return out;
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const auto& t : tokenizers()) {
    for (bool special : {false, true}) {
      auto ids = t->encode(text, special, special);
      for (int32_t id : ids)
        if (id < 0 || id >= t->n_vocab()) std::abort();
      if (t->model_type() == "bert") continue;
      // Lossless without special parsing (a parsed control token is dropped by skip_special).
      const bool lossless = !special;
      if (lossless && t->decode(ids, true) != text) std::abort();
      nt::StreamDecoder sd(*t, true);
      std::string streamed;
      for (int32_t id : ids) {
        std::string chunk = sd.push(id);
        if (!nt::tok::utf8_is_valid(chunk)) std::abort();
        streamed += chunk;
      }
      streamed += sd.flush();
      if (lossless && streamed != text) std::abort();
    }
  }
  return 0;
}
