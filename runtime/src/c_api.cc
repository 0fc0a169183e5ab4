// C API over the C++ API. Translate calls allocate nothing (views into the arena); the
// caller-memory functions place the handles in the caller's storage / arena as well.
// No exception reaches a C caller: every entry point that can allocate (a handle, a Status
// message, the C++ objects behind it) runs its body through Guarded, which turns an exception
// into a status and a last-error message.
#include "mtlite/mtlite.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <system_error>
#include <string>
#include <vector>

#include "arena_plan.h"
#include "checked_size.h"
#include "mtlite/mtlite.hpp"

struct mtlite_model {
  std::shared_ptr<const mtlite::Model> model;
  bool heap = true;  // false: placed in caller storage (destroyed in place)
};
struct mtlite_translator {
  std::unique_ptr<mtlite::Translator> translator;
  std::vector<std::string_view> owned_views;  // heap handles: sized max_batch at creation
  std::string_view* views = nullptr;          // max_batch views: translate never allocates
  const mtlite::SentenceResultView* results = nullptr;
  size_t num_results = 0;
  const mtlite::TextResultView* text_result = nullptr;  // the last mtlite_translate_text
  mtlite_stream_fn stream = nullptr;  // the current call's C callback
  void* stream_user = nullptr;
  bool heap = true;  // false: placed in a caller arena (destroyed in place)
};

namespace {

// The last error message of this thread, in a fixed buffer (reporting an error allocates nothing
// more than the Status did). Long messages are cut.
#ifdef MTLITE_NO_THREADS
char g_last_error[512];
#else
thread_local char g_last_error[512];
#endif

void SetLastError(const char* msg, size_t n) {
  n = n < sizeof g_last_error - 1 ? n : sizeof g_last_error - 1;
  std::memcpy(g_last_error, msg, n);
  g_last_error[n] = '\0';
}
mtlite_status Fail(const mtlite::Status& s) {
  SetLastError(s.message().data(), s.message().size());
  return static_cast<mtlite_status>(s.code());
}
mtlite_status Fail(mtlite_status code, const char* msg) {
  SetLastError(msg, std::strlen(msg));
  return code;
}

// Runs an entry point's body; an exception (out of memory, a thread that cannot be started)
// becomes a status. The messages are literals or the exception's own: reporting allocates nothing.
// A build without exceptions (the WebAssembly module) has nothing to catch.
template <class Body>
mtlite_status Guarded(Body&& body) noexcept {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(MTLITE_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::system_error& e) {
    return Fail(MTLITE_RESOURCE_EXHAUSTED, e.what());
  } catch (const std::exception& e) {
    return Fail(MTLITE_INTERNAL, e.what());
  } catch (...) {
    return Fail(MTLITE_INTERNAL, "unknown exception");
  }
#else
  return body();
#endif
}

// Caller memory: handles go first, each in a 64-byte slot, then the C++ object's own part.
constexpr size_t kAlign = 64;
constexpr size_t AlignUp(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
constexpr size_t kModelHandleBytes = AlignUp(sizeof(mtlite_model));
size_t TranslatorHandleBytes(int max_batch) {
  return AlignUp(sizeof(mtlite_translator)) + AlignUp(size_t(max_batch > 0 ? max_batch : 0) * sizeof(std::string_view));
}
bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlign == 0; }

mtlite::TranslatorLimits ToLimits(const mtlite_limits* l) {
  mtlite::TranslatorLimits lim;
  if (l) {
    lim.max_batch = l->max_batch;
    lim.max_source_tokens = l->max_source_tokens;
    lim.max_target_tokens = l->max_target_tokens;
    lim.max_beam = l->max_beam;
    lim.max_n_best = l->max_n_best;
    lim.max_input_bytes = l->max_input_bytes;
    lim.alignments = l->alignments != 0;
    lim.num_threads = l->num_threads;
    lim.profiling = l->profiling != 0;
    lim.profile_events = l->profile_events;
    lim.max_text_bytes = l->max_text_bytes;
  }
  return lim;
}

// A heap handle for a created translator (or the creation's error).
mtlite_status HeapHandle(mtlite::Result<std::unique_ptr<mtlite::Translator>> r, const mtlite::TranslatorLimits& lim,
                         mtlite_translator** out) {
  if (!r.ok()) return Fail(r.status());
  auto t = std::make_unique<mtlite_translator>();
  t->translator = std::move(r.value());
  t->owned_views.resize(size_t(lim.max_batch));
  t->views = t->owned_views.data();
  *out = t.release();
  return MTLITE_OK;
}

// The C options as the C++ ones; the stream callback goes through the handle.
mtlite::TranslateOptions ToOptions(const mtlite_options* o, mtlite_translator* t) {
  mtlite::TranslateOptions opt;
  if (!o) return opt;
  opt.beam_size = o->beam_size;
  opt.max_length = o->max_length;
  opt.max_length_ratio = o->max_length_ratio;
  opt.max_length_offset = o->max_length_offset;
  opt.length_penalty = o->length_penalty;
  opt.n_best = o->n_best;
  opt.return_scores = o->return_scores != 0;
  opt.return_alignments = o->return_alignments != 0;
  opt.alignment_layer = o->alignment_layer;
  opt.profile = o->profile != 0;
  opt.use_shortlist = o->use_shortlist != 0;
  if (o->stream) {
    t->stream = o->stream;
    t->stream_user = o->stream_user;
    opt.stream = [](const mtlite::StreamEvent& e, void* user) {
      const mtlite_translator* tr = static_cast<const mtlite_translator*>(user);
      tr->stream(tr->stream_user, e.sentence, e.ids, e.num_ids, e.text.data(), e.text.size(), e.final ? 1 : 0);
    };
    opt.stream_user = t;
  }
  return opt;
}

}  // namespace

