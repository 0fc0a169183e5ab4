// The loader's first steps, before anything is bound: the FlatBuffers envelope and the size of
// the tables the loader will carve from one block (ModelTableBytes).
#include <cstdint>
#include <string>
#include <utility>

#include "model_internal.h"
#include "status_macros.h"

namespace mtlite {
namespace {

// The layout module's enum codes are the schema's.
static_assert(int(fb::DType::F32) == 0 && int(fb::DType::F16) == 1 && int(fb::DType::I8) == 2 &&
              int(fb::DType::MAX) == 2, "layout::WeightTypeCode must follow schema DType");
static_assert(int(fb::Activation::SiLU) == 0 && int(fb::Activation::ReLU) == 1 && int(fb::Activation::GELU) == 2 &&
              int(fb::Activation::GELUTanh) == 3 && int(fb::Activation::MAX) == 3,
              "layout::ActivationCode must follow schema Activation");

constexpr auto Invalid = detail::InvalidModel;
}  // namespace

Status detail::CheckEnvelope(const uint8_t* base, size_t size, uint64_t* fb_size) {
  if (size < 16) return Invalid("file too small (" + std::to_string(size) + " bytes) to be an mtlite model");
  if (!fb::SizePrefixedModelBufferHasIdentifier(base)) {
    return Invalid("not an mtlite file (file identifier is not \"MTL1\")");
  }
  const uint64_t prefix = flatbuffers::ReadScalar<uint32_t>(base);
  *fb_size = prefix + sizeof(uint32_t);
  if (*fb_size > size) {
    return Invalid("FlatBuffer size prefix (" + std::to_string(prefix) + ") exceeds the file size (" +
                   std::to_string(size) + "): truncated file?");
  }
  if (*fb_size >= FLATBUFFERS_MAX_BUFFER_SIZE) return Invalid("FlatBuffer part is larger than 2 GiB");
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;        // Model > Tokenizer > SentencePieceModel > vector > string
  opts.max_tables = 1u << 20;
  opts.check_alignment = true;
  flatbuffers::Verifier verifier(base, static_cast<size_t>(*fb_size), opts);
  if (!fb::VerifySizePrefixedModelBuffer(verifier)) {
    return Invalid("FlatBuffer verification failed (corrupt or truncated model structure)");
  }
  return Status::Ok();
}


namespace detail {

Result<size_t> ModelTableBytes(const uint8_t* base, size_t size) {
  if (!base) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  uint64_t fb_size = 0;
  MTLITE_RETURN_IF_ERROR(CheckEnvelope(base, size, &fb_size));
  const uint64_t bytes = TableCounts(fb::GetSizePrefixedModel(base)).Bytes();
  if (bytes > uint64_t(SIZE_MAX)) return Invalid("model tables do not fit the address space");
  return size_t(bytes);
}

const uint8_t* StructureCrcField(const fb::Model* root) {
  return reinterpret_cast<const flatbuffers::Table*>(root)->GetAddressOf(fb::Model::VT_STRUCTURE_CRC32C);
}

}  // namespace detail
}  // namespace mtlite
