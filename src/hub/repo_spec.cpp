// hub/repo_spec.cpp — spec parsing and GGUF file selection (pure string logic, no I/O).
#include "hub/repo_spec.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/strings.h"

namespace nt::hub {
namespace {

bool valid_repo_part(const std::string& s) {
  if (s.empty() || s.size() > 96) return false;
  if (!std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return s.find("--") == std::string::npos && s.find("..") == std::string::npos;
}

bool is_gguf(const std::string& f) { return ends_with(to_lower(f), ".gguf"); }

std::string base_name(const std::string& f) {
  size_t p = f.rfind('/');
  return p == std::string::npos ? f : f.substr(p + 1);
}

bool is_mmproj(const std::string& f) { return to_lower(base_name(f)).find("mmproj") != std::string::npos; }

// One candidate: a single file or a complete/incomplete multi-part set.
struct Candidate {
  std::vector<std::string> parts;  // in part order (as far as listed)
  int count = 1;                   // parts expected
  std::string label() const {
    if (count == 1) return parts.front();
    return parts.front() + " (" + std::to_string(count) + " parts)";
  }
};

std::vector<Candidate> group_candidates(const std::vector<std::string>& files, bool with_mmproj) {
  std::map<std::string, Candidate> sets;  // key: stem|count, or the file itself
  for (const auto& f : files) {
    if (!is_gguf(f) || (!with_mmproj && is_mmproj(f))) continue;
    SplitName s = parse_split_name(f);
    std::string key = s.is_split ? s.stem + "|" + std::to_string(s.count) : f;
    Candidate& c = sets[key];
    c.count = s.is_split ? s.count : 1;
    c.parts.push_back(f);
  }
  std::vector<Candidate> out;
  for (auto& [k, c] : sets) {
    std::sort(c.parts.begin(), c.parts.end());
    out.push_back(std::move(c));
  }
  return out;
}

std::string list_candidates(const std::vector<Candidate>& cs) {
  if (cs.empty()) return "(no .gguf files)";
  std::string s;
  for (const auto& c : cs) s += "\n  " + c.label();
  return s;
}

Result<std::vector<std::string>> complete_set(const std::string& repo, const Candidate& c,
                                              const std::vector<std::string>& files) {
  std::vector<std::string> want = split_set_names(c.parts.front());
  std::set<std::string> have(files.begin(), files.end());
  std::string missing;
  for (const auto& w : want)
    if (!have.count(w)) missing += (missing.empty() ? "" : ", ") + w;
  if (!missing.empty())
    return Error{"the multi-part GGUF " + c.parts.front() + " in " + repo + " is incomplete: missing " + missing};
  return want;
}

}  // namespace

Result<RepoSpec> parse_repo_spec(const std::string& spec_in) {
  std::string spec = spec_in;
  for (const char* prefix : {"https://huggingface.co/", "http://huggingface.co/", "hf.co/", "huggingface.co/"})
    if (starts_with(spec, prefix)) spec = spec.substr(std::string(prefix).size());
  const std::string usage = "expected org/repo, org/repo:QUANT or org/repo/FILE.gguf, got '" + spec_in + "'";
  RepoSpec r;
  std::string path = spec;
  if (size_t colon = spec.find(':'); colon != std::string::npos) {
    path = spec.substr(0, colon);
    r.quant = spec.substr(colon + 1);
    if (r.quant.empty() || r.quant.find_first_of("/:") != std::string::npos) return Error{usage};
  }
  size_t s1 = path.find('/');
  if (s1 == std::string::npos) return Error{usage};
  size_t s2 = path.find('/', s1 + 1);
  std::string org = path.substr(0, s1);
  std::string name = path.substr(s1 + 1, s2 == std::string::npos ? std::string::npos : s2 - s1 - 1);
  if (!valid_repo_part(org) || !valid_repo_part(name)) return Error{usage};
  r.repo = org + "/" + name;
  if (s2 != std::string::npos) {
    if (!r.quant.empty()) return Error{usage + " (give either :QUANT or /FILE.gguf)"};
    r.file = path.substr(s2 + 1);
    if (r.file.empty() || r.file.back() == '/' || r.file.find("..") != std::string::npos ||
        r.file.find("//") != std::string::npos)
      return Error{usage};
    if (!is_gguf(r.file)) return Error{"'" + r.file + "' is not a .gguf file; " + usage};
  }
  return r;
}

SplitName parse_split_name(const std::string& file) {
  // <stem>-NNNNN-of-MMMMM.gguf
  SplitName s;
  const std::string lower = to_lower(file);
  if (!ends_with(lower, ".gguf") || file.size() < 5 + 15) return s;
  size_t end = file.size() - 5;                     // position of ".gguf"
  std::string tail = file.substr(end - 15, 15);     // "-00001-of-00003"
  auto digits = [](const std::string& d) {
    return d.size() == 5 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || !digits(tail.substr(1, 5)) || !digits(tail.substr(10, 5)))
    return s;
  int idx = std::stoi(tail.substr(1, 5));
  int cnt = std::stoi(tail.substr(10, 5));
  if (idx < 1 || cnt < 1 || idx > cnt) return s;
  s.is_split = true;
  s.stem = file.substr(0, end - 15);
  s.index = idx;
  s.count = cnt;
  return s;
}

std::vector<std::string> split_set_names(const std::string& file) {
  SplitName s = parse_split_name(file);
  if (!s.is_split) return {file};
  std::string ext = file.substr(file.size() - 5);  // keep the original ".gguf" casing
  std::vector<std::string> out;
  for (int i = 1; i <= s.count; ++i) out.push_back(s.stem + str_printf("-%05d-of-%05d", i, s.count) + ext);
  return out;
}

bool file_has_quant(const std::string& file, const std::string& quant) {
  if (quant.empty()) return false;
  const std::string f = to_lower(file), q = to_lower(quant);
  for (size_t pos = f.find(q); pos != std::string::npos; pos = f.find(q, pos + 1)) {
    bool left_ok = pos == 0 || std::string("-._/").find(f[pos - 1]) != std::string::npos;
    size_t after = pos + q.size();
    bool right_ok = after == f.size() || std::string("-./").find(f[after]) != std::string::npos;
    if (left_ok && right_ok) return true;
  }
  return false;
}

Result<std::vector<std::string>> select_gguf_files(const RepoSpec& spec, const std::vector<std::string>& files) {
  if (!spec.file.empty()) {
    if (std::find(files.begin(), files.end(), spec.file) == files.end()) {
      auto cs = group_candidates(files, true);
      return Error{spec.file + " is not in " + spec.repo + "; its GGUF files:" + list_candidates(cs)};
    }
    Candidate c;
    c.parts = {split_set_names(spec.file).front()};
    c.count = std::max(1, parse_split_name(spec.file).count);
    return complete_set(spec.repo, c, files);
  }
  auto all = group_candidates(files, false);
  if (all.empty()) return Error{spec.repo + " has no GGUF files" + (files.empty() ? "" : " (it has " + std::to_string(files.size()) + " other files)")};
  std::vector<Candidate> hits;
  if (!spec.quant.empty()) {
    for (const auto& c : all)
      if (file_has_quant(c.parts.front(), spec.quant)) hits.push_back(c);
    if (hits.empty())
      return Error{"no GGUF in " + spec.repo + " carries the quantization " + spec.quant + "; its GGUF files:" +
                   list_candidates(all)};
    if (hits.size() > 1)
      return Error{"several GGUFs in " + spec.repo + " carry the quantization " + spec.quant +
                   "; name one with " + spec.repo + "/FILE.gguf:" + list_candidates(hits)};
  } else if (all.size() == 1) {
    hits = all;
  } else {
    for (const auto& c : all)
      if (file_has_quant(c.parts.front(), "Q4_K_M")) hits.push_back(c);
    if (hits.size() != 1)
      return Error{spec.repo + " has several GGUFs; pick one with " + spec.repo + ":QUANT or " + spec.repo +
                   "/FILE.gguf:" + list_candidates(all)};
  }
  return complete_set(spec.repo, hits.front(), files);
}

std::string repo_folder_name(const std::string& repo) {
  std::string out = "models--";
  for (char c : repo) {
    if (c == '/') out += "--";
    else out += c;
  }
  return out;
}

}  // namespace nt::hub
