// libFuzzer target: a CTranslate2 model (converter/ct2_model.*, converter/ct2_convert.*) on
// arbitrary bytes, through the functions `mtlite convert DIR` and `mtlite convert X.argosmodel`
// use, in memory (no file is read or written).
//
// Input: one mode byte, then parts separated by "\n@@\n". Mode bits 0-1 pick the layout:
//   0 model.bin | config.json | shared_vocabulary.json | spm [| target spm]
//   1 the same with shared_vocabulary.txt
//   2 model.bin | config.json | source_vocabulary | target_vocabulary | spm [| target spm]
//     (bit 4: the vocabularies as .txt, else .json)
//   3 the rest (no parts) is an Argos package: a zip with DIR/metadata.json (or metadata.json at the
//     top), DIR/model/{model.bin, config.json, vocabularies} and DIR/sentencepiece.model
// Mode bits 2-3 pick the quantization (int8, fp16, fp32, int8). An empty config.json part is an
// absent config.json; missing spm parts stop after LoadCt2Model.
//
// The model.bin part goes through Ct2ModelBin::Parse on its own, every variable through ReadF32
// (and ReadInt for scalars); the files through LoadCt2Model (model.bin, the config text,
// ParseCt2Vocabulary), then ConvertCt2Model (the spec's mapping, the config's tokens, the
// SentencePiece models, ConvertHfTensors) and SpecToBytes (the serialised model and its
// self-check). The package path opens the zip with ZipReader and reads
// the members through a Ct2Files over it, as the converter does; the metadata.json checks of
// ConvertCt2Input read a file, so that part is not covered here (the zip target fuzzes the reader).
//
// Properties: no crash, hang or sanitizer report; every rejection has a message; an accepted
// model.bin's variables lie inside the file and hold as many bytes as shape x dtype; ReadF32 gives
// Elements() values; an accepted conversion has the vocabulary sizes of the files; allocation stays
// within 64 x the input + 8 MiB (a package: + 64 x its members' uncompressed bytes).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "alloc_meter.h"
#include "ct2_convert.h"
#include "ct2_model.h"
#include "fuzz_util.h"
#include "hf_convert.h"
#include "zip_reader.h"

