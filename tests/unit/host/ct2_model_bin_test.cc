// CTranslate2 model.bin files with degenerate shapes (converter/ct2_model.h): found by the
// ct2_model fuzz target (tests/fuzz/seeds/ct2_model/regression-zero-dim-variable).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ct2_model.h"

namespace mtlite {
namespace {

using converter::Ct2DType;
using converter::Ct2ModelBin;

void Put(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(char(uint8_t(v >> (8 * i))));
}
void PutString(const std::string& s, std::string* out) {
  Put(s.size() + 1, 2, out);
  *out += s;
  out->push_back('\0');
}

// Binary version 6, one variable of `dims` and `dtype` holding `data`, no aliases.
std::string OneVariable(const std::string& name, const std::vector<uint32_t>& dims, Ct2DType dtype,
                        const std::string& data) {
  std::string b;
  Put(6, 4, &b);
  PutString("TransformerSpec", &b);
  Put(7, 4, &b);
  Put(1, 4, &b);
  PutString(name, &b);
  Put(dims.size(), 1, &b);
  for (uint32_t d : dims) Put(d, 4, &b);
  Put(uint8_t(dtype), 1, &b);
  Put(data.size(), 4, &b);
  b += data;
  Put(0, 4, &b);
  return b;
}

// A zero dimension after two of 2^32 - 1: no bytes, no elements (the product in order overflowed
// int64 before the 0), and ReadF32 gives an empty vector (it copied 0 bytes from a null data()).
TEST(Ct2ModelBin, ZeroDimensionAfterHugeOnesHasNoElements) {
  Ct2ModelBin bin;
  ASSERT_TRUE(Ct2ModelBin::Parse(OneVariable("encoder/num_heads", {0xffffffffu, 0xffffffffu, 0}, Ct2DType::kInt32, ""),
                                 "model.bin", &bin)
                  .ok());
  const Ct2ModelBin::Variable* v = bin.Find("encoder/num_heads");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->Elements(), 0);
  std::vector<float> f = {1.0f};
  ASSERT_TRUE(bin.ReadF32("encoder/num_heads", &f).ok());
  EXPECT_TRUE(f.empty());
  int64_t x = 0;
  const Status s = bin.ReadInt("encoder/num_heads", &x);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a scalar"), std::string::npos) << s.message();
}

// Huge dimensions without a zero: the byte count cannot match, refused by Parse.
TEST(Ct2ModelBin, HugeDimensionsAreRefused) {
  Ct2ModelBin bin;
  const Status s = Ct2ModelBin::Parse(OneVariable("w", {0xffffffffu, 0xffffffffu, 2}, Ct2DType::kFloat32, "abcd"),
                                      "model.bin", &bin);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace mtlite
