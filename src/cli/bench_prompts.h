// cli/bench_prompts.h — the prompts of `bench --url`: reproducible from a seed, distinct from the
// first token on (a server's prefix cache must not make later prompts free), and of exact token
// counts when the server can tokenize (a token-id window of the seed text's tokens), otherwise
// text of about the asked length.
// Must not know: HTTP, timing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace nt::cli {

// Paragraphs of English-like sentences of n_words words from a small fixed word list.
std::string seed_text(uint64_t seed, int n_words);

class PromptMaker {
 public:
  // pool: the token ids of seed_text(seed, ...) as the server tokenizes it; empty -> text prompts.
  PromptMaker(uint64_t seed, std::vector<int64_t> pool);
  // True when prompts are token ids of exactly the asked length.
  bool exact() const { return !pool_.empty(); }
  // The next prompt of n_tokens (>= 1): a JSON array of token ids when exact(), otherwise a string
  // of about n_tokens * 0.75 words. Its first tokens differ from every earlier prompt's while the
  // pool (or the word list) allows.
  nlohmann::json next(int n_tokens);

 private:
  std::vector<int64_t> pool_;
  std::mt19937_64 rng_;
  uint64_t seed_ = 0, count_ = 0;
  std::set<std::vector<int64_t>> seen_ids_;
  std::set<std::string> seen_text_;
};

}  // namespace nt::cli
