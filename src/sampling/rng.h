// sampling/rng.h — the random stream behind every sampled token: a small deterministic PRNG whose
// output is identical on every platform, compiler and standard library (no std::*_distribution).
// Owns: seeding and uniform draws. Must not know: logits, tokens, models.
//
// Algorithm: xoshiro256** (Blackman & Vigna, public domain reference algorithm), 256-bit state.
// Seed procedure (documented so other implementations can reproduce a stream exactly):
//   x = seed (uint64); for i in 0..3: x += 0x9E3779B97F4A7C15; z = x;
//   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
//   state[i] = z ^ (z >> 31)            (i.e. four successive splitmix64 outputs)
// uniform() = (next_u64() >> 11) * 2^-53, a double in [0, 1) with 53 random bits.
#pragma once

#include <cstdint>

namespace nt {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  uint64_t next_u64();
  // Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_[4];
};

// A seed for requests that did not give one (time + address entropy + random_device when present).
uint64_t random_seed();

}  // namespace nt
