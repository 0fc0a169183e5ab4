// `mtlite info model.mtlite [--json] [--verify] [--limits BATCH,SRC,TGT,BEAM]`
// Size profile: bytes per component (they sum exactly to the file size), the config, and
// optionally the CRC32C check of every data buffer and the translator arena for given limits.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"

namespace mtlite {
namespace cli {
namespace {

int Usage() {
  std::fprintf(stderr, "usage: mtlite info model.mtlite [--json] [--verify] [--limits BATCH,SRC,TGT,BEAM]\n");
  return 2;
}

struct Component {
  std::string name;
  uint64_t bytes = 0;
  std::set<std::string> dtypes;
};

// Keeps components in first-seen order (embeddings, positions, layers in file order...).
class Profile {
 public:
  Component& operator[](const std::string& name) {
    auto it = index_.find(name);
    if (it != index_.end()) return items_[it->second];
    index_[name] = items_.size();
    items_.push_back({name, 0, {}});
    return items_.back();
  }
  const std::vector<Component>& items() const { return items_; }

 private:
  std::vector<Component> items_;
  std::map<std::string, size_t> index_;
};

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Component of an HF tensor name (decoder layers split into self-attention, cross-attention
// and FFN, each with its layer norm).
std::string ComponentOf(std::string_view name) {
  if (name == "model.shared.weight" || name == "model.encoder.embed_tokens.weight" ||
      name == "model.decoder.embed_tokens.weight" || name == "lm_head.weight") {
    return "embeddings/output";
  }
  if (name == "model.encoder.embed_positions.weight" || name == "model.decoder.embed_positions.weight") return "positions";
  if (name == "final_logits_bias") return "final_logits_bias";
  for (const char* side : {"encoder", "decoder"}) {
    const std::string prefix = std::string("model.") + side + ".layers.";
    if (!StartsWith(name, prefix)) continue;
    std::string_view rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    const std::string layer = std::string(side) + ".layer." + std::string(rest.substr(0, dot));
    if (side[0] == 'e' || dot == std::string_view::npos) return layer;
    rest = rest.substr(dot + 1);
    if (StartsWith(rest, "self_attn")) return layer + ".self_attn";
    if (StartsWith(rest, "encoder_attn")) return layer + ".cross_attn";
    return layer + ".ffn";
  }
  return "other tensors";
}

const char* DTypeName(fb::DType t) {
  switch (t) {
    case fb::DType::F32: return "f32";
    case fb::DType::F16: return "f16";
    case fb::DType::I8: return "int8";
  }
  return "?";
}

// FlatBuffer bytes of the tokenizer's strings and arrays (4-byte length + payload, strings
// NUL-terminated and 4-aligned; a string shared by several vectors counts once); alignment
// padding between objects stays "structure".
class TokenizerBytes {
 public:
  void Strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
    if (!v) return;
    bytes_ += 4 + 4ull * v->size();
    for (const flatbuffers::String* s : *v) {
      if (seen_.insert(s).second) bytes_ += 4 + (s->size() + 4) / 4 * 4;
    }
  }
  void Spm(const fb::SentencePieceModel* m) {
    if (!m) return;
    const uint64_t n = m->pieces() ? m->pieces()->size() : 0;
    Strings(m->pieces());
    bytes_ += (4 + (n + 3) / 4 * 4) /*types*/ + 2 * (4 + 4 * n) /*sorted_pieces, to_vocab*/;
    if (m->normalizer_name()) bytes_ += 4 + (m->normalizer_name()->size() + 4) / 4 * 4;
  }
  void Vocab(const fb::Vocab* v) {
    if (v) Strings(v->id_to_piece());
  }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
  std::set<const void*> seen_;
};

Profile BuildProfile(const Model& model) {
  const detail::ModelData& md = model.data();
  const fb::Model* root = fb::GetSizePrefixedModel(md.base);
  std::map<std::string, std::string, std::less<>> dtype_of;
  for (const fb::Tensor* t : *root->tensors()) dtype_of[t->name()->str()] = DTypeName(t->dtype());

  // Rows in model order, present even when empty.
  Profile p;
  for (const char* name : {"embeddings/output", "positions", "final_logits_bias"}) p[name];
  for (int i = 0; i < md.config.encoder_layers; ++i) p["encoder.layer." + std::to_string(i)];
  for (int i = 0; i < md.config.decoder_layers; ++i) {
    for (const char* part : {".self_attn", ".cross_attn", ".ffn"}) p["decoder.layer." + std::to_string(i) + part];
  }
  uint64_t in_buffers = 0;
  for (const detail::BufferCheck& c : md.checks) {
    in_buffers += c.size;
    std::string_view name = c.name;
    if (StartsWith(name, "tokenizer.")) {
      Component& t = p["tokenizer"];
      t.bytes += c.size;
      t.dtypes.insert(name.substr(name.size() - 7) == ".scores" ? "f32" : "bytes");
      continue;
    }
    const size_t paren = name.find(" (");
    const bool scales = paren != std::string_view::npos;
    if (scales) name = name.substr(0, paren);
    Component& comp = p[ComponentOf(name)];
    comp.bytes += c.size;
    auto it = dtype_of.find(name);
    comp.dtypes.insert(scales ? "f32" : it != dtype_of.end() ? it->second : "?");
  }
  const uint64_t fb_size = uint64_t(flatbuffers::ReadScalar<uint32_t>(md.base)) + 4;
  const fb::Tokenizer* tok = root->tokenizer();
  TokenizerBytes tb;
  tb.Spm(tok->source_spm());
  tb.Spm(tok->target_spm());
  tb.Vocab(tok->source_vocab());
  tb.Vocab(tok->target_vocab());
  uint64_t tok_fb = tb.bytes();
  if (tok_fb > fb_size) tok_fb = fb_size;
  Component& t = p["tokenizer"];
  t.bytes += tok_fb;
  t.dtypes.insert("strings");
  Component& s = p["flatbuffer structure/config/metadata"];
  s.bytes = fb_size - tok_fb;
  s.dtypes.insert("flatbuffer");
  Component& pad = p["padding (64-byte alignment)"];
  pad.bytes = md.size - fb_size - in_buffers;  // buffers never overlap and lie after the FlatBuffer
  pad.dtypes.insert("zero");
  return p;
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : "+") + x;
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

const char* WeightTypeName(WeightType t) {
  switch (t) {
    case WeightType::kF32: return "f32";
    case WeightType::kF16: return "f16";
    case WeightType::kInt8: return "int8";
  }
  return "?";
}

const char* ActivationName(ActivationKind a) {
  switch (a) {
    case ActivationKind::kSiLU: return "silu";
    case ActivationKind::kReLU: return "relu";
    case ActivationKind::kGELU: return "gelu";
    case ActivationKind::kGELUTanh: return "gelu_tanh";
  }
  return "?";
}

// Config as (key, JSON value) pairs, shared by the table and the JSON output.
std::vector<std::pair<std::string, std::string>> ConfigFields(const ModelConfig& c) {
  std::string bad = "[";
  for (size_t i = 0; i < c.bad_word_ids.size(); ++i) bad += (i ? "," : "") + std::to_string(c.bad_word_ids[i]);
  bad += "]";
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  auto f = [](float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return std::string(buf);
  };
  return {{"d_model", std::to_string(c.d_model)},
          {"encoder_layers", std::to_string(c.encoder_layers)},
          {"decoder_layers", std::to_string(c.decoder_layers)},
          {"encoder_heads", std::to_string(c.encoder_heads)},
          {"decoder_heads", std::to_string(c.decoder_heads)},
          {"encoder_ffn_dim", std::to_string(c.encoder_ffn_dim)},
          {"decoder_ffn_dim", std::to_string(c.decoder_ffn_dim)},
          {"activation", JsonString(ActivationName(c.activation))},
          {"embed_scale", f(c.embed_scale)},
          {"positions", JsonString(c.positions_stored ? "table" : "sinusoidal")},
          {"max_positions", std::to_string(c.max_positions)},
          {"layer_norm_eps", f(c.layer_norm_eps)},
          {"shared_embeddings", b(c.shared_embeddings)},
          {"tied_output", b(c.tied_output)},
          {"has_final_logits_bias", b(c.has_final_logits_bias)},
          {"source_vocab_size", std::to_string(c.source_vocab_size)},
          {"target_vocab_size", std::to_string(c.target_vocab_size)},
          {"pad_id", std::to_string(c.pad_id)},
          {"eos_id", std::to_string(c.eos_id)},
          {"unk_id", std::to_string(c.unk_id)},
          {"decoder_start_id", std::to_string(c.decoder_start_id)},
          {"bad_word_ids", bad},
          {"default_beam", std::to_string(c.default_beam)},
          {"default_max_length", std::to_string(c.default_max_length)},
          {"weight_type", JsonString(WeightTypeName(c.weight_type))},
          {"source_lang", JsonString(c.source_lang)},
          {"target_lang", JsonString(c.target_lang)}};
}

std::vector<std::pair<std::string, std::string>> MetadataFields(const Model& model) {
  std::vector<std::pair<std::string, std::string>> out;
  const fb::Model* root = fb::GetSizePrefixedModel(model.data().base);
  out.push_back({"format_version", std::to_string(root->format_version())});
  if (const fb::Metadata* m = root->metadata()) {
    auto add = [&](const char* k, const flatbuffers::String* v) {
      if (v) out.push_back({k, JsonString(v->string_view())});
    };
    add("converter_version", m->converter_version());
    add("quantization", m->quantization());
    add("source_hash", m->source_hash());
    if (m->extra()) {
      for (const fb::KeyValue* kv : *m->extra()) {
        if (kv->key() && kv->value()) out.push_back({kv->key()->str(), JsonString(kv->value()->string_view())});
      }
    }
  }
  return out;
}

bool ParseLimits(const char* s, TranslatorLimits* l) {
  int v[4];
  char tail;
  if (std::sscanf(s, "%d,%d,%d,%d%c", &v[0], &v[1], &v[2], &v[3], &tail) != 4) return false;
  l->max_batch = v[0];
  l->max_source_tokens = v[1];
  l->max_target_tokens = v[2];
  l->max_beam = v[3];
  if (l->max_n_best > v[3]) l->max_n_best = v[3];
  return true;
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int InfoMain(int argc, char** argv) {
  std::string path;
  bool json = false, verify = false, limits_given = false;
  TranslatorLimits limits;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a == "--verify") verify = true;
    else if (a == "--limits" && i + 1 < argc) {
      if (!ParseLimits(argv[++i], &limits)) {
        std::fprintf(stderr, "mtlite info: --limits expects BATCH,SRC,TGT,BEAM (e.g. 1,256,256,4)\n");
        return 2;
      }
      limits_given = true;
    } else if (a == "-h" || a == "--help") {
      return Usage(), 0;
    } else if (path.empty() && !a.empty() && a[0] != '-') {
      path = a;
    } else {
      std::fprintf(stderr, "mtlite info: unexpected argument '%s'\n", a.c_str());
      return Usage();
    }
  }
  if (path.empty()) return Usage();

