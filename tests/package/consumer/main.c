/* Translates argv[2..] with the model argv[1] through the C API; prints one line per input. */
#include <mtlite/mtlite.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: consumer_c model.mtlite text...\n");
    return 2;
  }
  mtlite_model* model = NULL;
  if (mtlite_model_load(argv[1], 1, &model) != MTLITE_OK) {
    fprintf(stderr, "load: %s\n", mtlite_last_error());
    return 1;
  }
  mtlite_limits limits;
  mtlite_limits_default(&limits);
  limits.max_batch = argc - 2;
  mtlite_translator* tr = NULL;
  if (mtlite_translator_create(model, &limits, &tr) != MTLITE_OK) {
    fprintf(stderr, "create: %s\n", mtlite_last_error());
    mtlite_model_free(model);
    return 1;
  }
  mtlite_options options;
  mtlite_options_default(&options);
  int rc = 0;
  if (mtlite_translate(tr, (const char* const*)(argv + 2), NULL, (size_t)(argc - 2), &options) != MTLITE_OK) {
    fprintf(stderr, "translate: %s\n", mtlite_last_error());
    rc = 1;
  } else {
    for (int i = 0; i < argc - 2; ++i) {
      mtlite_hypothesis h;
      if (mtlite_result_get(tr, (size_t)i, 0, &h) != MTLITE_OK) {
        fprintf(stderr, "result: %s\n", mtlite_last_error());
        rc = 1;
        break;
      }
      printf("%.*s\n", (int)h.text_len, h.text);
    }
  }
  /* A bad input is an error with a message, not a crash. */
  const char* bad[] = {"\xff"};
  if (mtlite_translate(tr, bad, NULL, 1, &options) == MTLITE_OK || mtlite_last_error()[0] == '\0') rc = 1;
  mtlite_translator_free(tr);
  mtlite_model_free(model);
  return rc;
}
