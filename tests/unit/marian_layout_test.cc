// The Marian layout module: the sinusoid against HF's formulation (odd d included), the
// "is this table the sinusoid" check, binary16 / bfloat16 conversion, enum names and codes.
#include "marian_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace mtlite {
namespace {

// HF MarianSinusoidalPositionalEmbedding._init_weight transcribed: enc[p][j] = p / 10000^(2 (j//2) / d);
// columns [0, sentinel) = sin(enc[:, 0::2]), [sentinel, d) = cos(enc[:, 1::2]);
// sentinel = d // 2 for even d, d // 2 + 1 for odd d.
std::vector<float> HfSinusoid(int positions, int d) {
  std::vector<float> t(size_t(positions) * size_t(d));
  const int sentinel = d % 2 == 0 ? d / 2 : d / 2 + 1;
  for (int p = 0; p < positions; ++p) {
    int sin_col = 0, cos_col = sentinel;
    for (int j = 0; j < d; ++j) {
      const double enc = double(p) / std::pow(10000.0, double(2 * (j / 2)) / double(d));
      float& out = t[size_t(p) * size_t(d) + size_t(j % 2 == 0 ? sin_col++ : cos_col++)];
      out = float(j % 2 == 0 ? std::sin(enc) : std::cos(enc));
    }
  }
  return t;
}

TEST(MarianSinusoid, EqualsHfFormulationForEvenAndOddWidths) {
  for (int d : {1, 2, 3, 5, 7, 8, 9, 63, 64, 255, 256, 512}) {
    const int positions = 300;
    const std::vector<float> want = HfSinusoid(positions, d);
    const std::vector<float> got = layout::MarianSinusoidTable(positions, d);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], want[i]) << "d " << d << " position " << i / size_t(d) << " column " << i % size_t(d);
    }
    std::vector<float> row(static_cast<size_t>(d));
    layout::MarianSinusoidRow(positions - 1, d, row.data());
    for (int j = 0; j < d; ++j) EXPECT_EQ(row[size_t(j)], want[size_t(positions - 1) * size_t(d) + size_t(j)]);
  }
}

TEST(MarianSinusoid, OddWidthPutsTheExtraColumnInTheSinHalf) {
  // d = 5: sentinel 3; sin columns use frequency indices 0, 1, 2; cos columns 0, 1.
  const int d = 5;
  const std::vector<float> t = layout::MarianSinusoidTable(8, d);
  for (int p : {1, 7}) {
    const float* row = t.data() + size_t(p) * d;
    EXPECT_EQ(row[0], float(std::sin(double(p))));
    EXPECT_EQ(row[1], float(std::sin(p / std::pow(10000.0, 2.0 / 5))));
    EXPECT_EQ(row[2], float(std::sin(p / std::pow(10000.0, 4.0 / 5))));
    EXPECT_EQ(row[3], float(std::cos(double(p))));
    EXPECT_EQ(row[4], float(std::cos(p / std::pow(10000.0, 2.0 / 5))));
  }
  // Position 0: sin = 0, cos = 1.
  for (int j = 0; j < d; ++j) EXPECT_EQ(t[size_t(j)], j < 3 ? 0.0f : 1.0f) << j;
}

TEST(MarianSinusoid, DetectionToleratesOnlySmallDifferences) {
  for (int d : {8, 9}) {
    const int positions = 64;
    std::vector<float> t = HfSinusoid(positions, d);
    EXPECT_TRUE(layout::IsMarianSinusoid(t.data(), positions, d)) << d;
    t[size_t(17) * d + 3] += 0.5e-5f;
    EXPECT_TRUE(layout::IsMarianSinusoid(t.data(), positions, d)) << d;
    t[size_t(17) * d + 3] += 2e-5f;
    EXPECT_FALSE(layout::IsMarianSinusoid(t.data(), positions, d)) << d;
    t = HfSinusoid(positions, d);
    t[size_t(positions - 1) * d + size_t(d - 1)] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(layout::IsMarianSinusoid(t.data(), positions, d)) << d;
  }
  // The even-d split applied to odd d (sin and cos halves of d/2 columns, last column zero) is
  // not the sinusoid.
  const int d = 9, positions = 32;
  std::vector<float> wrong(size_t(positions) * d, 0.0f);
  for (int p = 0; p < positions; ++p) {
    for (int i = 0; i < d / 2; ++i) {
      const double a = p / std::pow(10000.0, 2.0 * i / d);
      wrong[size_t(p) * d + size_t(i)] = float(std::sin(a));
      wrong[size_t(p) * d + size_t(d / 2 + i)] = float(std::cos(a));
    }
  }
  EXPECT_FALSE(layout::IsMarianSinusoid(wrong.data(), positions, d));
}

