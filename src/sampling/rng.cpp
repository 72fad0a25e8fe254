// sampling/rng.cpp — xoshiro256** with splitmix64 seeding (see rng.h for the exact procedure).
#include "sampling/rng.h"

#include <chrono>
#include <random>

namespace nt {

namespace {
inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

void Rng::reseed(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    s = z ^ (z >> 31);
  }
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t random_seed() {
  uint64_t seed = static_cast<uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  static int anchor = 0;
  seed ^= reinterpret_cast<uintptr_t>(&anchor) * 0x9E3779B97F4A7C15ull;
  try {
    std::random_device rd;
    seed ^= (static_cast<uint64_t>(rd()) << 32) ^ rd();
  } catch (...) {
    // random_device may be unavailable; time + address entropy is enough for an unseeded request.
  }
  // Mix so that nearby clock values give unrelated seeds.
  // Kept below 2^63 so the reported seed can be passed back as --seed (a signed 64-bit flag).
  Rng mix(seed);
  return mix.next_u64() >> 1;
}

}  // namespace nt
