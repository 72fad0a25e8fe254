// kv/prefix_hash.h — the hash chain that keys full KV blocks in the prefix cache: a block's key
// covers its own token ids and, through its parent's key, every token before it, so two requests
// share a block only when their whole prefixes up to its end are equal. Chains start from a seed
// that names the model and the cache types, so blocks of another model or cache type never match.
// Keys are 64 bits and not cryptographic: the cache manager checks a hit's token ids and parent
// block before using it, so a collision (accidental or crafted) costs a miss, never wrong rows.
// Must not know: blocks, pools, requests.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "tensor/dtype.h"

namespace nt {

// The key chains start from: `model_identity` names the weights (e.g. the file's path, size and
// metadata digest); k_type / v_type the cache storage types.
uint64_t prefix_chain_seed(std::string_view model_identity, DType k_type, DType v_type);
// The key of a full block whose parent key is `parent` (the seed for the first block).
uint64_t block_hash(uint64_t parent, std::span<const int32_t> tokens);

}  // namespace nt
