/* mtlite firmware-style example: a translator with no heap, built the way TFLite Micro
 * programs are, plus what TFLM has no notion of (a decoder, beam search, a tokenizer).
 *
 *   - the model is read-only data in the image: model_data.S, written by `mtlite embed` (an
 *     .incbin of the .mtlite file, 64-byte aligned, in .rodata or a section a linker script
 *     puts in flash); the runtime reads the weights in place, nothing is copied;
 *   - its RAM is two static arrays sized at build time by `mtlite info --limits ... --header`
 *     (mtlite_budget.h): the model's tables and the translator's arena;
 *   - nothing is allocated on the heap, from start to end (heap_guard.c counts to make sure);
 *   - it reads lines from stdin and writes one translation per line to stdout through two
 *     "board" functions (POSIX read/write here; a UART or a shell on a device).
 *
 *   mtlite_firmware_example [--max-length N] [--beam N] [--output-ids] [--stats] < in.txt
 *
 * --max-length N: generated tokens per sentence including </s> (default and at most the
 * target-token limit), as `mtlite translate --max-length N`; --beam N: beam size (1 = greedy,
 * at most the beam limit); --output-ids: target ids instead of text, as `mtlite translate
 * --output-ids`; --stats: print what the run really used to stderr (heap allocations since
 * main, the stack high-water of the translate calls and the arena / model storage high-water,
 * all measured by painting; see runtime/cli/ram_probe.h), one `key=value` per line.
 * A line that cannot be translated (too long, invalid UTF-8) gets an empty output line and a
 * message on stderr; the exit code is then 1 (2: bad arguments or the model does not load). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "heap_guard.h"
#include "mtlite/mtlite.h"
#include "mtlite_budget.h"
#include "ram_probe.h"

/* model_data.S (`mtlite embed`) */
extern const unsigned char mtlite_model_data[];
extern const size_t mtlite_model_data_size;

/* All the RAM mtlite uses, sized for the limits in mtlite_budget.h. */
static uint8_t g_model_storage[MTLITE_MODEL_STORAGE_BYTES] __attribute__((aligned(64)));
static uint8_t g_arena[MTLITE_ARENA_BYTES] __attribute__((aligned(64)));

