// Damaged-file corpus: the loader rejects truncated, corrupted, crafted and future files with a
// message (never a crash), and VerifyChecksums / `mtlite info --verify` catch every flipped bit.
// Also checks the fuzz seed corpus (tests/fuzz/seeds) and can regenerate it:
//   MTLITE_WRITE_FUZZ_SEEDS=tests/fuzz/seeds/model_load ./model_damage_test --gtest_filter='FuzzSeeds.*'
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hf_convert.h"
#include "model_data.h"
#include "model_test_helpers.h"
#include "model_writer.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"
#include "translator_bounds.h"

namespace mtlite {
namespace {

using converter::AlignedBytes;
using converter::ModelSpec;

// The int8 demo model, read once.
const AlignedBytes& Demo() {
  static const AlignedBytes bytes = testing::ReadAligned(testing::DemoModel("int8"));
  return bytes;
}

// The tiny random model as a ModelSpec (to edit and re-serialize) and its bytes.
const ModelSpec& TinySpec() {
  static const ModelSpec spec = [] {
    testing::TempDir dir;
    testing::MakeTinyHf().Write(dir.path());
    ModelSpec s;
    converter::ConversionReport report;
    const Status st = converter::ConvertHfDir(dir.path(), converter::Quantization::kInt8, &s, &report);
    if (!st.ok()) throw std::runtime_error(st.ToString());
    return s;
  }();
  return spec;
}

uint64_t FlatBufferSize(const uint8_t* bytes) { return flatbuffers::ReadScalar<uint32_t>(bytes) + 4ull; }

// Loads `bytes` expecting a rejection: returns the status (and checks it has a message).
Status ExpectRejected(const uint8_t* data, size_t size, const std::string& what, LoadOptions options = {}) {
  auto m = Model::FromBuffer(data, size, options);
  EXPECT_FALSE(m.ok()) << what << ": accepted";
  if (m.ok()) return Status::Ok();
  EXPECT_FALSE(m.status().message().empty()) << what;
  return m.status();
}

// A successful load must only hand out pointers inside the buffer.
void ExpectViewsInside(const Model& m, const uint8_t* base, size_t size) {
  for (const auto& c : m.data().checks) {
    ASSERT_GE(c.data, base);
    ASSERT_LE(c.data + c.size, base + size) << c.name;
  }
}

TEST(Damage, IntactModelsLoad) {
  auto m = Model::FromBuffer(Demo().data(), Demo().size(), LoadOptions{true});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const AlignedBytes tiny = converter::SerializeModel(TinySpec());
  auto t = Model::FromBuffer(tiny.data(), tiny.size(), LoadOptions{true});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
}

TEST(Damage, TruncationAnywhereIsRejected) {
  const AlignedBytes& b = Demo();
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 256; ++n) sizes.push_back(n);
  for (int i = 0; i < 200; ++i) sizes.push_back(b.size() * size_t(i) / 200);
  const uint64_t fb = FlatBufferSize(b.data());
  for (uint64_t n : {fb - 1, fb, fb + 1, uint64_t(b.size() - 1)}) sizes.push_back(size_t(n));
  for (size_t n : sizes) {
    const Status s = ExpectRejected(b.data(), n, "truncated to " + std::to_string(n));
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << n << ": " << s.ToString();
  }
  // The tiny model, truncated at every byte.
  const AlignedBytes tiny = converter::SerializeModel(TinySpec());
  for (size_t n = 0; n < tiny.size(); ++n) (void)ExpectRejected(tiny.data(), n, "tiny truncated to " + std::to_string(n));
}

// Random byte changes in the FlatBuffer part: either the loader rejects the file, or it loads
// (pointers in bounds) and VerifyChecksums reports the structure checksum mismatch.
void FlipBytes(AlignedBytes b, uint64_t lo, uint64_t hi, int trials, uint32_t seed, const char* what) {
  std::mt19937 rng(seed);
  int rejected = 0, caught_by_checksum = 0;
  for (int t = 0; t < trials; ++t) {
    const size_t pos = size_t(lo + rng() % (hi - lo));
    const uint8_t old = b[pos];
    b[pos] = uint8_t(old ^ (1 + rng() % 255));
    auto m = Model::FromBuffer(b.data(), b.size());
    if (!m.ok()) {
      ++rejected;
      EXPECT_FALSE(m.status().message().empty());
    } else {
      ExpectViewsInside(**m, b.data(), b.size());
      const Status v = (*m)->VerifyChecksums();
      EXPECT_EQ(v.code(), StatusCode::kChecksumMismatch) << what << ": byte " << pos << " changed, not detected";
      caught_by_checksum += v.code() == StatusCode::kChecksumMismatch;
    }
    b[pos] = old;
  }
  std::printf("%s: %d byte changes: %d rejected by validation, %d by checksums\n", what, trials, rejected,
              caught_by_checksum);
}

TEST(Damage, RandomByteChangesInTheFlatBufferAreRejected) {
  FlipBytes(Demo(), 0, FlatBufferSize(Demo().data()), 2000, 1234, "demo FlatBuffer");
  const AlignedBytes tiny = converter::SerializeModel(TinySpec());
  FlipBytes(tiny, 0, FlatBufferSize(tiny.data()), 5000, 99, "tiny FlatBuffer");
  FlipBytes(tiny, 0, tiny.size(), 5000, 7, "tiny whole file");
}

TEST(Damage, EveryFlippedBitInTheDataSegmentIsCaughtByVerifyChecksums) {
  AlignedBytes b = Demo();
  const uint64_t data_offset = fb::GetSizePrefixedModel(b.data())->data_offset();
  std::mt19937_64 rng(42);
  for (int t = 0; t < 200; ++t) {
    const size_t pos = size_t(data_offset + rng() % (b.size() - data_offset));
    const uint8_t bit = uint8_t(1u << (rng() % 8));
    b[pos] ^= bit;
    auto m = Model::FromBuffer(b.data(), b.size());  // structure intact: loads
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const Status v = (*m)->VerifyChecksums();
    EXPECT_EQ(v.code(), StatusCode::kChecksumMismatch) << "bit at " << pos;
    EXPECT_NE(v.message().find("checksum mismatch in '"), std::string::npos) << v.message();
    EXPECT_EQ(Model::FromBuffer(b.data(), b.size(), LoadOptions{true}).status().code(), StatusCode::kChecksumMismatch);
    b[pos] ^= bit;
  }
  // The message names the tensor.
  auto intact = Model::FromBuffer(Demo().data(), Demo().size());
  ASSERT_TRUE(intact.ok());
  size_t pos = 0;
  for (const auto& c : (*intact)->data().checks) {
    if (c.name == "model.encoder.layers.3.fc1.weight") pos = size_t(c.data - Demo().data()) + 1000;
  }
  ASSERT_NE(pos, 0u);
  b[pos] ^= 0x10;
  const Status v = Model::FromBuffer(b.data(), b.size(), LoadOptions{true}).status();
  EXPECT_NE(v.message().find("model.encoder.layers.3.fc1.weight"), std::string::npos) << v.message();
}

TEST(Damage, InfoVerifyExitsNonZeroOnAFlippedBit) {
  testing::TempDir dir;
  const std::string path = dir / "flipped.mtlite";
  AlignedBytes b = Demo();
  testing::WriteText(path, std::string(b.begin(), b.end()));
  EXPECT_EQ(testing::RunCli("info '" + path + "' --verify").exit_code, 0);
  std::mt19937_64 rng(5);
  for (int t = 0; t < 8; ++t) {
    const size_t pos = size_t(rng() % b.size());
    b[pos] ^= uint8_t(1u << (rng() % 8));
    testing::WriteText(path, std::string(b.begin(), b.end()));
    const auto r = testing::RunCli("info '" + path + "' --verify");
    EXPECT_NE(r.exit_code, 0) << "bit at " << pos << ": " << r.output;
    EXPECT_TRUE(r.output.find("checksum mismatch") != std::string::npos ||
                r.output.find("INVALID_MODEL") != std::string::npos)
        << r.output;
    b[pos] = Demo()[pos];
  }
}

// ---- crafted files ------------------------------------------------------------------------

TEST(Damage, WrongIdentifier) {
  AlignedBytes b = Demo();
  std::memcpy(b.data() + 8, "MTL0", 4);
  const Status s = ExpectRejected(b.data(), b.size(), "MTL0");
  EXPECT_NE(s.message().find("not an mtlite file"), std::string::npos) << s.message();
  const std::string text = "this is not a model, just some text that is long enough";
  AlignedBytes t(text.begin(), text.end());
  EXPECT_NE(ExpectRejected(t.data(), t.size(), "text").message().find("not an mtlite file"), std::string::npos);
}

// Marian's search is format version 4: a file that says 3 is refused rather than searched by
// HF's rules (what a version-3 reader would do with it).
TEST(Damage, MarianSearchNeedsFormatVersion4) {
  ModelSpec spec = TinySpec();
  spec.config.search = SearchKind::kMarian;
  AlignedBytes b = converter::SerializeModel(spec);
  const fb::Model* root = fb::GetSizePrefixedModel(b.data());
  ASSERT_EQ(root->format_version(), layout::kFormatVersionMarianSearch);
  {
    auto m = Model::FromBuffer(b.data(), b.size());
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ((*m)->config().search, SearchKind::kMarian);
  }
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(root);
  const uint8_t* field = table->GetAddressOf(fb::Model::VT_FORMAT_VERSION);
  flatbuffers::WriteScalar<uint32_t>(b.data() + (field - b.data()), layout::kFormatVersionSsru);
  const Status s = ExpectRejected(b.data(), b.size(), "search Marian in version 3");
  EXPECT_NE(s.message().find("config.search Marian needs format_version 4"), std::string::npos) << s.ToString();
}

TEST(Damage, FutureFormatVersionIsUnsupported) {
  ModelSpec spec = TinySpec();
  const uint32_t next = layout::kFormatVersion + 1;
  spec.format_version = next;
  const AlignedBytes b = converter::SerializeModel(spec);
  const Status s = ExpectRejected(b.data(), b.size(), "next version");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(), "format version " + std::to_string(next) + " is newer than this runtime (" +
                             std::to_string(layout::kFormatVersion) + ")");
  spec.format_version = 0;
  const AlignedBytes z = converter::SerializeModel(spec);
  EXPECT_EQ(ExpectRejected(z.data(), z.size(), "v0").code(), StatusCode::kInvalidModel);
}

