// mtlite — on-device quantized translation runtime. Public C++ API.
// No generated FlatBuffers types appear here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtlite {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,   // bad caller input (invalid UTF-8, bad option values)
  kInvalidModel = 2,      // malformed, truncated or inconsistent model file
  kChecksumMismatch = 3,  // a data buffer's CRC32C does not match (bit rot, bad flash write)
  kIoError = 4,
  kOutOfRange = 5,        // input beyond the translator's declared limits
  kUnsupported = 6,       // valid but not supported by this build/runtime
  kResourceExhausted = 7, // allocation failure at creation time
  kInternal = 8,
};

const char* StatusCodeName(StatusCode code);

class Status;
namespace detail {
[[noreturn]] void DieOnErrorAccess(const Status& status);
}  // namespace detail

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or an error (ExecuTorch's Result is the model). Accessing the value of an error is a
// programming error: value(), * and -> check ok() and, if it is false, print the status to stderr
// and abort instead of handing out an empty value. Check ok() first (or use value_or).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {    // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "Result constructed from an OK status without a value");
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { Check(); return *value_; }
  T&& value() && { Check(); return std::move(*value_); }
  const T& value() const& { Check(); return *value_; }
  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!ok()) detail::DieOnErrorAccess(status_);
  }
  Status status_;
  std::optional<T> value_;
};

enum class WeightType { kF32, kF16, kInt8 };
enum class ActivationKind { kSiLU, kReLU, kGELU, kGELUTanh };
// The model family's choices, as data of the model file (schema/mtlite.fbs gives each value's
// meaning; the codes are the schema's).
// Where the position row of token index i comes from.
enum class PositionKind : uint8_t {
  kSinusoidMarian = 0,  // HF MarianSinusoidalPositionalEmbedding, computed at load
  kTable = 1,           // stored tables (max_positions rows)
  kSinusoidM2M100 = 2,  // HF M2M100's sinusoid at position i + pad_id + 1 (the padding offset)
  kSinusoidCT2 = 3,     // CTranslate2's built-in sinusoid at position i + 1
};
// Where each block's layer norm sits: after the residual add (Marian, post-norm) or on the
// block's input (x + Block(LN(x)), pre-norm).
enum class NormPlacement : uint8_t { kPost = 0, kPre = 1 };
// What each decoder layer runs before its cross-attention: causal self-attention over the KV
// cache, or Marian's SSRU cell (transformer-decoder-autoreg: rnn, dec-cell: ssru).
enum class DecoderLayerKind : uint8_t { kSelfAttention = 0, kSsru = 1 };
// Beam search and scoring: HF generate's, or Marian's (the beam shrinks as hypotheses finish,
// length_penalty is Marian's `normalize` over the length including </s>, <unk> is never
// generated: the converter lists it in bad_word_ids).
// kCT2: CTranslate2's (a sentence ends once `beam` hypotheses finished; length without </s>).
enum class SearchKind : uint8_t { kHF = 0, kMarian = 1, kCT2 = 2 };

struct ModelConfig {
  int d_model = 0;
  int encoder_layers = 0, decoder_layers = 0;
  int encoder_heads = 0, decoder_heads = 0;
  int encoder_ffn_dim = 0, decoder_ffn_dim = 0;
  ActivationKind activation = ActivationKind::kSiLU;
  float embed_scale = 1.0f;
  PositionKind positions = PositionKind::kSinusoidMarian;
  int max_positions = 0;
  float layer_norm_eps = 1e-5f;
  bool shared_embeddings = true;
  bool tied_output = true;
  bool has_final_logits_bias = true;
  int source_vocab_size = 0, target_vocab_size = 0;
  int pad_id = 0, eos_id = 0, unk_id = 0, decoder_start_id = 0;
  std::vector<int> bad_word_ids;
  int default_beam = 4;
  int default_max_length = 256;
  DecoderLayerKind decoder_layer = DecoderLayerKind::kSelfAttention;
  SearchKind search = SearchKind::kHF;
  NormPlacement norm = NormPlacement::kPost;
  bool encoder_final_norm = false;  // a layer norm after the last encoder layer
  bool decoder_final_norm = false;  // a layer norm after the last decoder layer (before the output projection)
  bool source_eos = true;           // the source ends with </s> (CTranslate2's add_source_eos)
  WeightType weight_type = WeightType::kF32;
  std::string source_lang, target_lang;
};

