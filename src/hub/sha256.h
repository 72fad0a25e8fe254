// hub/sha256.h — SHA-256 (FIPS 180-4), incremental, for verifying downloads against the Hub's LFS
// checksums. Owns: the hash only. Must not know: files on the Hub, HTTP, the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace nt::hub {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes and returns the 64-char lowercase hex digest; the object is reset afterwards.
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  void reset();
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes hashed so far
};

// One-shot digest of a string.
std::string sha256_hex(std::string_view data);
// Digest of a file's bytes (read in chunks). Error names the path.
Result<std::string> sha256_file(const std::string& path);
// True when s looks like a sha256 hex digest (64 hex chars).
bool is_sha256_hex(std::string_view s);

}  // namespace nt::hub
