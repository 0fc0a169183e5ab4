// Marian checkpoints: the .npz and .bin containers, the tensor checks and the mapping to HF
// MarianMT names (marian_checkpoint.h). The options are read in marian_options.cc.
#include "marian_checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include "io.h"
#include "status_macros.h"
#include "zip_reader.h"

namespace mtlite {
namespace converter {
namespace {

constexpr uint64_t kTypeInt8 = 0x0101, kTypeFloat32 = 0x0404, kTypeIntgemm8 = 0x4101;
constexpr const char kYamlItem[] = "special:model.yml";

Status Bad(const std::string& file, const std::string& what) {
  return Status(StatusCode::kInvalidModel, file + ": " + what);
}

uint64_t Le(std::string_view b, uint64_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | uint8_t(b[size_t(at) + size_t(i)]);
  return v;
}

float LeF32(std::string_view b, uint64_t at) {
  const uint32_t u = uint32_t(Le(b, at, 4));
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ShapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Element count of a shape; false on a negative dimension or beyond `limit`.
bool Elements(const std::vector<int64_t>& shape, uint64_t limit, uint64_t* n) {
  uint64_t e = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && e > limit / uint64_t(d))) return false;
    e *= uint64_t(d);
  }
  *n = e;
  return e <= limit;
}

constexpr const char kActivationMultiplier[] = "_QuantMultA";

bool IsActivationMultiplier(const std::string& name) {
  const size_t k = sizeof(kActivationMultiplier) - 1;
  return name.size() > k && name.compare(name.size() - k, k, kActivationMultiplier) == 0;
}

// One raw item of either container before it becomes a tensor.
struct RawItem {
  std::string name;
  enum Kind { kFloat32, kBytes, kIntgemm8 } kind = kFloat32;
  std::vector<int64_t> shape;
  std::string_view src;                 // the bytes holding the data: the file, or an inflated entry
  std::shared_ptr<const std::string> owned;  // an inflated .npz entry (src's storage), else empty
  uint64_t offset = 0, size = 0;        // data in src
};

Status ToTensor(const std::string& file, const RawItem& it, MarianTensor* t) {
  const std::string_view bytes = it.src;
  uint64_t n = 0;
  if (!Elements(it.shape, bytes.size(), &n)) {
    return Bad(file, it.name + ": shape " + ShapeString(it.shape) + " larger than the file");
  }
  t->shape = it.shape;
  t->values.resize(size_t(n));
  if (it.kind == RawItem::kFloat32) {
    if (it.size < n * 4) return Bad(file, it.name + ": " + std::to_string(it.size) + " data bytes for " + std::to_string(n) + " float32 values");
    for (uint64_t i = 0; i < n; ++i) t->values[size_t(i)] = LeF32(bytes, it.offset + 4 * i);
  } else {  // intgemm8: int8 of the transposed matrix, then the float32 multiplier
    if (it.shape.size() != 2) return Bad(file, it.name + ": intgemm8 item of shape " + ShapeString(it.shape) + " (2-D expected)");
    if (it.size < n + 4) return Bad(file, it.name + ": " + std::to_string(it.size) + " data bytes for " + std::to_string(n) + " int8 values and their multiplier");
    const float mult = LeF32(bytes, it.offset + n);
    if (!std::isfinite(mult) || mult <= 0) return Bad(file, it.name + ": intgemm8 multiplier " + std::to_string(mult) + " (must be finite and > 0)");
    const uint64_t rows = uint64_t(it.shape[0]), cols = uint64_t(it.shape[1]);
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t c = 0; c < cols; ++c) {
        t->values[size_t(r * cols + c)] = float(int8_t(uint8_t(bytes[size_t(it.offset + c * rows + r)]))) / mult;
      }
    }
    t->quant_mult = mult;
  }
  for (float v : t->values) {
    if (!std::isfinite(v)) return Bad(file, it.name + ": non-finite value");
  }
  return Status::Ok();
}

// ---- Marian binary ----------------------------------------------------------------------------

