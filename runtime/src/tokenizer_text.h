// Text helpers of the SentencePiece tokenizer (tokenizer.cc): UTF-8 decoding and validation,
// Python's whitespace set, the whitespace-stripping writer and byte-piece runs of Decode, and
// OPUS-MT language codes (>>xx<<). Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace detail {
namespace tokenizer_text {


inline constexpr char kSpaceSymbol[] = "\xe2\x96\x81";  // U+2581, sentencepiece's escaped space
inline constexpr size_t kSpaceSymbolLen = 3;
inline constexpr float kUnkPenalty = 10.0f;              // sentencepiece unigram: unk = min score - 10
inline constexpr char kUnkSurface[] = " \xe2\x81\x87 ";  // sentencepiece's default <unk> surface " ⁇ "
inline constexpr char kReplacementChar[] = "\xef\xbf\xbd";

inline uint32_t LoadLE32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// What is wrong with a precompiled charsmap blob (u32 trie size, the trie's u32 units, then
// NUL-terminated replacement strings), or nullptr when the layout holds. Empty = no charsmap.
// Stricter than libsentencepiece's "Blob for normalization rule is broken": every blob it rejects
// fails here too. The converter checks .spm files with it, the tokenizer the model file.
inline const char* CharsmapProblem(const uint8_t* blob, size_t size) {
  if (size == 0) return nullptr;
  if (blob == nullptr || size <= 4) return "precompiled charsmap too short";
  const size_t trie_bytes = LoadLE32(blob);
  if (trie_bytes < 4 || trie_bytes % 4 != 0 || trie_bytes > size - 4) return "precompiled charsmap: bad trie size";
  if (size - 4 > trie_bytes && blob[size - 1] != 0) return "precompiled charsmap: strings not NUL-terminated";
  return nullptr;
}

// sentencepiece's OneCharLen: UTF-8 length from the lead byte (1 for stray bytes).
inline size_t OneCharLen(uint8_t c) { return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4]; }

// Decodes one UTF-8 character at s (n > 0 bytes available). Returns its length, or 0 if the
// bytes there are not a valid, complete, shortest-form encoding of a scalar value.
inline size_t DecodeUtf8(const uint8_t* s, size_t n, uint32_t* cp) {
  const uint8_t c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((c & 0xe0) == 0xc0) {
    len = 2, v = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, v = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;  // continuation byte or 0xf8..0xff as lead
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return len;
}

// Python's str.isspace() (what str.strip() removes).
inline bool IsPyWhitespace(uint32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000;
}

// Writes decoded text into a caller buffer, dropping leading and trailing whitespace
// (Python str.strip()) without ever writing past `capacity`.
class StripWriter {
 public:
  StripWriter(char* out, size_t capacity) : out_(out), cap_(capacity) {}

  // Appends valid UTF-8; with replace_space_symbol, U+2581 becomes ' '.
  bool Append(std::string_view s, bool replace_space_symbol) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
    size_t i = 0;
    while (i < s.size()) {
      uint32_t cp = 0;
      size_t len = DecodeUtf8(p + i, s.size() - i, &cp);
      if (len == 0) {  // not expected (pieces are valid UTF-8): copy the byte as is
        len = 1;
        cp = 0xfffd;
      }
      bool ok;
      if (replace_space_symbol && cp == 0x2581) {
        ok = Put(" ", 1, true);
      } else {
        ok = Put(s.data() + i, len, IsPyWhitespace(cp));
      }
      if (!ok) return false;
      i += len;
    }
    return true;
  }
  size_t length() const { return len_; }  // committed length (trailing whitespace excluded)

 private:
  bool Put(const char* p, size_t n, bool space) {
    if (space) {
      if (len_ == 0) return true;  // leading whitespace: dropped
      if (!tail_overflow_ && n <= cap_ - len_ - tail_) {
        std::memcpy(out_ + len_ + tail_, p, n);
      } else {
        tail_overflow_ = true;
      }
      tail_ += n;
      return true;
    }
    if (tail_overflow_ || n > cap_ - len_ - tail_) return false;
    std::memcpy(out_ + len_ + tail_, p, n);
    len_ += tail_ + n;
    tail_ = 0;
    return true;
  }

  char* out_;
  size_t cap_;
  size_t len_ = 0;   // bytes up to and including the last non-whitespace character
  size_t tail_ = 0;  // whitespace bytes after it (written if they fit)
  bool tail_overflow_ = false;
};