// A valid shortlist section for `spec`'s vocabularies: frequent {2, 3}; source id s lists two
// other ids (top_k 2).
converter::ShortlistSpec TinyShortlist(const ModelSpec& spec) {
  converter::ShortlistSpec sl;
  const int vs = spec.config.source_vocab_size, vt = spec.config.target_vocab_size;
  sl.frequent = {2, 3};
  sl.offsets.push_back(0);
  for (int s = 0; s < vs; ++s) {
    sl.targets.push_back((s + 4) % vt);
    sl.targets.push_back((s + 5) % vt);
    sl.offsets.push_back(uint32_t(sl.targets.size()));
  }
  sl.top_k = 2;
  sl.include_source_ids = true;
  sl.method = "test";
  return sl;
}

// The tiny spec with a shortlist, edited by `f`.
template <class F>
std::function<void(ModelSpec*)> WithShortlist(F f) {
  return [f](ModelSpec* s) {
    s->shortlist = TinyShortlist(*s);
    f(&*s->shortlist, s);
  };
}

struct SpecCase {
  const char* name;
  std::function<void(ModelSpec*)> edit;
  const char* expect;  // substring of the message
};

converter::TensorSpec* FindTensor(ModelSpec* s, const std::string& name) {
  for (auto& t : s->tensors) {
    if (t.name == name) return &t;
  }
  throw std::runtime_error("no tensor " + name);
}

