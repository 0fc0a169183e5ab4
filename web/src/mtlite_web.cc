// The WebAssembly module's glue to web/mtlite.js, next to the C API (runtime/include/mtlite/mtlite.h),
// which the module exports as it is (cmake/wasm.cmake lists the functions; e.g. a chain of two models
// through a pivot language is mtlite_translator_create_pivot, whose one arena the runtime allocates
// on the module's heap, and mtlite_translator_arena_bytes its size):
//   mtlite_web_alloc / _free     64-byte aligned memory for the model bytes, its storage, the arena
//                                and the input texts (the runtime itself allocates nothing more)
//   mtlite_web_model_info        the config numbers the JavaScript side needs (limits, defaults), or
//                                the loader's message when the model is bad
//   mtlite_web_translate         mtlite_translate with the options as arguments, and token streaming
//                                to the JavaScript import mtlite.stream_event
//   mtlite_web_translate_text    mtlite_translate_text likewise (the text layer)
//   mtlite_web_html_text         the text content of an HTML document as the text layer parses it
//                                (what the sentences of an html call index)
//   mtlite_web_vocab_*           the source tokenizer and its piece strings (Model.tokenize)
// web/mtlite.js reads and writes the C API's structs at the offsets checked below.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "html_markup.h"  // runtime/src: the text layer's HTML parser
#include "model_data.h"   // runtime/src: the model's vocabulary tables
#include "mtlite/mtlite.h"
#include "mtlite/mtlite.hpp"

// The offsets web/mtlite.js uses (wasm32: 4-byte pointers and size_t, 8-byte aligned uint64_t).
static_assert(sizeof(void*) == 4 && sizeof(size_t) == 4, "wasm32");
static_assert(sizeof(mtlite_limits) == 44 && offsetof(mtlite_limits, max_input_bytes) == 20 &&
                  offsetof(mtlite_limits, alignments) == 24 && offsetof(mtlite_limits, profiling) == 32 &&
                  offsetof(mtlite_limits, max_text_bytes) == 40,
              "web/mtlite.js: LIMITS");
static_assert(sizeof(mtlite_hypothesis) == 28 && offsetof(mtlite_hypothesis, text) == 8 &&
                  offsetof(mtlite_hypothesis, score) == 16 && offsetof(mtlite_hypothesis, alignment) == 20 &&
                  offsetof(mtlite_hypothesis, source_tokens) == 24,
              "web/mtlite.js: HYP");
static_assert(sizeof(mtlite_profile_summary) == 32 && offsetof(mtlite_profile_summary, threads) == 8 &&
                  offsetof(mtlite_profile_summary, num_entries) == 20,
              "web/mtlite.js: SUMMARY");
static_assert(sizeof(mtlite_profile_entry) == 48 && offsetof(mtlite_profile_entry, layer) == 12 &&
                  offsetof(mtlite_profile_entry, calls) == 16 && offsetof(mtlite_profile_entry, macs) == 40,
              "web/mtlite.js: ENTRY");
static_assert(sizeof(mtlite_profile_event) == 72 && offsetof(mtlite_profile_event, step) == 16 &&
                  offsetof(mtlite_profile_event, start_ns) == 24 && offsetof(mtlite_profile_event, m) == 56,
              "web/mtlite.js: EVENT");
static_assert(sizeof(mtlite_text_result) == 28 && offsetof(mtlite_text_result, num_sentences) == 8 &&
                  offsetof(mtlite_text_result, first_error) == 16 && offsetof(mtlite_text_result, num_words) == 24,
              "web/mtlite.js: TEXT_RESULT");
static_assert(sizeof(mtlite_text_sentence) == 40 && offsetof(mtlite_text_sentence, target_begin) == 8 &&
                  offsetof(mtlite_text_sentence, status) == 16 && offsetof(mtlite_text_sentence, score) == 24 &&
                  offsetof(mtlite_text_sentence, quality) == 28 && offsetof(mtlite_text_sentence, num_words) == 36,
              "web/mtlite.js: TEXT_SENTENCE");
static_assert(sizeof(mtlite_text_word) == 12 && offsetof(mtlite_text_word, score) == 8, "web/mtlite.js: TEXT_WORD");

extern "C" {

// One streaming event, handed to JavaScript (web/mtlite.js: imports.mtlite.stream_event).
__attribute__((import_module("mtlite"), import_name("stream_event"))) void mtlite_js_stream_event(
    void* user, size_t sentence, const int32_t* ids, int num_ids, const char* text, size_t text_len, int final);

static void StreamToJs(void* user, size_t sentence, const int32_t* ids, int num_ids, const char* text,
                       size_t text_len, int final) {
  mtlite_js_stream_event(user, sentence, ids, num_ids, text, text_len, final);
}

void* mtlite_web_alloc(size_t bytes) { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); }
void mtlite_web_free(void* p) { std::free(p); }

