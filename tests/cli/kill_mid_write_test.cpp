// SIGKILL mid-write (issue 27, item 7): `synth`, `quantize`, `convert` and chat's /save are killed
// at several moments of writing an output big enough to take a while (as soon as the temporary
// file appears, when it is half written, and at random times). After every kill the final name
// holds the old content byte for byte or the complete new file (byte-identical to an uninterrupted
// run's), never a part; the next run removes the killed run's temporary; the last run completes
// and leaves no temporary behind.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.h"
#include "support/child_process.h"
#include "support/leftover_temps.h"
#include "support/test_support.h"

namespace nt {
namespace {

struct Invocation {
  std::vector<std::string> argv;  // argv[0] is the binary
  std::string stdin_path;         // "" = /dev/null
};
// How to run the command so that it writes `out`.
using MakeInvocation = std::function<Invocation(const std::string& out)>;

int64_t file_size(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? int64_t(st.st_size) : -1;
}

std::string name_of(const std::string& p) { return p.substr(p.rfind('/') + 1); }

enum class Moment { kTempAppears, kTempHalfWritten, kRandom };

// Runs the command against `final_path` and kills it at `moment` (or after `delay_s` for kRandom);
// returns a description of what happened, and checks the cleanup of earlier temporaries.
struct RoundResult {
  bool killed_mid_write = false;  // its temporary existed when it was killed
  bool finished = false;          // it completed before the kill
  int rc = -1;                    // its exit code when it finished
  std::string note;
};

RoundResult run_round(const MakeInvocation& make, const std::string& dir, const std::string& final_path,
                      int64_t full_size, Moment moment, double delay_s, const std::string& tag) {
  RoundResult res;
  Invocation inv = make(final_path);
  test::Child child(inv.argv, dir + "/log-" + tag, inv.stdin_path);
  const std::string own = atomic_temp_path(final_path, child.pid());
  const auto start = std::chrono::steady_clock::now();
  bool saw_own = false;
  for (;;) {
    if (!child.running()) {
      res.finished = true;
      break;
    }
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int64_t size = file_size(own);
    if (size >= 0 && !saw_own) {
      saw_own = true;
      // it created its temporary only after removing those of the runs killed before it
      for (const std::string& n : test::leftover_temps(dir))
        EXPECT_EQ(n, name_of(own)) << tag << ": a killed run's temporary survived the next run";
    }
    const bool fire = (moment == Moment::kTempAppears && size >= 0) ||
                      (moment == Moment::kTempHalfWritten && size >= full_size / 2) ||
                      (moment == Moment::kRandom && t >= delay_s) || t > 60;
    if (fire) {
      child.kill_now();
      res.killed_mid_write = file_size(own) >= 0;
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  res.rc = child.rc();
  if (res.finished) res.note = "finished (rc " + std::to_string(child.rc()) + ") before the kill: " + child.err();
  return res;
}

// The whole scenario for one command; `old` is what final_path holds before the first kill.
void kill_at_many_moments(const std::string& label, const MakeInvocation& make, const std::string& dir,
                          const std::string& ext, const std::string& old, bool check_half_written,
                          const std::function<void(const std::string&)>& validate) {
  // an uninterrupted run, for the reference bytes and the duration
  const std::string ref_path = dir + "/ref" + ext;
  double full_s = 0;
  {
    Invocation inv = make(ref_path);
    test::Child child(inv.argv, dir + "/log-ref", inv.stdin_path);
    ASSERT_TRUE(child.wait_for(120)) << label << ": the reference run did not finish";
    ASSERT_EQ(child.rc(), 0) << label << ": " << child.err();
    full_s = child.seconds();
  }
  const std::string reference = test::read_text(ref_path);
  ASSERT_GT(reference.size(), 1000u);
  ASSERT_NE(reference, old);
  std::remove(ref_path.c_str());

  const std::string final_path = dir + "/out" + ext;
  test::write_text(final_path, old);
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> when(0.0, full_s * 1.1);
  struct Plan {
    Moment m;
    double delay;
    const char* what;
  };
  std::vector<Plan> plans{{Moment::kTempAppears, 0, "as its temporary appeared"}};
  if (check_half_written) plans.push_back({Moment::kTempHalfWritten, 0, "with its temporary half written"});
  for (int i = 0; i < 3; ++i) plans.push_back({Moment::kRandom, when(rng), "at a random time"});
  std::printf("[%s] full run %.2f s, %zu bytes; random kill times from seed %u\n", label.c_str(), full_s,
              reference.size(), seed);

  int stale_left = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    RoundResult r = run_round(make, dir, final_path, int64_t(reference.size()), p.m, p.delay, "round" + std::to_string(i));
    if (p.m != Moment::kRandom) {
      EXPECT_TRUE(r.killed_mid_write) << label << ": not killed " << p.what << ": " << r.note;
    }
    EXPECT_TRUE(!r.finished || r.rc == 0) << label << ": " << r.note;
    stale_left += r.killed_mid_write;
    std::printf("[%s] round %zu: %s%s -> %s\n", label.c_str(), i, p.what,
                p.m == Moment::kRandom ? (" (" + std::to_string(p.delay) + " s)").c_str() : "",
                r.finished ? "finished first" : r.killed_mid_write ? "killed mid-write" : "killed outside the write");
    const std::string now = test::read_text(final_path);
    EXPECT_TRUE(now == old || now == reference)
        << label << ", killed " << p.what << ": " << final_path << " holds " << now.size()
        << " bytes that are neither the old file (" << old.size() << ") nor the complete new one ("
        << reference.size() << ")";
  }
  EXPECT_GT(stale_left, 0) << label << ": no round left a temporary, so none tested its cleanup";

  // the next run completes and removes the temporaries the killed runs left
  Invocation inv = make(final_path);
  test::Child child(inv.argv, dir + "/log-last", inv.stdin_path);
  ASSERT_TRUE(child.wait_for(120));
  ASSERT_EQ(child.rc(), 0) << child.err();
  EXPECT_TRUE(test::read_text(final_path) == reference) << label << ": the completed file differs from the reference";
  EXPECT_TRUE(test::leftover_temps(dir).empty()) << label << ": " << test::leftover_temps(dir).front();
  validate(final_path);
}

void inspect_loads(const std::string& path) {
  auto r = test::run_nexttok({"inspect", path});
  EXPECT_EQ(r.rc, 0) << path << ": " << r.err;
}

// Sanitizer builds run the same scenarios on outputs about half as large (they run ~5x slower).
const bool kSmaller = test::kChildSlowFactor > 1;

// A random-weight F32 llama of ~250 MB (two seconds to write in a release build).
std::vector<std::string> synth_argv(const std::string& out) {
  return {test::nexttok_bin(), "synth", "--arch", "llama", "--n-embd", kSmaller ? "384" : "768", "--n-layer", "2",
          "--n-head", "12", "--n-ff", "2048", "--ctx", "256", "--vocab", test::shared_path("vocab/ggml-vocab-llama-spm.gguf"),
          "--type", "f32", "-t", "2", "-o", out};
}

std::string old_gguf() { return test::read_text(test::shared_path("models/stories15M-q4_0.gguf")); }

TEST(KillMidWrite, Synth) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  kill_at_many_moments(
      "synth", [](const std::string& out) { return Invocation{synth_argv(out), ""}; }, dir, ".gguf", old_gguf(), true,
      inspect_loads);
}

TEST(KillMidWrite, Quantize) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string in = test::temp_dir() + "/in-f32.gguf";
  auto r = test::run_program(synth_argv(in));
  ASSERT_EQ(r.rc, 0) << r.err;
  kill_at_many_moments(
      "quantize",
      [in](const std::string& out) {
        return Invocation{{test::nexttok_bin(), "quantize", in, out, "q8_0", "-t", "2"}, ""};
      },
      dir, ".gguf", old_gguf(), true, inspect_loads);
}

// A llama2.c checkpoint of ~200 MB (dim 768, 3 layers, vocab 32000) and its tokenizer.bin.
void write_llama2c(const std::string& model, const std::string& tok) {
  const int32_t dim = kSmaller ? 384 : 768, hid = 2048, L = 3, heads = 12, V = 32000, seq = 256;
  std::string m;
  auto put = [&](auto v) { m.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  for (int32_t v : {dim, hid, L, heads, heads, V, seq}) put(v);
  const uint64_t n_floats = uint64_t(V) * dim + uint64_t(L) * (2 * dim + 4 * uint64_t(dim) * dim + 3 * uint64_t(dim) * hid) +
                            dim + uint64_t(seq) * (dim / heads);
  std::mt19937 rng(7);
  std::vector<float> w(n_floats);
  for (float& x : w) x = float(int32_t(rng() % 2001) - 1000) / 8000.0f;
  m.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
  test::write_text(model, m);
  std::string t;
  auto tput = [&](auto v) { t.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  tput(int32_t(8));
  for (int32_t i = 0; i < V; ++i) {
    const std::string piece = i == 0 ? "<unk>" : i == 1 ? "\n<s>\n" : i == 2 ? "\n</s>\n" : "t" + std::to_string(i);
    tput(float(-i));
    tput(int32_t(piece.size()));
    t += piece;
  }
  test::write_text(tok, t);
}

TEST(KillMidWrite, Convert) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string src = test::temp_dir();
  write_llama2c(src + "/model.bin", src + "/tokenizer.bin");
  kill_at_many_moments(
      "convert",
      [src](const std::string& out) {
        return Invocation{{test::nexttok_bin(), "convert", "llama2c", src + "/model.bin", src + "/tokenizer.bin", "-o", out},
                          ""};
      },
      dir, ".gguf", old_gguf(), true, inspect_loads);
}

TEST(KillMidWrite, ChatSave) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string src = test::temp_dir();
  // a long conversation (~60 MB) to /load and /save again: the save takes a moment
  std::string conv = "{\"messages\": [";
  const std::string content(12000, 'w');
  const int n_messages = kSmaller ? 2000 : 5000;
  for (int i = 0; i < n_messages; ++i)
    conv += std::string(i ? "," : "") + "{\"role\": \"" + (i % 2 ? "assistant" : "user") + "\", \"content\": \"" +
            std::to_string(i) + content + "\"}";
  conv += "]}";
  test::write_text(src + "/long.json", conv);
  const std::string model = test::shared_path("models/stories15M-q8_0.gguf");
  int n = 0;
  kill_at_many_moments(
      "chat /save",
      [&](const std::string& out) {
        const std::string script = src + "/script" + std::to_string(n++) + ".txt";
        test::write_text(script, "/load " + src + "/long.json\n/save " + out + "\n/quit\n");
        return Invocation{{test::nexttok_bin(), "chat", "-m", model, "-t", "1"}, script};
      },
      dir, ".json", "{\"messages\": [{\"role\": \"user\", \"content\": \"the old conversation\"}]}\n", false,
      [&](const std::string& path) {
        auto r = test::run_nexttok({"chat", "-m", model, "-t", "1"}, "/load " + path + "\n/quit\n");
        EXPECT_EQ(r.rc, 0) << r.err;
        EXPECT_NE(r.out.find("[loaded " + std::to_string(n_messages) + " messages"), std::string::npos) << r.out << r.err;
      });
}

}  // namespace
}  // namespace nt
