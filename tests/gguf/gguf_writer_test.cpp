// Tests of the GGUF writer: every value type round-trips through the reader, alignment and offsets
// are honoured, chunked streaming works, and re-writing a real llama.cpp file reproduces it byte for
// byte.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "support/test_support.h"

namespace nt {
namespace {

TEST(GgufWriter, EveryValueTypeRoundTrips) {
  std::string path = test::temp_dir() + "/kv.gguf";
  GgufWriter w;
  w.set_u8("u8", 200);
  w.set_i8("i8", -100);
  w.set_u16("u16", 60000);
  w.set_i16("i16", -30000);
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -2000000000);
  w.set_u64("u64", 0xfedcba9876543210ull);
  w.set_i64("i64", -1234567890123ll);
  w.set_f32("f32", 1.5f);
  w.set_f64("f64", -2.25e100);
  w.set_bool("bool", true);
  w.set_str("str", "héllo\nworld");
  w.set_str("empty", "");
  w.set_str_array("strs", {"a", "", "▁the"});
  w.set_f32_array("f32s", {0.f, -1.f, 3.5f});
  w.set_i32_array("i32s", {1, -2, 3});
  w.set_i32_array("none", {});
  w.set_u32("u32", 7);  // replaces, keeps position
  ASSERT_TRUE(w.begin(path).ok());
  ASSERT_TRUE(w.finish().ok());

  auto f = GgufFile::open(path);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->version(), 3u);
  ASSERT_EQ(f->kvs().size(), 17u);
  EXPECT_EQ(f->kvs()[4].key, "u32");
  EXPECT_EQ(f->find("u8")->type, GgufType::UINT8);
  EXPECT_EQ(f->get_u64("u8").value(), 200u);
  EXPECT_EQ(f->get_i64("i8").value(), -100);
  EXPECT_EQ(f->get_u64("u16").value(), 60000u);
  EXPECT_EQ(f->get_i64("i16").value(), -30000);
  EXPECT_EQ(f->get_u64("u32").value(), 7u);
  EXPECT_EQ(f->get_i64("i32").value(), -2000000000);
  EXPECT_EQ(f->get_u64("u64").value(), 0xfedcba9876543210ull);
  EXPECT_EQ(f->get_i64("i64").value(), -1234567890123ll);
  EXPECT_EQ(f->find("f32")->type, GgufType::FLOAT32);
  EXPECT_EQ(f->get_f64("f32").value(), 1.5);
  EXPECT_EQ(f->get_f64("f64").value(), -2.25e100);
  EXPECT_EQ(f->get_bool("bool").value(), true);
  EXPECT_EQ(f->get_str("str").value(), "héllo\nworld");
  EXPECT_EQ(f->get_str("empty").value(), "");
  const GgufValue* strs = f->get_array("strs");
  ASSERT_NE(strs, nullptr);
  ASSERT_EQ(strs->strs.size(), 3u);
  EXPECT_EQ(strs->strs[2], "▁the");
  EXPECT_EQ(strs->strs[1], "");
  const GgufValue* fs = f->get_array("f32s");
  ASSERT_NE(fs, nullptr);
  EXPECT_EQ(fs->elem_type, GgufType::FLOAT32);
  EXPECT_EQ(fs->num_at(2), 3.5);
  EXPECT_EQ(f->get_array("i32s")->int_at(1), -2);
  EXPECT_EQ(f->get_array("none")->n, 0u);
  EXPECT_TRUE(f->tensors().empty());
}

TEST(GgufWriter, CopiesNestedArraysFromAReader) {
  // Build a file with a nested array by hand-copying: array of arrays via set_value.
  std::string dir = test::temp_dir();
  GgufValue inner1, inner2, outer;
  std::vector<int32_t> a = {1, 2}, b = {3};
  inner1.type = inner2.type = GgufType::ARRAY;
  inner1.elem_type = inner2.elem_type = GgufType::INT32;
  inner1.n = 2; inner1.raw = reinterpret_cast<const uint8_t*>(a.data());
  inner2.n = 1; inner2.raw = reinterpret_cast<const uint8_t*>(b.data());
  outer.type = GgufType::ARRAY;
  outer.elem_type = GgufType::ARRAY;
  outer.n = 2;
  outer.items = {inner1, inner2};
  GgufWriter w;
  w.set_value("nested", outer);
  ASSERT_TRUE(w.begin(dir + "/n1.gguf").ok());
  ASSERT_TRUE(w.finish().ok());
  auto f = GgufFile::open(dir + "/n1.gguf");
  ASSERT_TRUE(f.ok()) << f.error().message;
  const GgufValue* v = f->get_array("nested");
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->items.size(), 2u);
  EXPECT_EQ(v->items[0].int_at(1), 2);
  EXPECT_EQ(v->items[1].int_at(0), 3);
  // and copying every KV of that file again gives the same bytes
  GgufWriter w2;
  for (const auto& kv : f->kvs()) w2.set_value(kv.key, kv.value);
  ASSERT_TRUE(w2.begin(dir + "/n2.gguf").ok());
  ASSERT_TRUE(w2.finish().ok());
  EXPECT_EQ(test::read_text(dir + "/n1.gguf"), test::read_text(dir + "/n2.gguf"));
}