// out[0..8): positions stored (1: a table, max_positions rows; 0: a sinusoid), max_positions, default_beam, default_max_length, source_vocab_size,
// target_vocab_size, has_shortlist, d_model; out[8..14): the model's decoding defaults
// (Model::DefaultTranslateOptions: beam_size, max_length, max_length_ratio as float bits,
// max_length_offset, length_penalty as float bits) and a mask of those the file records (bit i
// for field 8 + i). data: 64-byte aligned. On failure, the loader's message
// (what is wrong with the model) goes to error[0, error_bytes), NUL-terminated and cut to fit: the
// runtime's mtlite_last_error() is set by its C API only, not by this C++ call.
mtlite_status mtlite_web_model_info(const void* data, size_t size, int32_t* out, char* error, size_t error_bytes) {
  if (error_bytes > 0) error[0] = '\0';
  auto model = mtlite::Model::FromBuffer(data, size);
  if (!model.ok()) {
    const mtlite::Status& s = model.status();
    if (error_bytes > 0) {
      const size_t n = s.message().size() < error_bytes - 1 ? s.message().size() : error_bytes - 1;
      std::memcpy(error, s.message().data(), n);
      error[n] = '\0';
    }
    return static_cast<mtlite_status>(s.code());
  }
  const mtlite::ModelConfig& c = model.value()->config();
  const int32_t v[8] = {c.positions == mtlite::PositionKind::kTable ? 1 : 0, c.max_positions, c.default_beam, c.default_max_length,
                        c.source_vocab_size, c.target_vocab_size, model.value()->has_shortlist() ? 1 : 0,
                        c.d_model};
  for (int i = 0; i < 8; ++i) out[i] = v[i];
  const mtlite::TranslateOptions d = model.value()->DefaultTranslateOptions();
  const mtlite::DecodingDefaults& r = model.value()->decoding_defaults();
  out[8] = d.beam_size;
  out[9] = d.max_length;
  std::memcpy(&out[10], &d.max_length_ratio, 4);
  out[11] = d.max_length_offset;
  std::memcpy(&out[12], &d.length_penalty, 4);
  out[13] = (r.beam_size ? 1 : 0) | (r.max_length ? 2 : 0) | (r.max_length_ratio ? 4 : 0) |
            (r.max_length_offset ? 8 : 0) | (r.length_penalty ? 16 : 0);
  return MTLITE_OK;
}

namespace {
// flags: 1 scores, 2 alignments, 4 profile, 8 stream (to mtlite.stream_event with user = the
// translator), 16 shortlist. max_length 0, max_length_offset < 0, and max_length_ratio or
// length_penalty NaN: the default.
mtlite_options WebOptions(mtlite_translator* translator, int beam, int n_best, int max_length, float max_length_ratio,
                          int max_length_offset, float length_penalty, int flags) {
  mtlite_options o;
  mtlite_options_default(&o);
  o.beam_size = beam;
  o.n_best = n_best;
  if (max_length > 0) o.max_length = max_length;
  if (max_length_ratio == max_length_ratio) o.max_length_ratio = max_length_ratio;
  if (max_length_offset >= 0) o.max_length_offset = max_length_offset;
  if (length_penalty == length_penalty) o.length_penalty = length_penalty;
  o.return_scores = (flags & 1) != 0;
  o.return_alignments = (flags & 2) != 0;
  o.profile = (flags & 4) != 0;
  if (flags & 8) {
    o.stream = StreamToJs;
    o.stream_user = translator;
  }
  o.use_shortlist = (flags & 16) != 0;
  return o;
}

void CopyMessage(const mtlite::Status& s, char* error, size_t error_bytes) {
  if (error_bytes == 0) return;
  const size_t n = s.message().size() < error_bytes - 1 ? s.message().size() : error_bytes - 1;
  std::memcpy(error, s.message().data(), n);
  error[n] = '\0';
}
}  // namespace

mtlite_status mtlite_web_translate(mtlite_translator* translator, const char* const* texts, const size_t* lengths,
                                   size_t n, int beam, int n_best, int max_length, float max_length_ratio,
                                   int max_length_offset, float length_penalty, int flags) {
  const mtlite_options o =
      WebOptions(translator, beam, n_best, max_length, max_length_ratio, max_length_offset, length_penalty, flags);
  return mtlite_translate(translator, texts, lengths, n, &o);
}