// An int8 embedding of 2^23 x 512 (both inside the loader's limits) with an empty buffer: its
// BlockedN8K4 bytes are 2^32, which a 32-bit size_t wraps to 0, the size of the buffer. Committed
// as a seed (tests/fuzz/seeds/model_load) that model_size_overflow_test loads on every target.
void WeightBytesPast32Bits(ModelSpec* s) {
  s->config.d_model = 512;
  s->config.source_vocab_size = s->config.target_vocab_size = 1 << 23;
  converter::TensorSpec* t = FindTensor(s, "model.shared.weight");
  t->shape = {1 << 23, 512};
  t->data.clear();
}

const std::vector<SpecCase>& SpecCases() {
  static const std::vector<SpecCase> cases = {
      {"huge_d_model", [](ModelSpec* s) { s->config.d_model = 1 << 30; }, "config.d_model"},
      {"negative_d_model", [](ModelSpec* s) { s->config.d_model = -8; }, "config.d_model"},
      {"huge_layers", [](ModelSpec* s) { s->config.encoder_layers = 1 << 20; }, "config.encoder_layers"},
      {"zero_decoder_layers", [](ModelSpec* s) { s->config.decoder_layers = 0; }, "config.decoder_layers"},
      {"zero_heads", [](ModelSpec* s) { s->config.decoder_heads = 0; }, "config.decoder_heads"},
      {"heads_do_not_divide", [](ModelSpec* s) { s->config.encoder_heads = 3; }, "head count"},
      {"huge_vocab", [](ModelSpec* s) { s->config.source_vocab_size = 2000000000; }, "config.source_vocab_size"},
      {"huge_ffn", [](ModelSpec* s) { s->config.encoder_ffn_dim = 1 << 24; }, "config.encoder_ffn_dim"},
      {"huge_positions", [](ModelSpec* s) { s->config.max_positions = 1 << 30; }, "config.max_positions"},
      {"more_layers_than_tensors", [](ModelSpec* s) { s->config.encoder_layers = 3; }, "model.encoder.layers.1."},
      {"bigger_ffn_than_tensors", [](ModelSpec* s) { s->config.decoder_ffn_dim = 32; }, "model.decoder.layers.0.fc1.weight"},
      {"pad_out_of_range", [](ModelSpec* s) { s->config.pad_id = s->config.target_vocab_size; }, "config.pad_id"},
      {"eos_negative", [](ModelSpec* s) { s->config.eos_id = -1; }, "config.eos_id"},
      {"bad_word_out_of_range", [](ModelSpec* s) { s->config.bad_word_ids.push_back(1 << 20); }, "bad_word_ids"},
      {"nan_embed_scale", [](ModelSpec* s) { s->config.embed_scale = std::nanf(""); }, "embed_scale"},
      {"zero_beam", [](ModelSpec* s) { s->config.default_beam = 0; }, "default_beam"},
      // a default beam no translator can run (TranslatorLimits.max_beam stops at the same bound)
      {"beam_above_the_search", [](ModelSpec* s) { s->config.default_beam = detail::kMaxBeam + 1; }, "default_beam"},
      {"int8_weight_bytes_past_32_bits", WeightBytesPast32Bits, "model.shared.weight"},
      {"shared_but_sizes_differ", [](ModelSpec* s) { s->config.target_vocab_size -= 1; }, "shared_embeddings"},
      {"positions_table_missing", [](ModelSpec* s) { s->config.positions = PositionKind::kTable; }, "embed_positions"},
      {"missing_tensor",
       [](ModelSpec* s) {
         s->tensors.erase(std::find_if(s->tensors.begin(), s->tensors.end(),
                                       [](const auto& t) { return t.name == "model.decoder.layers.0.encoder_attn.v_proj.bias"; }));
       },
       "missing tensor 'model.decoder.layers.0.encoder_attn.v_proj.bias'"},
      {"duplicate_tensor", [](ModelSpec* s) { s->tensors.push_back(s->tensors[3]); }, "duplicates"},
      {"tensor_wrong_shape", [](ModelSpec* s) { FindTensor(s, "model.encoder.layers.0.fc2.weight")->shape = {16, 8}; },
       "'model.encoder.layers.0.fc2.weight' has shape [16, 8], expected [8, 16]"},
      {"tensor_rank", [](ModelSpec* s) { FindTensor(s, "model.encoder.layers.0.fc2.bias")->shape = {8, 1}; },
       "model.encoder.layers.0.fc2.bias"},
      {"mixed_weight_dtypes",
       [](ModelSpec* s) {
         auto* t = FindTensor(s, "model.encoder.layers.0.self_attn.k_proj.weight");
         t->dtype = WeightType::kF32;
         t->scales.clear();
         t->data.assign(8 * 8 * 4, 0);
       },
       "all weights must share one dtype"},
      {"int8_data_size", [](ModelSpec* s) { FindTensor(s, "model.shared.weight")->data.resize(64); }, "model.shared.weight"},
      {"int8_scales_missing", [](ModelSpec* s) { FindTensor(s, "model.shared.weight")->scales.clear(); }, "scales"},
      {"int8_scales_count", [](ModelSpec* s) { FindTensor(s, "model.shared.weight")->scales.pop_back(); }, "scales"},
      {"int8_scale_negative", [](ModelSpec* s) { FindTensor(s, "model.encoder.layers.0.fc1.weight")->scales[2] = -1; },
       "model.encoder.layers.0.fc1.weight' scale[2]"},
      {"int8_scale_nan",
       [](ModelSpec* s) { FindTensor(s, "model.shared.weight")->scales[1] = std::numeric_limits<float>::quiet_NaN(); },
       "model.shared.weight' scale[1]"},
      {"bias_not_f32", [](ModelSpec* s) { FindTensor(s, "final_logits_bias")->dtype = WeightType::kF16; }, "final_logits_bias"},
      {"bias_size", [](ModelSpec* s) { FindTensor(s, "final_logits_bias")->data.resize(4); }, "final_logits_bias"},
      {"source_vocab_short", [](ModelSpec* s) { s->source_vocab.pop_back(); }, "tokenizer.source_vocab"},
      {"target_vocab_short",
       [](ModelSpec* s) {
         s->target_vocab = s->source_vocab;
         s->target_vocab->pop_back();
         s->target_spm = s->source_spm;
       },
       "tokenizer.target_vocab"},
      {"target_vocab_without_target_spm", [](ModelSpec* s) { s->target_vocab = s->source_vocab; }, "target_spm is absent"},
      {"to_vocab_out_of_range", [](ModelSpec* s) { s->source_spm.to_vocab[4] = 1 << 20; }, "to_vocab[4]"},
      {"to_vocab_negative", [](ModelSpec* s) { s->source_spm.to_vocab[0] = -1; }, "to_vocab[0]"},
      {"to_vocab_short", [](ModelSpec* s) { s->source_spm.to_vocab.pop_back(); }, "to_vocab length"},
      {"piece_type_invalid", [](ModelSpec* s) { s->source_spm.proto.pieces[5].type = 9; }, "types[5]"},
      {"piece_score_nan", [](ModelSpec* s) { s->source_spm.proto.pieces[7].score = std::nanf(""); }, "scores[7]"},
      {"duplicate_piece", [](ModelSpec* s) { s->source_spm.proto.pieces[8].piece = s->source_spm.proto.pieces[9].piece; },
       "sorted_pieces"},
      {"spm_unk_out_of_range", [](ModelSpec* s) { s->source_spm.proto.unk_id = 1000; }, "source_spm.unk_id"},
      {"spm_bos_out_of_range", [](ModelSpec* s) { s->source_spm.proto.bos_id = -2; }, "source_spm.bos_id"},
      {"spm_no_pieces",
       [](ModelSpec* s) {
         s->source_spm.proto.pieces.clear();
         s->source_spm.to_vocab.clear();
       },
       "pieces missing or empty"},
      // the optional shortlist section
      {"shortlist_offsets_short", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->offsets.pop_back(); }),
       "shortlist.offsets"},
      {"shortlist_offsets_first", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->offsets[0] = 1; }),
       "shortlist.offsets[0] = 1"},
      {"shortlist_offsets_decrease",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->offsets[4] = l->offsets[3] - 1; }),
       "shortlist.offsets decrease at source id 3"},
      {"shortlist_offsets_end", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->targets.pop_back(); }),
       "but shortlist.targets has"},
      {"shortlist_target_out_of_range",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec* s) { l->targets[5] = s->config.target_vocab_size; }),
       "shortlist.targets of source id 2[1]"},
      {"shortlist_target_negative", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->targets[0] = -1; }),
       "is outside the target vocabulary"},
      {"shortlist_target_twice", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->targets[7] = l->targets[6]; }),
       "shortlist.targets of source id 3 lists target id"},
      {"shortlist_frequent_out_of_range",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->frequent.push_back(1 << 20); }),
       "shortlist.frequent[2] = 1048576"},
      {"shortlist_frequent_twice", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->frequent.push_back(2); }),
       "shortlist.frequent lists target id 2 twice"},
      {"shortlist_frequent_too_many",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec* s) { l->frequent.assign(size_t(s->config.target_vocab_size) + 1, 0); }),
       "more than the target vocabulary"},
      {"shortlist_more_than_top_k", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->top_k = 1; }),
       "more than top_k 1"},
      {"shortlist_top_k_negative", WithShortlist([](converter::ShortlistSpec* l, ModelSpec*) { l->top_k = -3; }),
       "shortlist.top_k"},
      {"shortlist_source_ids_but_vocabularies_differ",
       WithShortlist([](converter::ShortlistSpec*, ModelSpec* s) {
         s->target_vocab = s->source_vocab;
         (*s->target_vocab)[5] = "something else";
         s->target_spm = s->source_spm;
       }),
       "include_source_ids"},
      // the output projection's row order (format_version 2)
      {"shortlist_row_order_in_version_1",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec* s) {
         for (int t = 0; t < s->config.target_vocab_size; ++t) l->row_order.push_back(s->config.target_vocab_size - 1 - t);
       }),
       "needs format_version 2"},
      {"shortlist_row_order_short",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec* s) {
         s->format_version = 2;
         for (int t = 0; t + 1 < s->config.target_vocab_size; ++t) l->row_order.push_back(t);
       }),
       "shortlist.row_order"},
      {"shortlist_row_order_repeats",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec* s) {
         s->format_version = 2;
         for (int t = 0; t < s->config.target_vocab_size; ++t) l->row_order.push_back(t);
         l->row_order[3] = 1;
       }),
       "not a permutation"},
      {"shortlist_row_order_out_of_range",
       WithShortlist([](converter::ShortlistSpec* l, ModelSpec* s) {
         s->format_version = 2;
         for (int t = 0; t < s->config.target_vocab_size; ++t) l->row_order.push_back(t);
         l->row_order[0] = s->config.target_vocab_size;
       }),
       "not a permutation"},
  };
  return cases;
}