extern "C" {

const char* mtlite_version(void) { return mtlite::Version(); }
const char* mtlite_kernel_table(void) { return mtlite::KernelTableName(); }
const char* mtlite_last_error(void) { return g_last_error; }

void mtlite_limits_default(mtlite_limits* l) {
  if (!l) return;
  mtlite::TranslatorLimits d;
  *l = {d.max_batch,       d.max_source_tokens, d.max_target_tokens, d.max_beam,
        d.max_n_best,      d.max_input_bytes,   d.alignments ? 1 : 0, d.num_threads,
        d.profiling ? 1 : 0, d.profile_events, d.max_text_bytes};
}

void mtlite_text_options_default(mtlite_text_options* o) {
  if (!o) return;
  mtlite::TextOptions d;
  *o = {int(d.split), d.html ? 1 : 0, d.max_length_break, nullptr, d.quality ? 1 : 0};
}

void mtlite_options_default(mtlite_options* o) {
  if (!o) return;
  mtlite::TranslateOptions d;
  *o = {d.beam_size, d.max_length, d.max_length_ratio, d.max_length_offset, d.length_penalty,
        d.n_best, d.return_scores ? 1 : 0, d.return_alignments ? 1 : 0, d.alignment_layer, d.profile ? 1 : 0, nullptr, nullptr, d.use_shortlist ? 1 : 0};
}

void mtlite_options_from_model(const mtlite_model* model, mtlite_options* o) {
  if (!o) return;
  mtlite_options_default(o);
  if (!model || !model->model) return;
  const mtlite::TranslateOptions d = model->model->DefaultTranslateOptions();
  o->beam_size = d.beam_size;
  o->max_length = d.max_length;
  o->max_length_ratio = d.max_length_ratio;
  o->max_length_offset = d.max_length_offset;
  o->length_penalty = d.length_penalty;
}

mtlite_status mtlite_model_load(const char* path, int verify, mtlite_model** out) {
  return Guarded([&]() -> mtlite_status {
    if (!path || !out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = nullptr;
    mtlite::LoadOptions lo;
    lo.verify_checksums = verify != 0;
    auto r = mtlite::Model::Load(path, lo);
    if (!r.ok()) return Fail(r.status());
    *out = new mtlite_model{std::move(r.value()), true};
    return MTLITE_OK;
  });
}

mtlite_status mtlite_model_storage_bytes(const void* data, size_t size, size_t* bytes) {
  return Guarded([&]() -> mtlite_status {
    if (!data || !bytes) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *bytes = 0;
    auto r = mtlite::Model::StorageBytes(data, size);
    if (!r.ok()) return Fail(r.status());
    *bytes = kModelHandleBytes + r.value();
    return MTLITE_OK;
  });
}

mtlite_status mtlite_model_from_buffer_storage(const void* data, size_t size, int verify, void* storage,
                                               size_t storage_bytes, mtlite_model** out) {
  return Guarded([&]() -> mtlite_status {
    if (!data || !storage || !out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = nullptr;
    if (!Aligned(storage)) return Fail(MTLITE_INVALID_ARGUMENT, "model storage must be 64-byte aligned");
    size_t need = 0;
    if (mtlite_status st = mtlite_model_storage_bytes(data, size, &need); st != MTLITE_OK) return st;
    if (storage_bytes < need) {
      return Fail(mtlite::Status(mtlite::StatusCode::kResourceExhausted,
                                 "model storage of " + std::to_string(storage_bytes) + " bytes is too small: this model needs " +
                                     std::to_string(need) + " bytes (mtlite_model_storage_bytes; `mtlite info --limits` prints it)"));
    }
    mtlite::LoadOptions lo;
    lo.verify_checksums = verify != 0;
    uint8_t* s = static_cast<uint8_t*>(storage);
    auto r = mtlite::Model::FromBuffer(data, size, s + kModelHandleBytes, storage_bytes - kModelHandleBytes, lo);
    if (!r.ok()) return Fail(r.status());
    *out = new (s) mtlite_model{std::move(r.value()), false};
    return MTLITE_OK;
  });
}

mtlite_status mtlite_model_from_buffer(const void* data, size_t size, int verify, mtlite_model** out) {
  return Guarded([&]() -> mtlite_status {
    if (!data || !out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = nullptr;
    mtlite::LoadOptions lo;
    lo.verify_checksums = verify != 0;
    auto r = mtlite::Model::FromBuffer(data, size, lo);
    if (!r.ok()) return Fail(r.status());
    *out = new mtlite_model{std::move(r.value()), true};
    return MTLITE_OK;
  });
}

void mtlite_model_free(mtlite_model* m) {
  if (!m) return;
  if (m->heap) {
    delete m;
  } else {
    m->~mtlite_model();
  }
}

mtlite_status mtlite_translator_create(const mtlite_model* m, const mtlite_limits* l, mtlite_translator** out) {
  return Guarded([&]() -> mtlite_status {
    if (!m || !out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = nullptr;
    const mtlite::TranslatorLimits lim = ToLimits(l);
    return HeapHandle(mtlite::Translator::Create(m->model, lim), lim, out);
  });
}

mtlite_status mtlite_translator_create_pivot(const mtlite_model* first, const mtlite_model* second,
                                             const mtlite_limits* l, mtlite_translator** out) {
  return Guarded([&]() -> mtlite_status {
    if (!first || !second || !out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = nullptr;
    const mtlite::TranslatorLimits lim = ToLimits(l);
    return HeapHandle(mtlite::Translator::Create(first->model, second->model, lim), lim, out);
  });
}

mtlite_status mtlite_arena_bytes(const mtlite_model* m, const mtlite_limits* l, size_t* bytes) {
  return Guarded([&]() -> mtlite_status {
    if (!m || !bytes) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *bytes = 0;
    const mtlite::TranslatorLimits lim = ToLimits(l);
    auto r = mtlite::Translator::ArenaBytes(*m->model, lim);
    if (!r.ok()) return Fail(r.status());
    const mtlite::detail::CheckedSize total = mtlite::detail::CheckedSize(TranslatorHandleBytes(lim.max_batch)) + r.value();
    if (!total.ok()) return Fail(mtlite::detail::ArenaTooLarge("the arena with the handle"));
    *bytes = total.value();
    return MTLITE_OK;
  });
}

mtlite_status mtlite_translator_create_in_arena(const mtlite_model* m, const mtlite_limits* l, void* arena,
                                                size_t arena_bytes, mtlite_translator** out) {
  return Guarded([&]() -> mtlite_status {
    if (!m || !arena || !out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = nullptr;
    if (!Aligned(arena)) return Fail(MTLITE_INVALID_ARGUMENT, "the arena must be 64-byte aligned");
    const mtlite::TranslatorLimits lim = ToLimits(l);
    size_t need = 0;
    if (mtlite_status st = mtlite_arena_bytes(m, l, &need); st != MTLITE_OK) return st;
    if (arena_bytes < need) {
      return Fail(mtlite::Status(mtlite::StatusCode::kResourceExhausted,
                                 "arena of " + std::to_string(arena_bytes) + " bytes is too small: these limits need " +
                                     std::to_string(need) + " bytes (mtlite_arena_bytes; `mtlite info --limits` prints it)"));
    }
    uint8_t* a = static_cast<uint8_t*>(arena);
    const size_t handle = TranslatorHandleBytes(lim.max_batch);
    auto r = mtlite::Translator::Create(m->model, lim, a + handle, arena_bytes - handle);
    if (!r.ok()) return Fail(r.status());
    auto* t = new (a) mtlite_translator;
    t->translator = std::move(r.value());
    t->views = reinterpret_cast<std::string_view*>(a + AlignUp(sizeof(mtlite_translator)));
    for (int i = 0; i < lim.max_batch; ++i) new (t->views + i) std::string_view();
    t->heap = false;
    *out = t;
    return MTLITE_OK;
  });
}

size_t mtlite_translator_arena_bytes(const mtlite_translator* t) { return t ? t->translator->arena_bytes() : 0; }
void mtlite_translator_free(mtlite_translator* t) {
  if (!t) return;
  if (t->heap) {
    delete t;
  } else {
    t->~mtlite_translator();
  }
}

mtlite_status mtlite_translate(mtlite_translator* t, const char* const* texts, const size_t* lengths, size_t n,
                               const mtlite_options* o) {
  return Guarded([&]() -> mtlite_status {
    if (!t || (!texts && n > 0)) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    t->results = nullptr;
    t->num_results = 0;
    t->text_result = nullptr;
    if (n > size_t(t->translator->limits().max_batch))
      return Fail(MTLITE_OUT_OF_RANGE, "more sentences than max_batch");
    const mtlite::TranslateOptions opt = ToOptions(o, t);
    const mtlite::SentenceResultView* res = nullptr;
    for (size_t i = 0; i < n; ++i) {
      if (!texts[i]) return Fail(MTLITE_INVALID_ARGUMENT, "null text");
      t->views[i] = std::string_view(texts[i], lengths ? lengths[i] : std::strlen(texts[i]));
    }
    mtlite::Status s = t->translator->TranslateViews(t->views, n, opt, &res);
    if (!s.ok()) return Fail(s);
    t->results = res;
    t->num_results = n;
    return MTLITE_OK;
  });
}

int mtlite_result_count(const mtlite_translator* t, size_t sentence) {
  if (!t || sentence >= t->num_results) return 0;
  return t->results[sentence].num_hypotheses;
}

mtlite_status mtlite_result_get(const mtlite_translator* t, size_t sentence, int k, mtlite_hypothesis* out) {
  if (!t || !out || sentence >= t->num_results || k < 0 || k >= t->results[sentence].num_hypotheses)
    return Fail(MTLITE_OUT_OF_RANGE, "no such result");
  const mtlite::HypothesisView& h = t->results[sentence].hypotheses[k];
  *out = {h.ids, h.num_ids, h.text.data(), h.text.size(), h.score, h.alignment, h.source_tokens};
  return MTLITE_OK;
}

mtlite_status mtlite_translate_text(mtlite_translator* t, const char* text, size_t length, const mtlite_options* o,
                                    const mtlite_text_options* to, mtlite_text_result* out) {
  return Guarded([&]() -> mtlite_status {
    if (!t || !out || (!text && length > 0)) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
    *out = mtlite_text_result{};
    t->results = nullptr;
    t->num_results = 0;
    t->text_result = nullptr;
    mtlite::TextOptions topt;
    if (to) {
      if (to->split < 0 || to->split > 3) return Fail(MTLITE_INVALID_ARGUMENT, "text_options.split: unknown mode");
      topt.split = static_cast<mtlite::SplitMode>(to->split);
      topt.html = to->html != 0;
      topt.max_length_break = to->max_length_break;
      if (to->language) topt.language = to->language;
      topt.quality = to->quality != 0;
    }
    const mtlite::TranslateOptions opt = ToOptions(o, t);
    const mtlite::TextResultView* r = nullptr;
    mtlite::Status s = t->translator->TranslateText(std::string_view(text ? text : "", length), topt, opt, &r);
    if (!s.ok()) return Fail(s);
    t->text_result = r;
    *out = {r->text.data(), r->text.size(), r->num_sentences, r->failed_sentences, r->first_error.data(),
            r->first_error.size(), r->num_words};
    return MTLITE_OK;
  });
}

mtlite_status mtlite_text_sentence_get(const mtlite_translator* t, size_t i, mtlite_text_sentence* out) {
  if (!t || !out || !t->text_result || i >= t->text_result->num_sentences)
    return Fail(MTLITE_OUT_OF_RANGE, "no such sentence");
  const mtlite::TextSentenceView& v = t->text_result->sentences[i];
  *out = {v.source_begin, v.source_end, v.target_begin, v.target_end, int(v.status), v.pieces, v.score,
          v.quality, v.first_word, v.num_words};
  return MTLITE_OK;
}

mtlite_status mtlite_text_word_get(const mtlite_translator* t, size_t i, mtlite_text_word* out) {
  if (!t || !out || !t->text_result || i >= t->text_result->num_words) return Fail(MTLITE_OUT_OF_RANGE, "no such word");
  const mtlite::TextWordView& w = t->text_result->words[i];
  *out = {w.target_begin, w.target_end, w.score};
  return MTLITE_OK;
}

static const mtlite::ProfileView* ProfileOf(const mtlite_translator* t) {
  return t ? t->translator->last_profile() : nullptr;
}

mtlite_status mtlite_profile_summary_get(const mtlite_translator* t, mtlite_profile_summary* out) {
  const mtlite::ProfileView* v = ProfileOf(t);
  if (!out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
  if (!v) return Fail(MTLITE_OUT_OF_RANGE, "the last call was not profiled");
  *out = {v->wall_ns, v->threads, v->sentences, v->steps, v->num_entries, v->num_events, v->dropped_events};
  return MTLITE_OK;
}

mtlite_status mtlite_profile_entry_get(const mtlite_translator* t, size_t i, mtlite_profile_entry* out) {
  const mtlite::ProfileView* v = ProfileOf(t);
  if (!out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
  if (!v || i >= v->num_entries) return Fail(MTLITE_OUT_OF_RANGE, "no such profile entry");
  const mtlite::ProfileEntry& e = v->entries[i];
  *out = {e.op, e.component, e.parent, e.layer, e.calls, e.total_ns, e.bytes, e.macs};
  return MTLITE_OK;
}

mtlite_status mtlite_profile_event_get(const mtlite_translator* t, size_t i, mtlite_profile_event* out) {
  const mtlite::ProfileView* v = ProfileOf(t);
  if (!out) return Fail(MTLITE_INVALID_ARGUMENT, "null argument");
  if (!v || i >= v->num_events) return Fail(MTLITE_OUT_OF_RANGE, "no such profile event");
  const mtlite::ProfileEvent& e = v->events[i];
  *out = {e.op, e.layer, e.lane, e.depth, e.step, e.start_ns, e.end_ns, e.bytes, e.macs, e.m, e.n, e.k};
  return MTLITE_OK;
}

}  // extern "C"
