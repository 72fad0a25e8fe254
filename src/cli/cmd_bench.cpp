// cli/cmd_bench.cpp — `nexttok bench`: prompt-processing (pp) and token-generation (tg) speed like
// llama-bench: each test is its own row (pp: n_gen 0; tg: n_prompt 0), mean ± stddev over -r
// repetitions after a warm-up, the context sized to the test; -d runs each test on top of that
// many cached tokens (prefilled, untimed), as llama-bench's n_depth. Optional read-bandwidth probe to
// show decode as a share of the memory-bandwidth ceiling, probed on the engine's threads right
// before and after each tg repetition.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/bench_concurrent.h"
#include "cli/bench_url.h"
#include "cli/bench_url_flags.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/model_setup.h"
#include "cli/report_html.h"
#include "core/strings.h"
#include "kernels/kv_types.h"
#include "kernels/read_probe.h"
#include "model/quant_mix.h"

namespace nt::cli {

namespace {

struct BenchArgs {
  std::vector<std::string> models;
  std::string hf_repo;
  std::string prompts = "512";
  std::string gens = "128";
  std::string depths = "0";
  std::string threads;
  int reps = 5;
  int n_batch = 512;
  std::string output = "md";
  std::string cache_type_k = "f16", cache_type_v = "f16";
  bool bandwidth = false;
  std::string parallel;  // --parallel: concurrent-generation tests through the request path
  std::string report, report_from;  // --report: an HTML page of the results; --report-from: of a saved run
};

Result<std::vector<int>> parse_list(const std::string& s, const char* what, int min_value) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < min_value || v > (1 << 24))
      return Error{str_printf("%s: '%s' is not a valid value in list '%s'", what, item.c_str(), s.c_str())};
    out.push_back(static_cast<int>(v));
  }
  return out;
}

