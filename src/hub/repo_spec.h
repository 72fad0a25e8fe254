// hub/repo_spec.h — what the user typed after `pull` / `-hf`, and picking the GGUF(s) it means
// from a repository's file list. Owns: `org/repo[:QUANT|/FILE.gguf]` parsing, quantization-name
// matching, multi-part (`-00001-of-00003.gguf`) sets. Must not know: HTTP, the cache on disk.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace nt::hub {

struct RepoSpec {
  std::string repo;   // "org/name"
  std::string quant;  // ":Q4_K_M" -> "Q4_K_M" (empty when not given)
  std::string file;   // "/path/in/repo.gguf" -> "path/in/repo.gguf" (empty when not given)
};

// Parses "org/repo", "org/repo:QUANT", "org/repo/FILE.gguf" (FILE may contain folders).
// An "https://huggingface.co/" prefix is accepted and dropped.
Result<RepoSpec> parse_repo_spec(const std::string& spec);

// Multi-part GGUF naming: "<stem>-00001-of-00003.gguf".
struct SplitName {
  bool is_split = false;
  std::string stem;  // everything before "-00001-of-00003.gguf"
  int index = 0;     // 1-based
  int count = 0;
};
SplitName parse_split_name(const std::string& file);
// Every part's file name of the set `file` belongs to (just `file` when it is not a split).
std::vector<std::string> split_set_names(const std::string& file);

// True when `file` carries quantization `quant` (case-insensitive) as a whole name: preceded by the
// start or one of "-._/" and followed by the end or one of "-./" (so Q4_K does not match Q4_K_M,
// and Q4_0 does not match IQ4_0 ...).
bool file_has_quant(const std::string& file, const std::string& quant);

// Picks the GGUF file set the spec means from `files` (the repository's file names).
// file given: that file (it must be listed) plus its other parts; quant given: the one set whose
// name carries it; neither: the only set, else the Q4_K_M one. mmproj-* files (vision projectors)
// are only taken when named. Returns all parts in order (first part first). Errors list what exists.
Result<std::vector<std::string>> select_gguf_files(const RepoSpec& spec, const std::vector<std::string>& files);

// "org/repo" -> "models--org--repo" (the Hugging Face cache folder name).
std::string repo_folder_name(const std::string& repo);

}  // namespace nt::hub
