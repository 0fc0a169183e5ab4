// `mtlite info MODEL [--json] [--verify] [--limits BATCH,SRC,TGT,BEAM]`
// Size profile: bytes per component (Model::SizeProfile; they sum exactly to the file size),
// the config, and optionally the CRC32C check of every data buffer and the translator arena
// for given limits.
#include <chrono>
#include <cinttypes>
#include <climits>
#include <optional>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "json_writer.h"
#include "marian_layout.h"
#include "model_data.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"

namespace mtlite {
namespace cli {

// `mtlite info --help`: what the command does.
constexpr char kSummary[] =
    "Prints a model file's size profile (bytes per component; they sum to the file size),\n"
    "its config and metadata; optionally checks every checksum and sizes the translator arena.";

namespace {

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
          {"activation", JsonQuote(layout::ActivationName(c.activation))},
          {"embed_scale", f(c.embed_scale)},
          {"positions", JsonQuote(c.positions_stored ? "table" : "sinusoidal")},
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
          {"weight_type", JsonQuote(layout::DTypeName(c.weight_type))},
          {"source_lang", JsonQuote(c.source_lang)},
          {"target_lang", JsonQuote(c.target_lang)}};
}

std::vector<std::pair<std::string, std::string>> MetadataFields(const Model& model) {
  std::vector<std::pair<std::string, std::string>> out;
  const fb::Model* root = fb::GetSizePrefixedModel(model.data().base);
  out.push_back({"format_version", std::to_string(root->format_version())});
  if (const fb::Metadata* m = root->metadata()) {
    auto add = [&](const char* k, const flatbuffers::String* v) {
      if (v) out.push_back({k, JsonQuote(v->string_view())});
    };
    add("converter_version", m->converter_version());
    add("quantization", m->quantization());
    add("source_hash", m->source_hash());
    if (m->extra()) {
      for (const fb::KeyValue* kv : *m->extra()) {
        if (kv->key() && kv->value()) out.push_back({kv->key()->str(), JsonQuote(kv->value()->string_view())});
      }
    }
  }
  return out;
}

// The shortlist section as (key, JSON value) pairs; empty when the model has none.
std::vector<std::pair<std::string, std::string>> ShortlistFields(const Model& model) {
  const detail::ModelData& md = model.data();
  const detail::ShortlistView& v = md.shortlist;
  if (!v.present) return {};
  const fb::Shortlist* sl = fb::GetSizePrefixedModel(md.base)->shortlist();
  int with_targets = 0;
  for (int s = 0; s < md.config.source_vocab_size; ++s) with_targets += v.offsets[s + 1] > v.offsets[s];
  return {{"frequent", std::to_string(v.num_frequent)},
          {"source_ids_with_targets", std::to_string(with_targets)},
          {"targets", std::to_string(v.offsets[md.config.source_vocab_size])},
          {"top_k", std::to_string(sl->top_k())},
          {"include_source_ids", v.include_source_ids ? "true" : "false"},
          {"method", JsonQuote(sl->method() ? sl->method()->string_view() : std::string_view())}};
}

// --limits BATCH,SRC,TGT,BEAM: four integers >= 1.
std::string ParseLimits(const std::string& s, TranslatorLimits* l) {
  int v[4];
  size_t begin = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t comma = i < 3 ? s.find(',', begin) : s.size();
    if (comma == std::string::npos || !ParseInt(s.substr(begin, comma - begin), 1, INT_MAX, &v[i])) {
      return "expects BATCH,SRC,TGT,BEAM, four integers >= 1 (e.g. 1,256,256,4), got '" + s + "'";
    }
    begin = comma + 1;
  }
  l->max_batch = v[0];
  l->max_source_tokens = v[1];
  l->max_target_tokens = v[2];
  l->max_beam = v[3];
  if (l->max_n_best > v[3]) l->max_n_best = v[3];
  return "";
}

