#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace mtlite {
namespace cli {

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& l = levels_.back();
  if (!l.empty) out_ += ',';
  if (l.style == kMultiline) {
    out_ += '\n';
    out_.append(2 * levels_.size(), ' ');
  } else if (!l.empty) {
    out_ += ' ';
  }
  l.empty = false;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += JsonQuote(key);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::BeginObject(Style style) {
  BeforeValue();
  out_ += '{';
  levels_.push_back({style, true});
  return *this;
}

JsonWriter& JsonWriter::BeginArray(Style style) {
  BeforeValue();
  out_ += '[';
  levels_.push_back({style, true});
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  if (!levels_.empty()) {
    const Level l = levels_.back();
    levels_.pop_back();
    if (l.style == kMultiline && !l.empty) {
      out_ += '\n';
      out_.append(2 * levels_.size(), ' ');
    }
  }
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::EndObject() { return Close('}'); }
JsonWriter& JsonWriter::EndArray() { return Close(']'); }

JsonWriter& JsonWriter::String(std::string_view v) { return Raw(JsonQuote(v)); }

JsonWriter& JsonWriter::Int(int64_t v) { return Raw(std::to_string(v)); }

JsonWriter& JsonWriter::Uint(uint64_t v) { return Raw(std::to_string(v)); }

JsonWriter& JsonWriter::Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return Null();
  std::string text(size_t(std::snprintf(nullptr, 0, "%.*f", decimals, v)), '\0');
  std::snprintf(&text[0], text.size() + 1, "%.*f", decimals, v);
  return Raw(text);
}

JsonWriter& JsonWriter::Bool(bool v) { return Raw(v ? "true" : "false"); }

JsonWriter& JsonWriter::Null() { return Raw("null"); }

JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json.data(), json.size());
  return *this;
}

}  // namespace cli
}  // namespace mtlite
