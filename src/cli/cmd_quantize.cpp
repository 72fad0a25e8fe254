// cli/cmd_quantize.cpp — `nexttok quantize IN.gguf OUT.gguf TYPE`: re-encode a model's weights
// with llama.cpp's mix for the preset (model/quant_mix.h), streaming tensor by tensor.
#include <chrono>
#include <cstdio>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/strings.h"
#include "core/thread_pool.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/quant_mix.h"
#include "tensor/dequant.h"
#include "tensor/quantize.h"

namespace nt::cli {

namespace {

std::string shape_str(const GgufTensor& t) {
  std::string s = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
  return s + "]";
}

// Converts the rows of `t` into `out` (type `to`) with `pool`; rows are independent tasks.
void convert_tensor(const GgufTensor& t, DType to, std::vector<uint8_t>& out, ThreadPool& pool) {
  const int64_t n_per_row = static_cast<int64_t>(t.ne[0]);
  const int64_t n_rows = static_cast<int64_t>(t.n_elements() / t.ne[0]);
  const uint64_t in_row = dtype_row_bytes(t.type, t.ne[0]), out_row = dtype_row_bytes(to, t.ne[0]);
  out.resize(out_row * static_cast<uint64_t>(n_rows));
  const int64_t rows_per_task = std::max<int64_t>(1, std::min<int64_t>(64, n_rows / (pool.n_threads() * 4) + 1));
  const int n_tasks = static_cast<int>((n_rows + rows_per_task - 1) / rows_per_task);
  std::vector<std::vector<float>> scratch(static_cast<size_t>(pool.n_threads()), std::vector<float>(static_cast<size_t>(n_per_row)));
  pool.run(n_tasks, [&](int task, int thread) {
    std::vector<float>& buf = scratch[static_cast<size_t>(thread)];
    const int64_t r0 = task * rows_per_task, r1 = std::min(n_rows, r0 + rows_per_task);
    for (int64_t r = r0; r < r1; ++r) {
      const uint8_t* src = t.data + in_row * static_cast<uint64_t>(r);
      const float* row;
      if (t.type == DType::F32) {
        row = reinterpret_cast<const float*>(src);  // GGUF data is 32-byte aligned
      } else {
        dequantize_row(t.type, src, buf.data(), n_per_row);
        row = buf.data();
      }
      quantize_row(to, row, out.data() + out_row * static_cast<uint64_t>(r), n_per_row);
    }
  });
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
  CLI::App app{"Re-encode a GGUF model's weights to another type with llama.cpp's tensor mixes:\n"
               "norms and 1-D tensors stay as they are; the output projection gets Q6_K (Q8_0 if rows\n"
               "are not a multiple of 256); q4_k_m/q5_k_m give some attn_v/ffn_down layers Q6_K; rows\n"
               "that a K-quant cannot hold fall back to Q5_0/Q5_1/Q8_0 (then F16). A line per tensor\n"
               "goes to stderr. Like llama-quantize, converting tensors that are already quantized (a\n"
               "second loss of precision) needs --allow-requantize; F32, F16 and BF16 inputs do not.",
               "nexttok quantize"};
  std::string in, out, type_name;
  int n_threads = 0;
  bool dry_run = false, allow_requantize = false;
  app.add_option("input", in, "input GGUF (any supported tensor types)")->required();
  app.add_option("output", out, "output GGUF")->required();
  app.add_option("type", type_name, "target: " + quant_preset_names() + " (case-insensitive)")->required();
  app.add_option("-t,--threads", n_threads, "threads; 0 = all physical cores (default 0)");
  app.add_flag("--allow-requantize", allow_requantize,
               "convert tensors that are already quantized (Q8_0, Q4_K, ...): quality is lost twice");
  app.add_flag("--dry-run", dry_run, "print the plan (tensor name, current type, new type) to stdout; write nothing");
  if (int rc = parse_args(app, argc, argv, [&] { return check_threads("-t", n_threads); }); rc >= 0) return rc;

  auto preset = quant_preset_from_name(type_name);
  if (!preset) {
    std::fprintf(stderr, "nexttok quantize: unknown type '%s' (choose from: %s)\n", type_name.c_str(),
                 quant_preset_names().c_str());
    return kExitUsage;
  }
  if (auto s = GgufWriter::check_destination(out, {in}); !s) return fail("quantize", s.error().message);
  auto file = GgufFile::open(in);
  if (!file) return fail("quantize", file.error().message);
  const GgufFile& f = *file;

  std::vector<TensorDesc> descs;
  for (const auto& t : f.tensors()) {
    descs.push_back({t.name, t.n_dims, t.ne[0], t.type});
    if (!dtype_supported(t.type))
      return fail("quantize", str_printf("%s: tensor '%s' has type %s, which this build cannot decode",
                                         in.c_str(), t.name.c_str(), std::string(dtype_name(t.type)).c_str()));
  }
  uint64_t n_layer = 0;
  if (auto arch = f.get_str("general.architecture"))
    n_layer = f.get_u64(std::string(*arch) + ".block_count").value_or(0);
  const std::vector<TensorPlan> plans = plan_quant_mix(*preset, descs, n_layer);
  // llama.cpp's rule: a tensor whose type changes must come from F32, F16 or BF16
  for (size_t i = 0; i < f.tensors().size() && !allow_requantize; ++i) {
    const GgufTensor& t = f.tensors()[i];
    if (plans[i].type == t.type || dtype_info(t.type).block_size == 1) continue;
    const std::string msg =
        str_printf("%s: tensor '%s' is already quantized (%s); converting it to %s loses quality twice. Quantize "
                   "from the F32/F16 original, or pass --allow-requantize to do it anyway",
                   in.c_str(), t.name.c_str(), std::string(dtype_name(t.type)).c_str(),
                   std::string(dtype_name(plans[i].type)).c_str());
    if (!dry_run) return fail("quantize", msg);
    std::fprintf(stderr, "nexttok quantize: note: %s\n", msg.c_str());
    break;
  }

  if (dry_run) {
    for (size_t i = 0; i < f.tensors().size(); ++i)
      std::printf("%s %s %s%s\n", f.tensors()[i].name.c_str(), std::string(dtype_name(f.tensors()[i].type)).c_str(),
                  std::string(dtype_name(plans[i].type)).c_str(), plans[i].fallback ? " (fallback)" : "");
    return kExitOk;
  }

  GgufWriter w;
  for (const auto& kv : f.kvs()) w.set_value(kv.key, kv.value);
  // appended last, as llama.cpp does
  w.remove_key("general.quantization_version");
  w.remove_key("general.file_type");
  w.set_u32("general.quantization_version", 2);
  w.set_u32("general.file_type", preset->ftype);
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const GgufTensor& t = f.tensors()[i];
    w.add_tensor(t.name, plans[i].type, std::vector<uint64_t>(t.ne, t.ne + t.n_dims));
  }
  if (auto s = w.begin(out, {in}); !s) return fail("quantize", s.error().message);