// Turns a run of byte pieces back into text like sentencepiece's decoder: complete valid UTF-8
// characters are copied, every other byte becomes U+FFFD.
class ByteRun {
 public:
  explicit ByteRun(StripWriter* w) : w_(w) {}
  bool Add(uint8_t b) {
    buf_[n_++] = b;
    return Drain(false);
  }
  bool Flush() { return Drain(true); }

 private:
  bool Drain(bool final) {
    while (n_ > 0) {
      uint32_t cp;
      size_t len = DecodeUtf8(buf_, n_, &cp);
      if (len == 0 && !final && MayComplete()) return true;  // wait for more bytes
      if (len == 0) {
        if (!w_->Append(kReplacementChar, false)) return false;
        len = 1;
      } else if (!w_->Append(std::string_view(reinterpret_cast<const char*>(buf_), len), false)) {
        return false;
      }
      std::memmove(buf_, buf_ + len, n_ - len);
      n_ -= len;
    }
    return true;
  }
  // Whether buf_ is a proper prefix of a multi-byte sequence (so more bytes may validate it).
  bool MayComplete() const {
    const size_t need = OneCharLen(buf_[0]);
    if (need <= 1 || n_ >= need || (buf_[0] & 0xc0) == 0x80) return false;
    for (size_t i = 1; i < n_; ++i) {
      if ((buf_[i] & 0xc0) != 0x80) return false;
    }
    return true;
  }

  StripWriter* w_;
  uint8_t buf_[4];
  size_t n_ = 0;
};

// "<0xAB>" -> 0xAB; -1 if the piece is not a byte piece.
inline int ParseBytePiece(std::string_view p) {
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  const int hi = hex(p[3]), lo = hex(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Workspace sizing: 13 bytes per normalized byte, plus one extra position and alignment.
inline constexpr size_t kBytesPerPosition = sizeof(float) + 2 * sizeof(int32_t) + 1;
inline constexpr size_t kFixedBytes = sizeof(float) + 2 * sizeof(int32_t) + alignof(float);
inline constexpr size_t kNormalizedSlack = 2 * kSpaceSymbolLen + 2;  // dummy prefix / suffix

inline Status Invalid(const std::string& msg) { return Status(StatusCode::kInvalidModel, "tokenizer: " + msg); }

// OPUS-MT multilingual target-language codes such as ">>deu<<". HF MarianTokenizer
// (transformers 4.2x, tokenization_marian.py) finds them with the Python regex ">>.+<<":
// greedy, and '.' is any character but '\n'. Within one line the only possible match therefore
// runs from the line's first ">>" to the end of its last "<<", provided at least one character
// lies between them; after it the line holds no further "<<". Returns that match as [*begin,
// *end) for the line text[pos, line_end), or false. Matching bytes is matching characters: the
// ASCII bytes '>', '<' and '\n' never occur inside a multi-byte UTF-8 sequence. Linear time.
inline bool LanguageCodeInLine(std::string_view text, size_t pos, size_t line_end, size_t* begin, size_t* end) {
  const std::string_view line = text.substr(pos, line_end - pos);
  const size_t first = line.find(">>");
  const size_t last = line.rfind("<<");
  if (first == std::string_view::npos || last == std::string_view::npos || last < first + 3) return false;
  *begin = pos + first;
  *end = pos + last + 2;
  return true;
}

// Vocab entries that a code match can equal: ">>", at least one character, "<<".
inline bool LooksLikeLanguageCode(std::string_view p) {
  return p.size() >= 5 && p.substr(0, 2) == ">>" && p.substr(p.size() - 2) == "<<";
}

inline Status CheckUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    uint32_t cp;
    const size_t len = DecodeUtf8(reinterpret_cast<const uint8_t*>(text.data()) + i, text.size() - i, &cp);
    if (len == 0) {
      return Status(StatusCode::kInvalidArgument, "tokenizer: invalid UTF-8 in input at byte offset " + std::to_string(i));
    }
    i += len;
  }
  return Status::Ok();
}

}  // namespace tokenizer_text
}  // namespace detail
}  // namespace mtlite
