// cli/tokenizer_cli.h — small helpers shared by the token commands (tokenize, detokenize, count):
// id lists, visible pieces, and the KV-cache size a model's shape implies.
// Must not know: tokenizer internals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "gguf/gguf.h"

namespace nt::cli {

// "[1, 2, 3]" exactly as llama-tokenize --ids prints it.
std::string format_id_list(const std::vector<int32_t>& ids);
// Parses ids from arguments like "1 2 3", "[1, 2, 3]", "1,2,3". Error names the bad item.
Result<std::vector<int32_t>> parse_id_list(const std::vector<std::string>& args);
// A piece with invisible characters escaped (\n, \t, \r, \xNN for bytes that are not UTF-8).
std::string visible_piece(std::string_view piece);

struct KvShape {
  std::string arch;
  uint64_t n_layer = 0, n_head_kv = 0, head_dim = 0;
  std::optional<uint64_t> n_ctx_train;
  uint64_t kv_bytes_per_token() const { return 2 * n_layer * n_head_kv * head_dim * 2; }  // K+V, F16
};
// From general.architecture and <arch>.block_count / attention.head_count(_kv) /
// embedding_length / attention.key_length; nullopt for files without a model shape.
std::optional<KvShape> kv_shape(const GgufFile& f);

}  // namespace nt::cli