Status ReadBin(const std::string& file, const std::string& b, std::vector<RawItem>* items) {
  const uint64_t size = b.size();
  if (size < 16) return Bad(file, "too small for a Marian binary header");
  if (Le(b, 0, 8) != 1) return Bad(file, "Marian binary version " + std::to_string(Le(b, 0, 8)) + " (1 expected)");
  const uint64_t count = Le(b, 8, 8);
  if (count == 0 || count > (size - 16) / 32) return Bad(file, "item count " + std::to_string(count) + " does not fit the file");
  struct Header { uint64_t name_len, type, shape_len, data_len; };
  std::vector<Header> h(static_cast<size_t>(count));
  uint64_t at = 16;
  for (Header& x : h) {
    x = {Le(b, at, 8), Le(b, at + 8, 8), Le(b, at + 16, 8), Le(b, at + 24, 8)};
    at += 32;
  }
  items->assign(size_t(count), RawItem());
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t len = h[size_t(i)].name_len;
    if (len == 0 || len > size - at) return Bad(file, "item " + std::to_string(i) + ": name length " + std::to_string(len) + " beyond the file");
    if (b[size_t(at + len - 1)] != '\0' || std::memchr(b.data() + at, '\0', size_t(len - 1))) {
      return Bad(file, "item " + std::to_string(i) + ": name is not one NUL-terminated string");
    }
    (*items)[size_t(i)].name = b.substr(size_t(at), size_t(len - 1));
    at += len;
  }
  for (uint64_t i = 0; i < count; ++i) {
    RawItem& it = (*items)[size_t(i)];
    const uint64_t dims = h[size_t(i)].shape_len;
    if (dims > 8 || dims * 4 > size - at) return Bad(file, it.name + ": shape length " + std::to_string(dims) + " unsupported or beyond the file");
    for (uint64_t d = 0; d < dims; ++d) {
      const int32_t v = int32_t(uint32_t(Le(b, at, 4)));
      if (v < 0) return Bad(file, it.name + ": negative dimension " + std::to_string(v));
      it.shape.push_back(v);
      at += 4;
    }
  }
  if (size - at < 8) return Bad(file, "truncated before the padding count");
  const uint64_t pad = Le(b, at, 8);
  at += 8;
  if (pad > size - at) return Bad(file, "padding " + std::to_string(pad) + " beyond the file");
  at += pad;
  for (uint64_t i = 0; i < count; ++i) {
    RawItem& it = (*items)[size_t(i)];
    const Header& x = h[size_t(i)];
    if (x.data_len > size - at) {
      return Bad(file, it.name + ": data (" + std::to_string(x.data_len) + " bytes at " + std::to_string(at) + ") beyond the file size " + std::to_string(size));
    }
    it.src = b;
    it.offset = at;
    it.size = x.data_len;
    at += x.data_len;
    if (x.type == kTypeFloat32) it.kind = RawItem::kFloat32;
    else if (x.type == kTypeIntgemm8) it.kind = RawItem::kIntgemm8;
    else if (x.type == kTypeInt8 && it.name.rfind("special:", 0) == 0) it.kind = RawItem::kBytes;
    else return Status(StatusCode::kUnsupported, file + ": " + it.name + ": item type " + Hex(x.type) + " (supported: float32 0x404, intgemm8 0x4101; int8 0x101 for special: items)");
  }
  return Status::Ok();
}

// ---- numpy .npz ---------------------------------------------------------------------------------

