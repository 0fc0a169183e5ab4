/* mtlite — plain C API for embedding in apps. All functions return MTLITE_OK (0) or an
 * error code; mtlite_last_error() gives the message of the last failure on this thread. No
 * function throws: running out of memory is MTLITE_RESOURCE_EXHAUSTED.
 * Results are views into the translator's arena, valid until its next translate call. */
#ifndef MTLITE_H_
#define MTLITE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  MTLITE_OK = 0,
  MTLITE_INVALID_ARGUMENT = 1,
  MTLITE_INVALID_MODEL = 2,
  MTLITE_CHECKSUM_MISMATCH = 3,
  MTLITE_IO_ERROR = 4,
  MTLITE_OUT_OF_RANGE = 5,
  MTLITE_UNSUPPORTED = 6,
  MTLITE_RESOURCE_EXHAUSTED = 7,
  MTLITE_INTERNAL = 8
} mtlite_status;

typedef struct mtlite_model mtlite_model;
typedef struct mtlite_translator mtlite_translator;

typedef struct {
  int max_batch, max_source_tokens, max_target_tokens, max_beam, max_n_best, max_input_bytes;
  int alignments; /* bool */
  int num_threads;
  int profiling;      /* bool: reserve the profiler's records */
  int profile_events; /* trace events kept per call (0: enough for a max-length call) */
  int max_text_bytes; /* text layer: bytes of text per mtlite_translate_text call (0: none) */
} mtlite_limits;

/* Token streaming (see mtlite::StreamEvent in mtlite.hpp): greedy reports every new token, beam
 * every change of the best running hypothesis, and each sentence ends with final = 1 and its
 * result. Called on the translating thread; the views live for the call only. */
typedef void (*mtlite_stream_fn)(void* user, size_t sentence, const int32_t* ids, int num_ids, const char* text,
                                 size_t text_len, int final);

typedef struct {
  int beam_size, max_length;
  float max_length_ratio;
  int max_length_offset;
  float length_penalty;
  int n_best, return_scores, return_alignments, alignment_layer;
  int profile; /* bool: profile this call (needs mtlite_limits.profiling) */
  mtlite_stream_fn stream; /* NULL: no streaming */
  void* stream_user;
  int use_shortlist; /* bool: restrict the output vocabulary (the model's shortlist section) */
} mtlite_options;

typedef struct {
  const int32_t* ids; /* without the final </s> */
  int num_ids;
  const char* text; /* not NUL-terminated: use text_len */
  size_t text_len;
  float score;
  const float* alignment; /* [num_ids + 1][source_tokens] or NULL */
  int source_tokens;
} mtlite_hypothesis;

const char* mtlite_version(void);
/* The kernel table translations run with on this CPU (chosen at run time, e.g. "avx512-vnni",
   "neon-dotprod", "reference"; MTLITE_KERNELS=<name> in the environment forces a table the CPU
   can run). Static string. */
const char* mtlite_kernel_table(void);
const char* mtlite_last_error(void);
void mtlite_limits_default(mtlite_limits* limits);
void mtlite_options_default(mtlite_options* options);

mtlite_status mtlite_model_load(const char* path, int verify_checksums, mtlite_model** out);
/* mtlite_options_default with the model's recorded decoding defaults applied (beam size, length
 * caps, length penalty: what its release translates with; mtlite::Model::DefaultTranslateOptions):
 * the options to start from and override. A model without recorded defaults (or NULL) gives
 * exactly mtlite_options_default. A NULL options pointer given to mtlite_translate means
 * mtlite_options_default, as before. The translator's limits must allow the beam (max_beam). */
void mtlite_options_from_model(const mtlite_model* model, mtlite_options* options);
/* `data` must stay valid for the model's lifetime and be 64-byte aligned. */
mtlite_status mtlite_model_from_buffer(const void* data, size_t size, int verify_checksums, mtlite_model** out);
void mtlite_model_free(mtlite_model* model);

mtlite_status mtlite_translator_create(const mtlite_model* model, const mtlite_limits* limits,
                                       mtlite_translator** out);
/* Two models chained through a pivot language (first: e.g. de-en, second: en-fr); every translate
 * call goes through both (mtlite::Translator::Create(first, second, limits)). One arena. */
mtlite_status mtlite_translator_create_pivot(const mtlite_model* first, const mtlite_model* second,
                                             const mtlite_limits* limits, mtlite_translator** out);
size_t mtlite_translator_arena_bytes(const mtlite_translator* translator);
void mtlite_translator_free(mtlite_translator* translator);

/* ---- Caller-owned memory (firmware; docs/deploy.md) --------------------------------------------
 * The model's tables and handle go into caller storage, the translator's objects and buffers into
 * a caller arena; with int8 weights and num_threads 1 nothing is allocated on the heap, from
 * loading to the last translation. Both buffers must be 64-byte aligned (e.g.
 * `static uint8_t arena[N] __attribute__((aligned(64)));`) and outlive what is placed in them;
 * mtlite_model_free / mtlite_translator_free run the destructors and free nothing.
 * `mtlite info MODEL --limits B,S,T,BEAM --header arena.h` writes both sizes as C macros. */

/* Bytes of storage mtlite_model_from_buffer_storage needs for the model at data[0, size). */
mtlite_status mtlite_model_storage_bytes(const void* data, size_t size, size_t* bytes);
/* As mtlite_model_from_buffer; `storage` holds the model's tables and handle. Differs from it in
 * one detail only: the config's banned ids leave out <pad>, which every search masks anyway. */
