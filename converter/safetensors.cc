#include "safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "checked_size.h"
#include "marian_layout.h"
#include "io.h"

namespace mtlite {
namespace converter {
namespace {

Status Bad(const std::string& file, const std::string& what) {
  return Status(StatusCode::kInvalidModel, file + ": " + what);
}

// Element size of a safetensors dtype; 0 if unknown.
size_t ElementSize(const std::string& dtype) {
  static const std::pair<const char*, size_t> kSizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"U64", 8}, {"I32", 4},
      {"U32", 4}, {"I16", 2}, {"U16", 2}, {"I8", 1},   {"U8", 1},  {"BOOL", 1}};
  for (const auto& s : kSizes) {
    if (dtype == s.first) return s.second;
  }
  return 0;
}

bool ReadU64(const nlohmann::json& j, uint64_t* v) {
  if (!j.is_number_unsigned()) return false;
  *v = j.get<uint64_t>();
  return true;
}

}  // namespace

Status Safetensors::Open(const std::string& path, Safetensors* out) {
  std::string bytes;
  Status s = ReadFile(path, &bytes);
  if (!s.ok()) return s;
  return Parse(std::move(bytes), path, out);
}

Status Safetensors::Parse(std::string bytes, const std::string& name, Safetensors* out) {
  Safetensors st;
  st.name_ = name;
  st.bytes_ = std::move(bytes);
  const uint64_t size = st.bytes_.size();
  if (size < 8) return Bad(name, "file too small for a safetensors header");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | uint8_t(st.bytes_[size_t(i)]);
  if (header_len > size - 8) {
    return Bad(name, "header length " + std::to_string(header_len) + " exceeds the file size " + std::to_string(size));
  }
  st.data_start_ = 8 + header_len;
  const uint64_t data_size = size - st.data_start_;
  const nlohmann::json header =
      nlohmann::json::parse(st.bytes_.begin() + 8, st.bytes_.begin() + std::ptrdiff_t(st.data_start_), nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) return Bad(name, "header is not a JSON object");
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") continue;
    const std::string where = "tensor '" + key + "'";
    if (!value.is_object()) return Bad(name, where + ": header entry is not an object");
    Entry e;
    if (!value.contains("dtype") || !value["dtype"].is_string()) return Bad(name, where + ": missing dtype");
    e.dtype = value["dtype"].get<std::string>();
    if (!value.contains("shape") || !value["shape"].is_array()) return Bad(name, where + ": missing shape");
    detail::CheckedSize elements = 1;  // in size_t: the tensor is read into memory
    for (const auto& d : value["shape"]) {
      uint64_t v = 0;
      if (!ReadU64(d, &v) || v > uint64_t(std::numeric_limits<int64_t>::max())) {
        return Bad(name, where + ": shape entries must be non-negative integers");
      }
      elements *= v;
      if (!elements.ok()) return Bad(name, where + ": shape overflows");
      e.shape.push_back(int64_t(v));
    }
    const auto& offs = value.contains("data_offsets") ? value["data_offsets"] : nlohmann::json();
    if (!offs.is_array() || offs.size() != 2 || !ReadU64(offs[0], &e.begin) || !ReadU64(offs[1], &e.end)) {
      return Bad(name, where + ": data_offsets must be [begin, end]");
    }
    if (e.begin > e.end || e.end > data_size) {
      return Bad(name, where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                           ") outside the data section (" + std::to_string(data_size) + " bytes)");
    }
    const size_t esize = ElementSize(e.dtype);
    if (esize == 0) return Bad(name, where + ": unknown dtype '" + e.dtype + "'");
    const detail::CheckedSize bytes = elements * esize;
    if (!bytes.ok() || bytes.value() != e.end - e.begin) {
      return Bad(name, where + ": data_offsets span " + std::to_string(e.end - e.begin) +
                           " bytes, but dtype and shape need " + std::to_string(elements.value()) + " x " +
                           std::to_string(esize));
    }
    st.entries_.emplace(key, std::move(e));
  }
  // No two tensors share bytes, so what is read from the file is bounded by its size. Ordered by
  // [begin, end), each begins at or after the end of those before it (empty ones may touch).
  std::vector<std::pair<const std::string*, const Entry*>> order;
  for (const auto& [key, e] : st.entries_) order.push_back({&key, &e});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->begin != b.second->begin ? a.second->begin < b.second->begin : a.second->end < b.second->end;
  });
  for (size_t i = 1; i < order.size(); ++i) {
    const Entry& e = *order[i].second;
    const Entry& prev = *order[i - 1].second;  // the ones before it end at or before prev.end
    if (e.begin < prev.end) {
      return Bad(name, "tensor '" + *order[i].first + "': data_offsets [" + std::to_string(e.begin) + ", " +
                           std::to_string(e.end) + ") overlap tensor '" + *order[i - 1].first + "' [" +
                           std::to_string(prev.begin) + ", " + std::to_string(prev.end) + ")");
    }
  }
  *out = std::move(st);
  return Status::Ok();
}

const Safetensors::Entry* Safetensors::Find(const std::string& tensor) const {
  auto it = entries_.find(tensor);
  return it == entries_.end() ? nullptr : &it->second;
}

Status Safetensors::ReadF32(const std::string& tensor, std::vector<float>* out) const {
  const Entry* e = Find(tensor);
  if (!e) return Bad(name_, "missing tensor '" + tensor + "'");
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes_.data()) + data_start_ + e->begin;
  const uint64_t bytes = e->end - e->begin;
  // Data is little-endian; the converter runs on little-endian hosts (x86-64, AArch64).
  if (e->dtype == "F32") {
    out->resize(size_t(bytes / 4));
    if (bytes) std::memcpy(out->data(), p, size_t(bytes));
  } else if (e->dtype == "F16" || e->dtype == "BF16") {
    const bool bf16 = e->dtype == "BF16";
    out->resize(size_t(bytes / 2));
    for (size_t i = 0; i < out->size(); ++i) {
      const uint16_t h = uint16_t(p[2 * i] | (p[2 * i + 1] << 8));
      (*out)[i] = bf16 ? layout::Bf16ToF32(h) : layout::F16ToF32(h);
    }
  } else {
    return Bad(name_, "tensor '" + tensor + "' has dtype " + e->dtype + "; only F32, F16 and BF16 are supported");
  }
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite
