#include "ct2_model.h"

#include <cmath>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "io.h"
#include "marian_layout.h"
#include "status_macros.h"

namespace mtlite {
namespace converter {
namespace {

Status Reject(const std::string& message) { return Status(StatusCode::kInvalidModel, message); }

// The newest model.bin layout this reader knows (CTranslate2 4.x writes 6).
constexpr uint32_t kMaxBinaryVersion = 6;
constexpr int kMaxRank = 8;

int ItemSize(Ct2DType t) {
  switch (t) {
    case Ct2DType::kFloat32:
    case Ct2DType::kInt32: return 4;
    case Ct2DType::kInt16:
    case Ct2DType::kFloat16:
    case Ct2DType::kBFloat16: return 2;
    case Ct2DType::kInt8: return 1;
  }
  return 0;
}

// Sequential reads over the file bytes; every read checks the bytes left first.
class Cursor {
 public:
  Cursor(const std::string& bytes, const std::string& name) : b_(bytes), name_(name) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return b_.size() - pos_; }

  Status Need(uint64_t n, const char* what) const {
    if (n > left()) {
      return Reject(name_ + ": truncated at byte " + std::to_string(pos_) + " (reading " + what + ": " +
                    std::to_string(n) + " bytes, " + std::to_string(left()) + " left)");
    }
    return Status::Ok();
  }
  template <class T>
  Status Get(T* v, const char* what) {
    MTLITE_RETURN_IF_ERROR(Need(sizeof(T), what));
    std::memcpy(v, b_.data() + pos_, sizeof(T));  // the file is little-endian, as every host mtlite builds for
    pos_ += sizeof(T);
    return Status::Ok();
  }
  // u16 length, then that many bytes; CTranslate2 writes a trailing 0, which is dropped.
  Status String(std::string* s, const char* what) {
    uint16_t n = 0;
    MTLITE_RETURN_IF_ERROR(Get(&n, what));
    MTLITE_RETURN_IF_ERROR(Need(n, what));
    s->assign(b_.data() + pos_, n);
    pos_ += n;
    const size_t nul = s->find('\0');
    if (nul != std::string::npos) {
      if (nul + 1 != s->size()) return Reject(name_ + ": " + what + " at byte " + std::to_string(pos_ - n) + " has a 0 byte inside");
      s->pop_back();
    }
    if (s->empty()) return Reject(name_ + ": empty " + what + " at byte " + std::to_string(pos_ - n));
    return Status::Ok();
  }
  void Skip(uint64_t n) { pos_ += n; }

