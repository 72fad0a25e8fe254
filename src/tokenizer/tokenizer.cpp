#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab.h"

namespace nt {

Tokenizer::Tokenizer(std::unique_ptr<Vocab> v) : vocab_(std::move(v)) {}
Tokenizer::~Tokenizer() = default;

namespace {

void escape_into(std::string& dst, std::string_view src) {
  for (char c : src) {
    if (c == ' ') dst += "\xE2\x96\x81";
    else dst += c;
  }
}

}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Vocab& v = *vocab_;
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  std::vector<algo::Fragment> frags;
  algo::partition_specials(v, text, parse_special, frags);

  switch (v.kind) {
    case VocabKind::Spm: {
      if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
      bool prev_special = true;  // the text start counts as "after a special token"
      bool first = true;
      std::string buf;
      for (const auto& f : frags) {
        if (f.token >= 0) {
          out.push_back(f.token);
          prev_special = true;
          first = false;
          continue;
        }
        buf.clear();
        bool prefix = v.bpe_with_merges
                          ? (v.prefix == Vocab::Prefix::Always || (v.prefix == Vocab::Prefix::First && first))
                          : (v.add_space_prefix && prev_special);
        if (prefix) buf += v.escape_spaces ? "\xE2\x96\x81" : " ";
        std::string_view raw = text.substr(f.begin, f.end - f.begin);
        if (v.escape_spaces) escape_into(buf, raw);
        else buf.append(raw);
        if (v.bpe_with_merges) algo::bpe_encode_chars(v, buf, out);
        else algo::spm_encode(v, buf, out);
        prev_special = false;
        first = false;
      }
      if (add_special && v.add_eos && v.eos >= 0) out.push_back(v.eos);
      break;
    }
    case VocabKind::Bpe: {
      if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
      for (const auto& f : frags) {
        if (f.token >= 0) out.push_back(f.token);
        else algo::bpe_encode_byte_level(v, text.substr(f.begin, f.end - f.begin), out);
      }
      if (add_special && v.add_eos && v.eos >= 0) out.push_back(v.eos);
      break;
    }
    case VocabKind::Wpm: {
      int32_t cls = v.cls >= 0 ? v.cls : v.bos;
      int32_t sep = v.sep >= 0 ? v.sep : v.eos;
      if (add_special && v.add_bos && cls >= 0) out.push_back(cls);
      for (const auto& f : frags) {
        if (f.token >= 0) out.push_back(f.token);
        else algo::wpm_encode(v, text.substr(f.begin, f.end - f.begin), out);
      }
      if (add_special && v.add_sep && sep >= 0) out.push_back(sep);
      else if (add_special && v.add_eos && v.eos >= 0) out.push_back(v.eos);
      break;
    }
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id) const {
  if (id < 0 || id >= n_vocab()) return {};
  return std::string(vocab_->piece[id]);
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  const Vocab& v = *vocab_;
  std::string out;
  const bool strip_first = v.add_space_prefix || v.kind == VocabKind::Wpm ||
                           (v.bpe_with_merges && v.prefix != Vocab::Prefix::Never);
  bool text_seen = false;
  for (int32_t id : ids) {
    if (id < 0 || id >= v.n_vocab()) continue;
    const TokenType t = v.type[id];
    const bool special = t == TokenType::Control || t == TokenType::Unknown;
    if (special && skip_special) continue;
    std::string_view p = v.piece[id];
    if (!special && !text_seen && t != TokenType::UserDefined) {
      text_seen = true;
      if (strip_first && !p.empty() && p[0] == ' ') p.remove_prefix(1);
    }
    if (!special) text_seen = true;
    out.append(p);
  }
  return out;
}

int32_t Tokenizer::n_vocab() const { return vocab_->n_vocab(); }
int32_t Tokenizer::bos() const { return vocab_->kind == VocabKind::Wpm && vocab_->cls >= 0 ? vocab_->cls : vocab_->bos; }
int32_t Tokenizer::eos() const { return vocab_->kind == VocabKind::Wpm && vocab_->sep >= 0 ? vocab_->sep : vocab_->eos; }
int32_t Tokenizer::eot() const { return vocab_->eot; }
int32_t Tokenizer::unk() const { return vocab_->unk; }
int32_t Tokenizer::pad() const { return vocab_->pad; }
bool Tokenizer::is_eog(int32_t id) const { return std::binary_search(vocab_->eog.begin(), vocab_->eog.end(), id); }
bool Tokenizer::is_control(int32_t id) const { return token_type(id) == TokenType::Control; }
bool Tokenizer::add_bos() const { return vocab_->add_bos; }
bool Tokenizer::add_eos() const { return vocab_->kind == VocabKind::Wpm ? vocab_->add_sep : vocab_->add_eos; }
bool Tokenizer::add_space_prefix() const { return vocab_->add_space_prefix; }
std::string_view Tokenizer::model_type() const { return vocab_->model_name; }
std::string_view Tokenizer::pre_type() const { return vocab_->pre; }
std::string_view Tokenizer::token_text(int32_t id) const {
  return id >= 0 && id < n_vocab() ? std::string_view(vocab_->text[id]) : std::string_view();
}
TokenType Tokenizer::token_type(int32_t id) const {
  return id >= 0 && id < n_vocab() ? vocab_->type[id] : TokenType::Undefined;
}
float Tokenizer::token_score(int32_t id) const { return id >= 0 && id < n_vocab() ? vocab_->score[id] : 0.0f; }
int32_t Tokenizer::token_id(std::string_view text) const { return vocab_->find(text); }

// ---- streaming ----

StreamDecoder::StreamDecoder(const Tokenizer& tok, bool skip_special) : tok_(tok), skip_special_(skip_special) {}

std::string StreamDecoder::push(int32_t id) {
  const Vocab& v = tok_.vocab();
  if (id < 0 || id >= v.n_vocab()) return {};
  const TokenType t = v.type[id];
  const bool special = t == TokenType::Control || t == TokenType::Unknown;
  if (special && skip_special_) return {};
  std::string_view p = v.piece[id];
  if (!special && first_text_ && t != TokenType::UserDefined) {
    first_text_ = false;
    const bool strip_first = v.add_space_prefix || v.kind == VocabKind::Wpm ||
                             (v.bpe_with_merges && v.prefix != Vocab::Prefix::Never);
    if (strip_first && !p.empty() && p[0] == ' ') p.remove_prefix(1);
  }
  if (!special) first_text_ = false;
  pending_.append(p);
  size_t n = tok::utf8_complete_prefix(pending_);
  std::string out = valid_utf8(std::string_view(pending_).substr(0, n));
  pending_.erase(0, n);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out = valid_utf8(pending_);
  pending_.clear();
  first_text_ = true;
  return out;
}

std::string StreamDecoder::valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t l = tok::utf8_seq_len(s, i);
    if (l == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that cannot start or continue valid UTF-8
      ++i;
    } else {
      out.append(s.substr(i, l));
      i += l;
    }
  }
  return out;
}

}  // namespace nt
