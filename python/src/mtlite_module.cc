// mtlite._mtlite: the C++ half of the Python package (pybind11). The public, documented API is
// python/mtlite/__init__.py; this module stays small and typed by position:
//   _Model(path, verify_checksums)            shared, memory-mapped model
//   _Translator(model, limits...)             one arena; calls are serialised by a mutex
//   _Stream (from _Translator.stream)         one streamed translation on a worker thread
//   convert(src, out_path, quantize, vocab, semantics)  the host converter
// Every call that runs the model releases the GIL, so two Python threads with two translators
// translate in parallel. Runtime errors (mtlite::Status) become the exception classes below,
// carrying the runtime's message. Records (limits, plans, profiles) become dicts in records.cc.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "model_data.h"
#include "model_spec.h"
#include "mtlite/mtlite.hpp"
#include "records.h"
#include "sentence_split.h"
#include "tokenizer.h"

#ifdef MTLITE_PY_HAS_CONVERTER
#include "ct2_convert.h"
#include "hf_convert.h"
#include "marian_convert.h"
#include "io.h"
#endif

namespace py = pybind11;
using namespace pybind11::literals;  // "key"_a = value

namespace mtlite {
namespace python {
namespace {

// ---- errors ------------------------------------------------------------------------------

struct StatusError {
  Status status;
};

// Exception classes by StatusCode (index = code); [0] is the base class mtlite.Error.
PyObject* g_errors[9] = {};

[[noreturn]] void Throw(const Status& s) { throw StatusError{s}; }
void Check(const Status& s) {
  if (!s.ok()) Throw(s);
}

void RegisterErrors(py::module_& m) {
  struct Spec {
    StatusCode code;
    const char* name;
    PyObject* extra_base;
    const char* doc;
  };
  const Spec specs[] = {
      {StatusCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "Bad caller input: invalid UTF-8, bad option values, ids outside the vocabulary."},
      {StatusCode::kInvalidModel, "InvalidModelError", nullptr, "Malformed, truncated or inconsistent model file."},
      {StatusCode::kChecksumMismatch, "ChecksumMismatchError", nullptr,
       "A data buffer's CRC32C does not match (bit rot, bad copy)."},
      {StatusCode::kIoError, "IoError", PyExc_OSError, "A file could not be read or written."},
      {StatusCode::kOutOfRange, "OutOfRangeError", PyExc_ValueError,
       "Input beyond the translator's declared limits (batch, tokens, bytes)."},
      {StatusCode::kUnsupported, "UnsupportedError", nullptr, "Valid but not supported by this build."},
      {StatusCode::kResourceExhausted, "ResourceExhaustedError", PyExc_MemoryError,
       "Allocation failure at creation time (arena, thread pool)."},
      {StatusCode::kInternal, "InternalError", nullptr, "A bug in mtlite: please report it."},
  };
  PyObject* base = PyErr_NewExceptionWithDoc("mtlite._mtlite.Error",
                                             "Base class of mtlite's errors; `code` names the runtime status.",
                                             PyExc_RuntimeError, nullptr);
  if (!base) throw py::error_already_set();
  g_errors[0] = base;
  py::setattr(base, "code", py::str("UNKNOWN"));
  m.attr("Error") = py::handle(base);
  for (const Spec& s : specs) {
    py::tuple bases = s.extra_base ? py::make_tuple(py::handle(base), py::handle(s.extra_base))
                                   : py::make_tuple(py::handle(base));
    const std::string qual = std::string("mtlite._mtlite.") + s.name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), s.doc, bases.ptr(), nullptr);
    if (!cls) throw py::error_already_set();
    py::setattr(cls, "code", py::str(StatusCodeName(s.code)));
    g_errors[static_cast<int>(s.code)] = cls;
    m.attr(s.name) = py::handle(cls);
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      const int code = static_cast<int>(e.status.code());
      PyObject* cls = code > 0 && code < 9 && g_errors[code] ? g_errors[code] : g_errors[0];
      PyErr_SetString(cls, e.status.message().c_str());
    }
  });
}

// ---- helpers -----------------------------------------------------------------------------