// The text layer: options as in mtlite_web_translate (n-best 1; flags also 32: quality); split,
// html, max_length_break and language (NULL: the model's) as in mtlite_text_options.
mtlite_status mtlite_web_translate_text(mtlite_translator* translator, const char* text, size_t length, int beam,
                                        int max_length, float max_length_ratio, int max_length_offset,
                                        float length_penalty, int flags, int split, int html, int max_length_break,
                                        const char* language, mtlite_text_result* out) {
  const mtlite_options o =
      WebOptions(translator, beam, 1, max_length, max_length_ratio, max_length_offset, length_penalty, flags);
  mtlite_text_options to;
  mtlite_text_options_default(&to);
  to.split = split;
  to.html = html;
  to.max_length_break = max_length_break;
  to.language = language;
  to.quality = (flags & 32) != 0;
  return mtlite_translate_text(translator, text, length, &o, &to, out);
}

// The text content of html[0, size) as the text layer's parser makes it (character references
// decoded, tags, comments and untranslated elements left out): the text the sentences of an html
// call index, in the source and (parsing the translation) in the target. out: at least size
// bytes (decoding never grows). On failure, the parser's message goes to error.
mtlite_status mtlite_web_html_text(const char* html, size_t size, char* out, size_t* out_len, char* error,
                                   size_t error_bytes) {
  if (error_bytes > 0) error[0] = '\0';
  std::vector<mtlite::text::MarkupItem> items(size + 1);
  size_t num_items = 0, dropped = 0;
  const mtlite::Status s = mtlite::text::ParseMarkup(std::string_view(html, size), out, size + 1, out_len,
                                                     items.data(), items.size(), &num_items, &dropped);
  if (!s.ok()) CopyMessage(s, error, error_bytes);
  return static_cast<mtlite_status>(s.code());
}

// Model.tokenize: the model at data[0, size) (the bytes of a loaded model, which outlive it) with
// its own tables, for its source tokenizer and piece strings; NULL and the loader's message in
// error on failure. Freed by mtlite_web_vocab_free.
void* mtlite_web_vocab_new(const void* data, size_t size, char* error, size_t error_bytes) {
  if (error_bytes > 0) error[0] = '\0';
  auto model = mtlite::Model::FromBuffer(data, size);
  if (!model.ok()) {
    CopyMessage(model.status(), error, error_bytes);
    return nullptr;
  }
  return new std::shared_ptr<const mtlite::Model>(std::move(model).value());
}
void mtlite_web_vocab_free(void* vocab) { delete static_cast<std::shared_ptr<const mtlite::Model>*>(vocab); }

// The source ids of text[0, length) (with the final </s>, as the translator encodes it) and their
// pieces, in one block (freed by mtlite_web_free) at *out: int32 count n, n ids, n + 1 byte offsets
// of the pieces in the bytes that follow them.
mtlite_status mtlite_web_tokenize(const void* vocab, const char* text, size_t length, void** out, char* error,
                                  size_t error_bytes) {
  if (error_bytes > 0) error[0] = '\0';
  *out = nullptr;
  const mtlite::Model& model = **static_cast<const std::shared_ptr<const mtlite::Model>*>(vocab);
  std::vector<int32_t> ids;
  const mtlite::Status s = mtlite::EncodeSource(model, std::string_view(text, length), &ids);
  if (!s.ok()) {
    CopyMessage(s, error, error_bytes);
    return static_cast<mtlite_status>(s.code());
  }
  const auto& pieces = model.data().source_vocab.id_to_piece;
  const size_t n = ids.size();
  size_t bytes = 0;
  for (int32_t id : ids) bytes += size_t(id) < pieces.size() ? pieces[size_t(id)].size() : 0;
  uint8_t* block = static_cast<uint8_t*>(mtlite_web_alloc(4 * (2 * n + 2) + bytes));
  if (!block) return MTLITE_RESOURCE_EXHAUSTED;
  int32_t* head = reinterpret_cast<int32_t*>(block);
  head[0] = int32_t(n);
  uint32_t* offsets = reinterpret_cast<uint32_t*>(head + 1 + n);
  char* chars = reinterpret_cast<char*>(offsets + n + 1);
  uint32_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    head[1 + i] = ids[i];
    offsets[i] = at;
    if (size_t(ids[i]) < pieces.size()) {
      std::memcpy(chars + at, pieces[size_t(ids[i])].data(), pieces[size_t(ids[i])].size());
      at += uint32_t(pieces[size_t(ids[i])].size());
    }
  }
  offsets[n] = at;
  *out = block;
  return MTLITE_OK;
}

}  // extern "C"
