// The Model object: its construction over a caller buffer (heap tables, or everything in caller
// storage) and destruction. Loading itself is model.cc (detail::PrepareModel).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "marian_layout.h"
#include "model_internal.h"
#include "platform.h"
#include "status_macros.h"

namespace mtlite {

using detail::AlignUp;
using detail::kStorageAlign;
using layout::kDataAlignment;

namespace {

// Caller storage: [Model][ModelData][shared_ptr control block][tables], each 64-byte aligned.
constexpr size_t kModelOffset = 0;
constexpr size_t kDataOffset = AlignUp(sizeof(Model), kStorageAlign);
constexpr size_t kControlOffset = kDataOffset + AlignUp(sizeof(detail::ModelData), kStorageAlign);
constexpr size_t kControlBytes = 128;  // a shared_ptr control block with a stateless deleter (~32-48 bytes)
constexpr size_t kTablesOffset = kControlOffset + kControlBytes;

// Hands the shared_ptr its control block from the caller's storage (a slot of kControlBytes);
// should a standard library ever need more, it falls back to the heap rather than fail.
template <class T>
struct SlotAllocator {
  using value_type = T;
  void* slot = nullptr;
  explicit SlotAllocator(void* s) : slot(s) {}
  template <class U>
  SlotAllocator(const SlotAllocator<U>& o) : slot(o.slot) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    if (n * sizeof(T) <= kControlBytes && alignof(T) <= kStorageAlign) return static_cast<T*>(slot);
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) {
    if (p != slot) ::operator delete(p);
  }
  template <class U>
  bool operator==(const SlotAllocator<U>& o) const { return slot == o.slot; }
  template <class U>
  bool operator!=(const SlotAllocator<U>& o) const { return slot != o.slot; }
};

// Destroys a Model placed in caller storage (the storage itself belongs to the caller).
struct DestroyInPlace {
  void operator()(const Model* m) const { m->~Model(); }
};

}  // namespace

Model::Model() : data_(new detail::ModelData), owns_data_(true) {}
Model::Model(detail::ModelData* data) : data_(data), owns_data_(false) {}

Model::~Model() {
  if (data_->unmap && data_->mapping) data_->unmap(data_->mapping, data_->mapping_size);
  platform::AlignedFree(data_->table_block);
  if (owns_data_) {
    delete data_;
  } else {
    data_->~ModelData();
  }
}
const ModelConfig& Model::config() const { return data_->config; }

const DecodingDefaults& Model::decoding_defaults() const { return data_->decoding_defaults; }

TranslateOptions Model::DefaultTranslateOptions() const {
  TranslateOptions o;
  const DecodingDefaults& d = data_->decoding_defaults;
  if (d.beam_size) o.beam_size = *d.beam_size;
  if (d.max_length) o.max_length = *d.max_length;
  if (d.max_length_ratio) o.max_length_ratio = *d.max_length_ratio;
  if (d.max_length_offset) o.max_length_offset = *d.max_length_offset;
  if (d.length_penalty) o.length_penalty = *d.length_penalty;
  return o;
}

size_t Model::file_size() const { return data_->size; }

Result<std::shared_ptr<const Model>> Model::FromBuffer(const void* data, size_t size, const LoadOptions& options) {
  if (!data) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0) {
    return Status(StatusCode::kInvalidArgument, "model buffer must be 64-byte aligned (weights are read in place)");
  }
  std::shared_ptr<Model> model(new Model());
  model->data_->base = static_cast<const uint8_t*>(data);
  model->data_->size = size;
  MTLITE_RETURN_IF_ERROR(detail::PrepareModel(model->data_, options, nullptr, 0));
  return std::shared_ptr<const Model>(std::move(model));
}

Result<size_t> Model::StorageBytes(const void* data, size_t size) {
  Result<size_t> tables = detail::ModelTableBytes(static_cast<const uint8_t*>(data), size);
  if (!tables.ok()) return tables.status();
  return kTablesOffset + tables.value();
}

Result<std::shared_ptr<const Model>> Model::FromBuffer(const void* data, size_t size, void* storage,
                                                       size_t storage_bytes, const LoadOptions& options) {
  if (!data) return Status(StatusCode::kInvalidArgument, "model buffer is null");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0) {
    return Status(StatusCode::kInvalidArgument, "model buffer must be 64-byte aligned (weights are read in place)");
  }
  if (!storage) return Status(StatusCode::kInvalidArgument, "model storage is null");
  if (reinterpret_cast<uintptr_t>(storage) % kStorageAlign != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "model storage must be 64-byte aligned (declare it with alignas(64) or __attribute__((aligned(64))))");
  }
  Result<size_t> need = StorageBytes(data, size);
  if (!need.ok()) return need.status();
  if (storage_bytes < need.value()) {
    return Status(StatusCode::kResourceExhausted,
                  "model storage of " + std::to_string(storage_bytes) + " bytes is too small: this model needs " +
                      std::to_string(need.value()) + " bytes (Model::StorageBytes; `mtlite info --limits` prints it)");
  }
  uint8_t* s = static_cast<uint8_t*>(storage);
  auto* md = new (s + kDataOffset) detail::ModelData();
  md->base = static_cast<const uint8_t*>(data);
  md->size = size;
  Model* model = new (s + kModelOffset) Model(md);
  if (Status st = detail::PrepareModel(md, options, s + kTablesOffset, storage_bytes - kTablesOffset); !st.ok()) {
    model->~Model();
    return st;
  }
  return std::shared_ptr<const Model>(model, DestroyInPlace(), SlotAllocator<char>(s + kControlOffset));
}

}  // namespace mtlite