template <class T>
py::array_t<T> ToArray(const T* data, size_t n) {
  py::array_t<T> a(static_cast<py::ssize_t>(n));
  if (n) std::memcpy(a.mutable_data(), data, n * sizeof(T));
  return a;
}

std::vector<int32_t> ToIds(const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& a,
                           const char* what) {
  if (a.ndim() != 1) Throw(Status(StatusCode::kInvalidArgument, std::string(what) + ": expected a 1-D sequence of ids"));
  std::vector<int32_t> out(static_cast<size_t>(a.size()));
  const int64_t* p = a.data();
  for (size_t i = 0; i < out.size(); ++i) {
    if (p[i] < 0 || p[i] > 0x7fffffff)
      Throw(Status(StatusCode::kInvalidArgument, std::string(what) + ": id " + std::to_string(p[i]) + " at position " +
                                                     std::to_string(i) + " is not a valid token id"));
    out[i] = static_cast<int32_t>(p[i]);
  }
  return out;
}

// text -> vocab ids (without </s>) with one side's tokenizer; the workspace grows for the rare
// input whose normalized form expands beyond the tokenizer's sizing assumption.
std::vector<int32_t> EncodeText(const SpmTokenizer& tok, std::string_view text) {
  Check(tok.status());
  for (size_t budget = std::max<size_t>(text.size(), 16);; budget *= 4) {
    std::vector<uint8_t> ws(SpmTokenizer::WorkspaceBytes(budget));
    std::vector<int32_t> ids(budget * SpmTokenizer::kMaxNormalizedPerInputByte + 16);
    int n = 0;
    const Status s = tok.Encode(text, ws.data(), ws.size(), ids.data(), static_cast<int>(ids.size()), &n);
    if (s.code() == StatusCode::kOutOfRange && budget < text.size() * 64) continue;
    Check(s);
    ids.resize(static_cast<size_t>(n));
    return ids;
  }
}

// ---- model -------------------------------------------------------------------------------

class PyModel {
 public:
  PyModel(const std::string& path, bool verify_checksums) : path_(path) {
    LoadOptions o;
    o.verify_checksums = verify_checksums;
    Result<std::shared_ptr<const Model>> r = Status();
    {
      py::gil_scoped_release nogil;  // mapping + validation (+ CRC of every buffer) can take a while
      r = Model::Load(path, o);
    }
    if (!r.ok()) {  // name the file unless the runtime's message already does
      const std::string& msg = r.status().message();
      Throw(msg.find(path) == std::string::npos ? Status(r.status().code(), path + ": " + msg) : r.status());
    }
    model_ = r.value();
    source_ = std::make_unique<SpmTokenizer>(model_->data().source_spm, model_->data().source_vocab);
    target_ = std::make_unique<SpmTokenizer>(model_->data().target_spm, model_->data().target_vocab);
  }

  const std::shared_ptr<const Model>& model() const { return model_; }
  const std::string& path() const { return path_; }
  size_t file_size() const { return model_->file_size(); }
  bool has_shortlist() const { return model_->has_shortlist(); }
  // The recorded decoding defaults (Model::decoding_defaults): only the recorded keys.
  py::dict DecodingDefaults() const {
    const mtlite::DecodingDefaults& d = model_->decoding_defaults();
    py::dict out;
    if (d.beam_size) out["beam_size"] = *d.beam_size;
    if (d.max_length) out["max_length"] = *d.max_length;
    if (d.max_length_ratio) out["max_length_ratio"] = *d.max_length_ratio;
    if (d.max_length_offset) out["max_length_offset"] = *d.max_length_offset;
    if (d.length_penalty) out["length_penalty"] = *d.length_penalty;
    if (!d.empty()) out["source"] = std::string(d.source);
    return out;
  }

  // The fields of the spec table (runtime/src/model_spec.cc), in its order.
  py::dict Config() const {
    using T = detail::FieldValue::Type;
    py::dict d;
    for (const detail::ConfigField& f : detail::ConfigFields()) {
      const detail::FieldValue v = detail::ValueOf(f, model_->config());
      switch (v.type) {
        case T::kInt: d[f.name] = v.i; break;
        case T::kFloat: d[f.name] = v.f; break;
        case T::kBool: d[f.name] = v.b; break;
        case T::kString: d[f.name] = py::str(v.s.data(), v.s.size()); break;
        case T::kIntList: d[f.name] = *v.ids; break;
      }
    }
    return d;
  }