struct Row {
  std::string model_path, model_type;
  uint64_t model_size = 0, n_params = 0;
  int n_threads = 0, n_prompt = 0, n_gen = 0, n_depth = 0;
  int n_parallel = 0;      // > 0: a concurrent-generation test (n_parallel requests of n_gen tokens)
  std::vector<double> ns;  // per repetition
  std::vector<double> bw;  // per repetition: bytes/s probed beside it (empty: not measured)
  uint64_t bytes_per_token = 0;  // weights read per generated token
  uint64_t kv_bytes_per_pos = 0;  // K and V bytes read per cached position (attention)
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

// tg as a share of the read bandwidth: the mean over repetitions of (bytes read per second in the
// repetition) / (bandwidth probed beside it). A generated token reads the weights and the K/V of
// every cached position: on average n_depth + (n_gen + 1) / 2 of them.
double bandwidth_pct(const Row& x) {
  const double kv = double(x.kv_bytes_per_pos) * (x.n_depth + 0.5 * (x.n_gen + 1));
  std::vector<double> pct;
  for (size_t i = 0; i < x.ns.size() && i < x.bw.size(); ++i)
    pct.push_back(100.0 * x.n_gen * 1e9 / x.ns[i] * (double(x.bytes_per_token) + kv) / x.bw[i]);
  return mean(pct);
}

// llama-bench's test names: pp512, tg128, "tg128 @ d4096".
std::string test_name(int p, int n, int d) {
  std::string s = p > 0 ? "pp" + std::to_string(p) : "tg" + std::to_string(n);
  return d > 0 ? s + " @ d" + std::to_string(d) : s;
}

// "llama 15M Q4_0": the architecture, the parameter count and the file type (general.file_type, as
// `inspect` shows it); files without one are named by the type holding the most matrix weights.
std::string model_type_of(const Model& m) {
  std::map<std::string, uint64_t> elems_by_type;
  uint64_t n_params = 0;
  for (const auto& t : m.gguf().tensors()) {
    n_params += t.n_elements();
    if (t.n_dims >= 2) elems_by_type[dtype_info(t.type).name] += t.n_elements();
  }
  std::string type = "?";
  if (auto ft = m.gguf().get_u64("general.file_type")) {
    type = ftype_name(static_cast<uint32_t>(*ft));
    if (type.rfind("MOSTLY_", 0) == 0) type = type.substr(7);
  } else {
    uint64_t best = 0;
    for (auto& [k, v] : elems_by_type)
      if (v > best) { best = v; type = k; }
  }
  const double p = static_cast<double>(n_params);
  std::string size = p >= 1e9 ? str_printf("%.1fB", p / 1e9) : str_printf("%.0fM", p / 1e6);
  return m.config().arch_name + " " + size + " " + type;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  BenchArgs a;
  CLI::App app{"Benchmark prompt processing (pp) and generation (tg) like llama-bench.\n"
               "Lists take comma-separated values: -p 128,512 -t 1,2; -m may be repeated.",
               "nexttok bench"};
  app.add_option("-m,--model", a.models, "model file(s) (default: the default model); with --url: the model name to "
                 "request (default: the first of GET /v1/models)");
  app.add_option("--hf-repo", a.hf_repo, "-hf org/repo[:QUANT]: model from the Hugging Face Hub");
  app.add_option("-p,--n-prompt", a.prompts, "prompt sizes (default 512; 0 skips pp)");
  app.add_option("-n,--n-gen", a.gens, "generation lengths (default 128; 0 skips tg)");
  app.add_option("-d,--n-depth", a.depths, "cached tokens before each test (default 0), e.g. -d 0,4096");
  app.add_option("-t,--threads", a.threads, "thread counts; 0 = all physical cores (default 0)");
  app.add_option("-r,--repetitions", a.reps, "repetitions per test, 1 to 1000 (default 5)");
  app.add_option("-b,--batch-size", a.n_batch, "prefill chunk size, 1 to 65536 (default 512)");
  app.add_option("-o,--output", a.output, "output format: md (default) or json");
  app.add_option("--cache-type-k", a.cache_type_k, "-ctk: KV cache type for K: " + kv_cache_type_names() + " (default f16)");
  app.add_option("--cache-type-v", a.cache_type_v, "-ctv: KV cache type for V: " + kv_cache_type_names() + " (default f16)");
  app.add_option("--parallel", a.parallel,
                 "-np: also run each -n test as that many concurrent requests through the engine (scheduler, "
                 "batched decode, greedy sampling), e.g. -np 1,16; t/s counts all their output tokens");
  app.add_flag("--bandwidth", a.bandwidth,
               "probe memory read bandwidth and report tg as % of its ceiling (above 100%: the weights were "
               "read from the CPU caches, not memory)");
  app.add_option("--report", a.report, "also write the results as one self-contained HTML page of charts, each with "
                 "its numbers as a table (opens with no network), e.g. --report bench.html");
  app.add_option("--report-from", a.report_from, "with --report: draw the page from a saved `bench -o json` "
                 "document (offline, --url or a comparison) instead of running a benchmark");
  // --url: a load generator for an OpenAI-compatible server instead (bench_url.h).
  UrlBenchFlags url;
  add_url_bench_flags(app, url);
  std::vector<int> pp, tg, depth, threads, parallel;
  auto check = [&]() -> Status {
    NT_TRY(check_report_flags(a.report, a.report_from, app.count("--url") > 0));
    if (!a.report_from.empty()) return {};
    if (!url.args.url.empty()) {
      for (const char* f : {"--n-depth", "--threads", "--repetitions", "--batch-size", "--cache-type-k",
                            "--cache-type-v", "--parallel", "--bandwidth", "--hf-repo"})
        if (app.count(f) > 0) return make_error("%s does not apply to --url", f);
      return finish_url_bench_flags(app, url, a.models, a.output, a.prompts, a.gens);
    }
    NT_TRY(refuse_url_only_flags(app));
    if (!a.parallel.empty()) {
      auto np = parse_list(a.parallel, "-np", 1);
      if (!np) return np.error();
      parallel = *np;
    }
    auto p = parse_list(a.prompts, "-p", 0);
    if (!p) return p.error();
    auto n = parse_list(a.gens, "-n", 0);
    if (!n) return n.error();
    auto d = parse_list(a.depths, "-d", 0);
    if (!d) return d.error();
    auto t = parse_list(a.threads.empty() ? "0" : a.threads, "-t", 0);
    if (!t) return t.error();
    pp = *p, tg = *n, depth = *d;
    for (int x : *t) {
      NT_TRY(check_threads("-t", x));
      threads.push_back(x == 0 ? ThreadPool::default_threads() : x);
    }
    if (a.output != "md" && a.output != "json") return make_error("-o must be md or json (got '%s')", a.output.c_str());
    NT_TRY(check_range("-r", a.reps, 1, 1000));
    NT_TRY(check_range("-b", a.n_batch, 1, 65536));
    NT_TRY(parse_kv_cache_type(a.cache_type_k));
    NT_TRY(parse_kv_cache_type(a.cache_type_v));
    return {};
  };
  if (int rc = parse_args(app, argc, argv, check); rc >= 0) return rc;
  if (!a.report_from.empty()) return report_from_file(a.report_from, a.report);
  url.args.report = a.report;
  if (!url.args.url.empty()) return run_bench_url(url.args, url.compare);
  std::vector<ModelArgs> model_args;
  if (!a.hf_repo.empty()) model_args.push_back(ModelArgs{"", a.hf_repo});
  for (const auto& m : a.models) model_args.push_back(ModelArgs{m, ""});
  if (model_args.empty()) model_args.push_back(ModelArgs{});

  int max_p = 0, max_n = 0, max_d = 0;
  for (int p : pp) max_p = std::max(max_p, p);
  for (int n : tg) max_n = std::max(max_n, n);
  for (int d : depth) max_d = std::max(max_d, d);
  std::vector<Row> rows;
  std::map<int, std::vector<double>> bw_by_threads;  // every probe, per thread count
  const bool md = a.output == "md";
  if (md) {
    std::printf("| model | size | params | threads | test | t/s |%s\n", a.bandwidth ? " % of BW |" : "");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: |%s\n", a.bandwidth ? " ---: |" : "");
    std::fflush(stdout);
  }
  for (const auto& ma : model_args) {
    for (int nt : threads) {
      EngineArgs ea;
      ea.n_threads = nt;
      int max_np = 1;
      for (int np : parallel) max_np = std::max(max_np, np);
      ea.n_ctx = std::max<int64_t>(max_d + std::max(max_p, max_n) + 1, int64_t(max_np) * (max_n + 2));
      ea.n_parallel = max_np;
      ea.n_batch = a.n_batch;
      ea.cache_type_k = a.cache_type_k;
      ea.cache_type_v = a.cache_type_v;
      auto lm = load_model(ma, ea, true);
      if (!lm) return fail("bench", lm.error().message);
      Engine& eng = *lm->engine;
      const Model& model = eng.model();
      Row base;
      base.model_path = lm->path;
      base.model_type = model_type_of(model);
      base.model_size = model.weight_bytes();
      for (const auto& t : model.gguf().tensors()) base.n_params += t.n_elements();
      base.n_threads = nt;
      // Decode reads every weight once per token, except the embedding table (one row) when the
      // output projection has its own matrix.
      base.bytes_per_token = base.model_size;
      if (!model.weights().tied_output)
        base.bytes_per_token -= model.weights().tok_embd.row_bytes * uint64_t(model.weights().tok_embd.n_rows);
      base.kv_bytes_per_pos = eng.kv_bytes_for(1);
      // The probe runs on the engine's threads (a second pool would spin beside them).
      std::unique_ptr<ReadProbe> probe;
      if (a.bandwidth) probe = std::make_unique<ReadProbe>(eng.pool());
      const int32_t n_vocab = eng.config().n_vocab;
      uint64_t rng = 0x9E3779B97F4A7C15ull;
      auto next_token = [&] {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        return static_cast<int32_t>(rng % static_cast<uint64_t>(n_vocab));
      };
      auto run_test = [&](int n_prompt, int n_gen, int n_depth) -> Result<Row> {
        Row r = base;
        r.n_prompt = n_prompt;
        r.n_gen = n_gen;
        r.n_depth = n_depth;
        // A tg repetition's ceiling: the mean of the probes right before and right after its timed
        // part (each the best of 3 passes over 512 MiB), so that drift between minutes cancels out.
        const bool probed = probe && n_gen > 0;
        auto append_random = [&](int seq, int n) -> Status {
          std::vector<int32_t> toks(static_cast<size_t>(n));
          for (auto& t : toks) t = next_token();
          auto lg = eng.eval(seq, toks.data(), n);
          if (!lg) return lg.error();
          return {};
        };
        for (int rep = -1; rep < a.reps; ++rep) {  // rep -1: warm-up
          const int seq = eng.new_seq();
          // The cached context, untimed.
          if (n_depth > 0)
            if (Status st = append_random(seq, n_depth); !st) return st.error();
          const double bw_before = probed && rep >= 0 ? probe->measure(3) : 0;
          const auto t0 = std::chrono::steady_clock::now();
          if (n_prompt > 0) {
            if (Status st = append_random(seq, n_prompt); !st) return st.error();
          } else {
            int32_t t = next_token();
            const int n = rep < 0 ? std::min(n_gen, 4) : n_gen;
            for (int i = 0; i < n; ++i) {
              auto lg = eng.eval(seq, &t, 1);
              if (!lg) return lg.error();
              t = next_token();
            }
          }
          const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
          eng.free_seq(seq);
          if (rep >= 0) r.ns.push_back(ns);
          if (probed && rep >= 0) {
            const double bw_after = probe->measure(3);
            r.bw.push_back(0.5 * (bw_before + bw_after));
            bw_by_threads[nt].push_back(bw_before);
            bw_by_threads[nt].push_back(bw_after);
          }
        }
        return r;
      };
      struct Test { int p, n, d, np; };
      std::vector<Test> tests;
      for (int d : depth) {
        for (int p : pp) if (p > 0) tests.push_back({p, 0, d, 0});
        for (int n : tg) if (n > 0) tests.push_back({0, n, d, 0});
      }
      for (int n : tg)
        for (int np : parallel)
          if (n > 0) tests.push_back({0, n, 0, np});
      for (auto [p, n, d, np] : tests) {
        Result<Row> r = Row{};
        if (np > 0) {
          Row c = base;
          c.n_gen = n;
          c.n_parallel = np;
          auto ns = time_concurrent_generation(eng, np, n, a.reps);
          if (!ns) return fail("bench", ns.error().message);
          c.ns = *ns;
          r = c;
        } else {
          r = run_test(p, n, d);
        }
        if (!r) return fail("bench", r.error().message);
        rows.push_back(*r);
        const Row& x = rows.back();
        const int64_t n_tok = p > 0 ? p : int64_t(n) * std::max(np, 1);
        std::vector<double> ts;
        for (double ns : x.ns) ts.push_back(double(n_tok) * 1e9 / ns);
        if (md) {
          std::string bwcol;
          if (a.bandwidth) bwcol = n > 0 && np == 0 ? str_printf(" %.1f%% |", bandwidth_pct(x)) : " |";
          std::printf("| %s | %s | %s | %d | %s | %.2f ± %.2f |%s\n", x.model_type.c_str(),
                      format_bytes(x.model_size).c_str(),
                      x.n_params >= 1000000000 ? str_printf("%.2f B", x.n_params / 1e9).c_str()
                                               : str_printf("%.2f M", x.n_params / 1e6).c_str(),
                      nt, (test_name(p, n, d) + (np > 0 ? " x" + std::to_string(np) : "")).c_str(), mean(ts),
                      stddev(ts), bwcol.c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  if (md) {
    for (auto& [nt, bw] : bw_by_threads)
      std::printf("\nmemory read bandwidth (%s), probed beside each tg repetition: mean %.2f GB/s, "
                  "range %.2f-%.2f\n", plural(nt, "thread", "threads").c_str(), mean(bw) / 1e9,
                  *std::min_element(bw.begin(), bw.end()) / 1e9, *std::max_element(bw.begin(), bw.end()) / 1e9);
    if (!bw_by_threads.empty())
      std::printf("%% of BW: bytes a generated token reads (weights and cached K/V) x tokens/s, over the probed "
                  "bandwidth; above 100%% means part of them came from the CPU caches, not memory (a model "
                  "smaller than the caches)\n");
    if (a.report.empty()) return 0;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const Row& x : rows) {
    const int64_t n_tok = x.n_prompt > 0 ? x.n_prompt : int64_t(x.n_gen) * std::max(x.n_parallel, 1);
    std::vector<double> ts;
    for (double ns : x.ns) ts.push_back(double(n_tok) * 1e9 / ns);
    nlohmann::json j = {{"model_filename", x.model_path}, {"model_type", x.model_type}, {"model_size", x.model_size},
                        {"model_n_params", x.n_params}, {"n_batch", a.n_batch}, {"n_threads", x.n_threads},
                        {"type_k", to_lower(a.cache_type_k)}, {"type_v", to_lower(a.cache_type_v)},
                        {"n_prompt", x.n_prompt}, {"n_gen", x.n_gen}, {"n_depth", x.n_depth}, {"avg_ns", mean(x.ns)},
                        {"stddev_ns", stddev(x.ns)}, {"avg_ts", mean(ts)}, {"stddev_ts", stddev(ts)},
                        {"samples_ns", x.ns}, {"samples_ts", ts}, {"simd", kernels_simd_level()}};
    if (x.n_parallel > 0) j["n_parallel"] = x.n_parallel;
    if (!x.bw.empty()) {
      j["bandwidth_bytes_per_s"] = mean(x.bw);
      j["samples_bandwidth_bytes_per_s"] = x.bw;
      j["bandwidth_pct"] = bandwidth_pct(x);
    }
    out.push_back(std::move(j));
  }
  if (!md) std::puts(out.dump().c_str());
  std::fflush(stdout);
  if (!a.report.empty()) {
    if (Status st = write_bench_report(out, a.report); !st) return fail("bench", st.error().message);
    std::fprintf(stderr, "bench: report written to %s\n", a.report.c_str());
  }
  return 0;
}

}  // namespace nt::cli