// ---- half precision -------------------------------------------------------------------------

// binary16 decoded with ldexp (independent of the bit manipulation under test).
float DecodeF16(uint16_t h) {
  const int exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (exp == 31) return mant ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  if (exp == 0) return sign * std::ldexp(float(mant), -24);
  return sign * std::ldexp(float(1024 + mant), exp - 25);
}

TEST(Half, DecodesEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float want = DecodeF16(uint16_t(h)), got = layout::F16ToF32(uint16_t(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(layout::F32ToBits(got), layout::F32ToBits(want)) << h;  // -0 stays -0
    }
  }
}

TEST(Half, EncodesKnownValuesRoundingHalfToEven) {
  using layout::F16ToF32;
  using layout::F32ToF16;
  EXPECT_EQ(F32ToF16(0.0f), 0x0000);
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(F32ToF16(1.0f), 0x3C00);
  EXPECT_EQ(F32ToF16(-2.0f), 0xC000);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7BFF);
  EXPECT_EQ(F32ToF16(65519.0f), 0x7BFF);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7C00);                // rounds to infinity
  EXPECT_EQ(F32ToF16(0x1p-24f), 0x0001);                // smallest subnormal
  EXPECT_EQ(F32ToF16(0x1p-25f), 0x0000);                // tie -> even (0)
  EXPECT_EQ(F32ToF16(0x1.8p-24f), 0x0002);              // 1.5 ulp -> tie -> even (2)
  EXPECT_EQ(F32ToF16(1.0f + 0x1p-11f), 0x3C00);         // tie -> even
  EXPECT_EQ(F32ToF16(1.0f + 0x1.8p-10f), 0x3C02);       // tie -> even (up)
  EXPECT_EQ(F32ToF16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(F16ToF32(0x3555), 0.333251953125f);
  EXPECT_EQ(F16ToF32(0x0001), 0x1p-24f);
  EXPECT_EQ(F16ToF32(0x03FF), 0x1.ff8p-15f);
  // Every finite half survives f16 -> f32 -> f16.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(F32ToF16(F16ToF32(uint16_t(h))), h) << h;
  }
}

