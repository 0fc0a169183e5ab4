#include "model_writer.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>

#include "crc32c.h"
#include "marian_layout.h"
#include "model_spec.h"
#include "mtlite_generated.h"

namespace mtlite {
namespace converter {
namespace {

using layout::kDataAlignment;

uint64_t AlignUp(uint64_t x) { return (x + kDataAlignment - 1) / kDataAlignment * kDataAlignment; }

// A buffer's place in the data segment, relative to the segment start.
struct Placed {
  uint64_t offset = 0, size = 0;
  uint32_t crc = 0;
  bool present = false;
};

class DataSegment {
 public:
  Placed Add(const void* data, size_t size) {
    Placed p;
    p.offset = AlignUp(bytes_.size());
    p.size = size;
    p.crc = Crc32c(data, size);
    p.present = true;
    bytes_.resize(p.offset);
    const uint8_t* b = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), b, b + size);
    return p;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

struct SpmPlacement {
  Placed scores, charsmap;
};

SpmPlacement PlaceSpm(const SpmSpec& spm, DataSegment* seg) {
  std::vector<float> scores;
  for (const SpmPiece& p : spm.proto.pieces) scores.push_back(p.score);
  SpmPlacement out;
  out.scores = seg->Add(scores.data(), scores.size() * sizeof(float));
  const std::string& cm = spm.proto.precompiled_charsmap;
  if (!cm.empty()) out.charsmap = seg->Add(cm.data(), cm.size());
  return out;
}

// Everything about the data segment, computed once; the FlatBuffer is then built (twice at
// most) with absolute offsets = data_offset + relative offset.
struct ShortlistPlacement {
  Placed frequent, offsets, targets, row_order;
};

struct Layout {
  std::vector<size_t> order;  // tensor indices sorted by name
  std::vector<Placed> data, scales;
  SpmPlacement source, target;
  ShortlistPlacement shortlist;  // placed after everything else: the other buffers keep their
                                 // relative offsets whether or not a shortlist is present
  DataSegment segment;
};

Layout PlaceData(const ModelSpec& spec) {
  Layout l;
  l.order.resize(spec.tensors.size());
  std::iota(l.order.begin(), l.order.end(), size_t(0));
  std::stable_sort(l.order.begin(), l.order.end(),
                   [&](size_t a, size_t b) { return spec.tensors[a].name < spec.tensors[b].name; });
  l.data.resize(spec.tensors.size());
  l.scales.resize(spec.tensors.size());
  for (size_t i : l.order) {
    const TensorSpec& t = spec.tensors[i];
    l.data[i] = l.segment.Add(t.data.data(), t.data.size());
    if (!t.scales.empty()) l.scales[i] = l.segment.Add(t.scales.data(), t.scales.size() * sizeof(float));
  }
  l.source = PlaceSpm(spec.source_spm, &l.segment);
  if (spec.target_spm) l.target = PlaceSpm(*spec.target_spm, &l.segment);
  if (const auto& sl = spec.shortlist) {
    l.shortlist.frequent = l.segment.Add(sl->frequent.data(), sl->frequent.size() * sizeof(int32_t));
    l.shortlist.offsets = l.segment.Add(sl->offsets.data(), sl->offsets.size() * sizeof(uint32_t));
    l.shortlist.targets = l.segment.Add(sl->targets.data(), sl->targets.size() * sizeof(int32_t));
    if (!sl->row_order.empty())
      l.shortlist.row_order = l.segment.Add(sl->row_order.data(), sl->row_order.size() * sizeof(int32_t));
  }
  return l;
}

class FlatBufferWriter {
 public:
  FlatBufferWriter(const ModelSpec& spec, const Layout& layout, uint64_t data_offset)
      : spec_(spec), layout_(layout), data_offset_(data_offset) {
    fbb_.ForceDefaults(true);  // every scalar present: stable size, patchable in place by tests
  }

