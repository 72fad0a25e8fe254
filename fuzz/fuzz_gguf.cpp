// libFuzzer target over the GGUF reader: any bytes must parse or fail cleanly, and every pointer
// a successful parse hands out must lie inside the input.
#include <cstdint>
#include <cstdlib>

#include "gguf/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = nt::GgufFile::parse(data, size, "fuzz.gguf");
  if (!f.ok()) return 0;
  for (const auto& t : f->tensors())
    if (t.data < data || t.data + t.n_bytes > data + size) std::abort();
  for (const auto& kv : f->kvs()) {
    const auto& v = kv.value;
    if (v.is_array() && v.raw != nullptr && v.n > 0) (void)v.num_at(v.n - 1);
    for (auto s : v.strs)
      if (reinterpret_cast<const uint8_t*>(s.data()) < data ||
          reinterpret_cast<const uint8_t*>(s.data()) + s.size() > data + size)
        std::abort();
  }
  return 0;
}
