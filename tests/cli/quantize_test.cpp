// Tests of `nexttok quantize`: the per-tensor types match llama.cpp's mix and the per-tensor RMSE
// against the F32 original is no worse than 1.1x that of llama-quantize's files in ../shared.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "support/leftover_temps.h"
#include "support/test_support.h"
#include "tensor/dequant.h"

namespace nt {
namespace {

std::vector<float> to_f32(const GgufTensor& t) {
  std::vector<float> v(t.n_elements());
  const uint64_t row_bytes = dtype_row_bytes(t.type, t.ne[0]);
  const uint64_t n_rows = t.n_elements() / t.ne[0];
  for (uint64_t r = 0; r < n_rows; ++r)
    dequantize_row(t.type, t.data + r * row_bytes, v.data() + r * t.ne[0], static_cast<int64_t>(t.ne[0]));
  return v;
}

double rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
  return std::sqrt(e / static_cast<double>(a.size()));
}

// Quantizes `f32` to `type` and checks each tensor's type and RMSE against the llama.cpp file `ref`.
void compare_with_reference(const std::string& f32, const std::string& ref_path, const std::string& type) {
  const std::string out = test::temp_dir() + "/q.gguf";
  auto r = test::run_nexttok({"quantize", f32, out, type});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("token_embd.weight"), std::string::npos) << "a progress line per tensor";
  auto orig = GgufFile::open(f32);
  auto ours = GgufFile::open(out);
  auto ref = GgufFile::open(ref_path);
  ASSERT_TRUE(orig.ok() && ours.ok() && ref.ok());
  EXPECT_EQ(ours->get_u64("general.file_type"), ref->get_u64("general.file_type"));
  ASSERT_EQ(ours->tensors().size(), ref->tensors().size());
  for (const auto& t : orig->tensors()) {
    const GgufTensor* a = ours->find_tensor(t.name);
    const GgufTensor* b = ref->find_tensor(t.name);
    ASSERT_TRUE(a && b) << t.name;
    EXPECT_EQ(dtype_name(a->type), dtype_name(b->type)) << t.name << ": type differs from llama.cpp's mix";
    if (a->type != b->type) continue;
    const auto x = to_f32(t);
    const double e_ours = rmse(x, to_f32(*a)), e_ref = rmse(x, to_f32(*b));
    if (t.n_dims >= 2)
      std::printf("%-6s %-28s %-5s ours %.4e  llama.cpp %.4e  ratio %.3f\n", type.c_str(), t.name.c_str(),
                  std::string(dtype_name(a->type)).c_str(), e_ours, e_ref, e_ref > 0 ? e_ours / e_ref : 0.0);
    EXPECT_LE(e_ours, 1.1 * e_ref + 1e-12) << t.name;
  }
}

TEST(QuantizeCli, Q8_0MatchesLlamaCppMixAndQuality) {
  NT_REQUIRE_SHARED();
  compare_with_reference(test::shared_path("models/stories15M-f32.gguf"),
                         test::shared_path("models/stories15M-q8_0.gguf"), "q8_0");
}

TEST(QuantizeCli, Q4_0MatchesLlamaCppMixAndQuality) {
  NT_REQUIRE_SHARED();
  // includes the tied token_embd: Q6_K wanted, 288-wide rows fall back to Q8_0
  compare_with_reference(test::shared_path("models/stories15M-f32.gguf"),
                         test::shared_path("models/stories15M-q4_0.gguf"), "Q4_0");
}

