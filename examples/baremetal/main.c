/* mtlite on a microcontroller without an OS (Cortex-M55 on mps3-an547, Cortex-M7 on mps2-an500,
 * under qemu-system-arm or a debugger): the firmware example of examples/firmware, bare metal.
 *
 *   - the model is read-only data in its own section (.flash_model, `mtlite embed --section`),
 *     which the board's linker script puts in flash (QSPI when it fits, else the external
 *     memory standing in for XIP flash); the runtime reads the weights in place;
 *   - the RAM is two static arrays in the board's SRAM (BM_SRAM_BSS), sized at build time by
 *     the host's `mtlite info --limits ... --header` (mtlite_budget.h); the stack is the board's
 *     (DTCM on mps3-an547);
 *   - no heap: nothing is allocated while translating. The C library's malloc exists only for
 *     the runtime's error messages (Status carries a std::string), from a small fixed region;
 *     --stats reports how much of it was taken (0 when every line translated);
 *   - lines in on the host's stdin and translations out on its stdout, over semihosting
 *     (platforms/baremetal/semihosting.h); diagnostics on stderr.
 *
 *   qemu-system-arm -M mps3-an547 -display none -serial none -monitor none \
 *     -semihosting-config enable=on,target=native -kernel mtlite_baremetal_example.elf \
 *     [-append "--beam N --max-length N --output-ids --stats"] < in.txt
 *
 * The options are those of mtlite_firmware_example. Exit status: 0, 1 when a line could not be
 * translated (it gets an empty output line and a message on stderr), 2 for bad options or a
 * model that does not load, 3 on a CPU fault (platforms/baremetal/startup.c). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "mtlite/mtlite.h"
#include "mtlite_budget.h"

/* model_data.S (`mtlite embed --section .flash_model`) */
extern const unsigned char mtlite_model_data[];
extern const size_t mtlite_model_data_size;

/* All the RAM mtlite uses, sized for the limits in mtlite_budget.h. */
static uint8_t g_model_storage[MTLITE_MODEL_STORAGE_BYTES] BM_SRAM_BSS __attribute__((aligned(64)));
static uint8_t g_arena[MTLITE_ARENA_BYTES] BM_SRAM_BSS __attribute__((aligned(64)));

static void put_str(int fd, const char* s) { bm_write_str(fd, s); }
static void put_stat(const char* key, unsigned long long v) {
  put_str(2, key);
  put_str(2, "=");
  bm_write_uint(2, v);
  put_str(2, "\n");
}
static void put_stat_str(const char* key, const char* v) {
  put_str(2, key);
  put_str(2, "=");
  put_str(2, v);
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
      const long k = bm_read(g_in, sizeof g_in);
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
  put_str(2, "usage: mtlite_baremetal_example [--max-length N] [--beam N] [--output-ids] [--stats] < input\n");
  return 2;
}

int main(int argc, char** argv) {
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

  size_t line_no = 0, failed = 0;
  size_t len = 0;
  int too_long = 0;
  while (read_line(&len, &too_long)) {
    ++line_no;
    mtlite_status st = MTLITE_OUT_OF_RANGE;
    if (!too_long) {
      const char* text = g_line;
      st = mtlite_translate(tr, &text, &len, 1, &opt);
    }
    mtlite_hypothesis h;
    if (st == MTLITE_OK && mtlite_result_get(tr, 0, 0, &h) == MTLITE_OK) {
      if (output_ids) {
        for (int i = 0; i < h.num_ids; ++i) {
          if (i) bm_write(1, " ", 1);
          bm_write_uint(1, (unsigned long long)h.ids[i]);
        }
      } else {
        bm_write(1, h.text, h.text_len);
      }
    } else {
      put_str(2, "line ");
      bm_write_uint(2, line_no);
      put_str(2, ": ");
      put_str(2, too_long ? "longer than the input limit (MTLITE_LIMIT_MAX_INPUT_BYTES)" : mtlite_last_error());
      put_str(2, "\n");
      ++failed;
    }
    bm_write(1, "\n", 1);
  }

  if (stats) {
    /* What this target really needs for these limits (pointer sizes differ from the host whose
     * mtlite wrote mtlite_budget.h): the budget must be at least that. */
    size_t arena_needed = 0, storage_needed = 0;
    mtlite_arena_bytes(model, &limits, &arena_needed);
    mtlite_model_storage_bytes(mtlite_model_data, mtlite_model_data_size, &storage_needed);
    put_stat_str("kernel_table", mtlite_kernel_table());
    put_stat("lines", line_no);
    put_stat("failed_lines", failed);
    put_stat("heap_used", bm_heap_used());
    put_stat("heap_size", bm_heap_size());
    put_stat("stack_high_water", bm_stack_high_water());
    put_stat("stack_size", bm_stack_size());
    put_stat("stack_budget", MTLITE_STACK_BYTES);
    put_stat("arena_bytes", sizeof g_arena);
    put_stat("arena_needed", arena_needed);
    put_stat("model_storage_bytes", sizeof g_model_storage);
    put_stat("model_storage_needed", storage_needed);
    put_stat("model_bytes", mtlite_model_data_size);
    put_stat("model_address", (unsigned long long)(uintptr_t)mtlite_model_data);
    put_stat("arena_address", (unsigned long long)(uintptr_t)g_arena);
  }
  mtlite_translator_free(tr);
  mtlite_model_free(model);
  return failed ? 1 : 0;
}