class SpecDamage : public ::testing::TestWithParam<size_t> {};

TEST_P(SpecDamage, RejectedWithAMessage) {
  const SpecCase& c = SpecCases()[GetParam()];
  ModelSpec spec = TinySpec();
  c.edit(&spec);
  const AlignedBytes b = converter::SerializeModel(spec);
  const Status s = ExpectRejected(b.data(), b.size(), c.name);
  EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.name << ": " << s.ToString();
  std::printf("%s -> %s\n", c.name, s.ToString().c_str());
}

INSTANTIATE_TEST_SUITE_P(Cases, SpecDamage, ::testing::Range(size_t(0), SpecCases().size()),
                         [](const auto& info) { return std::string(SpecCases()[info.param].name); });

// In-place patches of fields the serializer always writes consistently.
void PatchU64(AlignedBytes* b, const void* field, uint64_t v) {
  const size_t at = size_t(static_cast<const uint8_t*>(field) - b->data());
  flatbuffers::WriteScalar<uint64_t>(b->data() + at, v);
}

const fb::BufferRef* TensorData(const AlignedBytes& b, const char* name) {
  return fb::GetSizePrefixedModel(b.data())->tensors()->LookupByKey(name)->data();
}

TEST(Damage, BufferOffsetsOutsideTheFileAreRejected) {
  const uint64_t size = Demo().size();
  struct Patch {
    const char* what;
    uint64_t offset, bytes;  // new BufferRef.offset / size (~0: unchanged)
    const char* expect;
  };
  const uint64_t keep = ~0ull;
  const Patch patches[] = {
      {"past the end", (size + 64) / 64 * 64, keep, "outside the data segment"},
      {"at the end", 0, keep, "outside the data segment"},  // offset = file size, rounded below
      {"wrapping offset+size", 0xFFFFFFFFFFFFFFC0ull, 128, "outside the data segment"},
      {"huge size", keep, 0xFFFFFFFFFFFFFF00ull, "outside the data segment"},
      {"inside the FlatBuffer", 0, keep, "outside the data segment"},
      {"misaligned", keep, keep, "not 64-byte aligned"},
      {"overlapping", keep, keep, "overlap"},
  };
  for (const Patch& p : patches) {
    AlignedBytes b = Demo();
    const fb::BufferRef* ref = TensorData(b, "model.encoder.layers.2.fc2.weight");
    const std::string what = p.what;
    uint64_t off = p.offset, n = p.bytes;
    if (what == "at the end") off = size / 64 * 64 + (size % 64 ? 64 : 0);
    if (what == "misaligned") off = ref->offset() + 4;
    if (what == "overlapping") off = TensorData(b, "model.encoder.layers.2.fc1.weight")->offset();
    if (what == "overlapping") n = ref->size();
    // BufferRef layout: offset at +0, size at +8, crc32c at +16.
    if (off != keep) PatchU64(&b, reinterpret_cast<const uint8_t*>(ref), off);
    if (n != keep) PatchU64(&b, reinterpret_cast<const uint8_t*>(ref) + 8, n);
    const Status s = ExpectRejected(b.data(), b.size(), what);
    EXPECT_NE(s.message().find(p.expect), std::string::npos) << what << ": " << s.ToString();
  }
}