/* ---- board I/O ------------------------------------------------------------------------------ */
static long board_read(char* buf, size_t n) { return (long)read(0, buf, n); }
static void board_write(int fd, const char* s, size_t n) {
  while (n > 0) {
    const ssize_t k = write(fd, s, n);
    if (k <= 0) return;
    s += k;
    n -= (size_t)k;
  }
}
static void put_str(int fd, const char* s) { board_write(fd, s, strlen(s)); }
static void put_uint(int fd, unsigned long long v) {
  char buf[24];
  size_t i = sizeof buf;
  do {
    buf[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  board_write(fd, buf + i, sizeof buf - i);
}
static void put_stat(const char* key, unsigned long long v) {
  put_str(2, key);
  put_str(2, "=");
  put_uint(2, v);
  put_str(2, "\n");
}

/* ---- line reader: lines of up to MTLITE_LIMIT_MAX_INPUT_BYTES bytes ------------------------- */
static char g_in[4096];
static size_t g_in_pos, g_in_len;
static char g_line[MTLITE_LIMIT_MAX_INPUT_BYTES + 1];

/* 1: a line in g_line[0, *len) (*too_long: it was longer and has been skipped); 0: end of input */
static int read_line(size_t* len, int* too_long) {
  size_t n = 0;
  int any = 0;
  *too_long = 0;
  for (;;) {
    if (g_in_pos == g_in_len) {
      const long k = board_read(g_in, sizeof g_in);
      if (k <= 0) break;
      g_in_pos = 0;
      g_in_len = (size_t)k;
    }
    any = 1;
    const char c = g_in[g_in_pos++];
    if (c == '\n') break;
    if (n < MTLITE_LIMIT_MAX_INPUT_BYTES) {
      g_line[n++] = c;
    } else {
      *too_long = 1;
    }
  }
  if (n > 0 && g_line[n - 1] == '\r') --n;
  *len = n;
  return any;
}

static int parse_int(const char* s, int lo, int hi, int* out) {
  long v = 0;
  if (!*s) return 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9' || v > 100000000) return 0;
    v = v * 10 + (*s - '0');
  }
  if (v < lo || v > hi) return 0;
  *out = (int)v;
  return 1;
}

static int usage(void) {
  put_str(2, "usage: mtlite_firmware_example [--max-length N] [--beam N] [--output-ids] [--stats] < input\n");
  return 2;
}

int main(int argc, char** argv) {
  const long allocs_at_main = heap_guard_count();
  int max_length = MTLITE_LIMIT_MAX_TARGET_TOKENS, beam = 1, output_ids = 0, stats = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--max-length") && i + 1 < argc) {
      if (!parse_int(argv[++i], 1, MTLITE_LIMIT_MAX_TARGET_TOKENS, &max_length)) return usage();
    } else if (!strcmp(argv[i], "--beam") && i + 1 < argc) {
      if (!parse_int(argv[++i], 1, MTLITE_LIMIT_MAX_BEAM, &beam)) return usage();
    } else if (!strcmp(argv[i], "--output-ids")) {
      output_ids = 1;
    } else if (!strcmp(argv[i], "--stats")) {
      stats = 1;
    } else {
      return usage();
    }
  }
  if (stats) { /* paint both arrays: what is not the pattern at the end was used */
    mtlite_fill_pattern(g_model_storage, sizeof g_model_storage);
    mtlite_fill_pattern(g_arena, sizeof g_arena);
  }

  mtlite_model* model = NULL;
  if (mtlite_model_from_buffer_storage(mtlite_model_data, mtlite_model_data_size, 0, g_model_storage,
                                       sizeof g_model_storage, &model) != MTLITE_OK) {
    put_str(2, "model: ");
    put_str(2, mtlite_last_error());
    put_str(2, "\n");
    return 2;
  }
  mtlite_limits limits;
  mtlite_limits_default(&limits);
  limits.max_batch = MTLITE_LIMIT_MAX_BATCH;
  limits.max_source_tokens = MTLITE_LIMIT_MAX_SOURCE_TOKENS;
  limits.max_target_tokens = MTLITE_LIMIT_MAX_TARGET_TOKENS;
  limits.max_beam = MTLITE_LIMIT_MAX_BEAM;
  limits.max_n_best = MTLITE_LIMIT_MAX_N_BEST;
  limits.max_input_bytes = MTLITE_LIMIT_MAX_INPUT_BYTES;
  limits.num_threads = MTLITE_LIMIT_NUM_THREADS;
  mtlite_translator* tr = NULL;
  if (mtlite_translator_create_in_arena(model, &limits, g_arena, sizeof g_arena, &tr) != MTLITE_OK) {
    put_str(2, "translator: ");
    put_str(2, mtlite_last_error());
    put_str(2, "\n");
    return 2;
  }
  mtlite_options opt;
  mtlite_options_default(&opt);
  opt.beam_size = beam;
  opt.max_length = max_length;

  /* Paint well beyond the budget: the measurement must not reach the painted bottom. */
  const size_t paint = 4 * (size_t)MTLITE_STACK_BYTES + 65536;
  size_t stack_high_water = 0, line_no = 0;
  int rc = 0;
  size_t len = 0;
  int too_long = 0;
  while (read_line(&len, &too_long)) {
    ++line_no;
    mtlite_status st = MTLITE_OUT_OF_RANGE;
    if (!too_long) {
      const char* text = g_line;
      mtlite_stack_probe probe;
      if (stats) mtlite_stack_paint(&probe, paint);
      st = mtlite_translate(tr, &text, &len, 1, &opt);
      if (stats) {
        const size_t used = mtlite_stack_used(&probe);
        if (used > stack_high_water) stack_high_water = used;
      }
    }
    mtlite_hypothesis h;
    if (st == MTLITE_OK && mtlite_result_get(tr, 0, 0, &h) == MTLITE_OK) {
      if (output_ids) {
        for (int i = 0; i < h.num_ids; ++i) {
          if (i) board_write(1, " ", 1);
          put_uint(1, (unsigned long long)h.ids[i]);
        }
      } else {
        board_write(1, h.text, h.text_len);
      }
    } else {
      put_str(2, "line ");
      put_uint(2, line_no);
      put_str(2, ": ");
      put_str(2, too_long ? "longer than the input limit (MTLITE_LIMIT_MAX_INPUT_BYTES)" : mtlite_last_error());
      put_str(2, "\n");
      rc = 1;
    }
    board_write(1, "\n", 1);
  }

  if (stats) {
    put_stat("lines", line_no);
    put_stat("heap_allocations", (unsigned long long)(heap_guard_count() - allocs_at_main));
    put_stat("heap_guard_active", (unsigned long long)heap_guard_active());
    put_stat("stack_high_water", stack_high_water);
    put_stat("stack_painted", paint);
    put_stat("stack_budget", MTLITE_STACK_BYTES);
    put_stat("arena_bytes", sizeof g_arena);
    put_stat("arena_high_water", mtlite_high_water(g_arena, sizeof g_arena));
    put_stat("model_storage_bytes", sizeof g_model_storage);
    put_stat("model_storage_high_water", mtlite_high_water(g_model_storage, sizeof g_model_storage));
    put_stat("static_data_budget", MTLITE_STATIC_DATA_BYTES);
    put_stat("ram_budget", MTLITE_RAM_BYTES);
  }
  mtlite_translator_free(tr);
  mtlite_model_free(model);
  if (stats) put_stat("heap_allocations_at_exit", (unsigned long long)(heap_guard_count() - allocs_at_main));
  return rc;
}