// The decoding settings a model's release translates with, recorded in the file by the converter
// (schema table DecodingDefaults: Marian's decoder.yml, ...). An empty optional was not recorded:
// TranslateOptions' own default applies. Model::DefaultTranslateOptions() applies them.
struct DecodingDefaults {
  std::optional<int> beam_size;
  std::optional<int> max_length;
  std::optional<float> max_length_ratio;
  std::optional<int> max_length_offset;
  std::optional<float> length_penalty;
  std::string_view source;  // where they were read ("decoder.yml"); a view into the model file
  bool empty() const {
    return !beam_size && !max_length && !max_length_ratio && !max_length_offset && !length_penalty;
  }
};

struct TranslateOptions;

struct LoadOptions {
  bool verify_checksums = false;  // CRC32C of every data buffer (reads all weights once)
};

// One row of a model file's size profile (Model::SizeProfile).
struct SizeComponent {
  // "embeddings/output", "positions", "final_logits_bias", "encoder.layer.<i>",
  // "decoder.layer.<i>.self_attn" / ".cross_attn" / ".ffn", ["other tensors"], "tokenizer",
  // ["shortlist"], "flatbuffer structure/config/metadata", "padding (64-byte alignment)"
  std::string name;
  uint64_t bytes = 0;
  // What the bytes are, sorted: "f32", "f16", "int8" (tensors; int8 scales are f32), "bytes"
  // (charsmaps), "int32", "uint32" (shortlist), "strings", "flatbuffer", "zero". Empty for a
  // component with no bytes.
  std::vector<std::string> dtypes;
};

class Tokenizer;  // runtime SentencePiece (see runtime/src/tokenizer.h)
namespace detail {
struct ModelData;
struct TestingAccess;
}  // namespace detail

// Immutable after loading; safe to share across threads and translators.
class Model {
 public:
  // Memory-maps the file (read-only). The mapping lives as long as the Model.
  static Result<std::shared_ptr<const Model>> Load(const std::string& path,
                                                   const LoadOptions& options = {});
  // Uses caller memory in place (e.g. a flash address). It must stay valid and
  // unchanged for the Model's lifetime, and be 64-byte aligned for in-place SIMD reads.
  static Result<std::shared_ptr<const Model>> FromBuffer(const void* data, size_t size,
                                                         const LoadOptions& options = {});

  // Caller-owned storage (firmware; see docs/deploy.md). The loader's tables (layer views,
  // tokenizer piece/vocab views, the checksum list), the Model object and its shared_ptr control
  // block are placed in `storage` (64-byte aligned, at least StorageBytes(data, size) bytes), so
  // loading a valid model allocates nothing on the heap. Both buffers must outlive the Model (the
  // last shared_ptr); releasing it runs the destructor and frees nothing. The one difference to
  // the allocating loaders: config().bad_word_ids leaves out <pad>, which every search masks
  // anyway (Marian's usual bad_words_ids [[pad]] then costs no std::vector allocation); other
  // banned ids are kept (and do allocate the vector). A too small `storage` is
  // kResourceExhausted with the number of bytes needed.
  static Result<std::shared_ptr<const Model>> FromBuffer(const void* data, size_t size, void* storage,
                                                         size_t storage_bytes, const LoadOptions& options = {});
  // Bytes of `storage` the overload above needs for the model at data[0, size) (runs the
  // FlatBuffers verifier; kInvalidModel if the buffer is no mtlite model).
  static Result<size_t> StorageBytes(const void* data, size_t size);
  ~Model();
  const ModelConfig& config() const;
  size_t file_size() const;
  // True when the file has an output-vocabulary shortlist (TranslateOptions::use_shortlist).
  bool has_shortlist() const;
  // The decoding settings recorded in the file (empty for a file without them).
  const DecodingDefaults& decoding_defaults() const;
  // TranslateOptions{} with the model's recorded decoding settings applied: the options to start
  // from when a caller sets only some (a file without them: exactly TranslateOptions{}).
  TranslateOptions DefaultTranslateOptions() const;
  // Checks every data buffer's CRC32C; kChecksumMismatch names the first bad tensor.
  Status VerifyChecksums() const;
  // Bytes of the file per component, in model order (embeddings, positions, final_logits_bias,
  // encoder layers, decoder layers, then tokenizer, [shortlist,] FlatBuffer structure, padding); the rows
  // sum exactly to file_size(). Components of the model's shape are listed even when empty.
  std::vector<SizeComponent> SizeProfile() const;