 private:
  const std::string& b_;
  const std::string& name_;
  uint64_t pos_ = 0;
};

std::string Join(const std::string& dir, const std::string& file) {
  return dir.empty() || dir.back() == '/' ? dir + file : dir + "/" + file;
}

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

const char* Ct2DTypeName(Ct2DType t) {
  switch (t) {
    case Ct2DType::kFloat32: return "float32";
    case Ct2DType::kInt8: return "int8";
    case Ct2DType::kInt16: return "int16";
    case Ct2DType::kInt32: return "int32";
    case Ct2DType::kFloat16: return "float16";
    case Ct2DType::kBFloat16: return "bfloat16";
  }
  return "?";
}

int64_t Ct2ModelBin::Variable::Elements() const {
  // A zero dimension first: Parse accepts [4294967295, 4294967295, 0] (no bytes), whose product
  // in order would overflow before the 0. Without one, Parse bounds n * item size == size <= file size.
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status Ct2ModelBin::Parse(std::string bytes, const std::string& name, Ct2ModelBin* out) {
  *out = Ct2ModelBin();
  out->name_ = name;
  out->bytes_ = std::move(bytes);
  Cursor c(out->bytes_, name);
  MTLITE_RETURN_IF_ERROR(c.Get(&out->binary_version_, "the binary version"));
  if (out->binary_version_ < 1 || out->binary_version_ > kMaxBinaryVersion) {
    return Status(StatusCode::kUnsupported, name + ": binary version " + std::to_string(out->binary_version_) +
                                                " is not supported (1 to " + std::to_string(kMaxBinaryVersion) +
                                                "; is this a CTranslate2 model.bin?)");
  }
  if (out->binary_version_ >= 2) {
    MTLITE_RETURN_IF_ERROR(c.String(&out->spec_, "the spec name"));
    MTLITE_RETURN_IF_ERROR(c.Get(&out->spec_revision_, "the spec revision"));
  } else {
    out->spec_revision_ = 1;
  }
  uint32_t count = 0;
  MTLITE_RETURN_IF_ERROR(c.Get(&count, "the variable count"));
  // Every variable takes at least 2 + 1 + 1 + 4 + 1 bytes: a count beyond that is a damaged file.
  if (uint64_t(count) * 9 > c.left()) return Reject(name + ": variable count " + std::to_string(count) + " exceeds the file");
  for (uint32_t i = 0; i < count; ++i) {
    std::string vname;
    MTLITE_RETURN_IF_ERROR(c.String(&vname, "a variable name"));
    uint8_t rank = 0;
    MTLITE_RETURN_IF_ERROR(c.Get(&rank, "a rank"));
    if (rank > kMaxRank) return Reject(name + ": variable '" + vname + "' has rank " + std::to_string(rank) + " (at most 8)");
    Variable v;
    uint64_t elements = 1;
    for (int r = 0; r < rank; ++r) {
      uint32_t d = 0;
      MTLITE_RETURN_IF_ERROR(c.Get(&d, "a dimension"));
      v.shape.push_back(d);
      // a product beyond the file size cannot match its byte count: saturate it there (no overflow)
      const uint64_t cap = out->bytes_.size() + 1;
      elements = d != 0 && elements > cap / d ? cap : elements * d;
    }
    uint32_t n = 0;
    if (out->binary_version_ >= 4) {
      uint8_t id = 0;
      MTLITE_RETURN_IF_ERROR(c.Get(&id, "a dtype"));
      if (id > uint8_t(Ct2DType::kBFloat16)) {
        return Status(StatusCode::kUnsupported, name + ": variable '" + vname + "' has dtype id " + std::to_string(id) +
                                                    " (supported: 0 float32, 1 int8, 2 int16, 3 int32, 4 float16, 5 bfloat16)");
      }
      v.dtype = Ct2DType(id);
      MTLITE_RETURN_IF_ERROR(c.Get(&n, "a byte count"));
      v.size = n;
    } else {
      uint8_t item = 0;
      MTLITE_RETURN_IF_ERROR(c.Get(&item, "an item size"));
      if (item == 4) v.dtype = Ct2DType::kFloat32;
      else if (item == 2) v.dtype = Ct2DType::kInt16;
      else if (item == 1) v.dtype = Ct2DType::kInt8;
      else return Reject(name + ": variable '" + vname + "' has item size " + std::to_string(item) + " (1, 2 or 4)");
      MTLITE_RETURN_IF_ERROR(c.Get(&n, "an item count"));
      v.size = uint64_t(n) * item;
    }
    if (elements * uint64_t(ItemSize(v.dtype)) != v.size) {
      return Reject(name + ": variable '" + vname + "' has " + std::to_string(v.size) + " bytes, its shape and dtype " +
                    Ct2DTypeName(v.dtype) + " need " + std::to_string(elements * uint64_t(ItemSize(v.dtype))));
    }
    MTLITE_RETURN_IF_ERROR(c.Need(v.size, ("the data of '" + vname + "'").c_str()));
    v.offset = c.pos();
    c.Skip(v.size);
    if (!out->variables_.emplace(vname, std::move(v)).second) return Reject(name + ": variable '" + vname + "' is defined twice");
  }
  if (out->binary_version_ >= 3) {
    uint32_t aliases = 0;
    MTLITE_RETURN_IF_ERROR(c.Get(&aliases, "the alias count"));
    if (uint64_t(aliases) * 6 > c.left()) return Reject(name + ": alias count " + std::to_string(aliases) + " exceeds the file");
    for (uint32_t i = 0; i < aliases; ++i) {
      std::string alias, target;
      MTLITE_RETURN_IF_ERROR(c.String(&alias, "an alias"));
      MTLITE_RETURN_IF_ERROR(c.String(&target, "an alias target"));
      // CTranslate2 ignores an alias of a missing variable; so does this reader (Find: absent)
      if (out->variables_.count(alias)) return Reject(name + ": alias '" + alias + "' is also a variable");
      if (!out->variables_.count(target)) continue;
      if (!out->aliases_.emplace(alias, target).second) return Reject(name + ": alias '" + alias + "' is defined twice");
    }
  }
  if (c.left() != 0) return Reject(name + ": " + std::to_string(c.left()) + " bytes after the last entry");
  return Status::Ok();
}

std::string Ct2ModelBin::Resolve(const std::string& name) const {
  auto a = aliases_.find(name);
  return a == aliases_.end() ? name : a->second;
}

const Ct2ModelBin::Variable* Ct2ModelBin::Find(const std::string& name) const {
  auto it = variables_.find(Resolve(name));
  return it == variables_.end() ? nullptr : &it->second;
}

bool Ct2ModelBin::SameVariable(const std::string& a, const std::string& b) const {
  return Has(a) && Has(b) && Resolve(a) == Resolve(b);
}

Status Ct2ModelBin::ReadF32(const std::string& vname, std::vector<float>* out) const {
  const Variable* v = Find(vname);
  if (!v) return Reject(name_ + ": missing variable '" + vname + "'");
  const int64_t n = v->Elements();
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes_.data()) + v->offset;
  out->resize(size_t(n));
  switch (v->dtype) {
    case Ct2DType::kFloat32:
      if (n > 0) std::memcpy(out->data(), p, size_t(n) * 4);  // an empty vector's data() may be null
      break;
    case Ct2DType::kFloat16:
    case Ct2DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        (*out)[size_t(i)] = v->dtype == Ct2DType::kFloat16 ? layout::F16ToF32(h) : layout::Bf16ToF32(h);
      }
      break;
    case Ct2DType::kInt32:
      for (int64_t i = 0; i < n; ++i) {
        int32_t x;
        std::memcpy(&x, p + 4 * i, 4);
        (*out)[size_t(i)] = float(x);
      }
      break;
    case Ct2DType::kInt8:
    case Ct2DType::kInt16: {
      // w = q / scale: one scale per row (int8 weights) or one for the tensor (int16)
      const std::string scale_name = vname + "_scale";
      std::vector<float> scale;
      const Variable* s = Find(scale_name);
      if (!s) return Reject(name_ + ": " + Ct2DTypeName(v->dtype) + " variable '" + vname + "' has no '" + scale_name + "'");
      if (s->dtype == Ct2DType::kInt8 || s->dtype == Ct2DType::kInt16)
        return Reject(name_ + ": '" + scale_name + "' is not a float");
      MTLITE_RETURN_IF_ERROR(ReadF32(scale_name, &scale));
      const int64_t rows = v->shape.empty() ? 1 : v->shape[0];
      const bool per_row = scale.size() != 1 || rows == 1;
      if (per_row && int64_t(scale.size()) != rows) {
        return Reject(name_ + ": '" + scale_name + "' has " + std::to_string(scale.size()) + " values for " +
                      std::to_string(rows) + " rows of '" + vname + "'");
      }
      const int64_t cols = rows > 0 ? n / rows : 0;
      for (int64_t i = 0; i < n; ++i) {
        float q;
        if (v->dtype == Ct2DType::kInt8) {
          q = float(int8_t(p[i]));
        } else {
          int16_t x;
          std::memcpy(&x, p + 2 * i, 2);
          q = float(x);
        }
        const float sc = scale[per_row ? size_t(i / cols) : 0];
        if (!(sc != 0) || !std::isfinite(sc)) return Reject(name_ + ": '" + scale_name + "' has a zero or non-finite scale");
        (*out)[size_t(i)] = q / sc;
      }
      break;
    }
  }
  for (float x : *out)
    if (!std::isfinite(x)) return Reject(name_ + ": variable '" + vname + "' contains NaN or infinite values");
  return Status::Ok();
}

Status Ct2ModelBin::ReadInt(const std::string& vname, int64_t* out) const {
  const Variable* v = Find(vname);
  if (!v) return Reject(name_ + ": missing variable '" + vname + "'");
  if (v->Elements() != 1) return Reject(name_ + ": variable '" + vname + "' is not a scalar");
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes_.data()) + v->offset;
  switch (v->dtype) {
    case Ct2DType::kInt8: *out = int8_t(p[0]); return Status::Ok();
    case Ct2DType::kInt16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      *out = x;
      return Status::Ok();
    }
    case Ct2DType::kInt32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      *out = x;
      return Status::Ok();
    }
    case Ct2DType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      if (!std::isfinite(f) || f != std::floor(f) || std::fabs(f) > 1e9f)
        return Reject(name_ + ": variable '" + vname + "' is not an integer");
      *out = int64_t(f);
      return Status::Ok();
    }
    default: return Reject(name_ + ": variable '" + vname + "' has dtype " + Ct2DTypeName(v->dtype) + " (an integer expected)");
  }
}