  size_t ArenaBytes(const TranslatorLimits& limits) const {
    Result<size_t> r = Translator::ArenaBytes(*model_, limits);
    Check(r.status());
    return r.value();
  }

  py::dict ArenaPlan(const TranslatorLimits& limits) const {
    Result<ArenaPlanInfo> r = Translator::PlanArena(*model_, limits);
    Check(r.status());
    return ArenaPlanDict(r.value());
  }

  py::list SizeProfile() const { return SizeProfileList(*model_); }

  void VerifyChecksums() const {
    Status s;
    {
      py::gil_scoped_release nogil;
      s = model_->VerifyChecksums();
    }
    Check(s);
  }

  py::array_t<int32_t> Encode(const std::string& text, bool target) const {
    std::vector<int32_t> ids;
    {
      py::gil_scoped_release nogil;
      ids = EncodeText(target ? *target_ : *source_, text);
    }
    return ToArray(ids.data(), ids.size());
  }

  // Source tokens of a text as the translator sees it (ids + </s>; 0 for an empty text).
  size_t SourceTokens(std::string_view text) const {
    const size_t n = EncodeText(*source_, text).size();
    return n ? n + 1 : 0;
  }

  // For sorting by length: the source tokens of each text as a translator with these limits
  // counts them (ids + </s>; 0 for an empty text). A text that translator rejects (invalid
  // UTF-8, more than max_input_bytes bytes or max_source_tokens tokens) counts 0 too.
  std::vector<int> SourceLengths(const std::vector<std::string>& texts, size_t max_input_bytes,
                                 int max_source_tokens) const {
    std::vector<int> lengths(texts.size(), 0);
    if (max_source_tokens < 2) return lengths;  // room for nothing but </s>: every text fails or is empty
    py::gil_scoped_release nogil;
    std::vector<uint8_t> workspace(SpmTokenizer::WorkspaceBytes(max_input_bytes));
    std::vector<int32_t> ids(static_cast<size_t>(max_source_tokens));
    for (size_t i = 0; i < texts.size(); ++i) {
      int n = 0;
      if (texts[i].size() <= max_input_bytes &&
          source_->Encode(texts[i], workspace.data(), workspace.size(), ids.data(), max_source_tokens - 1, &n).ok() &&
          n > 0)
        lengths[i] = n + 1;
    }
    return lengths;
  }

  std::string Decode(const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& ids) const {
    const std::vector<int32_t> v = ToIds(ids, "decode");
    std::string text;
    Check(DecodeTarget(*model_, v.data(), static_cast<int>(v.size()), &text));
    return text;
  }

 private:
  std::string path_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<SpmTokenizer> source_, target_;
};

// ---- translator --------------------------------------------------------------------------

class PyTranslator {
 public:
  PyTranslator(std::shared_ptr<PyModel> model, const TranslatorLimits& limits,
               std::shared_ptr<PyModel> second = nullptr)
      : model_(std::move(model)), second_(std::move(second)) {
    Result<std::unique_ptr<Translator>> r = Status();
    {
      py::gil_scoped_release nogil;
      r = second_ ? Translator::Create(model_->model(), second_->model(), limits)
                  : Translator::Create(model_->model(), limits);
    }
    Check(r.status());
    tr_ = std::move(r.value());
  }

  size_t arena_bytes() const { return tr_->arena_bytes(); }
  py::dict Limits() const { return LimitsDict(tr_->limits()); }
  std::shared_ptr<PyModel> model() const { return model_; }