// Reads one `.npy` entry (data at [off, off + len) of `b`).
Status ReadNpy(const std::string& file, std::string_view b, uint64_t off, uint64_t len, RawItem* it) {
  const std::string where = file + ": " + it->name;
  if (len < 10 || std::memcmp(b.data() + off, "\x93NUMPY", 6) != 0) return Bad(where, "not a .npy entry");
  const int major = uint8_t(b[size_t(off + 6)]);
  const uint64_t hlen_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3) return Bad(where, ".npy version " + std::to_string(major));
  if (len < 8 + hlen_bytes) return Bad(where, "truncated .npy header");
  const uint64_t hlen = Le(b, off + 8, int(hlen_bytes));
  const uint64_t data = 8 + hlen_bytes + hlen;
  if (hlen > len || data > len) return Bad(where, ".npy header length beyond the entry");
  const std::string header(b.substr(size_t(off + 8 + hlen_bytes), size_t(hlen)));
  auto value_of = [&](const char* key) -> std::string {
    const size_t k = header.find(key);
    if (k == std::string::npos) return "";
    size_t v = header.find(':', k + std::strlen(key));
    if (v == std::string::npos) return "";
    ++v;
    while (v < header.size() && header[v] == ' ') ++v;
    const char open = v < header.size() ? header[v] : 0;
    const char close = open == '(' ? ')' : (open == '\'' || open == '"') ? open : ',';
    const size_t e = header.find(close, v + 1);
    if (e == std::string::npos) return "";
    return header.substr(v, e - v + (close == ',' ? 0 : 1));
  };
  const std::string descr = value_of("'descr'"), order = value_of("'fortran_order'"), shape = value_of("'shape'");
  if (descr.empty() || shape.empty() || shape[0] != '(') return Bad(where, ".npy header without descr/shape: " + header);
  if (order.find("False") == std::string::npos) return Status(StatusCode::kUnsupported, where + ": Fortran-order .npy arrays are not supported");
  if (descr == "'<f4'") it->kind = RawItem::kFloat32;
  else if ((descr == "'|i1'" || descr == "'<i1'" || descr == "'|u1'" || descr == "'|S1'") && it->name.rfind("special:", 0) == 0) it->kind = RawItem::kBytes;
  else return Status(StatusCode::kUnsupported, where + ": dtype " + descr + " (float32 '<f4' expected)");
  for (size_t p = 1; p < shape.size() - 1;) {
    while (p < shape.size() - 1 && (shape[p] == ' ' || shape[p] == ',')) ++p;
    if (p >= shape.size() - 1) break;
    size_t e = p;
    int64_t d = 0;
    while (e < shape.size() - 1 && shape[e] >= '0' && shape[e] <= '9' && d < (int64_t(1) << 40)) d = d * 10 + (shape[e++] - '0');
    if (e == p || (shape[e] != ',' && shape[e] != ')' && shape[e] != ' ' && shape[e] != 'L')) return Bad(where, "bad .npy shape " + shape);
    it->shape.push_back(d);
    p = e + (shape[e] == 'L' ? 1 : 0);
  }
  it->offset = off + data;
  it->size = len - data;
  uint64_t n = 0;
  if (!Elements(it->shape, len, &n) || n * (it->kind == RawItem::kFloat32 ? 4 : 1) != it->size) {
    return Bad(where, "shape " + shape + " does not match the " + std::to_string(it->size) + " data bytes");
  }
  return Status::Ok();
}

// The most an .npz's entries may inflate to together: 16 times the archive, plus 1 MiB
// (np.savez_compressed of trained float32 weights inflates about 1.1 times; far more is a
// decompression bomb).
uint64_t NpzInflateBound(uint64_t archive_bytes) {
  return archive_bytes > (UINT64_MAX >> 6) ? UINT64_MAX : archive_bytes * 16 + (uint64_t(1) << 20);
}

Status ReadNpz(const std::string& file, const std::string& b, std::vector<RawItem>* items) {
  ZipLimits limits;
  limits.max_total_bytes = NpzInflateBound(b.size());
  ZipReader zip;
  MTLITE_RETURN_IF_ERROR(ZipReader::Open(b, file, &zip, limits));
  for (const ZipEntry& e : zip.entries()) {
    std::string name = e.name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".npy") != 0) return Bad(file, "zip entry '" + name + "' is not a .npy array");
    name.resize(name.size() - 4);
    RawItem it;
    it.name = name;
    if (e.method == 0) {
      std::string_view data;
      MTLITE_RETURN_IF_ERROR(zip.View(e, &data));
      it.src = b;
      MTLITE_RETURN_IF_ERROR(ReadNpy(file, b, uint64_t(data.data() - b.data()), data.size(), &it));
    } else {  // np.savez_compressed: inflated now, released once the item is decoded
      auto owned = std::make_shared<std::string>();
      MTLITE_RETURN_IF_ERROR(zip.Read(e, owned.get()));
      it.owned = owned;
      it.src = *owned;
      MTLITE_RETURN_IF_ERROR(ReadNpy(file, *owned, 0, owned->size(), &it));
    }
    items->push_back(std::move(it));
  }
  return Status::Ok();
}

// ---- tensors the transformer needs --------------------------------------------------------------

struct Need {
  std::string name;
  std::vector<int64_t> shape;
};