Status Ct2ModelBin::FlagOr(const std::string& vname, bool def, bool* out) const {
  if (!Has(vname)) {
    *out = def;
    return Status::Ok();
  }
  int64_t v = 0;
  MTLITE_RETURN_IF_ERROR(ReadInt(vname, &v));
  if (v != 0 && v != 1) return Reject(name_ + ": flag '" + vname + "' is " + std::to_string(v) + " (0 or 1)");
  *out = v != 0;
  return Status::Ok();
}

Ct2Files Ct2DirectoryFiles(const std::string& dir) {
  Ct2Files f;
  f.where = dir;
  f.exists = [dir](const std::string& file) { return FileExists(Join(dir, file)); };
  f.read = [dir](const std::string& file, std::string* bytes) { return ReadFile(Join(dir, file), bytes); };
  return f;
}

Status ParseCt2Vocabulary(const std::string& bytes, bool json, const std::string& name, std::vector<std::string>* out) {
  out->clear();
  if (json) {
    const nlohmann::json j = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_array()) return Reject(name + ": not a JSON list of tokens");
    out->reserve(j.size());
    for (const auto& t : j) {
      if (!t.is_string()) return Reject(name + ": entry " + std::to_string(out->size()) + " is not a string");
      out->push_back(t.get<std::string>());
    }
  } else {
    size_t start = 0;
    while (start < bytes.size()) {
      size_t end = bytes.find('\n', start);
      if (end == std::string::npos) end = bytes.size();
      std::string line = bytes.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      out->push_back(std::move(line));
      start = end + 1;
    }
  }
  if (out->empty()) return Reject(name + ": no tokens");
  for (size_t i = 0; i < out->size(); ++i)
    if ((*out)[i].empty()) return Reject(name + ": token " + std::to_string(i) + " is empty");
  return Status::Ok();
}

