// cli/bench_prompts.cpp — see bench_prompts.h.
#include "cli/bench_prompts.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

namespace nt::cli {

namespace {

constexpr const char* kWords[] = {
    "the",     "a",        "of",      "and",     "to",       "in",      "river",    "mountain", "city",
    "morning", "evening",  "quiet",   "bright",  "old",      "young",   "teacher",  "farmer",   "engine",
    "letter",  "window",   "garden",  "market",  "winter",   "summer",  "storm",    "harbor",   "bridge",
    "library", "machine",  "painter", "village", "forest",   "careful", "slowly",   "quickly",  "never",
    "always",  "because",  "although", "while",  "after",    "before",  "under",    "across",   "between",
    "walked",  "carried",  "found",   "built",   "wrote",    "opened",  "watched",  "remembered", "measured",
    "answered", "borrowed", "painted", "repaired", "crossed", "counted", "seven",   "twelve",   "hundred",
    "silver",  "copper",   "green",   "narrow",  "heavy",    "gentle",  "strange",  "famous",   "simple",
    "question", "history", "number",  "journey", "kitchen",  "station", "festival", "island",   "valley",
    "orchard", "lantern",  "compass", "theory",  "science",  "music",   "colour",   "weather",  "story",
    "children", "travelers", "sailors", "doctors", "students", "neighbors", "with",   "from",     "without",
    "every",   "many",     "some",    "their",   "our",      "its",     "was",      "were",     "had",
};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);

// Sentences of 6 to 14 words, paragraphs of 3 to 6 sentences.
std::string sentences(std::mt19937_64& rng, int n_words) {
  std::string out;
  int in_sentence = 0, sentence_len = 0, in_paragraph = 0, paragraph_len = 0;
  for (int i = 0; i < n_words; ++i) {
    if (in_sentence == 0) {
      sentence_len = 6 + static_cast<int>(rng() % 9);
      if (in_paragraph == 0) paragraph_len = 3 + static_cast<int>(rng() % 4);
    }
    std::string w = kWords[rng() % kNumWords];
    if (in_sentence == 0) w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    if (!out.empty()) out += in_sentence == 0 && in_paragraph == 0 ? "\n\n" : " ";
    out += w;
    if (++in_sentence == sentence_len || i + 1 == n_words) {
      out += i % 5 == 0 ? "?" : ".";
      in_sentence = 0;
      if (++in_paragraph == paragraph_len) in_paragraph = 0;
    }
  }
  return out;
}

constexpr int kMaxTries = 1000;  // draws before accepting a prompt whose first tokens repeat

}  // namespace

std::string seed_text(uint64_t seed, int n_words) {
  std::mt19937_64 rng(seed);
  return sentences(rng, n_words);
}

PromptMaker::PromptMaker(uint64_t seed, std::vector<int64_t> pool)
    : pool_(std::move(pool)), rng_(seed ^ 0x9E3779B97F4A7C15ull), seed_(seed) {}

nlohmann::json PromptMaker::next(int n_tokens) {
  ++count_;
  if (exact()) {
    // A window of the pool (wrapping around) from a random offset; its first up-to-16 ids must be new.
    const size_t n = static_cast<size_t>(std::max(n_tokens, 1));
    const size_t key_len = std::min<size_t>(n, 16);
    std::vector<int64_t> ids(n);
    for (int attempt = 0; attempt < kMaxTries; ++attempt) {
      const size_t offset = rng_() % pool_.size();
      for (size_t i = 0; i < n; ++i) ids[i] = pool_[(offset + i) % pool_.size()];
      if (seen_ids_.insert(std::vector<int64_t>(ids.begin(), ids.begin() + key_len)).second) break;
    }
    return ids;
  }
  // Text: fresh sentences per request; the first six words must be new.
  const int n_words = std::max(1, static_cast<int>(std::lround(n_tokens * 0.75)));
  std::string text;
  for (int attempt = 0; attempt < kMaxTries; ++attempt) {
    std::mt19937_64 rng(seed_ * 1000003 + count_ * 7919 + static_cast<uint64_t>(attempt));
    text = sentences(rng, n_words);
    size_t cut = 0;
    for (int spaces = 0; cut < text.size() && spaces < 6; ++cut)
      if (text[cut] == ' ') ++spaces;
    if (seen_text_.insert(text.substr(0, cut)).second) break;
  }
  return text;
}

}  // namespace nt::cli
