// Reader of CTranslate2 model directories: model.bin (binary versions 1-6), config.json and the
// vocabularies (shared_vocabulary, or source_vocabulary + target_vocabulary; .json or .txt).
//
// model.bin, little-endian:
//   u32 binary_version
//   version >= 2: str spec name, u32 spec revision          (str = u16 length, bytes, the last one 0)
//   u32 variable count, per variable:
//     str name, u8 rank, u32 dims[rank],
//     version >= 4: u8 dtype id, u32 byte count; else: u8 item size, u32 item count
//     the bytes
//   version >= 3: u32 alias count, per alias: str alias, str variable name
// dtype ids: 0 float32, 1 int8, 2 int16, 3 int32, 4 float16, 5 bfloat16 (item sizes of version < 4:
// 4 float32, 2 int16, 1 int8). A quantized "X" (int8 or int16) has its scale in "X_scale":
// float32 [rows] (int8, per row) or a float32 scalar (int16); the value is q / scale.
//
// Every size is checked against the bytes before it is used, so a crafted file is an error,
// never a crash or a large allocation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

enum class Ct2DType : uint8_t { kFloat32 = 0, kInt8 = 1, kInt16 = 2, kInt32 = 3, kFloat16 = 4, kBFloat16 = 5 };
const char* Ct2DTypeName(Ct2DType t);

class Ct2ModelBin {
 public:
  struct Variable {
    Ct2DType dtype = Ct2DType::kFloat32;
    std::vector<int64_t> shape;  // rank 0: a scalar
    uint64_t offset = 0, size = 0;  // into bytes()
    int64_t Elements() const;
  };

  // Parses and validates the whole file (`name` starts the messages).
  static Status Parse(std::string bytes, const std::string& name, Ct2ModelBin* out);

  uint32_t binary_version() const { return binary_version_; }
  const std::string& spec() const { return spec_; }  // empty for binary version 1
  uint32_t spec_revision() const { return spec_revision_; }

  // A variable by name or alias; nullptr if absent.
  const Variable* Find(const std::string& name) const;
  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  // The stored name a name or alias resolves to (the name itself if it is no alias).
  std::string Resolve(const std::string& name) const;
  // True when both names are (aliases of) the same stored variable.
  bool SameVariable(const std::string& a, const std::string& b) const;

  // The values as float32: float16/bfloat16 converted, int8/int16 divided by NAME_scale (per row
  // for a [rows]-shaped scale, else the scalar), int32 converted. Checks every value is finite.
  Status ReadF32(const std::string& name, std::vector<float>* out) const;
  // A scalar (rank 0 or one element) of an integer dtype (int8, int16, int32) or float32.
  Status ReadInt(const std::string& name, int64_t* out) const;
  // A scalar flag: absent -> def.
  Status FlagOr(const std::string& name, bool def, bool* out) const;

  const std::map<std::string, Variable>& variables() const { return variables_; }
  const std::map<std::string, std::string>& aliases() const { return aliases_; }
  const std::string& bytes() const { return bytes_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_, bytes_, spec_;
  uint32_t binary_version_ = 0, spec_revision_ = 0;
  std::map<std::string, Variable> variables_;
  std::map<std::string, std::string> aliases_;  // alias -> stored name
};

// Where the files of a model come from: a directory, or a package (zip) member prefix.
// Read returns false when the file does not exist (and sets nothing); an error is a Status.
struct Ct2Files {
  std::string where;  // for messages: the directory or "package.argosmodel:prefix/"
  std::function<bool(const std::string& file)> exists;
  std::function<Status(const std::string& file, std::string* bytes)> read;
};
Ct2Files Ct2DirectoryFiles(const std::string& dir);

// A CTranslate2 vocabulary: .json (a JSON list of strings) or .txt (one token per line, "\r\n"
// accepted). Duplicates are allowed (CTranslate2 keeps the first id of a token).
Status ParseCt2Vocabulary(const std::string& bytes, bool json, const std::string& name, std::vector<std::string>* out);

struct Ct2Model {
  Ct2ModelBin bin;
  std::string config_json;  // the text of config.json ("{}" when absent)
  std::vector<std::string> source_vocab, target_vocab;
  bool shared_vocab = false;
  std::string source_vocab_file, target_vocab_file;  // the files read
};

// True when `files` hold a CTranslate2 model: model.bin and a vocabulary file.
bool IsCt2Model(const Ct2Files& files);

// Reads model.bin, config.json (optional) and the vocabularies.
Status LoadCt2Model(const Ct2Files& files, Ct2Model* out);

}  // namespace converter
}  // namespace mtlite