  // One call of the runtime; returns per sentence a list of (text, ids, score, alignment)
  // tuples, best first. score is None unless options.return_scores, alignment None unless
  // options.return_alignments ([num_ids + 1][source_tokens] float32).
  py::list Translate(const std::vector<std::string>& texts, const TranslateOptions& options) {
    std::vector<TranslationResult> res;
    std::vector<size_t> src_tokens;
    Status s;
    {
      py::gil_scoped_release nogil;
      {
        std::lock_guard<std::mutex> lock(mu_);
        const auto t0 = std::chrono::steady_clock::now();
        s = tr_->Translate(texts, options, &res);  // copies the results out of the arena
        runtime_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      // The runtime's alignment rows span the batch's padded source length; each result gets
      // the columns of its own source tokens (the others are 0).
      if (s.ok() && options.return_alignments)
        for (const std::string& t : texts) src_tokens.push_back(model_->SourceTokens(t));
    }
    Check(s);
    py::list out;
    for (size_t i = 0; i < texts.size(); ++i) {
      py::list hyps;
      for (const Hypothesis& h : res[i].hypotheses) {
        py::object score = options.return_scores ? py::object(py::float_(h.score)) : py::object(py::none());
        py::object align = py::none();
        if (options.return_alignments) {  // [num_ids + 1][own source tokens]; an empty input: [1][0]
          const size_t rows = h.ids.size() + 1;
          const size_t cols = h.alignment.empty() ? 0 : std::min(src_tokens[i], size_t(h.source_tokens));
          py::array_t<float> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
          for (size_t r = 0; r < rows && cols; ++r)
            std::memcpy(a.mutable_data() + r * cols, h.alignment.data() + r * size_t(h.source_tokens),
                        sizeof(float) * cols);
          align = std::move(a);
        }
        hyps.append(py::make_tuple(py::str(h.text), ToArray(h.ids.data(), h.ids.size()),
                                   std::move(score), std::move(align)));
      }
      out.append(std::move(hyps));
    }
    return out;
  }

  // Translator::TranslateText: (text, [(source_begin, source_end, target_begin, target_end,
  // error code name or None, pieces, score)], failed, first_error, plain_source, plain_target)
  // (byte offsets; the plain texts are those the offsets index: the input / the translation, or
  // their text content with html).
  py::tuple TranslateText(const std::string& text, const TranslateOptions& options, int split, bool html,
                          int max_length_break, const std::string& language, bool quality) {
    TextOptions to;
    to.quality = quality;
    to.split = static_cast<SplitMode>(split);
    to.html = html;
    to.max_length_break = max_length_break;
    to.language = language;
    std::string out, first_error, plain_source, plain_target;
    std::vector<TextSentenceView> sentences;
    std::vector<TextWordView> words;
    size_t failed = 0;
    Status s;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      const auto t0 = std::chrono::steady_clock::now();
      const TextResultView* r = nullptr;
      s = tr_->TranslateText(text, to, options, &r);
      runtime_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s.ok()) {
        out.assign(r->text);
        first_error.assign(r->first_error);
        sentences.assign(r->sentences, r->sentences + r->num_sentences);
        words.assign(r->words, r->words + r->num_words);
        failed = r->failed_sentences;
        plain_source.assign(html ? r->plain_source : std::string_view(text));
        plain_target.assign(html ? r->plain_target : r->text);
      }
    }
    Check(s);
    py::list sl;
    for (const TextSentenceView& v : sentences)
      sl.append(py::make_tuple(v.source_begin, v.source_end, v.target_begin, v.target_end,
                               v.status == StatusCode::kOk ? py::object(py::none())
                                                           : py::object(py::str(StatusCodeName(v.status))),
                               v.pieces, v.score, v.quality, v.first_word, v.num_words));
    py::list wl;
    for (const TextWordView& w : words) wl.append(py::make_tuple(w.target_begin, w.target_end, w.score));
    return py::make_tuple(py::bytes(out), sl, failed, py::str(first_error), py::bytes(plain_source),
                          py::bytes(plain_target), wl);
  }

  // Teacher forcing: for each (source ids incl. </s>, target ids incl. </s>) pair, the
  // log-probability of every target token given the source and the previous target tokens:
  // log_softmax of the model's raw logits (final_logits_bias included; no generation-time
  // processing such as the pad mask or forced </s>), computed in double precision.
  py::list Score(const std::vector<py::array_t<int64_t, py::array::c_style | py::array::forcecast>>& sources,
                 const std::vector<py::array_t<int64_t, py::array::c_style | py::array::forcecast>>& targets) {
    if (sources.size() != targets.size())
      Throw(Status(StatusCode::kInvalidArgument, "score: " + std::to_string(sources.size()) + " sources but " +
                                                     std::to_string(targets.size()) + " targets"));
    std::vector<std::vector<int32_t>> src, tgt;
    for (size_t i = 0; i < sources.size(); ++i) {
      src.push_back(ToIds(sources[i], "score source"));
      tgt.push_back(ToIds(targets[i], "score target"));
    }
    const size_t V = size_t(model_->model()->config().target_vocab_size);
    std::vector<std::vector<float>> logp(src.size());
    Status s;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<float> logits;
      for (size_t i = 0; i < src.size() && s.ok(); ++i) {
        const size_t T = tgt[i].size();
        if (T == 0) {
          s = Status(StatusCode::kInvalidArgument, "pair " + std::to_string(i) + ": empty target (it must end with </s>)");
          break;
        }
        logits.resize(T * V);
        s = tr_->ForcedLogits(src[i].data(), static_cast<int>(src[i].size()), tgt[i].data(), static_cast<int>(T),
                              logits.data());
        if (!s.ok()) {
          s = Status(s.code(), "pair " + std::to_string(i) + ": " + s.message());
          break;
        }
        logp[i].resize(T);
        for (size_t t = 0; t < T; ++t) {
          const float* row = logits.data() + t * V;
          double mx = -INFINITY;
          for (size_t v = 0; v < V; ++v) mx = std::max(mx, double(row[v]));
          double sum = 0;
          for (size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - mx);
          logp[i][t] = static_cast<float>(double(row[size_t(tgt[i][t])]) - mx - std::log(sum));
        }
      }
    }
    Check(s);
    py::list out;
    for (auto& l : logp) out.append(ToArray(l.data(), l.size()));
    return out;
  }

  // The profile of the last translate call (a dict, see ProfileDict), or None when that call was
  // not profiled or failed.
  py::object LastProfile() {
    std::unique_ptr<ProfileCopy> p;
    {
      py::gil_scoped_release nogil;
      std::lock_guard<std::mutex> lock(mu_);
      if (const ProfileView* v = tr_->last_profile()) p = std::make_unique<ProfileCopy>(*v);
    }
    return p ? py::object(ProfileDict(p->view)) : py::object(py::none());
  }

  // For a thread that does not hold the GIL (the streaming worker): runs `call(translator)` under
  // the mutex, counted in runtime_seconds.
  template <class F>
  Status CallWithoutGil(F&& call) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto t0 = std::chrono::steady_clock::now();
    Status s = call(*tr_);
    runtime_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
  }

 private:
  std::shared_ptr<PyModel> model_;  // keeps the mapping alive as long as the translator
  std::shared_ptr<PyModel> second_;  // a pivot chain's second model, or null
  std::unique_ptr<Translator> tr_;
  // One translation at a time per arena. Taken only without the GIL, and released before the GIL
  // is taken again (results are copied out under it, turned into Python objects after): no
  // Python code, nor a garbage collection that drops a _Stream, ever runs while it is held.
  std::mutex mu_;
  double runtime_seconds_ = 0;  // time inside the runtime's translate calls, guarded by mu_

 public:
  double runtime_seconds() {
    std::lock_guard<std::mutex> lock(mu_);
    return runtime_seconds_;
  }
};