mtlite_status mtlite_model_from_buffer_storage(const void* data, size_t size, int verify_checksums, void* storage,
                                               size_t storage_bytes, mtlite_model** out);
/* Bytes of arena mtlite_translator_create_in_arena needs for these limits (NULL: defaults). */
mtlite_status mtlite_arena_bytes(const mtlite_model* model, const mtlite_limits* limits, size_t* bytes);
/* As mtlite_translator_create, placed in arena[0, arena_bytes): MTLITE_RESOURCE_EXHAUSTED (the
 * message says how many bytes are needed) when it is too small. */
mtlite_status mtlite_translator_create_in_arena(const mtlite_model* model, const mtlite_limits* limits, void* arena,
                                                size_t arena_bytes, mtlite_translator** out);

/* texts[i] of lengths[i] bytes (lengths may be NULL: NUL-terminated). No heap allocation. */
mtlite_status mtlite_translate(mtlite_translator* translator, const char* const* texts, const size_t* lengths,
                               size_t n, const mtlite_options* options);
int mtlite_result_count(const mtlite_translator* translator, size_t sentence);
mtlite_status mtlite_result_get(const mtlite_translator* translator, size_t sentence, int k,
                                mtlite_hypothesis* out);

/* ---- Text in, text out (mtlite::Translator::TranslateText; docs/text.md) -----------------------
 * The text is cut into sentences (split), each is translated, and the translations are put back
 * in place with the text's own whitespace (and with html, its markup) between them. A sentence
 * that fails alone is kept untranslated and counted in failed_sentences. No heap allocation: the
 * buffers are declared by mtlite_limits.max_text_bytes (html also needs mtlite_limits.alignments).
 * The result is valid until the translator's next call. */
typedef enum {
  MTLITE_SPLIT_NONE = 0,      /* the whole text is one sentence */
  MTLITE_SPLIT_SENTENCE = 1,  /* one sentence per line */
  MTLITE_SPLIT_PARAGRAPH = 2, /* a line is a paragraph (the default) */
  MTLITE_SPLIT_WRAPPED = 3    /* blank lines separate paragraphs, single line breaks are soft */
} mtlite_split_mode;
typedef struct {
  int split;            /* mtlite_split_mode */
  int html;             /* bool */
  int max_length_break; /* longer sentences (source tokens) are translated in pieces; 128 */
  const char* language; /* the splitter's rules ("en", "de", ...); NULL: the model's source language */
  int quality;          /* bool: word and sentence quality scores (mtlite_text_word_get) */
} mtlite_text_options;
typedef struct {
  const char* text; /* the translation (not NUL-terminated: use text_len) */
  size_t text_len;
  size_t num_sentences, failed_sentences;
  const char* first_error; /* the message of the first failed sentence */
  size_t first_error_len;
  size_t num_words;        /* quality: words with a score */
} mtlite_text_result;
typedef struct {
  uint32_t source_begin, source_end; /* bytes of the input (html: of its text content) */
  uint32_t target_begin, target_end; /* bytes of the translation (html: of its text content) */
  int status;                        /* mtlite_status; not MTLITE_OK: kept untranslated */
  int pieces;
  float score;
  float quality;                     /* the mean of its words' scores (quality) */
  uint32_t first_word, num_words;    /* its words (mtlite_text_word_get) */
} mtlite_text_sentence;
typedef struct {
  uint32_t target_begin, target_end; /* bytes of the translation (html: of its text content) */
  float score;                       /* the mean log-probability of its tokens */
} mtlite_text_word;
void mtlite_text_options_default(mtlite_text_options* options);
/* options may be NULL (mtlite_options_default), text_options too (mtlite_text_options_default). */
mtlite_status mtlite_translate_text(mtlite_translator* translator, const char* text, size_t length,
                                    const mtlite_options* options, const mtlite_text_options* text_options,
                                    mtlite_text_result* out);
mtlite_status mtlite_text_sentence_get(const mtlite_translator* translator, size_t i, mtlite_text_sentence* out);
/* Words of the last mtlite_translate_text with quality: i < the result's num_words. */
mtlite_status mtlite_text_word_get(const mtlite_translator* translator, size_t i, mtlite_text_word* out);

/* Profile of the translator's last call (options.profile), valid until its next call. Names are
 * static strings (docs/profiling.md). MTLITE_OUT_OF_RANGE when the last call was not profiled. */
typedef struct {
  uint64_t wall_ns;
  int threads, sentences, steps;
  size_t num_entries, num_events, dropped_events;
} mtlite_profile_summary;
typedef struct {
  const char* op;
  const char* component;
  const char* parent;
  int layer; /* -1: not a per-layer op */
  uint64_t calls, total_ns, bytes, macs;
} mtlite_profile_entry;
typedef struct {
  const char* op;
  int layer, lane, depth, step;
  uint64_t start_ns, end_ns, bytes, macs;
  int m, n, k;
} mtlite_profile_event;

mtlite_status mtlite_profile_summary_get(const mtlite_translator* translator, mtlite_profile_summary* out);
/* Entries with calls == 0 are included (every op x layer); skip them. */
mtlite_status mtlite_profile_entry_get(const mtlite_translator* translator, size_t i, mtlite_profile_entry* out);
mtlite_status mtlite_profile_event_get(const mtlite_translator* translator, size_t i, mtlite_profile_event* out);

#ifdef __cplusplus
}
#endif
#endif /* MTLITE_H_ */