  const detail::ModelData& data() const { return *data_; }

 private:
  Model();                                 // heap ModelData, owned
  explicit Model(detail::ModelData* data); // placed in caller storage, destroyed in place
  detail::ModelData* data_;
  bool owns_data_;
};

// Declared limits; the arena is sized for them once, at Translator creation.
struct TranslatorLimits {
  int max_batch = 1;             // sentences per translate() call
  int max_source_tokens = 256;   // per sentence, including </s>
  int max_target_tokens = 256;   // generated tokens per sentence, including </s>
  int max_beam = 4;
  int max_n_best = 4;
  int max_input_bytes = 4096;    // UTF-8 bytes per input sentence
  bool alignments = false;       // reserve space for alignment matrices
  int num_threads = 1;
  bool profiling = false;        // reserve the profiler's records (TranslateOptions::profile)
  int profile_events = 0;        // trace events kept per call (0: enough for a max-length call)
  // Text layer (Translator::TranslateText): UTF-8 bytes of text per call (0: no text layer). Its
  // buffers (the text's sentences, the translated text, markup items and aligned tokens for HTML)
  // are sized from this once, in the arena plan; see docs/text.md.
  int max_text_bytes = 16384;
};

// How TranslateText cuts text into sentences (Bergamot's ssplit-mode, plus kNone).
enum class SplitMode : int {
  kNone = 0,       // the whole text is one sentence (surrounding whitespace passed through)
  kSentence = 1,   // one sentence per line
  kParagraph = 2,  // a line is a paragraph, split into sentences
  kWrapped = 3,    // blank lines separate paragraphs; single line breaks are soft
};
// "none", "sentence", "paragraph", "wrapped"; ParseSplitMode returns false for anything else.
const char* SplitModeName(SplitMode mode);
bool ParseSplitMode(std::string_view name, SplitMode* mode);

// Token streaming: called during a translate call, on the calling thread.
//  greedy: after every generated token of a sentence, with the tokens so far (without </s>) and
//          their detokenized text;
//  beam:   whenever the sentence's best running hypothesis changes;
//  both:   once more per sentence with final = true and the final best hypothesis (the same ids and
//          text as the call's result).
// The views are valid during the call only. The callback must not call into this Translator.
struct StreamEvent {
  size_t sentence = 0;
  const int32_t* ids = nullptr;
  int num_ids = 0;
  std::string_view text;
  bool final = false;
};
using StreamCallback = void (*)(const StreamEvent& event, void* user);

struct TranslateOptions {
  int beam_size = 1;             // 1 = greedy
  int max_length = 256;          // absolute cap on generated tokens (incl. </s>)
  float max_length_ratio = 0;    // if > 0: cap also at ratio * source_tokens + max_length_offset
  int max_length_offset = 10;
  float length_penalty = 1.0f;   // score = sum_logprob / length^penalty (HF's; Marian's normalize
                                 // with ModelConfig::search kMarian)
  int n_best = 1;
  bool return_scores = false;
  bool return_alignments = false;
  int alignment_layer = -1;      // decoder layer whose cross-attention is averaged (-1 = last)
  bool profile = false;          // record spans (needs TranslatorLimits::profiling); see last_profile()
  // Vocabulary shortlist (the model file's optional section, `mtlite shortlist`): the output
  // projection, log-softmax and search run over the batch's candidate target tokens only (the union
  // of the source tokens' lists, the always-allowed tokens, </s>). kUnsupported if the model has none.
  bool use_shortlist = false;
  StreamCallback stream = nullptr;  // token streaming (see StreamEvent); no heap allocation
  void* stream_user = nullptr;
};

