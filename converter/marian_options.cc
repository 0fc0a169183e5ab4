// Marian's model options: the flat YAML of `special:model.yml` and the checks of what mtlite
// implements (marian_checkpoint.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "marian_checkpoint.h"
#include "status_macros.h"

namespace mtlite {
namespace converter {
namespace {

Status YamlError(const std::string& source, size_t line, const std::string& what) {
  return Status(StatusCode::kInvalidModel, source + " line " + std::to_string(line) + ": " + what);
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Removes a trailing `# comment` (a '#' at the start or after a blank, outside quotes).
std::string StripComment(const std::string& s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || IsSpace(s[i - 1]))) {
      return s.substr(0, i);
    }
  }
  return s;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(char(cp));
  } else if (cp < 0x800) {
    out->push_back(char(0xC0 | (cp >> 6)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(char(0xE0 | (cp >> 12)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(char(0xF0 | (cp >> 18)));
    out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  }
}

// A quoted string starting at s[at] ('"' or '\''): "double" with YAML's escapes (\" \\ \/ \n \t
// \r \0 \xHH \uHHHH \UHHHHHHHH), 'single' with '' for a quote. Returns the index after the
// closing quote, or 0 on an error.
size_t ParseQuoted(const std::string& s, size_t at, std::string* out, std::string* error) {
  const char q = s[at];
  out->clear();
  for (size_t i = at + 1; i < s.size(); ++i) {
    const char c = s[i];
    if (q == '"' && c == '\\' && i + 1 < s.size()) {
      const char e = s[++i];
      const int hex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
      if (hex) {
        uint32_t cp = 0;
        for (int k = 0; k < hex; ++k) {
          const char h = ++i < s.size() ? s[i] : 'z';
          const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (v < 0) {
            *error = std::string("bad \\") + e + " escape in " + s;
            return 0;
          }
          cp = cp * 16 + uint32_t(v);
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          *error = "escape outside Unicode in " + s;
          return 0;
        }
        AppendUtf8(cp, out);
      } else if (e == 'n') out->push_back('\n');
      else if (e == 't') out->push_back('\t');
      else if (e == 'r') out->push_back('\r');
      else if (e == '0') out->push_back('\0');
      else if (e == '"' || e == '\\' || e == '/' || e == ' ') out->push_back(e);
      else {
        *error = std::string("unsupported escape \\") + e + " in " + s;
        return 0;
      }
    } else if (c == q) {
      if (q == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
        out->push_back('\'');
        ++i;
      } else {
        return i + 1;
      }
    } else {
      out->push_back(c);
    }
  }
  *error = "unterminated quoted string " + s;
  return 0;
}

// One scalar: quoted (ParseQuoted) or plain.
bool ParseScalar(const std::string& raw, std::string* out, std::string* error) {
  const std::string s = Trim(raw);
  out->clear();
  if (s.empty() || (s[0] != '"' && s[0] != '\'')) {
    if (!s.empty() && (s[0] == '[' || s[0] == '{' || s[0] == '&' || s[0] == '*' || s[0] == '|' || s[0] == '>')) {
      *error = "unsupported YAML value '" + s + "' (nested or block values are not part of Marian's flat config)";
      return false;
    }
    *out = s;
    return true;
  }
  const size_t end = ParseQuoted(s, 0, out, error);
  if (end == 0) return false;
  if (!Trim(s.substr(end)).empty()) {
    *error = "text after the closing quote in " + s;
    return false;
  }
  return true;
}

// `[a, "b", c]` (no nesting).
bool ParseFlowList(const std::string& s, std::vector<std::string>* out, std::string* error) {
  const std::string inner = Trim(s.substr(1, s.size() - 2));
  out->clear();
  if (inner.empty()) return true;
  size_t start = 0;
  char quote = 0;
  for (size_t i = 0; i <= inner.size(); ++i) {
    const char c = i < inner.size() ? inner[i] : ',';
    if (quote) {
      if (c == '\\' && quote == '"') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '[' || c == '{') {
      *error = "nested flow collections are not supported: " + s;
      return false;
    }
    if (c == ',') {
      std::string item;
      if (!ParseScalar(inner.substr(start, i - start), &item, error)) return false;
      out->push_back(std::move(item));
      start = i + 1;
    }
  }
  if (quote) {
    *error = "unterminated quoted string in " + s;
    return false;
  }
  return true;
}

const MarianYamlValue* Find(const MarianYaml& y, const char* key) {
  auto it = y.find(key);
  return it == y.end() ? nullptr : &it->second;
}

Status OptionError(const std::string& key, const std::string& what) {
  return Status(StatusCode::kInvalidModel, "special:model.yml: " + key + ": " + what);
}
Status Unsupported(const std::string& key, const std::string& value, const std::string& why) {
  return Status(StatusCode::kUnsupported,
                "special:model.yml: unsupported option " + key + ": " + value + " (" + why + ")");
}

Status Scalar(const MarianYaml& y, const char* key, std::string* out) {
  const MarianYamlValue* v = Find(y, key);
  if (!v) return OptionError(key, "missing");
  if (v->is_list && !v->list.empty()) return OptionError(key, "a list where a value is expected");
  *out = v->scalar;
  return Status::Ok();
}

Status Int(const MarianYaml& y, const char* key, int lo, int hi, int* out) {
  std::string s;
  MTLITE_RETURN_IF_ERROR(Scalar(y, key, &s));
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
    return OptionError(key, "'" + s + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = int(v);
  return Status::Ok();
}

Status Bool(const std::string& key, const std::string& s, bool* out) {
  if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on" || s == "1") *out = true;
  else if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off" || s == "0") *out = false;
  else return OptionError(key, "'" + s + "' is not a boolean");
  return Status::Ok();
}

Status BoolOr(const MarianYaml& y, const char* key, bool def, bool* out) {
  if (!Find(y, key)) {
    *out = def;
    return Status::Ok();
  }
  std::string s;
  MTLITE_RETURN_IF_ERROR(Scalar(y, key, &s));
  return Bool(key, s, out);
}

// An option mtlite implements only at one value (or its default when absent).
Status Require(const MarianYaml& y, const char* key, std::initializer_list<const char*> accepted,
               const char* why) {
  const MarianYamlValue* v = Find(y, key);
  if (!v) return Status::Ok();
  std::string s = v->scalar;
  if (v->is_list) {
    if (v->list.empty()) s = "";
    else return Unsupported(key, "[" + v->list[0] + ", ...]", why);
  }
  for (const char* a : accepted) {
    if (s == a) return Status::Ok();
  }
  return Unsupported(key, s.empty() ? "\"\"" : s, why);
}

Status RequireBool(const MarianYaml& y, const char* key, bool accepted, const char* why) {
  bool b = accepted;
  MTLITE_RETURN_IF_ERROR(BoolOr(y, key, accepted, &b));
  if (b != accepted) return Unsupported(key, b ? "true" : "false", why);
  return Status::Ok();
}

// The next line of `text` from *pos (without "\n" or "\r\n"); false after the last one.
bool NextLine(const std::string& text, size_t* pos, size_t* line_no, std::string* line) {
  if (*pos > text.size()) return false;
  size_t eol = text.find('\n', *pos);
  if (eol == std::string::npos) eol = text.size();
  *line = text.substr(*pos, eol - *pos);
  *pos = eol + 1;
  ++*line_no;
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

}  // namespace

Status ParseMarianYaml(const std::string& text, const std::string& source, MarianYaml* out) {
  out->clear();
  std::string key;  // the last key (list items attach to it)
  size_t line_no = 0, pos = 0;
  std::string line;
  while (NextLine(text, &pos, &line_no, &line)) {
    for (char c : line) {
      if (c == '\0') return YamlError(source, line_no, "NUL byte inside the text");
    }
    line = StripComment(line);
    const std::string t = Trim(line);
    if (t.empty() || t == "---" || t == "...") continue;
    std::string error;
    if (t[0] == '-' && (t.size() == 1 || IsSpace(t[1]))) {
      if (key.empty()) return YamlError(source, line_no, "list item without a key");
      MarianYamlValue& v = (*out)[key];
      if (!v.is_list) return YamlError(source, line_no, "list item under '" + key + "', which has a value");
      std::string item;
      if (!ParseScalar(t.substr(1), &item, &error)) return YamlError(source, line_no, error);
      v.list.push_back(std::move(item));
      continue;
    }
    if (IsSpace(line[0])) {
      // Marian writes an empty list as `key:` and an indented `[]` on the next line.
      auto it = out->find(key);
      if (t[0] != '[' || it == out->end() || !it->second.is_list || !it->second.list.empty() || t.back() != ']') {
        return YamlError(source, line_no, "indented mapping (nested values are not supported)");
      }
      if (!ParseFlowList(t, &it->second.list, &error)) return YamlError(source, line_no, error);
      continue;
    }
    const size_t colon = line.find(": ") != std::string::npos ? line.find(": ") : line.size() - 1;
    if (line[colon] != ':' || colon == 0) return YamlError(source, line_no, "expected 'key: value', got '" + t + "'");
    key = Trim(line.substr(0, colon));
    for (char c : key) {
      if (IsSpace(c) || c == '"' || c == '\'' || c == '[' || c == '{') {
        return YamlError(source, line_no, "unsupported key '" + key + "'");
      }
    }
    if (out->count(key)) return YamlError(source, line_no, "duplicate key '" + key + "'");
    MarianYamlValue v;
    const std::string value = Trim(line.substr(colon + 1));
    if (value.empty()) {
      v.is_list = true;  // `key:` then `- item` lines (or nothing: an empty value)
    } else if (value[0] == '[') {
      if (value.back() != ']') return YamlError(source, line_no, "unterminated list " + value);
      v.is_list = true;
      if (!ParseFlowList(value, &v.list, &error)) return YamlError(source, line_no, error);
    } else if (!ParseScalar(value, &v.scalar, &error)) {
      return YamlError(source, line_no, error);
    }
    (*out)[key] = std::move(v);
  }
  return Status::Ok();
}

Status ParseMarianYamlVocab(const std::string& text, const std::string& source, std::vector<std::string>* pieces) {
  pieces->clear();
  struct Entry {
    size_t id, line;
    std::string piece;
  };
  std::vector<Entry> entries;  // as given; bounded by the text's size
  size_t line_no = 0, pos = 0;
  std::string line;
  while (NextLine(text, &pos, &line_no, &line)) {
    const std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t == "---" || t == "...") continue;
    std::string piece, error;
    size_t colon;
    if (t[0] == '"' || t[0] == '\'') {
      colon = ParseQuoted(t, 0, &piece, &error);
      if (colon == 0) return YamlError(source, line_no, error);
    } else {
      colon = t.find(": ");
      if (colon == std::string::npos) colon = t.size();
      piece = Trim(t.substr(0, colon));
    }
    while (colon < t.size() && IsSpace(t[colon])) ++colon;
    if (colon >= t.size() || t[colon] != ':') return YamlError(source, line_no, "expected 'piece: id', got '" + t + "'");
    const std::string id_text = Trim(StripComment(t.substr(colon + 1)));
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(id_text.c_str(), &end, 10);
    if (id_text.empty() || *end != '\0' || errno != 0 || id < 0 || id >= (1 << 24)) {
      return YamlError(source, line_no, "id '" + id_text + "' is not an integer in [0, 16777215]");
    }
    entries.push_back({size_t(id), line_no, std::move(piece)});
  }
  if (entries.empty()) return Status(StatusCode::kInvalidModel, source + ": empty vocabulary");
  // Ids are 0..n-1 (as Marian writes them): each id below n once; then none is missing.
  const size_t n = entries.size();
  std::vector<bool> seen(n, false);
  const Entry* beyond = nullptr;  // the first entry with an id >= n
  for (const Entry& e : entries) {
    if (e.id >= n) {
      if (!beyond) beyond = &e;
      continue;
    }
    if (seen[e.id]) return YamlError(source, e.line, "id " + std::to_string(e.id) + " given twice");
    seen[e.id] = true;
  }
  if (beyond) {
    const size_t missing = size_t(std::find(seen.begin(), seen.end(), false) - seen.begin());
    return Status(StatusCode::kInvalidModel, source + ": no piece has id " + std::to_string(missing) +
                                                 " (ids must be 0..n-1; line " + std::to_string(beyond->line) +
                                                 " has id " + std::to_string(beyond->id) + ")");
  }
  std::vector<std::string> by_id(n);
  for (Entry& e : entries) by_id[e.id] = std::move(e.piece);
  entries = {};
  std::vector<uint32_t> order(n);  // ids by piece: equal pieces become neighbours
  for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return by_id[a] != by_id[b] ? by_id[a] < by_id[b] : a < b; });
  for (size_t i = 1; i < n; ++i) {
    if (by_id[order[i]] == by_id[order[i - 1]]) {
      return Status(StatusCode::kInvalidModel, source + ": piece '" + by_id[order[i]] + "' given twice (ids " +
                                                   std::to_string(order[i - 1]) + " and " + std::to_string(order[i]) + ")");
    }
  }
  *pieces = std::move(by_id);
  return Status::Ok();
}

const char* MarianTyingName(MarianTying t) {
  switch (t) {
    case MarianTying::kAll: return "tied-embeddings-all";
    case MarianTying::kSrc: return "tied-embeddings-src";
    case MarianTying::kTied: return "tied-embeddings";
    case MarianTying::kUntied: return "untied";
  }
  return "?";
}

Status ReadMarianOptions(const MarianYaml& y, MarianOptions* o) {
  std::string type;
  MTLITE_RETURN_IF_ERROR(Scalar(y, "type", &type));
  if (type != "transformer") return Unsupported("type", type, "only Marian's transformer is supported");
  MTLITE_RETURN_IF_ERROR(Int(y, "dim-emb", 2, 1 << 16, &o->dim_emb));
  MTLITE_RETURN_IF_ERROR(Int(y, "enc-depth", 1, 1024, &o->enc_depth));
  MTLITE_RETURN_IF_ERROR(Int(y, "dec-depth", 1, 1024, &o->dec_depth));
  MTLITE_RETURN_IF_ERROR(Int(y, "transformer-heads", 1, 1024, &o->heads));
  MTLITE_RETURN_IF_ERROR(Int(y, "transformer-dim-ffn", 1, 1 << 20, &o->dim_ffn));
  o->dec_dim_ffn = 0;
  if (Find(y, "transformer-decoder-dim-ffn")) {
    MTLITE_RETURN_IF_ERROR(Int(y, "transformer-decoder-dim-ffn", 0, 1 << 20, &o->dec_dim_ffn));
  }
  if (o->dec_dim_ffn == 0) o->dec_dim_ffn = o->dim_ffn;  // 0: as the encoder
  if (o->dim_emb % o->heads != 0) {
    return OptionError("transformer-heads", std::to_string(o->heads) + " does not divide dim-emb " + std::to_string(o->dim_emb));
  }
  if (o->dim_emb % 2 != 0) return OptionError("dim-emb", "must be even (sinusoidal positions)");
  const MarianYamlValue* dv = Find(y, "dim-vocabs");
  if (!dv || !dv->is_list || dv->list.size() != 2) {
    return OptionError("dim-vocabs", "expected a list of two sizes (source, target)");
  }
  for (int side = 0; side < 2; ++side) {
    const std::string& s = dv->list[size_t(side)];
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno != 0 || v < 2 || v > (1 << 24)) {
      return OptionError("dim-vocabs", "'" + s + "' is not a vocabulary size in [2, 16777216]");
    }
    (side == 0 ? o->src_vocab : o->tgt_vocab) = int(v);
  }
  o->activation = "swish";
  if (Find(y, "transformer-ffn-activation")) MTLITE_RETURN_IF_ERROR(Scalar(y, "transformer-ffn-activation", &o->activation));
  if (o->activation != "swish" && o->activation != "relu") {
    return Unsupported("transformer-ffn-activation", o->activation,
                       "swish and relu are supported; Marian's gelu is x*sigmoid(1.702x)");
  }

  bool all = false, src = false, tied = false;
  MTLITE_RETURN_IF_ERROR(BoolOr(y, "tied-embeddings-all", false, &all));
  MTLITE_RETURN_IF_ERROR(BoolOr(y, "tied-embeddings-src", false, &src));
  MTLITE_RETURN_IF_ERROR(BoolOr(y, "tied-embeddings", false, &tied));
  o->tying = all || (src && tied) ? MarianTying::kAll
             : src               ? MarianTying::kSrc
             : tied              ? MarianTying::kTied
                                 : MarianTying::kUntied;
  if ((o->tying == MarianTying::kAll || o->tying == MarianTying::kSrc) && o->src_vocab != o->tgt_vocab) {
    return OptionError("dim-vocabs", std::string(MarianTyingName(o->tying)) + " needs equal source and target sizes");
  }

  // The network mtlite runs: post-norm, two-layer FFN, self-attention decoder, projected heads.
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-preprocess", {""}, "pre-norm is not supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-postprocess", {"dan"}, "only post-norm 'dan' is supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-postprocess-emb", {"d", ""}, "embedding layer norm is not supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-postprocess-top", {""}, "a final layer norm is not supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-decoder-autoreg", {"self-attention", "rnn"},
                                 "the decoder's layers are self-attention or an 'rnn' (SSRU); no 'average-attention'"));
  o->decoder_ssru = false;
  if (const MarianYamlValue* autoreg = Find(y, "transformer-decoder-autoreg"); autoreg && autoreg->scalar == "rnn") {
    // Marian's default dec-cell is gru; of the cells only SSRU is implemented, without its own
    // layer norms (Marian's layer-normalization option, false by default)
    if (!Find(y, "dec-cell")) return Unsupported("dec-cell", "gru", "an 'rnn' decoder needs dec-cell: ssru");
    MTLITE_RETURN_IF_ERROR(Require(y, "dec-cell", {"ssru"}, "the 'rnn' decoder cell must be ssru"));
    MTLITE_RETURN_IF_ERROR(RequireBool(y, "layer-normalization", false, "SSRU's own layer norms are not supported"));
    o->decoder_ssru = true;
  }
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-ffn-depth", {"2"}, "the FFN has two layers"));
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-decoder-ffn-depth", {"0", "2"}, "the FFN has two layers"));
  MTLITE_RETURN_IF_ERROR(Require(y, "transformer-tied-layers", {""}, "layer tying is not supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "input-types", {""}, "multi-source / non-sequence inputs are not supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "lemma-dim-emb", {"0"}, "factored outputs are not supported"));
  MTLITE_RETURN_IF_ERROR(Require(y, "factors-dim-emb", {"0"}, "factored vocabularies are not supported"));
  MTLITE_RETURN_IF_ERROR(RequireBool(y, "transformer-no-projection", false, "attention output projection is required"));
  MTLITE_RETURN_IF_ERROR(RequireBool(y, "transformer-train-position-embeddings", false,
                                     "learned positions are not supported (sinusoid only)"));
  MTLITE_RETURN_IF_ERROR(RequireBool(y, "right-left", false, "right-to-left decoding is not supported"));
  MTLITE_RETURN_IF_ERROR(RequireBool(y, "ulr", false, "universal language representation is not supported"));
  MTLITE_RETURN_IF_ERROR(RequireBool(y, "output-omit-bias", false, "the output layer has a bias"));
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite
