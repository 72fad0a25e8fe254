// The table of KV cache types (kernels/kv_types.h): names parse case-insensitively, an unknown or
// non-cache type is refused with the list, head_dim constraints, and every type in the table is one
// the attention kernels read at every SIMD level (the attention tests in ops_test.cpp walk the table).
#include <gtest/gtest.h>

#include <string>

#include "kernel_test_util.h"
#include "core/strings.h"
#include "kernels/kv_types.h"

namespace nt::test {
namespace {

TEST(KvTypes, NamesListAndParse) {
  EXPECT_EQ(kv_cache_type_names(), "f16, bf16, f32, q8_0");
  for (DType t : kv_cache_types()) {
    const std::string name(dtype_name(t));
    for (const std::string& spelled : {name, to_lower(name)}) {
      auto r = parse_kv_cache_type(spelled);
      ASSERT_TRUE(r.ok()) << spelled << ": " << r.error().message;
      EXPECT_EQ(*r, t) << spelled;
    }
    EXPECT_TRUE(is_kv_cache_type(t));
  }
  for (const char* bad : {"q4_0", "Q4_K", "f64", "bogus", ""}) {
    auto r = parse_kv_cache_type(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("'" + std::string(bad) + "'"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(kv_cache_type_names()), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(is_kv_cache_type(DType::Q4_0));
}

TEST(KvTypes, HeadDimMustHoldWholeBlocks) {
  for (int head_dim : {48, 64, 80, 128}) {
    EXPECT_TRUE(check_kv_cache_type(DType::F16, head_dim).ok());
    EXPECT_TRUE(check_kv_cache_type(DType::BF16, head_dim).ok());
    EXPECT_TRUE(check_kv_cache_type(DType::F32, head_dim).ok());
    EXPECT_EQ(check_kv_cache_type(DType::Q8_0, head_dim).ok(), head_dim % 32 == 0) << head_dim;
  }
  const Status q8 = check_kv_cache_type(DType::Q8_0, 48);
  ASSERT_FALSE(q8.ok());
  EXPECT_NE(q8.error().message.find("head_dim (48) to be a multiple of 32"), std::string::npos) << q8.error().message;
  const Status q4 = check_kv_cache_type(DType::Q4_0, 64);
  ASSERT_FALSE(q4.ok());
  EXPECT_NE(q4.error().message.find(kv_cache_type_names()), std::string::npos) << q4.error().message;
}

}  // namespace
}  // namespace nt::test