// Text in, text out (Translator::TranslateText): the text is cut into sentences, the sentences
// are translated (in batches of max_batch) and put back in place with the text's own whitespace
// (and, with html, its markup) between them. Nothing is lost: every byte is translated, passed
// through, or belongs to a sentence whose translation failed and which is then kept as it was
// (TextSentenceView::status says why).
struct TextOptions {
  SplitMode split = SplitMode::kParagraph;
  // The input is HTML: tags, comments and character references are parsed; inline tags are put
  // around the target words aligned to the source words they wrapped, block tags break sentences
  // and stay in place; <script>, <style>, translate="no" and class="notranslate" elements are
  // copied untranslated. Needs TranslatorLimits::alignments.
  bool html = false;
  // A sentence of more source tokens is cut at token boundaries and translated in pieces (as
  // Bergamot's max-length-break); capped at max_source_tokens - 1.
  int max_length_break = 128;
  // Language of the splitter's rules ("en", "de", "eng_Latn", ...); empty: the model's source
  // language.
  std::string_view language;
  // Quality scores per word and sentence (as Bergamot's simple quality estimator: a word's score
  // is the mean log-probability of its tokens, a sentence's the mean of its words'); sets
  // TranslateOptions::return_scores for every sentence.
  bool quality = false;
};
// One word of the translation (TextOptions::quality): bytes of the translated text (html: of its
// text content) and the mean log-probability of its tokens (<= 0; closer to 0 is more confident).
struct TextWordView {
  uint32_t target_begin = 0, target_end = 0;
  float score = 0;
};
struct TextSentenceView {
  // Where the sentence is: in the input text (html: in its text content, without markup) and in
  // the translated text (html: likewise, before the markup is put back).
  uint32_t source_begin = 0, source_end = 0;
  uint32_t target_begin = 0, target_end = 0;
  StatusCode status = StatusCode::kOk;  // not kOk: not translated, its source text was kept
  int pieces = 1;                       // > 1: cut at max_length_break and translated in pieces
  float score = 0;                      // sum of the pieces' scores (return_scores)
  float quality = 0;                    // TextOptions::quality: the mean of its words' scores
  uint32_t first_word = 0, num_words = 0;  // its words in TextResultView::words
};
struct TextResultView {
  std::string_view text;                // the translation (html: HTML)
  std::string_view plain_source, plain_target;  // html: the text content the sentences index
  const TextSentenceView* sentences = nullptr;
  size_t num_sentences = 0;
  size_t failed_sentences = 0;          // sentences kept untranslated (status != kOk)
  std::string_view first_error;         // the message of the first failed sentence ("" if none)
  const TextWordView* words = nullptr;  // TextOptions::quality: the translation's words, in order
  size_t num_words = 0;
  bool words_truncated = false;         // more words than the buffer holds: the rest have none
};
// Called after each sentence of a TranslateText call is translated (or kept), in order; the view
// and the text live for the call only. The callback must not call into this Translator.
struct TextSentenceEvent {
  size_t index = 0;
  const TextSentenceView* sentence = nullptr;
  std::string_view source, target;      // html: text content
};
using TextSentenceCallback = void (*)(const TextSentenceEvent& event, void* user);

// Profiling results of a translate call (TranslateOptions::profile). Views into the arena, valid
// until the next call. Names are static strings; see docs/profiling.md.
struct ProfileEntry {           // one op at one layer, aggregated over the call (calling thread)
  const char* op = "";          // e.g. "decoder.cross_attn.attention"
  const char* component = "";   // "tokenizer", "encoder", "cross_kv", "decoder.self_attn", ...
  const char* parent = "";      // the op it nests in ("" for "translate")
  int layer = -1;               // -1: not a per-layer op
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t bytes = 0;           // weight bytes read (linear layers) or K/V bytes read (attention)
  uint64_t macs = 0;            // multiply-accumulates
};
struct ProfileEvent {           // one span of the trace
  const char* op = "";
  int layer = -1;
  int lane = 0;                 // 0: the calling thread; 1..: thread-pool workers
  int depth = 0;                // nesting depth in its lane
  int step = -1;                // decoder step, or -1
  uint64_t start_ns = 0, end_ns = 0;  // from the start of the call
  uint64_t bytes = 0, macs = 0;
  int m = 0, n = 0, k = 0;      // shape: rows x outputs x inputs (linear), or rows x keys x head dim
};
struct ProfileView {
  const ProfileEntry* entries = nullptr;  // every (op, layer); skip those with calls == 0
  size_t num_entries = 0;
  const ProfileEvent* events = nullptr;   // in start order per lane
  size_t num_events = 0;
  size_t dropped_events = 0;    // the trace buffer was full (aggregates are still complete)
  uint64_t wall_ns = 0;         // the whole call
  int threads = 1;
  int sentences = 0;
  int steps = 0;                // decoder steps
};

