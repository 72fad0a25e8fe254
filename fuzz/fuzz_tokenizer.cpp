// libFuzzer target over the tokenizers: arbitrary bytes are encoded (with and without special
// tokens) by a SentencePiece, a byte-level BPE and a WordPiece vocabulary; every id must be in
// range, byte-level/byte-fallback vocabularies must decode back to the input exactly, and the
// streaming decoder must only emit valid UTF-8 (equal to the input when that is valid UTF-8). Vocabularies: $NT_FUZZ_VOCAB_DIR or ../shared/vocab.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

struct Loaded {
  std::unique_ptr<nt::Tokenizer> tok;
  bool lossless;  // byte fallback or a symbol for every byte (Falcon lacks 0xF5..0xFF etc.)
};

std::vector<Loaded>& tokenizers() {
  static std::vector<Loaded> v = [] {
    std::vector<Loaded> out;
    std::string dir = std::getenv("NT_FUZZ_VOCAB_DIR") ? std::getenv("NT_FUZZ_VOCAB_DIR") : "";
    if (dir.empty()) {
#ifdef NEXTTOK_SOURCE_DIR
      dir = std::string(NEXTTOK_SOURCE_DIR) + "/../shared/vocab";
#else
      dir = "../shared/vocab";
#endif
    }
    const std::pair<const char*, bool> kVocabs[] = {
        {"llama-spm", true}, {"llama-bpe", true}, {"qwen2", true}, {"falcon", false}, {"bert-bge", false}};
    for (const auto& [n, lossless] : kVocabs) {
      auto t = nt::Tokenizer::from_file(dir + "/ggml-vocab-" + n + ".gguf");
      if (t.ok()) out.push_back({std::move(t.value()), lossless});
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
  for (const auto& [t, vocab_lossless] : tokenizers()) {
    for (bool special : {false, true}) {
      auto ids = t->encode(text, special, special);
      for (int32_t id : ids)
        if (id < 0 || id >= t->n_vocab()) std::abort();
      if (t->model_type() == "bert") continue;
      // Lossless without special parsing (a parsed control token is dropped by skip_special).
      // SentencePiece writes spaces as U+2581, so a literal U+2581 in the text decodes as a space.
      const bool lossless = !special && vocab_lossless &&
                            !(t->model_type() == "llama" && text.find("\xE2\x96\x81") != std::string::npos);
      if (lossless && t->decode(ids, true) != text) std::abort();
      nt::StreamDecoder sd(*t, true);
      std::string streamed;
      for (int32_t id : ids) {
        std::string chunk = sd.push(id);
        if (!nt::tok::utf8_is_valid(chunk)) std::abort();
        streamed += chunk;
      }
      streamed += sd.flush();
      if (lossless && nt::tok::utf8_is_valid(text) && streamed != text) std::abort();
      if (!nt::tok::utf8_is_valid(streamed)) std::abort();
    }
  }
  return 0;
}