TEST(Half, Bfloat16) {
  EXPECT_EQ(layout::Bf16ToF32(0x3F80), 1.0f);
  EXPECT_EQ(layout::Bf16ToF32(0xC000), -2.0f);
  EXPECT_EQ(layout::F32ToBf16(1.0f), 0x3F80);
  EXPECT_EQ(layout::F32ToBf16(layout::BitsToF32(0x3F808000u)), 0x3F80);  // tie -> even (down)
  EXPECT_EQ(layout::F32ToBf16(layout::BitsToF32(0x3F818000u)), 0x3F82);  // tie -> even (up)
  EXPECT_EQ(layout::F32ToBf16(layout::BitsToF32(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_TRUE(std::isnan(layout::Bf16ToF32(layout::F32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7F80) == 0x7F80) continue;  // inf / NaN
    ASSERT_EQ(layout::F32ToBf16(layout::Bf16ToF32(uint16_t(b))), b) << b;
  }
}

// ---- names and codes ------------------------------------------------------------------------

TEST(Names, WeightTypes) {
  const WeightType all[] = {WeightType::kF32, WeightType::kF16, WeightType::kInt8};
  const char* dtype[] = {"f32", "f16", "int8"};
  const char* quant[] = {"fp32", "fp16", "int8"};
  std::set<int> codes;
  for (int i = 0; i < 3; ++i) {
    EXPECT_STREQ(layout::DTypeName(all[i]), dtype[i]);
    EXPECT_STREQ(layout::QuantizationName(all[i]), quant[i]);
    WeightType t = WeightType::kF32;
    ASSERT_TRUE(layout::ParseQuantization(quant[i], &t)) << quant[i];
    EXPECT_EQ(t, all[i]);
    const int code = layout::WeightTypeCode(all[i]);
    codes.insert(code);
    ASSERT_TRUE(layout::WeightTypeFromCode(code, &t));
    EXPECT_EQ(t, all[i]);
  }
  EXPECT_EQ(codes, (std::set<int>{0, 1, 2}));  // schema DType F32 = 0, F16 = 1, I8 = 2
  WeightType t = WeightType::kF16;
  for (const char* bad : {"", "f32", "int4", "INT8", "fp16 "}) EXPECT_FALSE(layout::ParseQuantization(bad, &t)) << bad;
  for (int bad : {-1, 3, 255}) EXPECT_FALSE(layout::WeightTypeFromCode(bad, &t)) << bad;
  EXPECT_EQ(t, WeightType::kF16);  // untouched on failure
}

TEST(Names, Activations) {
  const ActivationKind all[] = {ActivationKind::kSiLU, ActivationKind::kReLU, ActivationKind::kGELU,
                                ActivationKind::kGELUTanh};
  const char* names[] = {"silu", "relu", "gelu", "gelu_tanh"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_STREQ(layout::ActivationName(all[i]), names[i]);
    EXPECT_EQ(layout::ActivationCode(all[i]), i);  // schema Activation order
    ActivationKind a = ActivationKind::kReLU;
    ASSERT_TRUE(layout::ActivationFromCode(i, &a));
    EXPECT_EQ(a, all[i]);
  }
  ActivationKind a = ActivationKind::kReLU;
  EXPECT_FALSE(layout::ActivationFromCode(4, &a));
  EXPECT_FALSE(layout::ActivationFromCode(-1, &a));
  const std::pair<const char*, ActivationKind> hf[] = {
      {"swish", ActivationKind::kSiLU}, {"silu", ActivationKind::kSiLU},
      {"relu", ActivationKind::kReLU},  {"gelu", ActivationKind::kGELU},
      {"gelu_new", ActivationKind::kGELUTanh}, {"gelu_pytorch_tanh", ActivationKind::kGELUTanh}};
  for (const auto& [name, kind] : hf) {
    ASSERT_TRUE(layout::ActivationFromHfName(name, &a)) << name;
    EXPECT_EQ(a, kind) << name;
    EXPECT_NE(std::string(layout::kHfActivationNames).find(name), std::string::npos) << name;
  }
  for (const char* bad : {"", "tanh", "gelu_fast", "Swish"}) EXPECT_FALSE(layout::ActivationFromHfName(bad, &a)) << bad;
}

TEST(Names, TensorsAndComponents) {
  EXPECT_EQ(layout::LayerPrefix(layout::Side::kEncoder, 0), "model.encoder.layers.0");
  EXPECT_EQ(layout::LayerPrefix(layout::Side::kDecoder, 11), "model.decoder.layers.11");
  EXPECT_EQ(layout::LayerPrefix(layout::Side::kDecoder, 1) + layout::kCrossAttention + layout::kAttentionProjections[3] +
                layout::kWeight,
            "model.decoder.layers.1.encoder_attn.out_proj.weight");
  using layout::Part;
  EXPECT_EQ(layout::ComponentName({Part::kEmbeddings}), "embeddings/output");
  EXPECT_EQ(layout::ComponentName({Part::kPositions}), "positions");
  EXPECT_EQ(layout::ComponentName({Part::kFinalLogitsBias}), "final_logits_bias");
  EXPECT_EQ(layout::ComponentName({Part::kEncoderLayer, 5}), "encoder.layer.5");
  EXPECT_EQ(layout::ComponentName({Part::kDecoderSelfAttention, 1}), "decoder.layer.1.self_attn");
  EXPECT_EQ(layout::ComponentName({Part::kDecoderCrossAttention, 0}), "decoder.layer.0.cross_attn");
  EXPECT_EQ(layout::ComponentName({Part::kDecoderFfn, 2}), "decoder.layer.2.ffn");
  EXPECT_EQ(layout::ComponentName({Part::kOtherTensors}), "other tensors");
  EXPECT_EQ(layout::ComponentName({Part::kTokenizer}), "tokenizer");
  EXPECT_EQ(layout::ComponentName({Part::kStructure}), "flatbuffer structure/config/metadata");
  EXPECT_EQ(layout::ComponentName({Part::kPadding}), "padding (64-byte alignment)");
}

// Fairseq's sinusoid (HF M2M100SinusoidalPositionalEmbedding.get_embedding) transcribed in
// double: half = d // 2, emb = exp(j * -(ln(10000) / (half - 1))), row p = [sin(p emb)] ++
// [cos(p emb)] (++ 0 for odd d). The runtime computes it in float, as torch and CTranslate2 do:
// within a few float ulps of this at the angles of real sentences.
std::vector<double> FairseqRow(int p, int d) {
  const int half = d / 2;
  std::vector<double> row(size_t(d), 0.0);
  for (int j = 0; j < half; ++j) {
    const double a = double(p) * std::exp(double(j) * -(std::log(10000.0) / double(half - 1)));
    row[size_t(j)] = std::sin(a);
    row[size_t(half + j)] = std::cos(a);
  }
  return row;
}

TEST(Sinusoids, EveryKindAtItsOffset) {
  using layout::SinusoidRow;
  const int pad = 1;  // M2M100's: token index i is at position i + 2
  for (int d : {4, 7, 16, 64, 512}) {
    SCOPED_TRACE(d);
    std::vector<float> got(static_cast<size_t>(d));
    for (int i : {0, 1, 5, 63, 255}) {
      ASSERT_TRUE(SinusoidRow(PositionKind::kSinusoidM2M100, i, d, pad, got.data()));
      const std::vector<double> m2m = FairseqRow(i + pad + 1, d);
      // float angles: an error of a few ulps of the largest angle, p
      const double tol_m2m = 1e-6 + 4.0 * 1.2e-7 * (i + pad + 1), tol_ct2 = 1e-6 + 4.0 * 1.2e-7 * (i + 1);
      for (int j = 0; j < d; ++j) EXPECT_NEAR(got[size_t(j)], m2m[size_t(j)], tol_m2m) << "m2m100 " << i << " " << j;
      if (d % 2) EXPECT_EQ(got[size_t(d - 1)], 0.0f);
      if (d % 2 == 0) {
        ASSERT_TRUE(SinusoidRow(PositionKind::kSinusoidCT2, i, d, pad, got.data()));
        const std::vector<double> ct2 = FairseqRow(i + 1, d);
        for (int j = 0; j < d; ++j) EXPECT_NEAR(got[size_t(j)], ct2[size_t(j)], tol_ct2) << "ct2 " << i << " " << j;
      }
      ASSERT_TRUE(SinusoidRow(PositionKind::kSinusoidMarian, i, d, pad, got.data()));
      std::vector<float> marian(static_cast<size_t>(d));
      layout::MarianSinusoidRow(i, d, marian.data());
      EXPECT_EQ(got, marian);
    }
  }
  float row[8];
  EXPECT_FALSE(SinusoidRow(PositionKind::kTable, 0, 8, pad, row)) << "a stored table has no formula";
}

TEST(Sinusoids, DetectionTellsTheKindsApart) {
  const int rows = 40, d = 16, pad = 1;
  for (PositionKind kind : {PositionKind::kSinusoidMarian, PositionKind::kSinusoidM2M100, PositionKind::kSinusoidCT2}) {
    std::vector<float> t(size_t(rows) * d);
    ASSERT_TRUE(layout::Sinusoid(kind, rows, d, pad, t.data()));
    for (PositionKind other :
         {PositionKind::kSinusoidMarian, PositionKind::kSinusoidM2M100, PositionKind::kSinusoidCT2}) {
      EXPECT_EQ(layout::IsSinusoid(other, t.data(), rows, d, pad), other == kind) << int(kind) << " " << int(other);
    }
    // M2M100's offset follows the pad id
    if (kind == PositionKind::kSinusoidM2M100) EXPECT_FALSE(layout::IsSinusoid(kind, t.data(), rows, d, pad + 1));
    t[size_t(rows / 2) * d + 3] += 1e-3f;
    EXPECT_FALSE(layout::IsSinusoid(kind, t.data(), rows, d, pad));
  }
}

}  // namespace
}  // namespace mtlite