namespace {

using namespace mtlite;

const char kSeparator[] = "\n@@\n";

std::vector<std::string> SplitParts(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(kSeparator, start);
    if (at == std::string::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + sizeof(kSeparator) - 1;
  }
}

void CheckStatus(const std::string& input, const Status& s, const char* what) {
  if (!s.ok() && s.message().empty()) fuzz::Fail(input, "%s: rejection without a message", what);
}

int ItemSize(converter::Ct2DType t) {
  switch (t) {
    case converter::Ct2DType::kInt8: return 1;
    case converter::Ct2DType::kInt16:
    case converter::Ct2DType::kFloat16:
    case converter::Ct2DType::kBFloat16: return 2;
    default: return 4;
  }
}

// The properties of an accepted model.bin, and every variable read as floats / integers.
void CheckModelBin(const std::string& input, const converter::Ct2ModelBin& bin) {
  const uint64_t file = bin.bytes().size();
  for (const auto& [name, v] : bin.variables()) {
    if (v.offset > file || v.size > file - v.offset)
      fuzz::Fail(input, "variable %s: bytes [%llu, +%llu) outside the %llu-byte file", name.c_str(),
                 static_cast<unsigned long long>(v.offset), static_cast<unsigned long long>(v.size),
                 static_cast<unsigned long long>(file));
    const int64_t n = v.Elements();
    if (n < 0 || uint64_t(n) * uint64_t(ItemSize(v.dtype)) != v.size)
      fuzz::Fail(input, "variable %s: %lld elements of %s in %llu bytes", name.c_str(), static_cast<long long>(n),
                 converter::Ct2DTypeName(v.dtype), static_cast<unsigned long long>(v.size));
    std::vector<float> f;
    Status s = bin.ReadF32(name, &f);
    CheckStatus(input, s, "Ct2ModelBin::ReadF32");
    if (s.ok() && int64_t(f.size()) != n)
      fuzz::Fail(input, "variable %s: ReadF32 gave %zu values for %lld elements", name.c_str(), f.size(),
                 static_cast<long long>(n));
    if (n == 1) {
      int64_t x = 0;
      CheckStatus(input, bin.ReadInt(name, &x), "Ct2ModelBin::ReadInt");
    }
  }
  for (const auto& [alias, target] : bin.aliases()) {
    if (!bin.variables().count(target)) fuzz::Fail(input, "alias %s names no variable", alias.c_str());
    if (bin.Find(alias) == nullptr) fuzz::Fail(input, "alias %s: Find gives nothing", alias.c_str());
  }
}

// A Ct2Files over named in-memory parts.
converter::Ct2Files MemoryFiles(const std::map<std::string, std::string>* files) {
  converter::Ct2Files f;
  f.where = "(memory)";
  f.exists = [files](const std::string& file) { return files->count(file) != 0; };
  f.read = [files](const std::string& file, std::string* bytes) {
    auto it = files->find(file);
    if (it == files->end()) return Status(StatusCode::kInvalidModel, "(memory): no " + file);
    *bytes = it->second;
    return Status::Ok();
  };
  return f;
}

// A Ct2Files over the members DIR/PREFIX... of an open zip.
converter::Ct2Files ZipFiles(const converter::ZipReader* zip, const std::string& prefix) {
  converter::Ct2Files f;
  f.where = "package.argosmodel:" + prefix;
  f.exists = [zip, prefix](const std::string& file) { return zip->Find(prefix + file) != nullptr; };
  f.read = [zip, prefix](const std::string& file, std::string* bytes) {
    const converter::ZipEntry* e = zip->Find(prefix + file);
    if (!e) return Status(StatusCode::kInvalidModel, "package.argosmodel: no " + prefix + file);
    return zip->Read(*e, bytes);
  };
  return f;
}

// LoadCt2Model, then (with SentencePiece models) ConvertCt2Model and SpecToBytes.
void LoadAndConvert(const std::string& input, const converter::Ct2Files& files, const std::vector<std::string>& spms,
                    converter::Quantization q, bool check_bin) {
  converter::Ct2Model model;
  Status s = converter::LoadCt2Model(files, &model);
  CheckStatus(input, s, "LoadCt2Model");
  if (!s.ok()) return;
  if (check_bin) CheckModelBin(input, model.bin);
  if (model.source_vocab.empty() || model.target_vocab.empty()) fuzz::Fail(input, "an accepted vocabulary is empty");
  for (const std::string& t : model.source_vocab)
    if (t.empty()) fuzz::Fail(input, "an accepted vocabulary has an empty token");
  if (spms.empty()) return;
  std::vector<std::string> names;
  for (size_t i = 0; i < spms.size(); ++i) names.push_back(i == 0 ? "source.spm" : "target.spm");
  converter::ConvertOptions options;
  options.quantize = q;
  converter::ModelSpec spec;
  converter::ConversionReport report;
  s = converter::ConvertCt2Model(model, spms, names, options, &spec, &report);
  CheckStatus(input, s, "ConvertCt2Model");
  if (!s.ok()) return;
  if (spec.config.source_vocab_size != int64_t(model.source_vocab.size()) ||
      spec.config.target_vocab_size != int64_t(model.target_vocab.size()))
    fuzz::Fail(input, "converted vocabulary sizes %lld/%lld, the files have %zu/%zu",
               static_cast<long long>(spec.config.source_vocab_size),
               static_cast<long long>(spec.config.target_vocab_size), model.source_vocab.size(),
               model.target_vocab.size());
  converter::AlignedBytes out;
  CheckStatus(input, converter::SpecToBytes(spec, &out, &report), "SpecToBytes");
}

// Returns the members' uncompressed bytes (what the conversion reads; the zip reader bounds them).
uint64_t RunPackage(const std::string& input, const std::string& archive, converter::Quantization q) {
  converter::ZipReader zip;
  Status s = converter::ZipReader::Open(std::string_view(archive), "package.argosmodel", &zip);
  CheckStatus(input, s, "ZipReader::Open");
  if (!s.ok()) return 0;
  uint64_t unpacked = 0;
  for (const converter::ZipEntry& e : zip.entries()) unpacked += e.size;
  // The package's directory: the one holding metadata.json (at the top or one level down).
  std::string root;
  bool found = false;
  for (const converter::ZipEntry& e : zip.entries()) {
    const size_t slash = e.name.find('/');
    if (e.name == "metadata.json" ||
        (slash != std::string::npos && e.name.compare(slash + 1, std::string::npos, "metadata.json") == 0)) {
      root = e.name.substr(0, e.name.size() - 13);
      found = true;
      break;
    }
  }
  if (!found) return unpacked;
  std::vector<std::string> spms;
  if (const converter::ZipEntry* e = zip.Find(root + "sentencepiece.model")) {
    std::string spm;
    s = zip.Read(*e, &spm);
    CheckStatus(input, s, "ZipReader::Read");
    if (s.ok()) spms.push_back(std::move(spm));
  }
  const converter::Ct2Files files = ZipFiles(&zip, root + "model/");
  (void)converter::IsCt2Model(files);
  LoadAndConvert(input, files, spms, q, /*check_bin=*/true);
  return unpacked;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const uint8_t mode = uint8_t(bytes[0]);
  const int quant = (mode >> 2) & 3;
  const converter::Quantization q = quant == 1   ? converter::Quantization::kFp16
                                    : quant == 2 ? converter::Quantization::kFp32
                                                 : converter::Quantization::kInt8;
  uint64_t unpacked = 0;
  fuzz::AllocMeter meter;
  {
    const std::string rest = bytes.substr(1);
    if ((mode & 3) == 3) {
      unpacked = RunPackage(bytes, rest, q);
    } else {
      std::vector<std::string> parts = SplitParts(rest);
      {  // model.bin on its own (also when the other files would stop LoadCt2Model first)
        converter::Ct2ModelBin bin;
        Status s = converter::Ct2ModelBin::Parse(parts[0], "model.bin", &bin);
        CheckStatus(bytes, s, "Ct2ModelBin::Parse");
        if (s.ok()) CheckModelBin(bytes, bin);
      }
      std::map<std::string, std::string> files;
      size_t next = 0;
      auto take = [&](const std::string& file) {
        if (next < parts.size()) files[file] = std::move(parts[next]);
        ++next;
      };
      take("model.bin");
      if (next < parts.size() && parts[next].empty()) ++next;  // no config.json
      else take("config.json");
      if ((mode & 3) == 2) {
        const char* ext = (mode & 16) ? ".txt" : ".json";
        take(std::string("source_vocabulary") + ext);
        take(std::string("target_vocabulary") + ext);
      } else {
        take((mode & 3) == 1 ? "shared_vocabulary.txt" : "shared_vocabulary.json");
      }
      std::vector<std::string> spms;
      for (; next < parts.size() && spms.size() < 2; ++next) spms.push_back(std::move(parts[next]));
      const converter::Ct2Files f = MemoryFiles(&files);
      (void)converter::IsCt2Model(f);
      LoadAndConvert(bytes, f, spms, q, /*check_bin=*/false);
    }
  }
  // A package's members inflate up to the zip reader's ratio (the zip target bounds that step):
  // the conversion is bounded by what it reads, 64 x the members' bytes.
  meter.Check(bytes, 64, (uint64_t(8) << 20) + 64 * unpacked, "the CTranslate2 readers");
  return 0;
}