TEST(Damage, DataSegmentFieldsMustDescribeTheFile) {
  const fb::Model* root = fb::GetSizePrefixedModel(Demo().data());
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(root);
  struct Patch {
    flatbuffers::voffset_t field;
    uint64_t value;
  };
  const Patch patches[] = {
      {fb::Model::VT_DATA_OFFSET, root->data_offset() + 4},   // misaligned
      {fb::Model::VT_DATA_OFFSET, 0},                         // inside the FlatBuffer
      {fb::Model::VT_DATA_OFFSET, Demo().size() + 64},        // past the end
      {fb::Model::VT_DATA_SIZE, root->data_size() + 1},       // file shorter than declared
      {fb::Model::VT_DATA_SIZE, ~0ull},
  };
  for (const Patch& p : patches) {
    AlignedBytes b = Demo();
    PatchU64(&b, b.data() + (table->GetAddressOf(p.field) - Demo().data()), p.value);
    (void)ExpectRejected(b.data(), b.size(), "data segment patch");
  }
  // Trailing bytes after the declared data segment.
  AlignedBytes longer = Demo();
  longer.push_back(0);
  const Status s = ExpectRejected(longer.data(), longer.size(), "trailing byte");
  EXPECT_NE(s.message().find("data segment"), std::string::npos) << s.message();
}

