// `mtlite info MODEL [--json] [--verify] [--limits BATCH,SRC,TGT,BEAM [--threads N] [--header FILE] [--board BOARD]]`
// Size profile: bytes per component (Model::SizeProfile; they sum exactly to the file size),
// the config, and optionally the CRC32C check of every data buffer and, for given limits, the
// RAM budget of a translation on this target: the arena (per part), the model's tables, the
// stack high-water of the translate call tree (a painted probe translation), the runtime's
// static data, and the flash the model and the runtime's code take. --header writes it as C
// macros for a firmware's static arrays (docs/deploy.md); --board says which memory region of a
// bare-metal board (board_info.h) each part goes to and whether it fits.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "board_info.h"
#include "commands.h"
#include "footprint.h"
#include "json_writer.h"
#include "marian_layout.h"
#include "model_data.h"
#include "model_spec.h"
#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"
#include "mtlite_generated.h"
#include "output_file.h"
#include "ram_probe.h"

namespace mtlite {
namespace cli {

// `mtlite info --help`: what the command does.
constexpr char kSummary[] =
    "Prints a model file's size profile (bytes per component; they sum to the file size),\n"
    "its config and metadata; optionally checks every checksum and sizes the translator arena.";

namespace {

// A config field's value as JSON.
std::string JsonValue(const detail::FieldValue& v) {
  using T = detail::FieldValue::Type;
  switch (v.type) {
    case T::kInt: return std::to_string(v.i);
    case T::kFloat: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", double(v.f));
      return buf;
    }
    case T::kBool: return v.b ? "true" : "false";
    case T::kString: return JsonQuote(v.s);
    case T::kIntList: {
      std::string list = "[";
      for (size_t i = 0; i < v.ids->size(); ++i) list += (i ? "," : "") + std::to_string((*v.ids)[i]);
      return list + "]";
    }
  }
  return "null";
}

// Config as (key, JSON value) pairs, shared by the table and the JSON output: the fields of the
// spec table (runtime/src/model_spec.cc), in its order.
std::vector<std::pair<std::string, std::string>> ConfigFields(const ModelConfig& c) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const detail::ConfigField& f : detail::ConfigFields()) out.push_back({f.name, JsonValue(detail::ValueOf(f, c))});
  return out;
}

std::vector<std::pair<std::string, std::string>> MetadataFields(const Model& model) {
  std::vector<std::pair<std::string, std::string>> out;
  const fb::Model* root = fb::GetSizePrefixedModel(model.data().base);
  out.push_back({"format_version", std::to_string(root->format_version())});
  // How the SentencePiece models cut text: "unigram" or "bpe" (the target's only when it differs).
  auto spm_kind = [](const detail::SpmView& v) {
    return std::string(v.model_type == detail::SpmModelType::kBpe ? "\"bpe\"" : "\"unigram\"");
  };
  const detail::ModelData& md = model.data();
  out.push_back({"tokenizer", spm_kind(md.source_spm)});
  if (md.target_spm.model_type != md.source_spm.model_type) out.push_back({"target_tokenizer", spm_kind(md.target_spm)});
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
          {"row_order", v.row_order ? "\"shortlist\"" : "\"token\""},
          {"method", JsonQuote(sl->method() ? sl->method()->string_view() : std::string_view())}};
}

