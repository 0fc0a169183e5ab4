// mtlite — on-device quantized translation runtime. Public C++ API.
// No generated FlatBuffers types appear here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}   // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return value_; }
  T&& value() && { return std::move(value_); }
  const T& value() const& { return value_; }
  T* operator->() { return &value_; }
  T& operator*() { return value_; }

 private:
  Status status_;
  T value_{};
};

enum class WeightType { kF32, kF16, kInt8 };
enum class ActivationKind { kSiLU, kReLU, kGELU, kGELUTanh };

struct ModelConfig {
  int d_model = 0;
  int encoder_layers = 0, decoder_layers = 0;
  int encoder_heads = 0, decoder_heads = 0;
  int encoder_ffn_dim = 0, decoder_ffn_dim = 0;
  ActivationKind activation = ActivationKind::kSiLU;
  float embed_scale = 1.0f;
  bool positions_stored = false;  // false: Marian sinusoid computed at run time
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
  WeightType weight_type = WeightType::kF32;
  std::string source_lang, target_lang;
};

struct LoadOptions {
  bool verify_checksums = false;  // CRC32C of every data buffer (reads all weights once)
};

// One row of a model file's size profile (Model::SizeProfile).
struct SizeComponent {
  // "embeddings/output", "positions", "final_logits_bias", "encoder.layer.<i>",
  // "decoder.layer.<i>.self_attn" / ".cross_attn" / ".ffn", ["other tensors"], "tokenizer",
  // "flatbuffer structure/config/metadata", "padding (64-byte alignment)"
  std::string name;
  uint64_t bytes = 0;
  // What the bytes are, sorted: "f32", "f16", "int8" (tensors; int8 scales are f32), "bytes"
  // (charsmaps), "strings", "flatbuffer", "zero". Empty for a component with no bytes.
  std::vector<std::string> dtypes;
};

class Tokenizer;  // runtime SentencePiece (see runtime/src/tokenizer.h)
namespace detail { struct ModelData; }

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
  ~Model();
  const ModelConfig& config() const;
  size_t file_size() const;
  // Checks every data buffer's CRC32C; kChecksumMismatch names the first bad tensor.
  Status VerifyChecksums() const;
  // Bytes of the file per component, in model order (embeddings, positions, final_logits_bias,
  // encoder layers, decoder layers, then tokenizer, FlatBuffer structure, padding); the rows
  // sum exactly to file_size(). Components of the model's shape are listed even when empty.
  std::vector<SizeComponent> SizeProfile() const;

  const detail::ModelData& data() const { return *data_; }

 private:
  Model();
  std::unique_ptr<detail::ModelData> data_;
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
};

struct TranslateOptions {
  int beam_size = 1;             // 1 = greedy
  int max_length = 256;          // absolute cap on generated tokens (incl. </s>)
  float max_length_ratio = 0;    // if > 0: cap also at ratio * source_tokens + max_length_offset
  int max_length_offset = 10;
  float length_penalty = 1.0f;   // HF: score = sum_logprob / length^penalty
  int n_best = 1;
  bool return_scores = false;
  bool return_alignments = false;
  int alignment_layer = -1;      // decoder layer whose cross-attention is averaged (-1 = last)
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

class TranslatorImpl;

// One per thread. Owns a single arena sized from TranslatorLimits; translate()
// performs no heap allocation.
class Translator {
 public:
  static Result<std::unique_ptr<Translator>> Create(std::shared_ptr<const Model> model,
                                                    const TranslatorLimits& limits = {});
  // Arena bytes a Translator would need for these limits (no allocation of the arena).
  static Result<size_t> ArenaBytes(const Model& model, const TranslatorLimits& limits);
  ~Translator();

  size_t arena_bytes() const;
  const TranslatorLimits& limits() const;

  // Zero-allocation entry point. `out` receives `n` views into the arena.
  Status TranslateViews(const std::string_view* inputs, size_t n, const TranslateOptions& options,
                        const SentenceResultView** out);
  // Same, starting from token ids (no tokenizer); ids must end with </s>.
  Status TranslateIdsViews(const int32_t* const* source_ids, const int* source_lengths, size_t n,
                           const TranslateOptions& options, const SentenceResultView** out);

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
  explicit Translator(std::unique_ptr<TranslatorImpl> impl);
  std::unique_ptr<TranslatorImpl> impl_;
};

// Text <-> ids with the model's own tokenizer (allocating convenience API).
Status EncodeSource(const Model& model, std::string_view text, std::vector<int32_t>* ids);
Status DecodeTarget(const Model& model, const int32_t* ids, int n, std::string* text);

const char* Version();

}  // namespace mtlite
