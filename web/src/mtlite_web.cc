// The WebAssembly module's glue to web/mtlite.js, next to the C API (runtime/include/mtlite/mtlite.h),
// which the module exports as it is (cmake/wasm.cmake lists the functions):
//   mtlite_web_alloc / _free     64-byte aligned memory for the model bytes, its storage, the arena
//                                and the input texts (the runtime itself allocates nothing more)
//   mtlite_web_model_info        the config numbers the JavaScript side needs (limits, defaults), or
//                                the loader's message when the model is bad
//   mtlite_web_translate         mtlite_translate with the options as arguments, and token streaming
//                                to the JavaScript import mtlite.stream_event
// web/mtlite.js reads and writes the C API's structs at the offsets checked below.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

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

// out[0..8): positions_stored, max_positions, default_beam, default_max_length, source_vocab_size,
// target_vocab_size, has_shortlist, d_model. data: 64-byte aligned. On failure, the loader's message
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
  const int32_t v[8] = {c.positions_stored ? 1 : 0, c.max_positions, c.default_beam, c.default_max_length,
                        c.source_vocab_size, c.target_vocab_size, model.value()->has_shortlist() ? 1 : 0,
                        c.d_model};
  for (int i = 0; i < 8; ++i) out[i] = v[i];
  return MTLITE_OK;
}

// flags: 1 scores, 2 alignments, 4 profile, 8 stream (to mtlite.stream_event with user = the
// translator), 16 shortlist. max_length 0, max_length_offset < 0, and max_length_ratio or
// length_penalty NaN: the default.
mtlite_status mtlite_web_translate(mtlite_translator* translator, const char* const* texts, const size_t* lengths,
                                   size_t n, int beam, int n_best, int max_length, float max_length_ratio,
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
  return mtlite_translate(translator, texts, lengths, n, &o);
}

}  // extern "C"