void PrintJson(const InfoArgs& a, const Model& model, double load_ms, const std::vector<SizeComponent>& profile,
               const std::string& verify_result, double verify_ms, const ArenaPlanInfo* plan) {
  const double total = double(model.file_size());
  JsonWriter w;
  w.BeginObject().Key("file").String(a.path).Key("file_size").Uint(model.file_size()).Key("load_ms").Fixed(load_ms, 3);
  w.Key("metadata").BeginObject(JsonWriter::kInline);
  for (const auto& [k, v] : MetadataFields(model)) w.Key(k).Raw(v);
  w.EndObject().Key("config").BeginObject(JsonWriter::kInline);
  for (const auto& [k, v] : ConfigFields(model.config())) w.Key(k).Raw(v);
  w.EndObject();
  if (model.data().shortlist.present) {
    w.Key("shortlist").BeginObject(JsonWriter::kInline);
    for (const auto& [k, v] : ShortlistFields(model)) w.Key(k).Raw(v);
    w.EndObject();
  }
  w.Key("components").BeginArray();
  for (const SizeComponent& c : profile) {
    w.BeginObject(JsonWriter::kInline).Key("name").String(c.name).Key("bytes").Uint(c.bytes);
    w.Key("percent").Fixed(100.0 * double(c.bytes) / total, 4).Key("dtype").String(JoinDTypes(c.dtypes)).EndObject();
  }
  w.EndArray();
  if (a.verify) w.Key("checksums").String(verify_result).Key("verify_ms").Fixed(verify_ms, 3);
  if (plan) {
    w.Key("arena_bytes").Uint(plan->total_bytes);
    w.Key("arena_plan").BeginObject().Key("total_bytes").Uint(plan->total_bytes);
    w.Key("unshared_bytes").Uint(plan->unshared_bytes).Key("phases").BeginArray(JsonWriter::kInline);
    for (const std::string& ph : plan->phases) w.String(ph);
    w.EndArray().Key("buffers").BeginArray();
    for (const ArenaBufferInfo& b : plan->buffers) {
      w.BeginObject(JsonWriter::kInline).Key("name").String(b.name).Key("offset").Uint(b.offset);
      w.Key("bytes").Uint(b.bytes).Key("first_phase").String(b.first_phase).Key("last_phase").String(b.last_phase);
      w.Key("persistent").Bool(b.persistent).EndObject();
    }
    w.EndArray().EndObject();
  }
  std::printf("%s\n", w.EndObject().str().c_str());
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string JoinDTypes(const std::vector<std::string>& dtypes) {
  std::string out;
  for (const std::string& d : dtypes) out += (out.empty() ? "" : "+") + d;
  return out;
}

void PrintSizeTable(const std::vector<SizeComponent>& profile, uint64_t file_bytes) {
  const double total = double(file_bytes);
  std::printf("\n%-40s %12s %8s  %s\n", "component", "bytes", "%", "dtype");
  uint64_t sum = 0;
  for (const SizeComponent& c : profile) {
    std::printf("%-40s %12" PRIu64 " %7.2f%%  %s\n", c.name.c_str(), c.bytes, 100.0 * double(c.bytes) / total,
                JoinDTypes(c.dtypes).c_str());
    sum += c.bytes;
  }
  std::printf("%-40s %12" PRIu64 " %7.2f%%\n", "total", sum, 100.0 * double(sum) / total);
}

ParseResult ParseInfoArgs(int argc, const char* const* argv, InfoArgs* a) {
  ArgParser p("mtlite info", kSummary);
  p.Positional("MODEL", &a->path, "the .mtlite model file");
  p.Flag("--json", &a->json, "print JSON instead of tables");
  p.Flag("--verify", &a->verify, "check the CRC32C of the FlatBuffer and of every data buffer (exit 1 on a mismatch)");
  p.Custom("--limits", "BATCH,SRC,TGT,BEAM",
           [a](const std::string& v) {
             a->limits_given = true;
             return ParseLimits(v, &a->limits);
           },
           "print the translator arena for these limits: total and per-buffer plan (offset, bytes, live range)");
  return p.Parse(argc, argv);
}

int InfoMain(int argc, char** argv) {
  InfoArgs a;
  const ParseResult parsed = ParseInfoArgs(argc, argv, &a);
  if (!parsed.ok()) return PrintParseResult(parsed, "mtlite info");

  auto t0 = std::chrono::steady_clock::now();
  auto loaded = Model::Load(a.path);
  const double load_ms = MsSince(t0);
  if (!loaded.ok()) {
    std::fprintf(stderr, "mtlite info: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  const Model& model = **loaded;
  const std::vector<SizeComponent> profile = model.SizeProfile();

  int rc = 0;
  std::string verify_result;
  double verify_ms = 0;
  if (a.verify) {
    t0 = std::chrono::steady_clock::now();
    const Status s = model.VerifyChecksums();
    verify_ms = MsSince(t0);
    verify_result = s.ok() ? "ok" : s.message();
    if (!s.ok()) {
      std::fprintf(stderr, "mtlite info: %s: %s\n", a.path.c_str(), s.ToString().c_str());
      rc = 1;
    }
  }
  std::optional<ArenaPlanInfo> plan;
  if (a.limits_given) {
    auto planned = Translator::PlanArena(model, a.limits);
    if (planned.ok()) {
      plan = std::move(planned).value();
    } else {
      std::fprintf(stderr, "mtlite info: --limits: %s\n", planned.status().ToString().c_str());
      rc = 1;
    }
  }
  if (a.json) {
    PrintJson(a, model, load_ms, profile, verify_result, verify_ms, plan ? &*plan : nullptr);
    return rc;
  }

  std::printf("%s: %zu bytes, %s weights (loaded in %.2f ms)\n", a.path.c_str(), model.file_size(),
              layout::DTypeName(model.config().weight_type), load_ms);
  for (const auto& [k, v] : MetadataFields(model)) std::printf("  %-24s %s\n", k.c_str(), v.c_str());
  std::printf("config:\n");
  for (const auto& [k, v] : ConfigFields(model.config())) std::printf("  %-24s %s\n", k.c_str(), v.c_str());
  const auto shortlist = ShortlistFields(model);
  if (!shortlist.empty()) std::printf("shortlist:\n");
  for (const auto& [k, v] : shortlist) std::printf("  %-24s %s\n", k.c_str(), v.c_str());
  PrintSizeTable(profile, model.file_size());
  if (a.verify) {
    std::printf("\nchecksums: %s (%zu buffers, %.2f ms)\n", verify_result.c_str(), model.data().checks.size(), verify_ms);
  }
  if (plan) {
    std::printf("arena for limits batch=%d src=%d tgt=%d beam=%d: %zu bytes\n", a.limits.max_batch,
                a.limits.max_source_tokens, a.limits.max_target_tokens, a.limits.max_beam, plan->total_bytes);
    std::printf("  (%zu bytes without sharing: buffers whose live ranges do not meet share memory)\n",
                plan->unshared_bytes);
    std::printf("\n%-28s %12s %12s  %-19s %s\n", "buffer", "offset", "bytes", "live", "");
    for (const ArenaBufferInfo& b : plan->buffers) {
      const std::string live = b.persistent ? "persistent" : b.first_phase + ".." + b.last_phase;
      std::printf("%-28s %12zu %12zu  %s\n", b.name.c_str(), b.offset, b.bytes, live.c_str());
    }
  }
  return rc;
}

}  // namespace cli
}  // namespace mtlite