  const flatbuffers::FlatBufferBuilder& Build() {
    const auto config = Config();
    const auto tensors = Tensors();
    const auto tokenizer = Tokenizer();
    const auto metadata = Metadata();
    const auto shortlist = Shortlist();
    const auto decoding = DecodingDefaults();
    fb::ModelBuilder m(fbb_);
    // the oldest version that describes the config (SSRU layers 3, Marian's search 4, pre-norm,
    // final norms and the newer sinusoids 5), so that older readers refuse the file
    // (a spec's own version below 1 stays: the damage tests write such files)
    uint32_t version = spec_.format_version;
    if (const uint32_t need = detail::MinFormatVersion(spec_.config); need > layout::kFormatVersion1)
      version = std::max(version, need);
    const bool bpe = spec_.source_spm.proto.model_type == 2 || (spec_.target_spm && spec_.target_spm->proto.model_type == 2);
    if (bpe) version = std::max(version, layout::kFormatVersionBpeTokenizer);  // a BPE tokenizer: 5
    m.add_format_version(version);
    m.add_config(config);
    m.add_tensors(tensors);
    m.add_tokenizer(tokenizer);
    m.add_metadata(metadata);
    m.add_data_offset(data_offset_);
    m.add_data_size(layout_.segment.bytes().size());
    m.add_structure_crc32c(0);  // patched by SerializeModel once the bytes are final
    if (!shortlist.IsNull()) m.add_shortlist(shortlist);
    if (!decoding.IsNull()) m.add_decoding_defaults(decoding);
    fb::FinishSizePrefixedModelBuffer(fbb_, m.Finish());
    return fbb_;
  }

 private:
  fb::BufferRef Ref(const Placed& p) const { return fb::BufferRef(data_offset_ + p.offset, p.size, p.crc); }

  // The Config table, a field per line of the spec table (runtime/src/model_spec.cc), in its order.
  flatbuffers::Offset<fb::Config> Config() {
    using detail::FieldKind;
    const ModelConfig& c = spec_.config;
    const ModelConfig defaults;  // the schema's (fields with omit_default are written only when not theirs)
    std::vector<flatbuffers::Offset<flatbuffers::Vector<int32_t>>> lists;  // made before the table starts
    for (const detail::ConfigField& f : detail::ConfigFields()) {
      if (f.kind == FieldKind::kBannedIds) lists.push_back(fbb_.CreateVector(c.*f.member.ids));
    }
    const flatbuffers::uoffset_t start = fbb_.StartTable();
    auto list = lists.begin();
    for (const detail::ConfigField& f : detail::ConfigFields()) {
      const detail::FieldMember& m = f.member;
      switch (f.kind) {
        case FieldKind::kInt: fbb_.AddElement<int32_t>(f.slot, c.*m.i, 0); break;
        case FieldKind::kPositive: fbb_.AddElement<float>(f.slot, c.*m.f, 0); break;
        case FieldKind::kBool:
          if (!f.omit_default || c.*m.b != defaults.*m.b) fbb_.AddElement<uint8_t>(f.slot, c.*m.b, 0);
          break;
        case FieldKind::kActivation:
        case FieldKind::kEnum:
          if (!f.omit_default || detail::EnumCode(f, c) != detail::EnumCode(f, defaults))
            fbb_.AddElement<int8_t>(f.slot, int8_t(detail::EnumCode(f, c)), 0);
          break;
        case FieldKind::kBannedIds: fbb_.AddOffset(f.slot, *list++); break;
        case FieldKind::kWeightType:  // not in the Config table
        case FieldKind::kText: break;
      }
    }
    return flatbuffers::Offset<fb::Config>(fbb_.EndTable(start));
  }

  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Tensor>>> Tensors() {
    std::vector<flatbuffers::Offset<fb::Tensor>> out;
    for (size_t i : layout_.order) {
      const TensorSpec& t = spec_.tensors[i];
      const bool int8 = t.dtype == WeightType::kInt8;
      const auto name = fbb_.CreateString(t.name);
      const auto shape = fbb_.CreateVector(t.shape);
      const fb::BufferRef data = Ref(layout_.data[i]), scales = Ref(layout_.scales[i]);
      fb::TensorBuilder b(fbb_);
      b.add_name(name);
      b.add_dtype(static_cast<fb::DType>(layout::WeightTypeCode(t.dtype)));
      b.add_shape(shape);
      b.add_layout(int8 ? fb::WeightLayout::BlockedN8K4 : fb::WeightLayout::RowMajor);
      b.add_data(&data);
      b.add_quant(int8 ? fb::QuantScheme::SymmetricPerChannel : fb::QuantScheme::None);
      if (layout_.scales[i].present) b.add_scales(&scales);
      out.push_back(b.Finish());
    }
    return fbb_.CreateVector(out);
  }

