// cli/model_setup.h — shared by the commands that run a model (run, chat, check, bench): the
// engine flags (-t, -c, -b, -ctk, -ctv), loading model + tokenizer + engine.
#pragma once

#include <memory>
#include <string>

#include "cli/common.h"
#include "engine/engine.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

struct EngineArgs {
  int n_threads = 0;
  int64_t n_ctx = 0;
  int n_batch = 512;
  int n_parallel = 8;
  int default_ctx_seqs = 1;  // -c 0: the pool holds this many training contexts (serve: -np)
  std::string cache_type_k = "f16";
  std::string cache_type_v = "f16";
  int state_snapshot_every = 512;  // hybrid models: see EngineOptions
  int state_snapshots = -1;
};
// -ctk / -ctv take the names of kernels/kv_types.h (parse_kv_cache_type).
void add_engine_options(CLI::App& app, EngineArgs& a);
// Range checks of the engine flags, before anything is loaded (see parse_args).
Status check_engine_args(const EngineArgs& a);

struct LoadedModel {
  std::string path;
  std::unique_ptr<Tokenizer> tokenizer;  // declared first: the engine uses it until destroyed
  std::unique_ptr<Engine> engine;
};
// Loads model, tokenizer and engine; logs a one-line summary to stderr unless quiet.
Result<LoadedModel> load_model(const ModelArgs& m, const EngineArgs& e, bool quiet);

}  // namespace nt::cli
