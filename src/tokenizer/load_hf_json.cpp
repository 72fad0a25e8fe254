// Building a Vocab from a Hugging Face tokenizer.json: BPE models with a byte-level
// pre-tokenizer (ByteLevel, Split regexes, Digits — GPT-2/Llama 3/Qwen style) or with Metaspace
// (SentencePiece-converted: U+2581 spaces, a prefix, byte fallback), and their added tokens.
// BOS/EOS come from the TemplateProcessing / RobertaProcessing post-processor.
#include <functional>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace nt {

Result<std::unique_ptr<Tokenizer>> make_tokenizer(std::unique_ptr<Vocab> v);  // load_gguf.cpp

namespace {

using json = nlohmann::json;

std::string regex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Collects the pre-tokenizer steps. Returns an error for steps we cannot honour exactly.
Status collect_pre(const json& p, std::vector<std::string>& regexes, bool& byte_level, bool& metaspace,
                   Vocab& v) {
  if (p.is_null()) return {};
  const std::string type = p.value("type", "");
  if (type == "Sequence") {
    for (const auto& q : p.value("pretokenizers", json::array())) NT_TRY(collect_pre(q, regexes, byte_level, metaspace, v));
  } else if (type == "ByteLevel") {
    byte_level = true;
    if (p.value("use_regex", true))
      regexes.push_back(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
    if (p.value("add_prefix_space", false)) return make_error("ByteLevel add_prefix_space=true is not supported");
  } else if (type == "Split") {
    if (p.value("invert", false)) return make_error("Split with invert=true is not supported");
    const std::string behavior = p.value("behavior", "Isolated");
    if (behavior != "Isolated") return make_error("Split behavior '%s' is not supported", behavior.c_str());
    const json& pat = p.at("pattern");
    if (pat.contains("Regex")) regexes.push_back(pat.at("Regex").get<std::string>());
    else if (pat.contains("String")) regexes.push_back(regex_escape(pat.at("String").get<std::string>()));
    else return make_error("Split pattern must be Regex or String");
  } else if (type == "Digits") {
    regexes.push_back(p.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
  } else if (type == "Metaspace") {
    metaspace = true;
    std::string scheme = p.value("prepend_scheme", p.value("add_prefix_space", true) ? "always" : "never");
    v.prefix = scheme == "first" ? Vocab::Prefix::First : scheme == "never" ? Vocab::Prefix::Never : Vocab::Prefix::Always;
    v.metaspace_split = p.value("split", true);
  } else {
    return make_error("pre-tokenizer '%s' is not supported", type.c_str());
  }
  return {};
}

Status collect_normalizer(const json& n, bool& prepend, bool& replace_space) {
  if (n.is_null()) return {};
  const std::string type = n.value("type", "");
  if (type == "Sequence") {
    for (const auto& q : n.value("normalizers", json::array())) NT_TRY(collect_normalizer(q, prepend, replace_space));
  } else if (type == "Prepend") {
    prepend = true;
  } else if (type == "Replace") {
    replace_space = true;
  } else if (type == "NFC") {
    // Assumed to be the identity for already-composed input.
  } else {
    return make_error("normalizer '%s' is not supported", type.c_str());
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> load_hf_json(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return make_error("not a GGUF file and not valid tokenizer.json (JSON parse failed)");
  if (!doc.contains("model") || !doc["model"].is_object()) return make_error("tokenizer.json has no \"model\"");
  const json& model = doc["model"];
  const std::string mtype = model.value("type", "BPE");
  if (mtype != "BPE")
    return make_error("tokenizer.json model type '%s' is not supported (only BPE)", mtype.c_str());
  if (!model.contains("vocab") || !model["vocab"].is_object()) return make_error("tokenizer.json: model.vocab missing");

  try {
    auto v = std::make_unique<Vocab>();
    v->pre = "tokenizer.json";
    int64_t n = 0;
    for (const auto& [k, id] : model["vocab"].items()) n = std::max<int64_t>(n, id.get<int64_t>() + 1);
    const json added = doc.value("added_tokens", json::array());
    for (const auto& a : added) n = std::max<int64_t>(n, a.at("id").get<int64_t>() + 1);
    if (n <= 0 || n > (1 << 24)) return make_error("tokenizer.json: bad vocab size %lld", static_cast<long long>(n));
    std::vector<std::string> text(static_cast<size_t>(n));  // packed into v->text below
    v->type.assign(n, TokenType::Unused);
    for (const auto& [k, id] : model["vocab"].items()) {
      int64_t i = id.get<int64_t>();
      if (i < 0) return make_error("tokenizer.json: negative token id");
      text[i] = k;
      v->type[i] = TokenType::Normal;
    }
    for (const auto& a : added) {
      int64_t i = a.at("id").get<int64_t>();
      if (i < 0) return make_error("tokenizer.json: negative token id");
      text[i] = a.at("content").get<std::string>();
      v->type[i] = a.value("special", false) ? TokenType::Control : TokenType::UserDefined;
    }

    std::vector<std::string> regexes;
    bool byte_level = false, metaspace = false, prepend = false, replace_space = false;
    NT_TRY(collect_pre(doc.value("pre_tokenizer", json()), regexes, byte_level, metaspace, *v));
    NT_TRY(collect_normalizer(doc.value("normalizer", json()), prepend, replace_space));
    if (doc.contains("decoder") && doc["decoder"].is_object() && doc["decoder"].value("type", "") == "ByteLevel")
      byte_level = true;
    v->ignore_merges = model.value("ignore_merges", false);
    v->byte_fallback = model.value("byte_fallback", false);

    if (byte_level) {
      v->kind = VocabKind::Bpe;
      v->model_name = "gpt2";
      v->byte_level = true;
      NT_TRY(v->pretok.compile(regexes));
    } else if (metaspace || prepend || replace_space) {
      v->kind = VocabKind::Spm;
      v->model_name = "llama";
      v->bpe_with_merges = true;
      v->escape_spaces = true;
      if (!metaspace) {
        v->prefix = prepend ? Vocab::Prefix::Always : Vocab::Prefix::Never;
        v->metaspace_split = false;
      }
      v->add_space_prefix = v->prefix != Vocab::Prefix::Never;
      for (int64_t i = 0; i < n; ++i)
        if (v->type[i] == TokenType::Normal && text[i].size() == 6 && text[i].rfind("<0x", 0) == 0)
          v->type[i] = TokenType::Byte;
    } else {
      return make_error("tokenizer.json: BPE without a ByteLevel or Metaspace pre-tokenizer is not supported");
    }

    if (model.contains("unk_token") && model["unk_token"].is_string()) {
      const std::string u = model["unk_token"].get<std::string>();
      for (int64_t i = 0; i < n; ++i)
        if (text[i] == u) v->unk = static_cast<int32_t>(i);
    }
    v->text = StringTable(text);
    std::vector<std::string>().swap(text);
    v->finalize_tokens();

    const json merges = model.value("merges", json::array());
    int32_t rank = 0;
    for (const auto& m : merges) {
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        size_t sp = s.find(' ', 1);
        if (sp == std::string::npos) return make_error("tokenizer.json: bad merge '%s'", s.c_str());
        v->add_merge(std::string_view(s).substr(0, sp), std::string_view(s).substr(sp + 1), rank++);
      } else if (m.is_array() && m.size() == 2) {
        v->add_merge(m[0].get<std::string>(), m[1].get<std::string>(), rank++);
      } else {
        return make_error("tokenizer.json: bad merge entry");
      }
    }

    // BOS/EOS: what the post-processor adds to a single sequence.
    const json post = doc.value("post_processor", json());
    auto find_id = [&](const std::string& t) { return v->find(t); };
    std::function<void(const json&)> scan_post = [&](const json& p) {
      if (!p.is_object()) return;
      const std::string t = p.value("type", "");
      if (t == "Sequence") {
        for (const auto& q : p.value("processors", json::array())) scan_post(q);
      } else if (t == "TemplateProcessing") {
        const json single = p.value("single", json::array());
        bool seen_seq = false;
        for (const auto& item : single) {
          if (item.contains("Sequence")) {
            seen_seq = true;
          } else if (item.contains("SpecialToken")) {
            int32_t id = find_id(item["SpecialToken"].value("id", ""));
            if (id < 0) continue;
            if (!seen_seq) {
              v->bos = id;
              v->add_bos = true;
            } else {
              v->eos = id;
              v->add_eos = true;
            }
          }
        }
      } else if (t == "RobertaProcessing" || t == "BertProcessing") {
        if (p.contains("cls") && p["cls"].is_array() && p["cls"].size() == 2) {
          v->bos = p["cls"][1].get<int32_t>();
          v->add_bos = true;
        }
        if (p.contains("sep") && p["sep"].is_array() && p["sep"].size() == 2) {
          v->eos = p["sep"][1].get<int32_t>();
          v->add_eos = true;
        }
      }
    };
    scan_post(post);
    if (v->bos < 0)
      for (const char* t : {"<s>", "<|begin_of_text|>", "<|startoftext|>", "<bos>"})
        if (v->bos < 0) v->bos = find_id(t);
    if (v->eos < 0)
      for (const char* t : {"</s>", "<|end_of_text|>", "<|endoftext|>", "<|im_end|>", "<eos>"})
        if (v->eos < 0) v->eos = find_id(t);
    if (v->bos >= n || v->eos >= n) return make_error("tokenizer.json: post-processor token id out of range");
    v->finalize_tokens();  // again: eog and pieces now that bos/eos are known (merges are kept)
    return make_tokenizer(std::move(v));
  } catch (const std::exception& e) {
    return make_error("tokenizer.json: %s", e.what());
  }
}

}  // namespace nt
