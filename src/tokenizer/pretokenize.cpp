#include "tokenizer/pretokenize.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <map>

#include "core/strings.h"

namespace nt {

namespace {

// Hugging Face tokenizer.json pre-tokenizer rules (Split regexes, applied in order).
const char* const kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kQwen35 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kTekken =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kDeepseekLlmLetters = R"(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)";
const char* const kDeepseekV3Words =
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kPoro = R"( ?[^(\s|.,!?…。，、।۔،)]+)";

using List = std::vector<std::string>;

const std::map<std::string, List, std::less<>>& pre_table() {
  static const std::map<std::string, List, std::less<>> t = [] {
    std::map<std::string, List, std::less<>> m;
    const List gpt2 = {kGpt2};
    const List llama3 = {kLlama3};
    const List qwen2 = {kQwen2};
    const List starcoder = {R"(\p{N})", kGpt2};
    const List poro = {kPoro};
    // "default": the generic split GGUF converters name "default" for BPE vocabularies.
    m["default"] = {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"};
    for (const char* n : {"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "dbrx",
                          "smaug-bpe", "chatglm-bpe", "glm4", "midm-2.0", "lfm2"})
      m[n] = llama3;
    for (const char* n : {"qwen2", "stablelm2", "deepseek-r1-qwen", "hunyuan"}) m[n] = qwen2;
    m["qwen35"] = {kQwen35};
    m["deepseek-llm"] = {R"([\r\n])", kDeepseekLlmLetters, R"(\s?[!-/:-~！-／：-～‘-‟　-。]+)", R"(\s+$)",
                         R"([一-龥ࠀ-一가-퟿]+)", R"(\p{N}+)"};
    m["deepseek-coder"] = {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", R"([一-龥ࠀ-一가-퟿]+)", R"(\p{N})"};
    m["deepseek-v3"] = {R"(\p{N}{1,3})", R"([一-龥぀-ゟ゠-ヿ]+)", kDeepseekV3Words};
    m["falcon"] = {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, R"([0-9][0-9][0-9])"};
    for (const char* n : {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"})
      m[n] = starcoder;
    for (const char* n : {"gpt-2", "gpt2", "mpt", "olmo", "jais", "phi-2", "jina-es", "jina-de",
                          "jina-v2-es", "jina-v2-de", "roberta-bpe", "jina-v1-en", "jina-v2-code", "trillion"})
      m[n] = gpt2;
    // Absent tokenizer.ggml.pre (older GGUFs, e.g. GPT-NeoX): the ByteLevel pre-tokenizer's own
    // GPT-2 rule, which is what those models' tokenizer.json uses.
    m[""] = gpt2;
    m["tekken"] = {kTekken};
    m["poro-chat"] = poro;
    m["bloom"] = poro;
    m["gpt3-finnish"] = poro;
    m["viking"] = {kPoro, R"(\p{N})"};
    return m;
  }();
  return t;
}

struct Regex {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Regex() {
    if (code) pcre2_code_free(code);
  }
};

struct ThreadMatchState {
  pcre2_match_data* md = nullptr;
  pcre2_jit_stack* stack = nullptr;
  pcre2_match_context* mctx = nullptr;
  ThreadMatchState() {
    md = pcre2_match_data_create(4, nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    mctx = pcre2_match_context_create(nullptr);
    if (mctx && stack) pcre2_jit_stack_assign(mctx, nullptr, stack);
  }
  ~ThreadMatchState() {
    pcre2_match_data_free(md);
    pcre2_match_context_free(mctx);
    pcre2_jit_stack_free(stack);
  }
};

ThreadMatchState& match_state() {
  thread_local ThreadMatchState s;
  return s;
}

}  // namespace

struct PreTokenizer::Impl {
  std::vector<std::unique_ptr<Regex>> regexes;
};

PreTokenizer::PreTokenizer() : impl_(std::make_unique<Impl>()) {}
PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

Result<std::vector<std::string>> PreTokenizer::regexes_for(std::string_view pre) {
  const auto& t = pre_table();
  auto it = t.find(pre);
  if (it == t.end()) {
    std::string known;
    for (const auto& [k, v] : t)
      if (!k.empty()) known += (known.empty() ? "" : ", ") + k;
    return make_error("unknown pre-tokenizer '%.*s' (tokenizer.ggml.pre); supported: %s",
                      static_cast<int>(pre.size()), pre.data(), known.c_str());
  }
  return it->second;
}

Status PreTokenizer::compile(const std::vector<std::string>& regexes) {
  impl_->regexes.clear();
  for (const auto& re : regexes) {
    auto r = std::make_unique<Regex>();
    int err = 0;
    PCRE2_SIZE off = 0;
    r->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(re.data()), re.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &off, nullptr);
    if (!r->code) {
      PCRE2_UCHAR buf[256];
      pcre2_get_error_message(err, buf, sizeof(buf));
      return make_error("bad pre-tokenizer regex at offset %zu: %s: %s", static_cast<size_t>(off),
                        reinterpret_cast<char*>(buf), re.c_str());
    }
    r->jit = pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE) == 0;
    impl_->regexes.push_back(std::move(r));
  }
  return {};
}

bool PreTokenizer::empty() const { return impl_->regexes.empty(); }

void PreTokenizer::split(std::string_view text, std::vector<PieceRange>& out) const {
  const size_t first = out.size();
  out.push_back({0, static_cast<uint32_t>(text.size())});
  if (text.empty()) {
    out.pop_back();
    return;
  }
  auto& st = match_state();
  std::vector<PieceRange> cur, next;
  cur.push_back(out.back());
  out.pop_back();
  for (const auto& re : impl_->regexes) {
    next.clear();
    next.reserve(cur.size() * 2);
    for (PieceRange p : cur) {
      const auto* subj = reinterpret_cast<PCRE2_SPTR>(text.data() + p.begin);
      const size_t len = p.end - p.begin;
      size_t pos = 0, gap = 0;
      while (pos < len) {
        int rc = re->jit ? pcre2_jit_match(re->code, subj, len, pos, 0, st.md, st.mctx)
                         : pcre2_match(re->code, subj, len, pos, 0, st.md, st.mctx);
        if (rc < 0) break;  // no match (or an error: the rest is one gap)
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.md);
        size_t ms = ov[0], me = ov[1];
        if (me <= ms) {  // empty match: step over one byte/character, it joins the next gap
          pos = ms + 1;
          while (pos < len && (static_cast<uint8_t>(subj[pos]) & 0xC0) == 0x80) ++pos;
          continue;
        }
        if (ms > gap) next.push_back({p.begin + uint32_t(gap), p.begin + uint32_t(ms)});
        next.push_back({p.begin + uint32_t(ms), p.begin + uint32_t(me)});
        pos = gap = me;
      }
      if (gap < len) next.push_back({p.begin + uint32_t(gap), p.end});
    }
    std::swap(cur, next);
  }
  (void)first;
  out.insert(out.end(), cur.begin(), cur.end());
}

}  // namespace nt
