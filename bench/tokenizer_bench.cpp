// Encoding throughput of the tokenizers on ~1 MB of mixed Chinese, English and code
// (or the file named by $NT_BENCH_TEXT), for the vocabularies of ../shared/vocab.
// Run: build/bench/tokenizer_bench [--benchmark_filter=qwen2]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "tokenizer/tokenizer.h"

namespace {

std::string mixed_text() {
  if (const char* p = std::getenv("NT_BENCH_TEXT")) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!ss.str().empty()) return ss.str();
  }
  const std::string zh =
      "大型语言模型读取的是词元而不是字符。同一段话在不同的模型中会被切分成不同数量的词元，"
      "中文、英文和代码之间的差异最大。上下文长度、生成速度和价格都以词元计算。\n";
  const std::string en =
      "Models read tokens, not characters, and everything users pay for is counted in tokens. "
      "The same paragraph costs a different number of tokens in different models; it's true, isn't it?\n";
  const std::string code =
      "for (size_t i = 0; i < n_tokens; ++i) {\n    logits[i] = std::max(logits[i], -1e30f);  // clamp\n}\n"
      "def encode(self, text: str) -> list[int]:\n    return [self.vocab[t] for t in text.split()]\n";
  std::string s;
  int k = 0;
  while (s.size() < 1000000) {
    s += zh;
    s += en;
    s += code;
    s += std::to_string(k++ * 7919) + "\n";
  }
  return s;
}

void bm_encode(benchmark::State& state, const char* vocab) {
  static const std::string text = mixed_text();
  auto t = nt::Tokenizer::from_file(std::string(NT_SHARED_DIR) + "/vocab/ggml-vocab-" + vocab + ".gguf");
  if (!t.ok()) {
    state.SkipWithError(t.error().message.c_str());
    return;
  }
  size_t n = 0;
  for (auto _ : state) {
    auto ids = (*t)->encode(text, false, true);
    n = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(n);
}

BENCHMARK_CAPTURE(bm_encode, llama_bpe, "llama-bpe")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_encode, qwen2, "qwen2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_encode, llama_spm, "llama-spm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_encode, gpt2, "gpt-2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_encode, bert_bge, "bert-bge")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