// The recorded decoding defaults (schema table DecodingDefaults) as (key, JSON value) pairs;
// empty when the model has none.
std::vector<std::pair<std::string, std::string>> DecodingDefaultsFields(const Model& model) {
  const DecodingDefaults& d = model.decoding_defaults();
  if (d.empty()) return {};
  const auto num = [](float f) {  // the shortest text that reads back as f
    char buf[32];
    for (int digits = 6; digits <= 9; ++digits) {
      std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
      if (std::strtof(buf, nullptr) == f) break;
    }
    return std::string(buf);
  };
  std::vector<std::pair<std::string, std::string>> out;
  if (d.beam_size) out.push_back({"beam_size", std::to_string(*d.beam_size)});
  if (d.max_length) out.push_back({"max_length", std::to_string(*d.max_length)});
  if (d.max_length_ratio) out.push_back({"max_length_ratio", num(*d.max_length_ratio)});
  if (d.max_length_offset) out.push_back({"max_length_offset", std::to_string(*d.max_length_offset)});
  if (d.length_penalty) out.push_back({"length_penalty", num(*d.length_penalty)});
  out.push_back({"source", JsonQuote(d.source)});
  return out;
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

struct RamBudget;
void BudgetJson(const RamBudget& b, JsonWriter* w);

void PrintJson(const InfoArgs& a, const Model& model, double load_ms, const std::vector<SizeComponent>& profile,
               const std::string& verify_result, double verify_ms, const ArenaPlanInfo* plan,
               const RamBudget* budget) {
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
  if (const auto decoding = DecodingDefaultsFields(model); !decoding.empty()) {
    w.Key("decoding_defaults").BeginObject(JsonWriter::kInline);
    for (const auto& [k, v] : decoding) w.Key(k).Raw(v);
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
  if (budget) BudgetJson(*budget, &w);
  std::printf("%s\n", w.EndObject().str().c_str());
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// ---- RAM budget (--limits) --------------------------------------------------------------------
// Everything a firmware reserves for translations with given limits. Caller-owned figures are
// the C API's (they hold its handles too and are enough for the C++ API).
struct RamBudget {
  size_t arena = 0;           // mtlite_arena_bytes: MTLITE_ARENA_BYTES
  size_t arena_cpp = 0;       // Translator::ArenaBytes (the C++ API's arena)
  size_t objects = 0;         // Translator objects + the C handle
  size_t persistent = 0;      // buffers that live across calls (results, positions, layers)
  size_t per_call = 0;        // the rest: buffers planned over the phases of a call
  std::string peak_phase;     // the phase with the most live per-call buffers
  size_t tokenizer_workspace = 0;  // one of the per-call buffers
  size_t model_storage = 0;   // mtlite_model_storage_bytes: MTLITE_MODEL_STORAGE_BYTES
  size_t model_storage_cpp = 0;  // Model::StorageBytes
  size_t stack_measured = 0;  // painted high-water of the probe translations
  size_t stack = 0;           // stack_measured + margin: MTLITE_STACK_BYTES
  int threads = 1;
  size_t worker_stacks = 0;   // (threads - 1) x stack: workers run parts of the caller's call tree
  size_t static_data = MTLITE_FOOTPRINT_DATA + MTLITE_FOOTPRINT_BSS;  // the runtime library's
  size_t ram() const { return arena + model_storage + stack + worker_stacks + static_data; }
  size_t model_flash = 0;     // the model file, read in place
  size_t code_flash = MTLITE_FOOTPRINT_TEXT + MTLITE_FOOTPRINT_RODATA;  // runtime library
};

constexpr size_t kProbeStackBytes = 512 * 1024;  // painted per probe call (must exceed the high-water)

// Stack figure = the painted high-water of the probe plus 10 % and up to 256 bytes: the probe runs
// every branch a translation can take (greedy, beam with n-best, streaming, alignments when the
// limits reserve them, text with language codes, byte fallback and normalization), so the margin
// only covers paths its inputs miss by a few frames.
size_t StackFigure(size_t measured) { return (measured + measured / 10 + 256 + 255) / 256 * 256; }

void NoStream(void*, size_t, const int32_t*, int, const char*, size_t, int) {}

// Translates probe inputs through the C API (the firmware's path), each call on a freshly painted
// stack; returns the deepest high-water, or an error message.
std::string MeasureStack(const std::string& path, const TranslatorLimits& lim, size_t* high_water) {
  mtlite_model* model = nullptr;
  if (mtlite_model_load(path.c_str(), 0, &model) != MTLITE_OK) return mtlite_last_error();
  mtlite_limits pl;
  mtlite_limits_default(&pl);
  pl.max_batch = std::min(lim.max_batch, 2);
  pl.max_source_tokens = std::min(lim.max_source_tokens, 48);
  pl.max_target_tokens = std::min(lim.max_target_tokens, 24);
  pl.max_beam = lim.max_beam;
  pl.max_n_best = std::min(lim.max_n_best, lim.max_beam);
  pl.max_input_bytes = std::min(lim.max_input_bytes, 4096);
  pl.alignments = lim.alignments ? 1 : 0;
  pl.num_threads = 1;
  mtlite_translator* tr = nullptr;
  std::string error;
  if (mtlite_translator_create(model, &pl, &tr) != MTLITE_OK) {
    error = mtlite_last_error();
    mtlite_model_free(model);
    return error;
  }
  static const char* const kInputs[] = {
      "A man in an orange hat starring at something.",
      ">>deu<< Two dogs play in the snow, 3.5 km away\xe2\x80\x94naïve café ½ \xef\xac\x81 \xe2\x84\x96 7!",
      "\xf0\x9f\x98\x80 \xe4\xbd\xa0\xe5\xa5\xbd ZZZqqq   x",
      "",
  };
  const size_t num_inputs = sizeof kInputs / sizeof kInputs[0];
  *high_water = 0;
  for (int beam : {1, pl.max_beam}) {
    for (int stream = 0; stream < 2; ++stream) {
      for (size_t i = 0; i < num_inputs && error.empty(); i += size_t(pl.max_batch)) {
        const size_t n = std::min(size_t(pl.max_batch), num_inputs - i);
        mtlite_options o;
        mtlite_options_default(&o);
        o.beam_size = beam;
        o.n_best = beam > 1 ? pl.max_n_best : 1;
        o.return_scores = 1;
        o.return_alignments = pl.alignments;
        o.max_length = pl.max_target_tokens;
        o.stream = stream ? NoStream : nullptr;
        mtlite_stack_probe probe;
        mtlite_stack_paint(&probe, kProbeStackBytes);
        const mtlite_status st = mtlite_translate(tr, kInputs + i, nullptr, n, &o);
        *high_water = std::max(*high_water, mtlite_stack_used(&probe));
        if (st != MTLITE_OK) error = mtlite_last_error();
      }
    }
  }
  mtlite_translator_free(tr);
  mtlite_model_free(model);
  if (error.empty() && *high_water >= kProbeStackBytes) error = "the probe used all of the painted stack";
  return error;
}

std::string ComputeBudget(const InfoArgs& a, const Model& model, RamBudget* b) {
  const TranslatorLimits& lim = a.limits;
  auto plan = Translator::PlanArena(model, lim);
  if (!plan.ok()) return plan.status().ToString();
  const ArenaPlanInfo& info = plan.value();
  b->arena_cpp = info.total_bytes;
  b->threads = lim.num_threads;
  b->model_flash = model.file_size();

  mtlite_model* cm = nullptr;  // the C figures (they include the C handles)
  if (mtlite_model_load(a.path.c_str(), 0, &cm) != MTLITE_OK) return mtlite_last_error();
  mtlite_limits cl;
  mtlite_limits_default(&cl);
  cl.max_batch = lim.max_batch;
  cl.max_source_tokens = lim.max_source_tokens;
  cl.max_target_tokens = lim.max_target_tokens;
  cl.max_beam = lim.max_beam;
  cl.max_n_best = lim.max_n_best;
  cl.max_input_bytes = lim.max_input_bytes;
  cl.alignments = lim.alignments ? 1 : 0;
  cl.num_threads = lim.num_threads;
  const bool c_ok = mtlite_arena_bytes(cm, &cl, &b->arena) == MTLITE_OK &&
                    mtlite_model_storage_bytes(model.data().base, model.data().size, &b->model_storage) == MTLITE_OK;
  mtlite_model_free(cm);
  if (!c_ok) return mtlite_last_error();
  auto storage = Model::StorageBytes(model.data().base, model.data().size);
  if (!storage.ok()) return storage.status().ToString();
  b->model_storage_cpp = storage.value();

  // Per part: the objects (head buffer and the C handle), persistent buffers, per-call buffers.
  std::vector<size_t> live(info.phases.size(), 0);
  auto phase = [&](const std::string& name) {
    return size_t(std::find(info.phases.begin(), info.phases.end(), name) - info.phases.begin());
  };
  for (const ArenaBufferInfo& buf : info.buffers) {
    const size_t bytes = (buf.bytes + 63) / 64 * 64;
    if (buf.name == "translator.objects") {
      b->objects = bytes + (b->arena - b->arena_cpp);
    } else if (buf.persistent) {
      b->persistent += bytes;
    } else {
      for (size_t p = phase(buf.first_phase); p <= phase(buf.last_phase) && p < live.size(); ++p) live[p] += bytes;
      if (buf.name == "tokenizer.workspace") b->tokenizer_workspace = buf.bytes;
    }
  }
  b->per_call = b->arena - b->objects - b->persistent;
  b->peak_phase = info.phases[size_t(std::max_element(live.begin(), live.end()) - live.begin())];

  const std::string error = MeasureStack(a.path, lim, &b->stack_measured);
  if (!error.empty()) return "stack probe: " + error;
  b->stack = StackFigure(b->stack_measured);
  b->worker_stacks = size_t(std::max(0, lim.num_threads - 1)) * b->stack;
  return "";
}

void PrintBudget(const InfoArgs& a, const RamBudget& b) {
  const TranslatorLimits& l = a.limits;
  std::printf("\nRAM budget of a translation (batch=%d src=%d tgt=%d beam=%d n_best=%d input_bytes=%d, %d thread%s; "
              "%s%s build):\n",
              l.max_batch, l.max_source_tokens, l.max_target_tokens, l.max_beam, l.max_n_best, l.max_input_bytes,
              b.threads, b.threads == 1 ? "" : "s", MTLITE_FOOTPRINT_ARCH, MTLITE_FOOTPRINT_MINIMAL ? ", minimal" : "");
  std::printf("  %-58s %12zu bytes\n", "arena, caller-owned (MTLITE_ARENA_BYTES)", b.arena);
  std::printf("    %-56s %12zu\n", "objects: Translator and its state, C API handle", b.objects);
  std::printf("    %-56s %12zu\n", "persistent: results, position tables, layers", b.persistent);
  std::printf("    %-56s %12zu\n", ("per call, shared across phases (peak: " + b.peak_phase + ")").c_str(), b.per_call);
  std::printf("      %-54s %12zu\n", "of which tokenizer workspace", b.tokenizer_workspace);
  std::printf("  %-58s %12zu bytes\n", "model tables, caller-owned (MTLITE_MODEL_STORAGE_BYTES)", b.model_storage);
  std::printf("  %-58s %12zu bytes (painted probe %zu + margin)\n", "stack of the translate call (MTLITE_STACK_BYTES)",
              b.stack, b.stack_measured);
  if (b.worker_stacks) {
    std::printf("  %-58s %12zu bytes (%d x at most the caller's)\n", "stacks of the worker threads", b.worker_stacks,
                b.threads - 1);
  }
  std::printf("  %-58s %12zu bytes\n", "static data of the runtime library (.data + .bss)", b.static_data);
  std::printf("  %-58s %12zu bytes\n", "total RAM (MTLITE_RAM_BYTES)", b.ram());
  std::printf("flash, read in place (never copied to RAM):\n");
  std::printf("  %-58s %12zu bytes\n", "model", b.model_flash);
  std::printf("  %-58s %12zu bytes\n", "runtime library code and constants (.text + .rodata)", b.code_flash);
  std::printf("(the C++ API needs %zu bytes of arena and %zu of model storage: the figures above hold the C handles too)\n",
              b.arena_cpp, b.model_storage_cpp);
}

void BudgetJson(const RamBudget& b, JsonWriter* w) {
  w->Key("budget").BeginObject();
  w->Key("target").String(MTLITE_FOOTPRINT_ARCH).Key("minimal").Bool(MTLITE_FOOTPRINT_MINIMAL != 0);
  w->Key("threads").Int(b.threads);
  w->Key("arena_bytes").Uint(b.arena).Key("arena_bytes_cpp").Uint(b.arena_cpp);
  w->Key("arena_objects").Uint(b.objects).Key("arena_persistent").Uint(b.persistent);
  w->Key("arena_per_call").Uint(b.per_call).Key("arena_peak_phase").String(b.peak_phase);
  w->Key("tokenizer_workspace").Uint(b.tokenizer_workspace);
  w->Key("model_storage_bytes").Uint(b.model_storage).Key("model_storage_bytes_cpp").Uint(b.model_storage_cpp);
  w->Key("stack_bytes").Uint(b.stack).Key("stack_measured_bytes").Uint(b.stack_measured);
  w->Key("worker_stack_bytes").Uint(b.worker_stacks);
  w->Key("static_data_bytes").Uint(b.static_data).Key("ram_bytes").Uint(b.ram());
  w->Key("model_flash_bytes").Uint(b.model_flash).Key("library_text_rodata_bytes").Uint(b.code_flash);
  w->EndObject();
}

std::string WriteHeader(const InfoArgs& a, const RamBudget& b, const BoardFit* fit) {
  OutputFile out;
  if (!out.Open(a.header)) return out.error();
  const TranslatorLimits& l = a.limits;
  std::string model = a.path;  // inside a comment: no "*/"
  for (size_t at = model.find("*/"); at != std::string::npos; at = model.find("*/", at)) model.replace(at, 2, "* /");
  out.Printf("/* RAM budget of mtlite translations of %s on %s%s, generated by\n"
              " * `mtlite info --limits %d,%d,%d,%d --header`; do not edit. Use:\n"
              " *   static uint8_t arena[MTLITE_ARENA_BYTES] __attribute__((aligned(64)));\n"
              " *   static uint8_t model_storage[MTLITE_MODEL_STORAGE_BYTES] __attribute__((aligned(64)));\n"
              " * and give the translating task MTLITE_STACK_BYTES of stack (see docs/deploy.md). */\n"
              "#ifndef MTLITE_RAM_BUDGET_H_\n#define MTLITE_RAM_BUDGET_H_\n\n",
              model.c_str(), MTLITE_FOOTPRINT_ARCH, MTLITE_FOOTPRINT_MINIMAL ? " (minimal build)" : "", l.max_batch,
              l.max_source_tokens, l.max_target_tokens, l.max_beam);
  const std::pair<const char*, size_t> sizes[] = {
      {"MTLITE_ARENA_BYTES", b.arena},          {"MTLITE_MODEL_STORAGE_BYTES", b.model_storage},
      {"MTLITE_STACK_BYTES", b.stack},          {"MTLITE_STATIC_DATA_BYTES", b.static_data},
      {"MTLITE_RAM_BYTES", b.ram()},            {"MTLITE_MODEL_FLASH_BYTES", b.model_flash},
      {"MTLITE_CODE_FLASH_BYTES", b.code_flash}};
  for (const auto& [name, v] : sizes) out.Printf("#define %s %zuu\n", name, v);
  const std::pair<const char*, int> limits[] = {
      {"MTLITE_LIMIT_MAX_BATCH", l.max_batch},         {"MTLITE_LIMIT_MAX_SOURCE_TOKENS", l.max_source_tokens},
      {"MTLITE_LIMIT_MAX_TARGET_TOKENS", l.max_target_tokens}, {"MTLITE_LIMIT_MAX_BEAM", l.max_beam},
      {"MTLITE_LIMIT_MAX_N_BEST", l.max_n_best},       {"MTLITE_LIMIT_MAX_INPUT_BYTES", l.max_input_bytes},
      {"MTLITE_LIMIT_NUM_THREADS", l.num_threads}};
  out.Printf("\n/* the limits these sizes are for (mtlite_limits) */\n");
  for (const auto& [name, v] : limits) out.Printf("#define %s %d\n", name, v);
  if (fit) {
    out.Printf("\n/* board %s (mtlite info --board): the memory region of each part, and whether all fit */\n",
               a.board.c_str());
    out.Printf("#define MTLITE_BOARD_MODEL_REGION \"%s\"\n", fit->model_region.c_str());
    out.Printf("#define MTLITE_BOARD_FITS %d\n", fit->fits() ? 1 : 0);
  }
  out.Printf("\n#endif /* MTLITE_RAM_BUDGET_H_ */\n");
  return out.Close() ? "" : out.error();
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
           "print the translator arena for these limits (total and per-buffer plan: offset, bytes, live range) and the RAM budget of a translation");
  p.Custom("--threads", "N",
           [a](const std::string& v) {
             return ParseInt(v, 1, 256, &a->limits.num_threads) ? std::string() : "expects an integer in [1, 256]";
           },
           "threads of the translator (--limits)");
  p.String("--header", "FILE", &a->header, "write the RAM budget as C macros (needs --limits)");
  p.Custom("--board", "BOARD",
           [a](const std::string& v) {
             a->board = v;
             return FindBoard(v) ? std::string() : "'" + v + "' is not a known board (" + BoardNames() + ")";
           },
           "with --limits: which memory region of this bare-metal board each part needs and whether it fits "
           "(exit 1 when one does not; --header adds MTLITE_BOARD_* macros)");
  p.Flag("-q,--quiet", &a->quiet, "print nothing but errors");
  p.Check([a] { return !a->header.empty() && !a->limits_given ? std::string("--header needs --limits") : std::string(); });
  p.Check([a] { return !a->board.empty() && !a->limits_given ? std::string("--board needs --limits") : std::string(); });
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
  RamBudget budget;
  bool have_budget = false;
  if (a.limits_given) {
    auto planned = Translator::PlanArena(model, a.limits);
    if (planned.ok()) {
      plan = std::move(planned).value();
      const std::string error = ComputeBudget(a, model, &budget);
      have_budget = error.empty();
      if (!have_budget) {
        std::fprintf(stderr, "mtlite info: RAM budget: %s\n", error.c_str());
        rc = 1;
      }
    } else {
      std::fprintf(stderr, "mtlite info: --limits: %s\n", planned.status().ToString().c_str());
      rc = 1;
    }
  }
  const BoardInfo* board = a.board.empty() ? nullptr : FindBoard(a.board);
  BoardFit fit;
  if (board && have_budget) {
    fit = FitOnBoard(*board, budget.model_flash, budget.arena, budget.model_storage, budget.stack, budget.static_data);
    if (!fit.fits()) {
      for (const BoardFit::Part& p : fit.parts) {
        if (!p.fits) {
          std::fprintf(stderr, "mtlite info: --board %s: the %s (%zu bytes) does not fit %s (%zu bytes)\n", board->name,
                       p.what.c_str(), size_t(p.bytes), p.region.c_str(), size_t(p.region_bytes));
        }
      }
      rc = 1;
    }
  }
  if (!a.header.empty() && have_budget) {
    const std::string error = WriteHeader(a, budget, board ? &fit : nullptr);
    if (!error.empty()) {
      std::fprintf(stderr, "mtlite info: --header: %s\n", error.c_str());
      rc = 1;
    }
  }
  if (a.quiet) return rc;
  if (a.json) {
    PrintJson(a, model, load_ms, profile, verify_result, verify_ms, plan ? &*plan : nullptr,
              have_budget ? &budget : nullptr);
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
  const auto decoding = DecodingDefaultsFields(model);
  if (!decoding.empty()) std::printf("decoding defaults (every interface's, overridable per call):\n");
  for (const auto& [k, v] : decoding) std::printf("  %-24s %s\n", k.c_str(), v.c_str());
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
  if (have_budget) PrintBudget(a, budget);
  if (board && have_budget) PrintBoardFit(*board, fit);
  return rc;
}

}  // namespace cli
}  // namespace mtlite