  flatbuffers::Offset<fb::SentencePieceModel> Spm(const SpmSpec& spm, const SpmPlacement& placed) {
    std::vector<std::string> pieces;
    std::vector<fb::PieceType> types;
    for (const SpmPiece& p : spm.proto.pieces) {
      pieces.push_back(p.piece);
      types.push_back(static_cast<fb::PieceType>(p.type));
    }
    const auto pieces_off = SharedStrings(pieces);
    const auto types_off = fbb_.CreateVector(types);
    const auto sorted_off = fbb_.CreateVector(SortedPieceOrder(spm.proto.pieces));
    const auto name_off = fbb_.CreateString(spm.proto.normalizer_name);
    const auto to_vocab_off = fbb_.CreateVector(spm.to_vocab);
    const fb::BufferRef scores = Ref(placed.scores), charsmap = Ref(placed.charsmap);
    fb::SentencePieceModelBuilder b(fbb_);
    b.add_pieces(pieces_off);
    b.add_scores(&scores);
    b.add_types(types_off);
    b.add_sorted_pieces(sorted_off);
    b.add_unk_id(spm.proto.unk_id);
    b.add_bos_id(spm.proto.bos_id);
    b.add_eos_id(spm.proto.eos_id);
    b.add_pad_id(spm.proto.pad_id);
    b.add_add_dummy_prefix(spm.proto.add_dummy_prefix);
    b.add_remove_extra_whitespaces(spm.proto.remove_extra_whitespaces);
    b.add_escape_whitespaces(spm.proto.escape_whitespaces);
    b.add_treat_whitespace_as_suffix(spm.proto.treat_whitespace_as_suffix);
    b.add_byte_fallback(spm.proto.byte_fallback);
    b.add_normalizer_name(name_off);
    if (placed.charsmap.present) b.add_precompiled_charsmap(&charsmap);
    b.add_to_vocab(to_vocab_off);
    // Only for BPE: a unigram file keeps the bytes it had before the field (ForceDefaults is on).
    if (spm.proto.model_type != 1) b.add_model_type(static_cast<fb::SpmModelType>(spm.proto.model_type));
    return b.Finish();
  }

  flatbuffers::Offset<fb::Vocab> Vocab(const std::vector<std::string>& id_to_piece) {
    return fb::CreateVocab(fbb_, SharedStrings(id_to_piece));
  }

  // Vocab entries repeat the spm pieces: identical strings are stored once (FlatBuffers
  // shared strings), which saves ~100 KB on an 8k vocabulary.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> SharedStrings(
      const std::vector<std::string>& strings) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> offsets;
    offsets.reserve(strings.size());
    for (const std::string& s : strings) offsets.push_back(fbb_.CreateSharedString(s));
    return fbb_.CreateVector(offsets);
  }

  flatbuffers::Offset<fb::Tokenizer> Tokenizer() {
    const auto src = Spm(spec_.source_spm, layout_.source);
    const auto tgt = spec_.target_spm ? Spm(*spec_.target_spm, layout_.target) : 0;
    const auto src_vocab = Vocab(spec_.source_vocab);
    const auto tgt_vocab = spec_.target_vocab ? Vocab(*spec_.target_vocab) : 0;
    return fb::CreateTokenizer(fbb_, src, tgt, src_vocab, tgt_vocab);
  }

  flatbuffers::Offset<fb::Metadata> Metadata() {
    std::vector<flatbuffers::Offset<fb::KeyValue>> extra;
    for (const auto& [k, v] : spec_.extra) extra.push_back(fb::CreateKeyValueDirect(fbb_, k.c_str(), v.c_str()));
    const auto extra_off = fbb_.CreateVectorOfSortedTables(&extra);
    return fb::CreateMetadata(fbb_, fbb_.CreateString(spec_.config.source_lang),
                              fbb_.CreateString(spec_.config.target_lang),
                              fbb_.CreateString(spec_.converter_version), fbb_.CreateString(spec_.quantization),
                              fbb_.CreateString(spec_.source_hash), extra_off);
  }