// ---- streaming ---------------------------------------------------------------------------

// One streamed translation of one text. Start() runs the runtime call on a worker thread that
// never takes the GIL: the runtime's stream callback copies each event into a queue under a
// mutex, and Next(), on the Python thread, waits for the next event with the GIL released.
// Close() and the destructor wait for the worker, with the GIL released: the runtime has no
// cancellation, so an early close lets the running call finish and drops its remaining events.
// The worker needs the translator's mutex, which another thread may hold for a call on the same
// Translator; that thread never needs the GIL while holding it (see PyTranslator::mu_), so the
// wait ends once that call and then the streamed one have finished, with or without the GIL.
class PyStream {
 public:
  PyStream(py::object owner, PyTranslator* tr, std::string text, const TranslateOptions& options)
      : owner_(std::move(owner)), tr_(tr), text_(std::move(text)), options_(options) {
    options_.stream = &PyStream::OnEvent;
    options_.stream_user = this;
  }
  PyStream(const PyStream&) = delete;
  PyStream& operator=(const PyStream&) = delete;
  ~PyStream() { Join(); }  // runs with the GIL held (a Python object's deallocation)

  void Start() {
    if (started_) Throw(Status(StatusCode::kInvalidArgument, "this stream was already started"));
    started_ = true;
    try {
      worker_ = std::thread([this] { Run(); });
    } catch (const std::system_error& e) {
      Throw(Status(StatusCode::kResourceExhausted, std::string("cannot start the streaming thread: ") + e.what()));
    }
  }

