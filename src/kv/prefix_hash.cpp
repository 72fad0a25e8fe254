#include "kv/prefix_hash.h"

#include <cstring>

namespace nt {

namespace {

// 64-bit constants with no structure (hex digits of pi). Both 32-bit halves of kWord
// have bit 31 set, so a word of two non-negative token ids never cancels it to zero.
constexpr uint64_t kWord = 0xA4093822299F31D0ull | 0x8000000080000000ull;
constexpr uint64_t kState = 0x082EFA98EC4E6C89ull;
constexpr uint64_t kLen = 0x452821E638D01377ull;
constexpr uint64_t kSeed = 0xBE5466CF34E90C6Cull;

// Multiplies to 128 bits and folds the halves: every output bit depends on every input bit of
// both operands, and the step is not invertible (no one can walk a key back to its state).
inline uint64_t mix(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// A final avalanche (xorshift-multiply) so keys are uniform in every bit (the hash index uses
// them as they are).
inline uint64_t finish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

// Absorbs one 64-bit word: the state is xored with a constant so that a state of exactly
// kState (probability 2^-64) is the only one that forgets the past.
inline uint64_t absorb(uint64_t h, uint64_t w) { return mix(w ^ kWord, h ^ kState); }

}  // namespace

uint64_t prefix_chain_seed(std::string_view model_identity, DType k_type, DType v_type) {
  uint64_t h = kSeed;
  size_t i = 0;
  for (; i + 8 <= model_identity.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, model_identity.data() + i, 8);
    h = absorb(h, w);
  }
  if (i < model_identity.size()) {
    uint64_t tail = 0;
    std::memcpy(&tail, model_identity.data() + i, model_identity.size() - i);
    h = absorb(h, tail);
  }
  h = absorb(h, uint64_t(model_identity.size()) ^ kLen);
  h = absorb(h, uint64_t(static_cast<uint32_t>(k_type)) | uint64_t(static_cast<uint32_t>(v_type)) << 32);
  return finish(h);
}

uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = parent;
  size_t i = 0;
  for (; i + 2 <= tokens.size(); i += 2)
    h = absorb(h, uint64_t(static_cast<uint32_t>(tokens[i])) | uint64_t(static_cast<uint32_t>(tokens[i + 1])) << 32);
  if (i < tokens.size()) h = absorb(h, uint64_t(static_cast<uint32_t>(tokens[i])));
  // The length goes in last, so [a] and [a, 0] (an odd tail padded with 0) differ.
  h = absorb(h, uint64_t(tokens.size()) ^ kLen);
  return finish(h);
}

}  // namespace nt
