// A JSON writer for the machine-readable output of the CLI commands and tools. Values are
// appended in order; an object or array is either multi-line (one member per line, indented
// two spaces a level) or inline (one line, ", " between members):
//
//   JsonWriter w;
//   w.BeginObject().Key("file").String(path).Key("sizes").BeginArray(JsonWriter::kInline);
//   w.Uint(1).Uint(2).EndArray().EndObject();
//   std::puts(w.str().c_str());      // {\n  "file": "...",\n  "sizes": [1, 2]\n}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtlite {
namespace cli {

// `s` as a JSON string literal (quotes, backslashes and control characters escaped; other
// bytes, UTF-8 included, copied).
std::string JsonQuote(std::string_view s);

class JsonWriter {
 public:
  enum Style { kMultiline, kInline };

  JsonWriter& BeginObject(Style style = kMultiline);
  JsonWriter& EndObject();
  JsonWriter& BeginArray(Style style = kMultiline);
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);  // in an object, before each value

  JsonWriter& String(std::string_view v);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Fixed(double v, int decimals);  // printf %.*f; NaN and infinities as null
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  JsonWriter& Raw(std::string_view json);     // an already rendered JSON value

  const std::string& str() const { return out_; }

 private:
  struct Level {
    Style style;
    bool empty;
  };
  void BeforeValue();
  JsonWriter& Close(char bracket);

  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace cli
}  // namespace mtlite