TEST(Damage, SortedPiecesMustBeAPermutation) {
  AlignedBytes b = converter::SerializeModel(TinySpec());
  const auto* sorted = fb::GetSizePrefixedModel(b.data())->tokenizer()->source_spm()->sorted_pieces();
  const size_t at = size_t(sorted->Data() - b.data());
  for (size_t i = 0; i < 4; ++i) b[at + i] = b[at + 4 + i];  // sorted[0] = sorted[1]
  const Status s = ExpectRejected(b.data(), b.size(), "sorted_pieces");
  EXPECT_NE(s.message().find("sorted_pieces"), std::string::npos) << s.message();
}

TEST(Damage, CallerErrorsAndIo) {
  const AlignedBytes& b = Demo();
  auto misaligned = Model::FromBuffer(b.data() + 8, b.size() - 8);
  EXPECT_EQ(misaligned.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(misaligned.status().message().find("64-byte aligned"), std::string::npos);
  EXPECT_EQ(Model::FromBuffer(nullptr, 100).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Model::Load("/nonexistent/model.mtlite").status().code(), StatusCode::kIoError);
  EXPECT_EQ(Model::Load("/").status().code(), StatusCode::kIoError);
  testing::TempDir dir;
  testing::WriteText(dir / "empty.mtlite", "");
  EXPECT_FALSE(Model::Load(dir / "empty.mtlite").ok());
  const auto r = testing::RunCli("info '" + (dir / "empty.mtlite") + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

// ---- fuzz seed corpus -----------------------------------------------------------------------

std::vector<std::string> SeedFiles() {
  std::vector<std::string> out;
  const std::string dir = std::string(MTLITE_SOURCE_DIR) + "/tests/fuzz/seeds/model_load";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') out.push_back(dir + "/" + e->d_name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The seeds: the tiny valid model and damaged variants of it.
std::vector<std::pair<std::string, AlignedBytes>> MakeSeeds() {
  const AlignedBytes valid = converter::SerializeModel(TinySpec());
  std::vector<std::pair<std::string, AlignedBytes>> seeds = {{"valid.mtlite", valid}};
  AlignedBytes truncated(valid.begin(), valid.begin() + std::ptrdiff_t(valid.size() / 2));
  seeds.push_back({"truncated.mtlite", truncated});
  AlignedBytes ident = valid;
  std::memcpy(ident.data() + 8, "MTL0", 4);
  seeds.push_back({"wrong_identifier.mtlite", ident});
  ModelSpec future = TinySpec();
  future.format_version = layout::kFormatVersion + 1;
  seeds.push_back({"future_version.mtlite", converter::SerializeModel(future)});
  ModelSpec huge = TinySpec();
  huge.config.d_model = 1 << 30;
  seeds.push_back({"huge_d_model.mtlite", converter::SerializeModel(huge)});
  ModelSpec with_shortlist = TinySpec();
  with_shortlist.shortlist = TinyShortlist(with_shortlist);
  seeds.push_back({"shortlist_valid.mtlite", converter::SerializeModel(with_shortlist)});
  ModelSpec ordered = with_shortlist;  // rows in reverse order (format version 2)
  ordered.format_version = 2;
  for (int t = 0; t < ordered.config.target_vocab_size; ++t)
    ordered.shortlist->row_order.push_back(ordered.config.target_vocab_size - 1 - t);
  seeds.push_back({"shortlist_row_order_valid.mtlite", converter::SerializeModel(ordered)});
  ordered.shortlist->row_order[1] = ordered.shortlist->row_order[0];
  seeds.push_back({"shortlist_row_order_repeats.mtlite", converter::SerializeModel(ordered)});
  with_shortlist.shortlist->offsets[4] = with_shortlist.shortlist->offsets[3] - 1;
  seeds.push_back({"shortlist_offsets_decrease.mtlite", converter::SerializeModel(with_shortlist)});
  AlignedBytes flipped = valid;
  flipped[flipped.size() - 100] ^= 0x04;
  seeds.push_back({"flipped_weight_bit.mtlite", flipped});
  ModelSpec wraps = TinySpec();
  WeightBytesPast32Bits(&wraps);
  seeds.push_back({"regression-int8-weight-bytes-past-32-bits.mtlite", converter::SerializeModel(wraps)});
  return seeds;
}

TEST(FuzzSeeds, CommittedSeedsMatchTheirRoles) {
  if (const char* out = std::getenv("MTLITE_WRITE_FUZZ_SEEDS")) {
    for (const auto& [name, bytes] : MakeSeeds()) testing::WriteText(std::string(out) + "/" + name, std::string(bytes.begin(), bytes.end()));
  }
  const std::vector<std::string> files = SeedFiles();
  ASSERT_GE(files.size(), 2u) << "tests/fuzz/seeds/model_load is missing";
  size_t total = 0;
  int valid = 0, named_valid = 0;
  for (const std::string& f : files) {
    const AlignedBytes b = testing::ReadAligned(f);
    total += b.size();
    auto m = Model::FromBuffer(b.data(), b.size(), LoadOptions{true});
    const bool should_load = f.size() >= 12 && f.compare(f.size() - 12, 12, "valid.mtlite") == 0;
    EXPECT_EQ(m.ok(), should_load) << f << ": " << m.status().ToString();
    valid += m.ok();
    named_valid += should_load;
  }
  EXPECT_EQ(valid, named_valid);
  EXPECT_GE(valid, 2);  // the tiny model with and without a shortlist section
  EXPECT_LT(total, 200u * 1024u);
}

}  // namespace
}  // namespace mtlite