  // Only the recorded fields (optional scalars); no table when nothing is recorded.
  flatbuffers::Offset<fb::DecodingDefaults> DecodingDefaults() {
    const DecodingDefaultsSpec& d = spec_.decoding_defaults;
    if (d.empty()) return 0;
    const auto source = d.source.empty() ? flatbuffers::Offset<flatbuffers::String>() : fbb_.CreateString(d.source);
    fb::DecodingDefaultsBuilder b(fbb_);
    if (d.beam_size) b.add_beam_size(*d.beam_size);
    if (d.max_length) b.add_max_length(*d.max_length);
    if (d.max_length_ratio) b.add_max_length_ratio(*d.max_length_ratio);
    if (d.max_length_offset) b.add_max_length_offset(*d.max_length_offset);
    if (d.length_penalty) b.add_length_penalty(*d.length_penalty);
    if (!source.IsNull()) b.add_source(source);
    return b.Finish();
  }

  flatbuffers::Offset<fb::Shortlist> Shortlist() {
    if (!spec_.shortlist) return 0;
    const ShortlistSpec& sl = *spec_.shortlist;
    const auto method = fbb_.CreateString(sl.method);
    const fb::BufferRef frequent = Ref(layout_.shortlist.frequent), offsets = Ref(layout_.shortlist.offsets),
                        targets = Ref(layout_.shortlist.targets), row_order = Ref(layout_.shortlist.row_order);
    fb::ShortlistBuilder b(fbb_);
    b.add_frequent(&frequent);
    b.add_offsets(&offsets);
    b.add_targets(&targets);
    if (!sl.row_order.empty()) b.add_row_order(&row_order);
    b.add_include_source_ids(sl.include_source_ids);
    b.add_top_k(sl.top_k);
    b.add_method(method);
    return b.Finish();
  }

  const ModelSpec& spec_;
  const Layout& layout_;
  const uint64_t data_offset_;
  flatbuffers::FlatBufferBuilder fbb_{1 << 20};
};

}  // namespace

std::vector<int32_t> SortedPieceOrder(const std::vector<SpmPiece>& pieces) {
  std::vector<int32_t> order(pieces.size());
  std::iota(order.begin(), order.end(), 0);
  // std::string_view compares like memcmp (unsigned bytes), the order the runtime checks.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return std::string_view(pieces[size_t(a)].piece) < std::string_view(pieces[size_t(b)].piece);
  });
  return order;
}

AlignedBytes SerializeModel(const ModelSpec& spec) {
  const Layout layout = PlaceData(spec);
  // The FlatBuffer's size does not depend on the offset values (fixed-width fields), so the
  // second build with the real data offset has the size the first one measured.
  uint64_t data_offset = 0;
  for (;;) {
    FlatBufferWriter writer(spec, layout, data_offset);
    const flatbuffers::FlatBufferBuilder& fbb = writer.Build();
    const uint64_t needed = AlignUp(fbb.GetSize());
    if (needed != data_offset) {
      data_offset = needed;
      continue;
    }
    AlignedBytes out(data_offset + layout.segment.bytes().size(), 0);
    std::memcpy(out.data(), fbb.GetBufferPointer(), fbb.GetSize());
    if (!layout.segment.bytes().empty())  // a file without tensors: no data segment
      std::memcpy(out.data() + data_offset, layout.segment.bytes().data(), layout.segment.bytes().size());
    // structure_crc32c: CRC of the FlatBuffer with the field itself zero, which it still is
    // (ForceDefaults wrote the 0).
    const auto* root = reinterpret_cast<const flatbuffers::Table*>(fb::GetSizePrefixedModel(out.data()));
    const uint8_t* field = root->GetAddressOf(fb::Model::VT_STRUCTURE_CRC32C);
    flatbuffers::WriteScalar<uint32_t>(out.data() + (field - out.data()), Crc32c(out.data(), fbb.GetSize()));
    return out;
  }
}

}  // namespace converter
}  // namespace mtlite
