// tests/template/golden_test.cpp — the 280 golden records of ../shared/golden/templates: every
// `rendered` record reproduced byte for byte, every `error` record fails (with the template's own
// message for TemplateError), with the date fixed to 2026-11-29 as the records were made.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "template/chat_template.h"

namespace {

using nlohmann::ordered_json;

struct Golden {
  std::vector<ordered_json> records;
  std::map<std::string, std::string> sources;
};

const Golden& golden() {
  static Golden g = [] {
    Golden out;
    std::ifstream in(nt::test::shared_path("golden/templates/templates_golden.jsonl"));
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out.records.push_back(ordered_json::parse(line));
    for (const auto& r : out.records) {
      std::string name = r["template"];
      if (!out.sources.count(name)) out.sources[name] = nt::test::read_text(nt::test::shared_path("templates/" + name));
    }
    return out;
  }();
  return g;
}

TEST(TemplateGolden, AllRecords) {
  NT_REQUIRE_SHARED();
  const Golden& g = golden();
  ASSERT_EQ(g.records.size(), 280u);
  std::map<std::string, std::shared_ptr<nt::ChatTemplate>> parsed;
  int passed = 0;
  for (const auto& r : g.records) {
    std::string name = r["template"];
    SCOPED_TRACE(name + " " + r["case"].get<std::string>());
    if (!parsed.count(name)) {
      auto t = nt::ChatTemplate::parse(g.sources.at(name), name);
      ASSERT_TRUE(t.ok()) << t.error().message;
      parsed[name] = std::make_shared<nt::ChatTemplate>(std::move(t.value()));
    }
    nt::ChatTemplateOptions opts;
    opts.add_generation_prompt = r["add_generation_prompt"];
    opts.bos_token = r["bos_token"];
    opts.eos_token = r["eos_token"];
    opts.date = "2026-11-29";
    auto out = parsed[name]->render(r["messages"], opts);
    if (r.contains("rendered")) {
      EXPECT_TRUE(out.ok()) << out.error().message;
      if (!out.ok()) continue;
      EXPECT_EQ(out.value(), r["rendered"].get<std::string>());
      if (out.value() == r["rendered"].get<std::string>()) passed++;
    } else {
      EXPECT_FALSE(out.ok()) << "expected an error: " << r["error"];
      if (out.ok()) continue;
      if (r["error_type"] == "TemplateError")
        EXPECT_NE(out.error().message.find(r["error"].get<std::string>()), std::string::npos) << out.error().message;
      passed++;
    }
  }
  EXPECT_EQ(passed, 280);
  std::printf("golden records passed: %d / %zu\n", passed, g.records.size());
}

}  // namespace
