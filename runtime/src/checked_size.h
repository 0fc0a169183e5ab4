// Byte counts that cannot wrap: size_t arithmetic that remembers an overflow. size_t is 32 bits
// on armv7, where shapes a model file or TranslatorLimits may declare (2^23 x 512 bytes, or a
// KV cache of layers x positions x rows x d_model floats) exceed it; a wrapped count would
// accept a too-small buffer or plan one. Used by the loader's tensor sizes, the arena plan and
// the converter.
//
//   CheckedSize n = CheckedSize(rows) * cols * sizeof(float) + header;
//   if (!n.ok()) ...error...; else use n.value();
//
// An operand that is negative (a value no caller should pass) counts as an overflow too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mtlite {
namespace detail {

class CheckedSize {
 public:
  constexpr CheckedSize() = default;
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  constexpr CheckedSize(I v) : value_(size_t(v)), ok_(Fits(v)) {}  // NOLINT: implicit by design

  constexpr bool ok() const { return ok_; }
  constexpr size_t value() const { return ok_ ? value_ : 0; }  // 0 after an overflow

  friend constexpr CheckedSize operator*(CheckedSize a, CheckedSize b) {
    CheckedSize r;
    r.ok_ = a.ok_ && b.ok_ && (b.value_ == 0 || a.value_ <= SIZE_MAX / b.value_);
    r.value_ = r.ok_ ? a.value_ * b.value_ : 0;
    return r;
  }
  friend constexpr CheckedSize operator+(CheckedSize a, CheckedSize b) {
    CheckedSize r;
    r.ok_ = a.ok_ && b.ok_ && a.value_ <= SIZE_MAX - b.value_;
    r.value_ = r.ok_ ? a.value_ + b.value_ : 0;
    return r;
  }
  friend constexpr CheckedSize Max(CheckedSize a, CheckedSize b) {
    CheckedSize r;
    r.ok_ = a.ok_ && b.ok_;
    r.value_ = r.ok_ ? (a.value_ > b.value_ ? a.value_ : b.value_) : 0;
    return r;
  }
  CheckedSize& operator*=(CheckedSize b) { return *this = *this * b; }
  CheckedSize& operator+=(CheckedSize b) { return *this = *this + b; }

 private:
  template <class I>
  static constexpr bool Fits(I v) {
    if constexpr (std::is_signed_v<I>) {
      return v >= 0 && uint64_t(v) <= uint64_t(SIZE_MAX);
    } else {
      return uint64_t(v) <= uint64_t(SIZE_MAX);
    }
  }
  size_t value_ = 0;
  bool ok_ = true;
};

}  // namespace detail
}  // namespace mtlite
