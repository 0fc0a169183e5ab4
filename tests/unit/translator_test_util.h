// Shared helpers for the translator tests: the demo models converted by the build and dev lines.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace testing_util {

inline std::string ModelPath(const char* q) {
  return std::string(MTLITE_TEST_MODEL_DIR) + "/demo." + q + ".mtlite";
}

inline std::vector<std::string> DevLines(size_t n) {
  std::ifstream f(std::string(MTLITE_SOURCE_DIR) + "/tests/data/dev/multi30k.val.en");
  std::vector<std::string> out;
  std::string line;
  while (out.size() < n && std::getline(f, line)) out.push_back(line);
  return out;
}

inline std::shared_ptr<const Model> LoadOrDie(const char* q) {
  auto m = Model::Load(ModelPath(q));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? m.value() : nullptr;
}

// Parameterised over the demo model's quantization ("int8", "fp32").
class TranslatorTest : public ::testing::TestWithParam<const char*> {};

}  // namespace testing_util
}  // namespace mtlite