std::vector<Need> Needed(const MarianOptions& o) {
  const int64_t d = o.dim_emb;
  std::vector<Need> n;
  auto attention = [&](const std::string& p) {
    for (const char* m : {"q", "k", "v", "o"}) {
      n.push_back({p + "_W" + m, {d, d}});
      n.push_back({p + "_b" + m, {1, d}});
    }
    n.push_back({p + "_Wo_ln_scale", {1, d}});
    n.push_back({p + "_Wo_ln_bias", {1, d}});
  };
  auto ffn = [&](const std::string& p, int64_t f) {
    n.push_back({p + "_ffn_W1", {d, f}});
    n.push_back({p + "_ffn_b1", {1, f}});
    n.push_back({p + "_ffn_W2", {f, d}});
    n.push_back({p + "_ffn_b2", {1, d}});
    n.push_back({p + "_ffn_ffn_ln_scale", {1, d}});
    n.push_back({p + "_ffn_ffn_ln_bias", {1, d}});
  };
  for (int i = 1; i <= o.enc_depth; ++i) {
    attention("encoder_l" + std::to_string(i) + "_self");
    ffn("encoder_l" + std::to_string(i), o.dim_ffn);
  }
  for (int i = 1; i <= o.dec_depth; ++i) {
    if (o.decoder_ssru) {
      const std::string p = "decoder_l" + std::to_string(i) + "_rnn";
      n.push_back({p + "_W", {d, d}});
      n.push_back({p + "_Wf", {d, d}});
      n.push_back({p + "_bf", {1, d}});
      n.push_back({p + "_ffn_ln_scale", {1, d}});
      n.push_back({p + "_ffn_ln_bias", {1, d}});
    } else {
      attention("decoder_l" + std::to_string(i) + "_self");
    }
    attention("decoder_l" + std::to_string(i) + "_context");
    ffn("decoder_l" + std::to_string(i), o.dec_dim_ffn);
  }
  if (o.tying == MarianTying::kAll || o.tying == MarianTying::kSrc) {
    n.push_back({"Wemb", {o.src_vocab, d}});
  } else {
    n.push_back({"encoder_Wemb", {o.src_vocab, d}});
    n.push_back({"decoder_Wemb", {o.tgt_vocab, d}});
  }
  n.push_back({"decoder_ff_logit_out_b", {1, o.tgt_vocab}});
  return n;
}

bool SameShape(const std::vector<int64_t>& got, const std::vector<int64_t>& want) {
  if (got == want) return true;
  return want.size() == 2 && want[0] == 1 && got.size() == 1 && got[0] == want[1];  // [n] for [1, n]
}

Status CheckTensors(const std::string& file, const MarianCheckpoint& c) {
  const MarianOptions& o = c.options;
  std::vector<Need> need = Needed(o);
  const bool untied_out = o.tying == MarianTying::kSrc || o.tying == MarianTying::kUntied;
  if (untied_out) {
    const char* legacy = "decoder_ff_logit_out_W";
    if (c.tensors.count(legacy) && !c.tensors.count("decoder_ff_logit_out_Wt")) need.push_back({legacy, {o.dim_emb, o.tgt_vocab}});
    else need.push_back({"decoder_ff_logit_out_Wt", {o.tgt_vocab, o.dim_emb}});
  }
  std::map<std::string, bool> known;
  for (const Need& n : need) {
    known[n.name] = true;
    auto it = c.tensors.find(n.name);
    if (it == c.tensors.end()) {
      return Bad(file, "missing tensor " + n.name + " " + ShapeString(n.shape) + " (" + MarianTyingName(o.tying) + ")");
    }
    if (!SameShape(it->second.shape, n.shape)) {
      return Bad(file, n.name + ": shape " + ShapeString(it->second.shape) + ", expected " + ShapeString(n.shape) +
                           " from special:model.yml");
    }
  }
  std::string extra;
  int extras = 0;
  for (const auto& kv : c.tensors) {
    const std::string& n = kv.first;
    if (known.count(n)) continue;
    if (++extras <= 5) extra += (extra.empty() ? "" : ", ") + n;
  }
  if (extras) {
    return Status(StatusCode::kUnsupported, file + ": " + std::to_string(extras) + " tensor(s) this transformer does not use: " + extra +
                                                (extras > 5 ? ", ..." : "") + " (an unsupported option?)");
  }
  return Status::Ok();
}

}  // namespace

