// mtlite: convert | info | translate
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "mtlite/mtlite.hpp"

static int Usage(FILE* f) {
  std::fprintf(f,
               "mtlite %s — on-device quantized translation\n"
               "usage:\n"
               "  mtlite convert <hf_dir> -o model.mtlite [--quantize int8|fp16|fp32]\n"
               "  mtlite info model.mtlite [--json] [--verify] [--limits B,S,T,BEAM]\n"
               "  mtlite translate -m model.mtlite [--beam N] [--batch N] [--threads N]\n"
               "                   [--alignments] [--output-ids] [text ...]\n",
               mtlite::Version());
  return f == stderr ? 2 : 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return Usage(stderr);
  const char* cmd = argv[1];
  if (!std::strcmp(cmd, "-h") || !std::strcmp(cmd, "--help") || !std::strcmp(cmd, "help")) return Usage(stdout);
  if (!std::strcmp(cmd, "--version") || !std::strcmp(cmd, "version")) {
    std::printf("mtlite %s\n", mtlite::Version());
    return 0;
  }
  if (!std::strcmp(cmd, "convert")) {
#ifdef MTLITE_HAS_CONVERTER
    return mtlite::cli::ConvertMain(argc - 1, argv + 1);
#else
    std::fprintf(stderr, "mtlite: this build has no converter (it is a host tool)\n");
    return 2;
#endif
  }
  if (!std::strcmp(cmd, "info")) return mtlite::cli::InfoMain(argc - 1, argv + 1);
  if (!std::strcmp(cmd, "translate")) return mtlite::cli::TranslateMain(argc - 1, argv + 1);
  std::fprintf(stderr, "mtlite: unknown command '%s'\n", cmd);
  return Usage(stderr);
}
