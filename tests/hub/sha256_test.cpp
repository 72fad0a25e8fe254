// SHA-256 against the FIPS 180-2 / NIST vectors, chunked updates, and OpenSSL on random data.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "hub/fake_hub.h"
#include "hub/sha256.h"
#include "support/test_support.h"

namespace nt::hub {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkedUpdatesMatchOneShotAndOpenSsl) {
  std::mt19937 rng(7);
  for (size_t len : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u, 1000u, 70001u}) {
    std::string data(len, '\0');
    for (auto& c : data) c = static_cast<char>(rng());
    Sha256 h;
    size_t pos = 0;
    while (pos < len) {
      size_t n = std::min<size_t>(len - pos, 1 + rng() % 97);
      h.update(data.data() + pos, n);
      pos += n;
    }
    std::string chunked = h.hex_digest();
    EXPECT_EQ(chunked, sha256_hex(data)) << len;
    EXPECT_EQ(chunked, nt::test::sha256_oracle(data)) << len;
  }
}

TEST(Sha256, FileDigestAndErrors) {
  std::string dir = nt::test::temp_dir();
  nt::test::write_text(dir + "/f", "abc");
  auto d = sha256_file(dir + "/f");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto missing = sha256_file(dir + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope"), std::string::npos);
  EXPECT_TRUE(is_sha256_hex(*d));
  EXPECT_FALSE(is_sha256_hex("abc"));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'g')));
}

}  // namespace
}  // namespace nt::hub
