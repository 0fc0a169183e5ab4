// Sizes past 32 bits: a model file or TranslatorLimits whose byte counts exceed a 32-bit size_t
// are refused on armv7 with a clear error (never a wrapped size: a too-small buffer accepted, or
// an arena planned too small), and planned exactly where size_t is 64 bits. Runs on every target
// (the ARM step runs it under qemu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "checked_size.h"
#include "mtlite/mtlite.hpp"
#include "unit/translator_test_util.h"

namespace mtlite {
namespace {

using detail::CheckedSize;

constexpr bool k32Bit = sizeof(size_t) == 4;

TEST(CheckedSize, DetectsOverflow) {
  EXPECT_EQ((CheckedSize(3) * 5 + 7).value(), 22u);
  EXPECT_TRUE((CheckedSize(SIZE_MAX) * 1).ok());
  EXPECT_TRUE((CheckedSize(SIZE_MAX) * 0).ok());
  EXPECT_FALSE((CheckedSize(SIZE_MAX) * 2).ok());
  EXPECT_FALSE((CheckedSize(SIZE_MAX / 2 + 1) * 2).ok());
  EXPECT_TRUE((CheckedSize(SIZE_MAX / 2) * 2).ok());
  EXPECT_FALSE((CheckedSize(SIZE_MAX) + 1).ok());
  EXPECT_TRUE((CheckedSize(SIZE_MAX - 1) + 1).ok());
  EXPECT_EQ((CheckedSize(SIZE_MAX) + 1).value(), 0u);
  // an overflow stays an overflow (even times 0), and a negative operand is one
  EXPECT_FALSE((CheckedSize(SIZE_MAX) * 2 * 0 + 1).ok());
  EXPECT_FALSE(CheckedSize(-1).ok());
  EXPECT_FALSE(Max(CheckedSize(SIZE_MAX) + 1, CheckedSize(4)).ok());
  EXPECT_EQ(Max(CheckedSize(3), CheckedSize(4)).value(), 4u);
  // the sizes of the defects: 2^23 x 512 int8 bytes, and a KV cache of 2^41 bytes
  EXPECT_EQ((CheckedSize(1 << 23) * 512).ok(), !k32Bit);
  EXPECT_EQ((CheckedSize(6) * 8191 * (4096 * 64) * 512 * 4).ok(), !k32Bit);
  if (!k32Bit) {
    EXPECT_EQ((CheckedSize(1 << 23) * 512).value(), uint64_t(1) << 32);
  }
}

// tests/fuzz/seeds/model_load/regression-int8-weight-bytes-past-32-bits.mtlite (written by
// model_damage_test's FuzzSeeds): an int8 model of vocabulary 2^23 and d_model 512 whose shared
// embedding has an empty buffer. Its BlockedN8K4 bytes, 2^32, once wrapped to 0 on 32-bit
// targets, so the empty buffer matched, the loader accepted the tensor and translation read
// past the file.
TEST(ModelSizeOverflow, WeightBytesPast32BitsAreRefused) {
  const std::string path =
      std::string(MTLITE_SOURCE_DIR) + "/tests/fuzz/seeds/model_load/regression-int8-weight-bytes-past-32-bits.mtlite";
  auto m = Model::Load(path);
  ASSERT_FALSE(m.ok()) << "a model with a 0-byte 2^23 x 512 int8 tensor was accepted";
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel) << m.status().ToString();
  const std::string& msg = m.status().message();
  EXPECT_NE(msg.find("model.shared.weight"), std::string::npos) << msg;
  if (k32Bit) {
    EXPECT_NE(msg.find("more bytes than this platform can address"), std::string::npos) << msg;
  } else {
    EXPECT_NE(msg.find("has 0 data bytes, expected 4294967296"), std::string::npos) << msg;
  }
}

// Limits inside CheckLimits whose decoder K cache (layers x positions x rows x d_model floats)
// is past 2^32 bytes: an OUT_OF_RANGE error where size_t has 32 bits (the K cache size used to
// wrap, and the plan came out small), the exact plan where it has 64 (planned, not allocated).
TEST(ModelSizeOverflow, LimitsPastTheAddressSpaceAreOutOfRange) {
  auto model = testing_util::LoadOrDie("int8");
  ASSERT_TRUE(model);
  const ModelConfig& c = model->config();
  TranslatorLimits lim;
  lim.max_batch = 4096;
  lim.max_beam = 64;
  lim.max_n_best = 1;
  lim.max_source_tokens = 8;
  lim.max_target_tokens = 8191;  // batch x beam x positions < 2^31 (the KV cache row index)
  if (c.positions == mtlite::PositionKind::kTable) lim.max_target_tokens = std::min(lim.max_target_tokens, c.max_positions);
  const uint64_t k_cache = uint64_t(c.decoder_layers) * uint64_t(lim.max_target_tokens) * uint64_t(lim.max_batch) *
                           uint64_t(lim.max_beam) * uint64_t(c.d_model) * 4;
  ASSERT_GT(k_cache, uint64_t(UINT32_MAX));
  auto bytes = Translator::ArenaBytes(*model, lim);
  auto plan = Translator::PlanArena(*model, lim);
  if (k32Bit) {
    ASSERT_FALSE(bytes.ok()) << "planned " << bytes.value() << " bytes";
    EXPECT_EQ(bytes.status().code(), StatusCode::kOutOfRange);
    EXPECT_NE(bytes.status().message().find("exceeds addressable memory"), std::string::npos) << bytes.status().ToString();
    EXPECT_EQ(plan.status().code(), StatusCode::kOutOfRange);
    auto tr = Translator::Create(model, lim);
    EXPECT_EQ(tr.status().code(), StatusCode::kOutOfRange) << tr.status().ToString();
  } else {
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(plan.value().total_bytes, bytes.value());
    uint64_t planned_k_cache = 0;
    for (const ArenaBufferInfo& b : plan.value().buffers)
      if (b.name == "decoder.k_cache") planned_k_cache = b.bytes;
    EXPECT_EQ(planned_k_cache, k_cache);
    EXPECT_GT(uint64_t(bytes.value()), 2 * k_cache);  // with the V cache
  }
}

}  // namespace
}  // namespace mtlite