namespace {

// The first of base.json, base.txt that exists; empty if neither.
std::string FindVocabulary(const Ct2Files& files, const std::string& base) {
  for (const char* ext : {".json", ".txt"})
    if (files.exists(base + ext)) return base + ext;
  return "";
}

Status ReadVocabulary(const Ct2Files& files, const std::string& file, std::vector<std::string>* out) {
  std::string bytes;
  MTLITE_RETURN_IF_ERROR(files.read(file, &bytes));
  return ParseCt2Vocabulary(bytes, EndsWith(file, ".json"), file, out);
}

}  // namespace

bool IsCt2Model(const Ct2Files& files) {
  return files.exists("model.bin") &&
         (!FindVocabulary(files, "shared_vocabulary").empty() || !FindVocabulary(files, "source_vocabulary").empty());
}

Status LoadCt2Model(const Ct2Files& files, Ct2Model* out) {
  *out = Ct2Model();
  if (!files.exists("model.bin")) return Reject("model.bin: missing from " + files.where);
  std::string bytes;
  MTLITE_RETURN_IF_ERROR(files.read("model.bin", &bytes));
  MTLITE_RETURN_IF_ERROR(Ct2ModelBin::Parse(std::move(bytes), "model.bin", &out->bin));
  out->config_json = "{}";
  if (files.exists("config.json")) MTLITE_RETURN_IF_ERROR(files.read("config.json", &out->config_json));

  const std::string shared = FindVocabulary(files, "shared_vocabulary");
  if (!shared.empty()) {
    out->shared_vocab = true;
    out->source_vocab_file = out->target_vocab_file = shared;
    MTLITE_RETURN_IF_ERROR(ReadVocabulary(files, shared, &out->source_vocab));
    out->target_vocab = out->source_vocab;
    return Status::Ok();
  }
  out->source_vocab_file = FindVocabulary(files, "source_vocabulary");
  out->target_vocab_file = FindVocabulary(files, "target_vocabulary");
  if (out->source_vocab_file.empty() || out->target_vocab_file.empty()) {
    return Reject(files.where + ": no vocabulary (shared_vocabulary.json/.txt, or source_vocabulary and "
                                "target_vocabulary .json/.txt)");
  }
  MTLITE_RETURN_IF_ERROR(ReadVocabulary(files, out->source_vocab_file, &out->source_vocab));
  MTLITE_RETURN_IF_ERROR(ReadVocabulary(files, out->target_vocab_file, &out->target_vocab));
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite
