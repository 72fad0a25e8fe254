// cli/commands.h — the subcommands of `nexttok`, one function per command (cmd_<name>.cpp).
// Each takes argv starting at the command name and returns the process exit code:
// 0 success, 1 bad input (file, data, request), 2 bad usage (flags).
#pragma once

namespace nt::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*fn)(int argc, char** argv);
};

int cmd_inspect(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_detokenize(int argc, char** argv);
int cmd_count(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_check(int argc, char** argv);
int cmd_template(int argc, char** argv);
int cmd_pull(int argc, char** argv);
int cmd_quantize(int argc, char** argv);
int cmd_convert(int argc, char** argv);
int cmd_synth(int argc, char** argv);
int cmd_serve(int argc, char** argv);

inline constexpr Command kCommands[] = {
    {"run", "generate text from a prompt (prefill + decode), streaming", cmd_run},
    {"chat", "interactive multi-turn chat with KV-cache reuse", cmd_chat},
    {"serve", "OpenAI-compatible HTTP server for many users at once, with metrics", cmd_serve},
    {"check", "repeat a request and explain why outputs differ", cmd_check},
    {"bench", "prompt-processing and generation speed (like llama-bench)", cmd_bench},
    {"inspect", "model spec page: shape, tensor types, memory for context x sequences", cmd_inspect},
    {"tokenize", "split text into tokens (like llama-tokenize)", cmd_tokenize},
    {"detokenize", "turn token ids back into text", cmd_detokenize},
    {"count", "count tokens across texts and tokenizers; context fit, KV memory and cost", cmd_count},
    {"template", "render a conversation with a chat template", cmd_template},
    {"pull", "download a GGUF from the Hugging Face Hub into the shared cache", cmd_pull},
    {"quantize", "convert a GGUF's weights to another type (q8_0, q4_k_m, ...)", cmd_quantize},
    {"convert", "convert a llama2.c checkpoint and tokenizer to GGUF", cmd_convert},
    {"synth", "write a random-weight model of a given shape (for benchmarks)", cmd_synth},
};

}  // namespace nt::cli
