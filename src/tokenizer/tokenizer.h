// tokenizer/tokenizer.h — text <-> token ids, exactly as the model's reference tokenizer does it.
// Owns: the three tokenizer families of GGUF files (`llama` SentencePiece BPE with byte fallback,
// `gpt2` byte-level BPE with the pre-tokenizer named by `tokenizer.ggml.pre`, `bert` WordPiece),
// Hugging Face tokenizer.json loading (BPE with byte-level or Metaspace pre-tokenization),
// special-token handling, exact decoding and streaming decoding.
// Must not know: model weights, chat templates, sampling, the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "gguf/gguf.h"

namespace nt {

enum class TokenType : int32_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

struct Vocab;  // tokenizer/vocab.h (internal)

class Tokenizer {
 public:
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Built from the tokenizer.ggml.* keys of a model or vocab-only GGUF.
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const GgufFile& f);
  // A .gguf file or a Hugging Face tokenizer.json (chosen by content, not by name).
  static Result<std::unique_ptr<Tokenizer>> from_file(const std::string& path);
  // A Hugging Face tokenizer.json document held in memory.
  static Result<std::unique_ptr<Tokenizer>> from_hf_json(std::string_view json);

  // add_special: BOS/EOS (BERT: [CLS]/[SEP]) as the metadata says.
  // parse_special: recognise control tokens written in the text (user-defined tokens always are).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes this token contributes to decoded text (control tokens: their text).
  std::string token_to_piece(int32_t id) const;
  // Exact text of a token sequence. skip_special drops control tokens (BOS/EOS/...) from the
  // text. SentencePiece vocabularies drop the space their encoder prefixed to the first word.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special = false) const;

  int32_t n_vocab() const;
  int32_t bos() const;  // -1 when absent
  int32_t eos() const;  // -1 when absent
  int32_t eot() const;  // -1 when absent
  int32_t unk() const;  // -1 when absent
  int32_t pad() const;  // -1 when absent
  bool is_eog(int32_t id) const;  // end of generation: eos, eot, <|im_end|>, ... from metadata
  bool is_control(int32_t id) const;
  bool add_bos() const;
  bool add_eos() const;
  bool add_space_prefix() const;  // SentencePiece: a space is prefixed to the text
  std::string_view model_type() const;  // "llama", "gpt2", "bert"
  std::string_view pre_type() const;    // tokenizer.ggml.pre ("" when absent)
  std::string_view token_text(int32_t id) const;  // raw vocab entry ("" when out of range)
  TokenType token_type(int32_t id) const;          // Undefined when out of range
  float token_score(int32_t id) const;
  // Id of a vocab entry by its exact raw text, -1 when absent.
  int32_t token_id(std::string_view text) const;

  const Vocab& vocab() const { return *vocab_; }

 private:
  explicit Tokenizer(std::unique_ptr<Vocab> v);
  std::unique_ptr<Vocab> vocab_;
  friend struct TokenizerBuilder;
};

// Streaming decode: push ids one by one, get back only complete, valid UTF-8 (a partial multi-byte
// sequence, e.g. split across byte-fallback tokens, is held until complete; bytes that can never
// form valid UTF-8 come out as U+FFFD). flush() returns what is still held (an unfinished
// sequence as U+FFFD) and resets. For the exact bytes use Tokenizer::decode.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool skip_special = false);
  std::string push(int32_t id);
  std::string flush();

 private:
  static std::string valid_utf8(std::string_view s);
  const Tokenizer& tok_;
  bool skip_special_;
  bool first_text_ = true;
  std::string pending_;
};

}  // namespace nt