  ThreadPool pool(resolve_threads(n_threads));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<uint8_t> buf;
  uint64_t in_bytes = 0, out_bytes = 0;
  int n_fallback = 0;
  const size_t n = f.tensors().size();
  for (size_t i = 0; i < n; ++i) {
    const GgufTensor& t = f.tensors()[i];
    const TensorPlan& p = plans[i];
    std::string note;
    Status s;
    if (p.type == t.type) {
      s = w.write_tensor_data(t.data, t.n_bytes);
      out_bytes += t.n_bytes;
    } else {
      convert_tensor(t, p.type, buf, pool);
      s = w.write_tensor_data(buf.data(), buf.size());
      out_bytes += buf.size();
    }
    if (!s) return fail("quantize", s.error().message);
    in_bytes += t.n_bytes;
    if (p.fallback) {
      ++n_fallback;
      note = str_printf("  (fallback: row of %llu is not a multiple of %s's %u)",
                        static_cast<unsigned long long>(t.ne[0]), std::string(dtype_name(p.preferred)).c_str(),
                        dtype_info(p.preferred).block_size);
    }
    std::fprintf(stderr, "[%4zu/%4zu] %-32s %-16s %5s -> %-5s %10s -> %10s%s\n", i + 1, n, t.name.c_str(),
                 shape_str(t).c_str(), std::string(dtype_name(t.type)).c_str(),
                 std::string(dtype_name(p.type)).c_str(), format_bytes(t.n_bytes).c_str(),
                 format_bytes(p.type == t.type ? t.n_bytes : buf.size()).c_str(), note.c_str());
  }
  if (auto s = w.finish(); !s) return fail("quantize", s.error().message);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "quantize: %s -> %s (%s): tensor data %s -> %s in %.2f s%s\n", in.c_str(), out.c_str(),
               ftype_name(preset->ftype).c_str(), format_bytes(in_bytes).c_str(), format_bytes(out_bytes).c_str(),
               secs, n_fallback ? str_printf(", %d tensor(s) fell back", n_fallback).c_str() : "");
  return kExitOk;
}

}  // namespace nt::cli