TEST(QuantizeCli, KQuantMixMatchesLlamaCppOnTinyModel) {
  NT_REQUIRE_SHARED();
  // tiny-llama-spm-q4_k_m was made by llama-quantize: planning q4_k_m for it must pick the same type
  // for every tensor (Q4_K, with Q6_K for output and the "more bits" attn_v / ffn_down layers)
  const std::string src = test::shared_path("models/tiny-llama-spm-q4_k_m.gguf");
  auto r = test::run_nexttok({"quantize", src, test::temp_dir() + "/k.gguf", "q4_k_m", "--dry-run"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto ref = GgufFile::open(src);
  ASSERT_TRUE(ref.ok());
  size_t n_lines = 0;
  for (const auto& t : ref->tensors()) {
    const std::string line_start = t.name + " " + std::string(dtype_name(t.type)) + " ";
    const size_t at = r.out.find(line_start);
    ASSERT_NE(at, std::string::npos) << t.name;
    const size_t eol = r.out.find('\n', at);
    EXPECT_EQ(r.out.substr(at + line_start.size(), eol - at - line_start.size()), std::string(dtype_name(t.type))) << t.name;
    ++n_lines;
  }
  EXPECT_EQ(n_lines, 39u);
}

TEST(QuantizeCli, EveryPresetProducesALoadableFile) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  for (const char* type : {"f16", "BF16", "q5_k_m", "Q6_K", "q4_k_m"}) {
    auto r = test::run_nexttok(
        {"quantize", test::shared_path("models/stories15M-q8_0.gguf"), dir + "/o.gguf", type, "--allow-requantize"});
    ASSERT_EQ(r.rc, 0) << type << ": " << r.err;
    auto f = GgufFile::open(dir + "/o.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->tensors().size(), 56u);
    EXPECT_EQ(f->find_tensor("blk.0.attn_norm.weight")->type, DType::F32) << "norms stay F32";
  }
}

TEST(QuantizeCli, UsageAndInputErrors) {
  const std::string dir = test::temp_dir();
  EXPECT_EQ(test::run_nexttok({"quantize", "--help"}).rc, 0);
  EXPECT_EQ(test::run_nexttok({"quantize", "a.gguf", "b.gguf"}).rc, 2);
  auto r = test::run_nexttok({"quantize", "a.gguf", "b.gguf", "q3_xyz"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("q4_k_m"), std::string::npos) << "lists the valid types: " << r.err;
  r = test::run_nexttok({"quantize", dir + "/missing.gguf", dir + "/b.gguf", "q8_0"});
  EXPECT_EQ(r.rc, 1);
  test::write_text(dir + "/bad.gguf", "GGUF garbage");
  r = test::run_nexttok({"quantize", dir + "/bad.gguf", dir + "/b.gguf", "q8_0"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("bad.gguf"), std::string::npos) << r.err;
}

// A copy of the F32 model in a fresh directory, for tests that might destroy their input.
std::string copy_f32(const std::string& dir, const std::string& name) {
  const std::string p = dir + "/" + name;
  std::filesystem::copy_file(test::shared_path("models/stories15M-f32.gguf"), p);
  return p;
}

bool exists(const std::string& p) { return std::filesystem::exists(std::filesystem::symlink_status(p)); }

TEST(QuantizeCli, RefusesToOverwriteItsInputUnderAnotherName) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string in = copy_f32(dir, "a.gguf");
  const std::string original = test::read_text(in);
  std::filesystem::create_symlink(in, dir + "/link.gguf");
  std::filesystem::create_hard_link(in, dir + "/hard.gguf");
  // the spelling: a relative path and the same path with "./" (run from the file's folder)
  auto r = test::run_program({"/bin/sh", "-c", "cd '" + dir + "' && exec '" + test::nexttok_bin() +
                                                   "' quantize a.gguf ./a.gguf q4_0"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("same file"), std::string::npos) << r.err;
  for (const std::string& out : {dir + "/./a.gguf", dir + "//a.gguf", dir + "/../" +
                                     std::filesystem::path(dir).filename().string() + "/a.gguf",
                                 dir + "/link.gguf", dir + "/hard.gguf"}) {
    r = test::run_nexttok({"quantize", in, out, "q4_0"});
    EXPECT_EQ(r.rc, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("same file"), std::string::npos) << out << ": " << r.err;
  }
  EXPECT_TRUE(test::read_text(in) == original) << "the F32 input was overwritten";
  EXPECT_TRUE(test::leftover_temps(dir).empty());
}

TEST(QuantizeCli, AnInputNamedLikeAStaleTemporaryOfTheOutputIsKept) {
  NT_REQUIRE_SHARED();
  // the writer removes temporaries of OUT whose process is gone; one given as the input must stay
  // (pid 4194305 is above the kernel's largest, so no process has it)
  const std::string dir = test::temp_dir();
  const std::string in = copy_f32(dir, ".a.gguf.nexttok-tmp-4194305");
  const std::string original = test::read_text(in);
  auto r = test::run_nexttok({"quantize", in, dir + "/a.gguf", "q8_0"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(test::read_text(in) == original) << "the input was removed or overwritten";
  EXPECT_TRUE(exists(dir + "/a.gguf"));
}

TEST(QuantizeCli, OutputDirectoryFailsBeforeTheWorkAndLeavesNoTemporary) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  std::filesystem::create_directory(dir + "/out.gguf");
  auto r = test::run_nexttok({"quantize", test::shared_path("models/stories15M-f32.gguf"), dir + "/out.gguf", "q8_0"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("out.gguf: is a directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("token_embd.weight"), std::string::npos) << "checked before converting any tensor: " << r.err;
  EXPECT_TRUE(test::leftover_temps(dir).empty()) << "temporary file left behind";
}

TEST(QuantizeCli, RequantizingNeedsAllowRequantize) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string q8 = test::shared_path("models/stories15M-q8_0.gguf");
  // like llama-quantize: converting an already quantized tensor loses quality twice over
  auto r = test::run_nexttok({"quantize", q8, dir + "/q4.gguf", "q4_0"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("--allow-requantize"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Q8_0"), std::string::npos) << "names the source type: " << r.err;
  EXPECT_FALSE(exists(dir + "/q4.gguf"));
  EXPECT_TRUE(test::leftover_temps(dir).empty());
  r = test::run_nexttok({"quantize", q8, dir + "/q4.gguf", "q4_0", "--allow-requantize"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(exists(dir + "/q4.gguf"));
  // keeping every tensor's type is a copy, not a requantization
  r = test::run_nexttok({"quantize", q8, dir + "/same.gguf", "q8_0"});
  EXPECT_EQ(r.rc, 0) << r.err;
  // F16 -> Q8_0 is not a requantization either (llama.cpp allows F32, F16 and BF16 sources)
  r = test::run_nexttok({"quantize", q8, dir + "/f16.gguf", "f16", "--allow-requantize"});
  ASSERT_EQ(r.rc, 0) << r.err;
  r = test::run_nexttok({"quantize", dir + "/f16.gguf", dir + "/back.gguf", "q8_0"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(test::run_nexttok({"quantize", "--help"}).out.find("--allow-requantize"), std::string::npos);
}

}  // namespace
}  // namespace nt