  // The next event as (text, ids, final, seconds since the runtime call began), or None after
  // the last one. A failed call raises its error (once; later calls return None).
  py::object Next() {
    if (!started_) Throw(Status(StatusCode::kInvalidArgument, "the stream was not started"));
    for (;;) {
      Item item;
      bool have = false, finished = false;
      Status status;
      {
        py::gil_scoped_release nogil;
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return !queue_.empty() || done_; });
        if (!queue_.empty()) {
          item = std::move(queue_.front());
          queue_.pop_front();
          have = true;
        } else if (done_) {
          finished = true;
          status = std::exchange(status_, Status());
        }
      }
      if (have)
        return py::make_tuple(py::str(item.text), ToArray(item.ids.data(), item.ids.size()), item.final,
                              item.seconds);
      if (finished) {
        Check(status);
        return py::none();
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C while waiting
    }
  }

  // Waits for the worker and drops undelivered events. Idempotent.
  void Close() {
    Join();
    std::lock_guard<std::mutex> lock(mu_);
    queue_.clear();
  }

 private:
  // Stops event delivery and waits for the worker without the GIL (other Python threads run
  // meanwhile). Called with the GIL held.
  void Join() {
    closed_.store(true);
    if (!worker_.joinable()) return;
    py::gil_scoped_release nogil;
    worker_.join();
  }

  struct Item {
    std::string text;
    std::vector<int32_t> ids;
    bool final = false;
    double seconds = 0;
  };

  static void OnEvent(const StreamEvent& e, void* user) {
    PyStream& self = *static_cast<PyStream*>(user);
    if (self.closed_.load()) return;  // nobody will read it
    Item item{std::string(e.text), std::vector<int32_t>(e.ids, e.ids + e.num_ids), e.final,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - self.call_start_).count()};
    {
      std::lock_guard<std::mutex> lock(self.mu_);
      self.queue_.push_back(std::move(item));
    }
    self.cv_.notify_one();
  }

  void Run() {
    const std::string_view view(text_);
    Status s = tr_->CallWithoutGil([&](Translator& t) {
      call_start_ = std::chrono::steady_clock::now();
      const SentenceResultView* ignored = nullptr;  // the final event carries the result
      return t.TranslateViews(&view, 1, options_, &ignored);
    });
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_ = std::move(s);
      done_ = true;
    }
    cv_.notify_one();
  }

  py::object owner_;  // the Python _Translator: keeps tr_ alive while the stream exists
  PyTranslator* tr_;
  std::string text_;
  TranslateOptions options_;
  bool started_ = false;  // touched by the Python thread only
  std::atomic<bool> closed_{false};
  std::chrono::steady_clock::time_point call_start_;  // written and read by the worker only
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;  // guarded by mu_
  bool done_ = false;       // guarded by mu_
  Status status_;           // guarded by mu_
  std::thread worker_;
};