TEST(GgufWriter, TensorsAreAlignedAndStreamed) {
  for (uint32_t align : {32u, 64u, 1024u}) {
    std::string path = test::temp_dir() + "/t.gguf";
    GgufWriter w;
    w.set_str("general.architecture", "llama");
    if (align != 32) w.set_u32("general.alignment", align);
    std::vector<float> a(5 * 3);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f;
    std::vector<uint8_t> q(2 * 34);
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<uint8_t>(i * 7);
    w.add_tensor("a", DType::F32, {5, 3});
    w.add_tensor("q", DType::Q8_0, {64});
    w.add_tensor("c", DType::F16, {3});
    ASSERT_TRUE(w.begin(path).ok());
    ASSERT_TRUE(w.write_tensor_data(a.data(), a.size() * 4).ok());
    ASSERT_TRUE(w.write_tensor_chunk(q.data(), 30).ok());  // in two pieces
    ASSERT_TRUE(w.write_tensor_chunk(q.data() + 30, q.size() - 30).ok());
    uint16_t c[3] = {0x3c00, 0x4000, 0xc000};
    ASSERT_TRUE(w.write_tensor_data(c, 6).ok());
    const uint64_t expect_size = w.total_bytes();
    ASSERT_TRUE(w.finish().ok());

    auto f = GgufFile::open(path);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->file_size(), expect_size);
    EXPECT_EQ(f->alignment(), align);
    EXPECT_EQ(f->data_offset() % align, 0u);
    ASSERT_EQ(f->tensors().size(), 3u);
    for (const auto& t : f->tensors()) EXPECT_EQ(t.offset % align, 0u) << t.name;
    const GgufTensor* ta = f->find_tensor("a");
    EXPECT_EQ(ta->n_dims, 2u);
    EXPECT_EQ(ta->ne[0], 5u);
    EXPECT_EQ(ta->ne[1], 3u);
    EXPECT_EQ(std::memcmp(ta->data, a.data(), a.size() * 4), 0);
    const GgufTensor* tq = f->find_tensor("q");
    EXPECT_EQ(tq->type, DType::Q8_0);
    EXPECT_EQ(tq->n_bytes, q.size());
    EXPECT_EQ(std::memcmp(tq->data, q.data(), q.size()), 0);
    EXPECT_EQ(std::memcmp(f->find_tensor("c")->data, c, 6), 0);
  }
}

TEST(GgufWriter, NoFileLeftWhenNotFinished) {
  std::string path = test::temp_dir() + "/partial.gguf";
  {
    GgufWriter w;
    w.add_tensor("a", DType::F32, {4});
    ASSERT_TRUE(w.begin(path).ok());
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_EQ(f, nullptr);
  FILE* t = std::fopen(GgufWriter::temp_path(path).c_str(), "rb");
  EXPECT_EQ(t, nullptr);
  if (f) std::fclose(f);
  if (t) std::fclose(t);
}

TEST(GgufWriter, BadPathIsAnError) {
  GgufWriter w;
  auto s = w.begin("/nonexistent-dir/x.gguf");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent-dir/x.gguf"), std::string::npos);
}

TEST(GgufWriter, DirectoryDestinationIsAnErrorBeforeWriting) {
  const std::string path = test::temp_dir() + "/out.gguf";
  std::filesystem::create_directory(path);
  GgufWriter w;
  w.add_tensor("a", DType::F32, {4});
  auto s = w.begin(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(path + ": is a directory"), std::string::npos) << s.error().message;
  EXPECT_FALSE(std::filesystem::exists(GgufWriter::temp_path(path)));
}

TEST(GgufWriter, NoTemporaryLeftWhenTheRenameFails) {
  const std::string path = test::temp_dir() + "/out.gguf";
  GgufWriter w;
  w.add_tensor("a", DType::F32, {4});
  ASSERT_TRUE(w.begin(path).ok());
  const float a[4] = {1, 2, 3, 4};
  ASSERT_TRUE(w.write_tensor_data(a, sizeof(a)).ok());
  std::filesystem::create_directory(path);  // appears while the file is written
  auto s = w.finish();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(path), std::string::npos) << s.error().message;
  EXPECT_FALSE(std::filesystem::exists(GgufWriter::temp_path(path))) << "temporary file left behind";
}

// Re-writing every real file of ../shared from what the reader saw reproduces it byte for byte
// (same header layout, alignment and padding as llama.cpp's writer).
TEST(GgufWriter, RewritesSharedFilesIdentically) {
  NT_REQUIRE_SHARED();
  std::string dir = test::temp_dir();
  for (const char* rel : {"models/stories15M-q4_0.gguf", "models/tiny-llama-spm-q4_k_m.gguf",
                          "vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-qwen2.gguf"}) {
    auto src = GgufFile::open(test::shared_path(rel));
    ASSERT_TRUE(src.ok()) << src.error().message;
    GgufWriter w;
    for (const auto& kv : src->kvs()) w.set_value(kv.key, kv.value);
    for (const auto& t : src->tensors())
      w.add_tensor(t.name, t.type, std::vector<uint64_t>(t.ne, t.ne + t.n_dims));
    std::string out = dir + "/copy.gguf";
    ASSERT_TRUE(w.begin(out).ok());
    for (const auto& t : src->tensors()) ASSERT_TRUE(w.write_tensor_data(t.data, t.n_bytes).ok());
    ASSERT_TRUE(w.finish().ok());
    std::string a = test::read_text(test::shared_path(rel)), b = test::read_text(out);
    EXPECT_EQ(a.size(), b.size()) << rel;
    EXPECT_TRUE(a == b) << rel << ": rewritten bytes differ";
  }
}

}  // namespace
}  // namespace nt