// A view into the Translator's arena; valid until the next translate() call.
struct HypothesisView {
  const int32_t* ids = nullptr;  // generated target ids, without the final </s>
  int num_ids = 0;
  std::string_view text;
  float score = 0;               // length-penalised log-probability
  // [num_ids + 1][source_tokens] row-major: cross-attention weights (mean over heads)
  // for each generated token including </s>; rows sum to 1 over real source tokens.
  const float* alignment = nullptr;
  int source_tokens = 0;
  // With return_scores: the log-probability of each generated token (num_ids of them, </s> not
  // included) under the search that chose it; null otherwise.
  const float* token_scores = nullptr;
};

struct SentenceResultView {
  const HypothesisView* hypotheses = nullptr;  // best first
  int num_hypotheses = 0;
};

// Owning copies, for convenience APIs (these allocate).
struct Hypothesis {
  std::vector<int32_t> ids;
  std::string text;
  float score = 0;
  std::vector<float> alignment;
  int source_tokens = 0;
};
struct TranslationResult {
  std::vector<Hypothesis> hypotheses;
};

// One buffer of a Translator's arena plan (see Translator::PlanArena).
struct ArenaBufferInfo {
  std::string name;
  size_t offset = 0, bytes = 0;
  std::string first_phase, last_phase;  // live range over the phases of a translate call
  bool persistent = false;              // lives across calls (results, position tables)
};

// The arena of a Translator for given limits: named buffers with their live ranges; buffers whose
// ranges do not intersect share memory (the encoder's activations and the decoder's KV cache).
struct ArenaPlanInfo {
  size_t total_bytes = 0;     // the arena
  size_t unshared_bytes = 0;  // the sum of all buffers, as if none shared memory
  std::vector<std::string> phases;      // phases of a translate call, in order
  std::vector<ArenaBufferInfo> buffers; // declaration order
};

class TranslatorImpl;

// One per thread. Owns a single arena sized from TranslatorLimits; translate()
// performs no heap allocation.
class Translator {
 public:
  static Result<std::unique_ptr<Translator>> Create(std::shared_ptr<const Model> model,
                                                    const TranslatorLimits& limits = {});
  // Caller-owned arena (firmware; see docs/deploy.md): the Translator's objects and every buffer
  // are placed in arena[0, bytes), which must be 64-byte aligned and at least ArenaBytes(model,
  // limits) long (else kResourceExhausted says how many bytes are needed). With int8 weights
  // and num_threads 1 nothing is allocated on the heap, not even here (threads > 1 start worker
  // threads; f32/f16 weights with XNNPACK create its operators). The arena must outlive the
  // Translator; destroying the Translator (the unique_ptr) runs its destructor and frees nothing.
  static Result<std::unique_ptr<Translator>> Create(std::shared_ptr<const Model> model,
                                                    const TranslatorLimits& limits, void* arena, size_t bytes);
  // Two models chained through a pivot language (as Bergamot's translateViaPivoting): `first`
  // translates into the pivot language, `second` from it (e.g. de->en and en->fr). Every call
  // goes through both: the first's best translation of each sentence is the second's input (the
  // second's max_input_bytes is what the first can produce), n_best, scores and streaming are the
  // second's; TranslateText composes the alignments through the pivot, so HTML markup follows.
  // One arena holds both translators (ArenaBytes(first, second, limits)); the limits apply to
  // each (the text layer's buffers are the first's). kInvalidArgument when the first model's
  // target language and the second's source language are both known and differ.
  static Result<std::unique_ptr<Translator>> Create(std::shared_ptr<const Model> first,
                                                    std::shared_ptr<const Model> second,
                                                    const TranslatorLimits& limits);
  static Result<size_t> ArenaBytes(const Model& first, const Model& second, const TranslatorLimits& limits);
  // The two plans, the second's buffers named "second.<name>".
  static Result<ArenaPlanInfo> PlanArena(const Model& first, const Model& second, const TranslatorLimits& limits);
  // True for a Translator of two chained models.
  bool is_pivot() const;
  // Arena bytes a Translator needs for these limits (its objects and its planned buffers): what
  // Create allocates, or what a caller-owned arena must hold. Allocates nothing.
  static Result<size_t> ArenaBytes(const Model& model, const TranslatorLimits& limits);
  // The per-buffer plan behind ArenaBytes (allocates the description; not for a device's hot path).
  static Result<ArenaPlanInfo> PlanArena(const Model& model, const TranslatorLimits& limits);
  ~Translator();
  // Translators live in their arena (a heap block from Create, or the caller's): deleting one
  // frees the heap block, or nothing for a caller-owned arena.
  static void operator delete(void* p);