  auto t0 = std::chrono::steady_clock::now();
  auto loaded = Model::Load(path);
  const double load_ms = MsSince(t0);
  if (!loaded.ok()) {
    std::fprintf(stderr, "mtlite info: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  const Model& model = **loaded;
  const Profile profile = BuildProfile(model);

  int rc = 0;
  std::string verify_result;
  double verify_ms = 0;
  if (verify) {
    t0 = std::chrono::steady_clock::now();
    const Status s = model.VerifyChecksums();
    verify_ms = MsSince(t0);
    verify_result = s.ok() ? "ok" : s.message();
    if (!s.ok()) {
      std::fprintf(stderr, "mtlite info: %s: %s\n", path.c_str(), s.ToString().c_str());
      rc = 1;
    }
  }
  std::string arena;
  if (limits_given) {
    auto bytes = Translator::ArenaBytes(model, limits);
    if (bytes.ok()) {
      arena = std::to_string(bytes.value());
    } else {
      std::fprintf(stderr, "mtlite info: --limits: %s\n", bytes.status().ToString().c_str());
      rc = 1;
    }
  }

  const uint64_t total = model.file_size();
  const auto config = ConfigFields(model.config());
  const auto meta = MetadataFields(model);
  if (json) {
    std::printf("{\n  \"file\": %s,\n  \"file_size\": %" PRIu64 ",\n  \"load_ms\": %.3f,\n", JsonString(path).c_str(),
                total, load_ms);
    std::printf("  \"metadata\": {");
    for (size_t i = 0; i < meta.size(); ++i) std::printf("%s%s: %s", i ? ", " : "", JsonString(meta[i].first).c_str(), meta[i].second.c_str());
    std::printf("},\n  \"config\": {");
    for (size_t i = 0; i < config.size(); ++i) std::printf("%s%s: %s", i ? ", " : "", JsonString(config[i].first).c_str(), config[i].second.c_str());
    std::printf("},\n  \"components\": [\n");
    const auto& items = profile.items();
    for (size_t i = 0; i < items.size(); ++i) {
      std::printf("    {\"name\": %s, \"bytes\": %" PRIu64 ", \"percent\": %.4f, \"dtype\": %s}%s\n",
                  JsonString(items[i].name).c_str(), items[i].bytes, 100.0 * double(items[i].bytes) / double(total),
                  JsonString(Join(items[i].dtypes)).c_str(), i + 1 < items.size() ? "," : "");
    }
    std::printf("  ]");
    if (verify) std::printf(",\n  \"checksums\": %s,\n  \"verify_ms\": %.3f", JsonString(verify_result).c_str(), verify_ms);
    if (!arena.empty()) std::printf(",\n  \"arena_bytes\": %s", arena.c_str());
    std::printf("\n}\n");
    return rc;
  }

  std::printf("%s: %" PRIu64 " bytes, %s weights (loaded in %.2f ms)\n", path.c_str(), total,
              WeightTypeName(model.config().weight_type), load_ms);
  for (const auto& [k, v] : meta) std::printf("  %-24s %s\n", k.c_str(), v.c_str());
  std::printf("config:\n");
  for (const auto& [k, v] : config) std::printf("  %-24s %s\n", k.c_str(), v.c_str());
  std::printf("\n%-40s %12s %8s  %s\n", "component", "bytes", "%", "dtype");
  uint64_t sum = 0;
  for (const Component& c : profile.items()) {
    std::printf("%-40s %12" PRIu64 " %7.2f%%  %s\n", c.name.c_str(), c.bytes, 100.0 * double(c.bytes) / double(total),
                Join(c.dtypes).c_str());
    sum += c.bytes;
  }
  std::printf("%-40s %12" PRIu64 " %7.2f%%\n", "total", sum, 100.0 * double(sum) / double(total));
  if (verify) std::printf("\nchecksums: %s (%zu buffers, %.2f ms)\n", verify_result.c_str(), model.data().checks.size(), verify_ms);
  if (!arena.empty()) {
    std::printf("arena for limits batch=%d src=%d tgt=%d beam=%d: %s bytes\n", limits.max_batch, limits.max_source_tokens,
                limits.max_target_tokens, limits.max_beam, arena.c_str());
  }
  return rc;
}

}  // namespace cli
}  // namespace mtlite