#ifdef MTLITE_PY_HAS_CONVERTER
py::dict Convert(const std::string& src, const std::string& out_path, const std::string& quantize,
                 const std::vector<std::string>& vocab, const std::string& semantics,
                 const std::string& decoding_defaults) {
  converter::ConvertOptions o;
  if (!converter::ParseDecodingDefaultsMode(decoding_defaults, &o.decoding_defaults))
    Throw(Status(StatusCode::kInvalidArgument,
                 "decoding_defaults must be 'auto', 'record' or 'none' (got '" + decoding_defaults + "')"));
  if (!converter::ParseQuantization(quantize, &o.quantize))
    Throw(Status(StatusCode::kInvalidArgument, "quantize must be int8, fp16 or fp32 (got '" + quantize + "')"));
  if (!semantics.empty() && !converter::ParseSemantics(semantics, &o.semantics))
    Throw(Status(StatusCode::kInvalidArgument, "semantics must be 'marian' or 'hf' (got '" + semantics + "')"));
  o.vocabs = vocab;
  converter::ConversionReport report;
  converter::ConvertInputs inputs;
  Status s;
  {
    py::gil_scoped_release nogil;
    converter::AlignedBytes bytes;
    s = converter::IsCt2Input(src) ? converter::ConvertCt2Input(src, o, &bytes, &report, &inputs)
                                   : converter::ConvertInput(src, o, &bytes, &report, &inputs);
    if (s.ok()) s = converter::WriteFileAtomic(out_path, bytes.data(), bytes.size());
  }
  Check(s);
  py::dict d;
  d["path"] = out_path;
  d["quantize"] = converter::QuantizationName(o.quantize);
  d["file_bytes"] = report.file_bytes;
  d["safetensors_bytes"] = report.safetensors_bytes;
  d["kind"] = inputs.kind;
  d["semantics"] = converter::SemanticsName(inputs.semantics);
  d["vocab"] = inputs.vocabs;
  d["lex"] = inputs.lex;
  d["warnings"] = report.warnings;
  d["decoding_defaults_recorded"] = inputs.decoding_recorded;
  return d;
}
#endif

}  // namespace
}  // namespace python
}  // namespace mtlite