  size_t arena_bytes() const;
  const TranslatorLimits& limits() const;
  // The profile of the last translate call, or null if it was not profiled (or failed).
  const ProfileView* last_profile() const;

  // Zero-allocation entry point. `out` receives `n` views into the arena.
  Status TranslateViews(const std::string_view* inputs, size_t n, const TranslateOptions& options,
                        const SentenceResultView** out);
  // Same, starting from token ids (no tokenizer); ids must end with </s>.
  Status TranslateIdsViews(const int32_t* const* source_ids, const int* source_lengths, size_t n,
                           const TranslateOptions& options, const SentenceResultView** out);

  // Text in, text out (see TextOptions). No heap allocation: its buffers are declared by
  // TranslatorLimits::max_text_bytes. The result lives until the next call. Per-call options
  // apply to every sentence (n_best is 1; stream is the token callback, on_sentence the
  // sentence callback). Errors of the whole call (bad options, too much text, invalid UTF-8 in
  // the text) are returned; a sentence that fails alone is kept in its source language and
  // reported in its view.
  Status TranslateText(std::string_view text, const TextOptions& text_options, const TranslateOptions& options,
                       const TextResultView** out, TextSentenceCallback on_sentence = nullptr,
                       void* on_sentence_user = nullptr);

  // Convenience wrappers that copy results out (allocate).
  Status Translate(const std::vector<std::string>& inputs, const TranslateOptions& options,
                   std::vector<TranslationResult>* out);
  Status TranslateIds(const std::vector<std::vector<int32_t>>& source_ids,
                      const TranslateOptions& options, std::vector<TranslationResult>* out);

  // Teacher forcing: log-softmax-free raw logits for each target position.
  // `target_ids` excludes the decoder start token; logits_out gets
  // [target_len][target_vocab] for inputs (start, t0, ..., t_{n-2}). Batch of one.
  Status ForcedLogits(const int32_t* source_ids, int source_len, const int32_t* target_ids,
                      int target_len, float* logits_out);

 private:
  friend struct detail::TestingAccess;
  struct ImplDeleter {  // the TranslatorImpl lives in the arena: destroy it in place
    void operator()(TranslatorImpl* impl) const;
  };
  explicit Translator(TranslatorImpl* impl);
  static Result<std::unique_ptr<Translator>> Place(std::shared_ptr<const Model> model, const TranslatorLimits& limits,
                                                   uint8_t* block, size_t bytes, bool heap_block);
  static Result<std::unique_ptr<Translator>> PlacePivot(std::shared_ptr<const Model> first,
                                                        std::shared_ptr<const Model> second,
                                                        const TranslatorLimits& limits, uint8_t* block, size_t bytes);
  std::unique_ptr<TranslatorImpl, ImplDeleter> impl_;
};

// Text <-> ids with the model's own tokenizer (allocating convenience API).
Status EncodeSource(const Model& model, std::string_view text, std::vector<int32_t>* ids);
Status DecodeTarget(const Model& model, const int32_t* ids, int n, std::string* text);

const char* Version();
// The kernel table translations run with on this CPU (mtlite_kernel_table() in the C API).
const char* KernelTableName();

}  // namespace mtlite