Status ParseMarianCheckpoint(const std::string& bytes, const std::string& name, MarianCheckpoint* out) {
  *out = MarianCheckpoint();
  std::vector<RawItem> items;
  if (bytes.size() >= 4 && Le(bytes, 0, 4) == 0x04034b50) {
    MTLITE_RETURN_IF_ERROR(ReadNpz(name, bytes, &items));
  } else if (bytes.size() >= 8 && Le(bytes, 0, 8) == 1) {
    MTLITE_RETURN_IF_ERROR(ReadBin(name, bytes, &items));
  } else {
    return Bad(name, "neither a numpy .npz archive nor a Marian binary model");
  }
  bool have_yaml = false;
  for (RawItem& it : items) {
    if (it.name == kYamlItem) {
      if (it.kind != RawItem::kBytes) {
        return Bad(name, it.name + ": item type " + (it.kind == RawItem::kFloat32 ? "float32" : "intgemm8") +
                             " (bytes, int8, expected)");
      }
      if (it.shape.size() != 1 || uint64_t(it.shape[0]) != it.size) {
        return Bad(name, it.name + ": shape " + ShapeString(it.shape) + " (a 1-D item of its " + std::to_string(it.size) +
                             " bytes expected)");
      }
      if (have_yaml) return Bad(name, "duplicate item " + it.name);
    }
    if (it.kind == RawItem::kBytes) {
      if (it.name != kYamlItem) continue;
      std::string text(it.src.substr(size_t(it.offset), size_t(it.size)));
      while (!text.empty() && text.back() == '\0') text.pop_back();
      out->yaml_text = std::move(text);
      have_yaml = true;
      continue;
    }
    // Activation multipliers for Marian's int8shiftAlphaAll (`<weight>_QuantMultA`, float32 [1];
    // marian-conv stores the ones whose name holds "Wemb" as intgemm8 scalars): mtlite quantizes
    // activations per row at run time, so they are skipped whatever their type.
    if (IsActivationMultiplier(it.name)) continue;
    if (out->tensors.count(it.name)) return Bad(name, "duplicate item " + it.name);
    MTLITE_RETURN_IF_ERROR(ToTensor(name, it, &out->tensors[it.name]));
    it.src = std::string_view();
    it.owned.reset();  // an inflated entry is no longer needed
  }
  if (!have_yaml) return Bad(name, std::string("no ") + kYamlItem + " item (the model options)");
  MTLITE_RETURN_IF_ERROR(ParseMarianYaml(out->yaml_text, kYamlItem, &out->yaml));
  Status s = ReadMarianOptions(out->yaml, &out->options);
  if (!s.ok()) return Status(s.code(), name + ": " + s.message());
  return CheckTensors(name, *out);
}

Status ReadMarianCheckpoint(const std::string& path, MarianCheckpoint* out) {
  std::string bytes;
  MTLITE_RETURN_IF_ERROR(ReadFile(path, &bytes));
  return ParseMarianCheckpoint(bytes, path, out);
}

