// bench/template_bench.cpp — rendering speed of the 70 chat templates in ../shared/templates
// (parse once, render the golden conversations), plus parse time. Not a timed test.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "template/chat_template.h"

namespace {

struct Case {
  std::string name;
  std::string source;
  std::shared_ptr<nt::ChatTemplate> tmpl;
  nlohmann::ordered_json messages;
  nt::ChatTemplateOptions opts;
};

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One case per template: its C3 record (system + 3 turns) from the golden file.
std::vector<Case> load_cases() {
  std::vector<Case> out;
  std::string dir = std::string(NT_SHARED_DIR) + "/golden/templates/templates_golden.jsonl";
  std::ifstream in(dir);
  std::string line;
  while (std::getline(in, line)) {
    auto r = nlohmann::ordered_json::parse(line);
    if (r["case"] != "C3") continue;
    Case c;
    c.name = r["template"];
    c.source = read_all(std::string(NT_SHARED_DIR) + "/templates/" + c.name);
    auto t = nt::ChatTemplate::parse(c.source, c.name);
    if (!t.ok()) continue;
    c.tmpl = std::make_shared<nt::ChatTemplate>(std::move(t.value()));
    c.messages = r["messages"];
    c.opts.add_generation_prompt = r["add_generation_prompt"];
    c.opts.bos_token = r["bos_token"];
    c.opts.eos_token = r["eos_token"];
    c.opts.date = "2026-11-29";
    out.push_back(std::move(c));
  }
  return out;
}

const std::vector<Case>& cases() {
  static std::vector<Case> c = load_cases();
  return c;
}

void BM_Render(benchmark::State& state) {
  const Case& c = cases()[static_cast<size_t>(state.range(0))];
  state.SetLabel(c.name);
  size_t bytes = 0;
  for (auto _ : state) {
    auto r = c.tmpl->render(c.messages, c.opts);  // errors (tools=None templates) are timed too
    bytes += r.ok() ? r->size() : 0;
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_Parse(benchmark::State& state) {
  const Case& c = cases()[static_cast<size_t>(state.range(0))];
  state.SetLabel(c.name);
  for (auto _ : state) {
    auto t = nt::ChatTemplate::parse(c.source, c.name);
    benchmark::DoNotOptimize(t);
  }
}

void BM_RenderAll(benchmark::State& state) {  // all 70 templates, one render each
  for (auto _ : state)
    for (const Case& c : cases()) {
      auto r = c.tmpl->render(c.messages, c.opts);
      benchmark::DoNotOptimize(r);
    }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(cases().size()));
}

void register_all() {
  for (size_t k = 0; k < cases().size(); k++) {
    benchmark::RegisterBenchmark("template_render", BM_Render)->Arg(static_cast<int64_t>(k))->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("template_parse", BM_Parse)->Arg(static_cast<int64_t>(k))->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("template_render_all_70", BM_RenderAll)->Unit(benchmark::kMicrosecond);
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