PYBIND11_MODULE(_mtlite, m) {
  using namespace mtlite;
  using namespace mtlite::python;
  m.doc() = "mtlite runtime bindings (use the `mtlite` package, not this module)";
  RegisterErrors(m);

  py::enum_<WeightType>(m, "WeightType")
      .value("f32", WeightType::kF32)
      .value("f16", WeightType::kF16)
      .value("int8", WeightType::kInt8);
  py::enum_<ActivationKind>(m, "ActivationKind")
      .value("silu", ActivationKind::kSiLU)
      .value("relu", ActivationKind::kReLU)
      .value("gelu", ActivationKind::kGELU)
      .value("gelu_tanh", ActivationKind::kGELUTanh);

  // Plain records, filled field by field from Python (mtlite/__init__.py).
  py::class_<TranslatorLimits>(m, "_Limits")
      .def(py::init<>())
      .def_readwrite("max_batch", &TranslatorLimits::max_batch)
      .def_readwrite("max_source_tokens", &TranslatorLimits::max_source_tokens)
      .def_readwrite("max_target_tokens", &TranslatorLimits::max_target_tokens)
      .def_readwrite("max_beam", &TranslatorLimits::max_beam)
      .def_readwrite("max_n_best", &TranslatorLimits::max_n_best)
      .def_readwrite("max_input_bytes", &TranslatorLimits::max_input_bytes)
      .def_readwrite("alignments", &TranslatorLimits::alignments)
      .def_readwrite("threads", &TranslatorLimits::num_threads)
      .def_readwrite("profiling", &TranslatorLimits::profiling)
      .def_readwrite("profile_events", &TranslatorLimits::profile_events)
      .def_readwrite("max_text_bytes", &TranslatorLimits::max_text_bytes)
      .def("as_dict", &LimitsDict);
  py::class_<TranslateOptions>(m, "_Options")
      .def(py::init<>())
      .def_readwrite("beam_size", &TranslateOptions::beam_size)
      .def_readwrite("max_length", &TranslateOptions::max_length)
      .def_readwrite("max_length_ratio", &TranslateOptions::max_length_ratio)
      .def_readwrite("max_length_offset", &TranslateOptions::max_length_offset)
      .def_readwrite("length_penalty", &TranslateOptions::length_penalty)
      .def_readwrite("n_best", &TranslateOptions::n_best)
      .def_readwrite("return_scores", &TranslateOptions::return_scores)
      .def_readwrite("return_alignments", &TranslateOptions::return_alignments)
      .def_readwrite("alignment_layer", &TranslateOptions::alignment_layer)
      .def_readwrite("profile", &TranslateOptions::profile)
      .def_readwrite("use_shortlist", &TranslateOptions::use_shortlist);

  py::class_<PyModel, std::shared_ptr<PyModel>>(m, "_Model")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("verify_checksums"))
      .def_property_readonly("path", &PyModel::path)
      .def_property_readonly("file_size", &PyModel::file_size)
      .def_property_readonly("has_shortlist", &PyModel::has_shortlist)
      .def("decoding_defaults", &PyModel::DecodingDefaults)
      .def("config", &PyModel::Config)
      .def("arena_bytes", &PyModel::ArenaBytes, py::arg("limits"))
      .def("arena_plan", &PyModel::ArenaPlan, py::arg("limits"))
      .def("size_profile", &PyModel::SizeProfile)
      .def("verify_checksums", &PyModel::VerifyChecksums)
      .def("encode", &PyModel::Encode, py::arg("text"), py::arg("target"))
      .def("source_lengths", &PyModel::SourceLengths, py::arg("texts"), py::arg("max_input_bytes"),
           py::arg("max_source_tokens"))
      .def("decode", &PyModel::Decode, py::arg("ids"));

  py::class_<PyTranslator>(m, "_Translator")
      .def(py::init<std::shared_ptr<PyModel>, const TranslatorLimits&, std::shared_ptr<PyModel>>(), py::arg("model"),
           py::arg("limits"), py::arg("second") = nullptr)
      .def_property_readonly("arena_bytes", &PyTranslator::arena_bytes)
      .def_property_readonly("model", &PyTranslator::model)
      .def("limits", &PyTranslator::Limits)
      .def("runtime_seconds", &PyTranslator::runtime_seconds, py::call_guard<py::gil_scoped_release>())
      .def("translate", &PyTranslator::Translate, py::arg("texts"), py::arg("options"))
      .def("score", &PyTranslator::Score, py::arg("sources"), py::arg("targets"))
      .def("translate_text", &PyTranslator::TranslateText, py::arg("text"), py::arg("options"), py::arg("split"),
           py::arg("html"), py::arg("max_length_break"), py::arg("language"), py::arg("quality"))
      .def("last_profile", &PyTranslator::LastProfile)
      .def(
          "stream",
          [](py::object self, const std::string& text, const TranslateOptions& options) {
            return std::make_unique<PyStream>(self, self.cast<PyTranslator*>(), text, options);
          },
          py::arg("text"), py::arg("options"));

  py::class_<PyStream>(m, "_Stream")
      .def("start", &PyStream::Start)
      .def("next", &PyStream::Next)
      .def("close", &PyStream::Close);

#ifdef MTLITE_PY_HAS_CONVERTER
  m.def("convert", &Convert, py::arg("src"), py::arg("out_path"), py::arg("quantize"), py::arg("vocab"),
        py::arg("semantics"), py::arg("decoding_defaults") = "auto");
  m.attr("HAS_CONVERTER") = true;
#else
  m.attr("HAS_CONVERTER") = false;
#endif
  // The sentence spans (byte offsets) of text by the text layer's splitter.
  m.def(
      "split_sentences",
      [](const std::string& text, int split, const std::string& language) {
        std::vector<text::ByteSpan> spans(text.size() / 2 + 2);
        size_t n = 0;
        Check(text::SplitSentences(text, static_cast<SplitMode>(split), text::SplitterLanguageFor(language),
                                   spans.data(), spans.size(), &n));
        py::list out;
        for (size_t i = 0; i < n; ++i) out.append(py::make_tuple(spans[i].begin, spans[i].end));
        return out;
      },
      py::arg("text"), py::arg("split"), py::arg("language"));
  m.def("version", &Version);
  m.def("kernel_table", &KernelTableName);
}