Status MarianToHfTensors(const MarianCheckpoint& c, std::map<std::string, HfTensor>* out) {
  out->clear();
  const MarianOptions& o = c.options;
  auto get = [&](const std::string& n) -> const MarianTensor* {
    auto it = c.tensors.find(n);
    return it == c.tensors.end() ? nullptr : &it->second;
  };
  // Every name below was checked by ParseMarianCheckpoint; a hand-built checkpoint may lack one.
  auto copy = [&](const std::string& from, const std::string& to, bool transpose, bool flat) -> Status {
    const MarianTensor* t = get(from);
    if (!t) return Status(StatusCode::kInvalidArgument, "Marian checkpoint lacks " + from);
    HfTensor h;
    h.quant_mult = t->quant_mult;
    if (transpose) {
      if (t->shape.size() != 2) return Status(StatusCode::kInvalidArgument, from + " is not 2-D");
      const size_t r = size_t(t->shape[0]), k = size_t(t->shape[1]);
      h.shape = {t->shape[1], t->shape[0]};
      h.values.resize(t->values.size());
      for (size_t i = 0; i < r; ++i) {
        for (size_t j = 0; j < k; ++j) h.values[j * r + i] = t->values[i * k + j];
      }
    } else {
      h.shape = flat ? std::vector<int64_t>{int64_t(t->values.size())} : t->shape;
      h.values = t->values;
    }
    (*out)[to] = std::move(h);
    return Status::Ok();
  };
  auto attention = [&](const std::string& m, const std::string& hf, const std::string& norm) -> Status {
    const char* proj[4][2] = {{"q", "q_proj"}, {"k", "k_proj"}, {"v", "v_proj"}, {"o", "out_proj"}};
    for (const auto& p : proj) {
      MTLITE_RETURN_IF_ERROR(copy(m + "_W" + p[0], hf + "." + p[1] + ".weight", true, false));
      MTLITE_RETURN_IF_ERROR(copy(m + "_b" + p[0], hf + "." + p[1] + ".bias", false, true));
    }
    MTLITE_RETURN_IF_ERROR(copy(m + "_Wo_ln_scale", norm + ".weight", false, true));
    return copy(m + "_Wo_ln_bias", norm + ".bias", false, true);
  };
  auto ffn = [&](const std::string& m, const std::string& hf) -> Status {
    for (const char* k : {"1", "2"}) {
      MTLITE_RETURN_IF_ERROR(copy(m + "_ffn_W" + k, hf + ".fc" + k + ".weight", true, false));
      MTLITE_RETURN_IF_ERROR(copy(m + "_ffn_b" + k, hf + ".fc" + k + ".bias", false, true));
    }
    MTLITE_RETURN_IF_ERROR(copy(m + "_ffn_ffn_ln_scale", hf + ".final_layer_norm.weight", false, true));
    return copy(m + "_ffn_ffn_ln_bias", hf + ".final_layer_norm.bias", false, true);
  };
  for (int i = 0; i < o.enc_depth; ++i) {
    const std::string m = "encoder_l" + std::to_string(i + 1), hf = "model.encoder.layers." + std::to_string(i);
    MTLITE_RETURN_IF_ERROR(attention(m + "_self", hf + ".self_attn", hf + ".self_attn_layer_norm"));
    MTLITE_RETURN_IF_ERROR(ffn(m, hf));
  }
  for (int i = 0; i < o.dec_depth; ++i) {
    const std::string m = "decoder_l" + std::to_string(i + 1), hf = "model.decoder.layers." + std::to_string(i);
    if (o.decoder_ssru) {
      MTLITE_RETURN_IF_ERROR(copy(m + "_rnn_W", hf + ".ssru.in_proj.weight", true, false));
      MTLITE_RETURN_IF_ERROR(copy(m + "_rnn_Wf", hf + ".ssru.forget_proj.weight", true, false));
      MTLITE_RETURN_IF_ERROR(copy(m + "_rnn_bf", hf + ".ssru.forget_proj.bias", false, true));
      MTLITE_RETURN_IF_ERROR(copy(m + "_rnn_ffn_ln_scale", hf + ".ssru_layer_norm.weight", false, true));
      MTLITE_RETURN_IF_ERROR(copy(m + "_rnn_ffn_ln_bias", hf + ".ssru_layer_norm.bias", false, true));
    } else {
      MTLITE_RETURN_IF_ERROR(attention(m + "_self", hf + ".self_attn", hf + ".self_attn_layer_norm"));
    }
    MTLITE_RETURN_IF_ERROR(attention(m + "_context", hf + ".encoder_attn", hf + ".encoder_attn_layer_norm"));
    MTLITE_RETURN_IF_ERROR(ffn(m, hf));
  }
  if (o.tying == MarianTying::kAll || o.tying == MarianTying::kSrc) {
    MTLITE_RETURN_IF_ERROR(copy("Wemb", "model.shared.weight", false, false));
  } else {
    MTLITE_RETURN_IF_ERROR(copy("encoder_Wemb", "model.encoder.embed_tokens.weight", false, false));
    MTLITE_RETURN_IF_ERROR(copy("decoder_Wemb", "model.decoder.embed_tokens.weight", false, false));
  }
  if (o.tying == MarianTying::kSrc || o.tying == MarianTying::kUntied) {
    if (get("decoder_ff_logit_out_Wt")) MTLITE_RETURN_IF_ERROR(copy("decoder_ff_logit_out_Wt", "lm_head.weight", false, false));
    else MTLITE_RETURN_IF_ERROR(copy("decoder_ff_logit_out_W", "lm_head.weight", true, false));
  }
  MTLITE_RETURN_IF_ERROR(copy("decoder_ff_logit_out_b", "final_logits_bias", false, true));
  HfTensor& bias = (*out)["final_logits_bias"];
  bias.shape = {1, int64_t(bias.values.size())};
  return Status::Ok();
}

}  // namespace converter
}  // namespace mtlite
