// mtlite: convert | info | shortlist | translate | profile | attention | embed | split | version
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "kernels.h"
#include "mtlite/mtlite.hpp"
#include "output_file.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*main)(int argc, char** argv);  // argv[0] is the command name
};

// `mtlite --version`: the version line only.
int VersionLineMain(int, char**) {
  std::printf("mtlite %s\n", mtlite::Version());
  return 0;
}

// `mtlite version`: the version line, then the kernel table translations use on this CPU and every
// table it can run (MTLITE_KERNELS=<name> forces one).
int VersionMain(int argc, char** argv) {
  VersionLineMain(argc, argv);
  const mtlite::kernels::KernelTable* tables[16];
  const int n = mtlite::kernels::AvailableKernels(tables, 16);
  std::printf("kernels %s (this CPU can run:", mtlite::KernelTableName());
  for (int i = 0; i < n; ++i) std::printf(" %s", tables[i]->name);
  std::printf(")\n");
  return 0;
}

constexpr Command kCommands[] = {
    {"convert", "HF MarianMT checkpoint directory -> .mtlite model file (host builds)", mtlite::cli::ConvertMain},
    {"info", "size profile, config and checksums of a model file", mtlite::cli::InfoMain},
    {"shortlist", "add an output-vocabulary shortlist (parallel text or Marian lex) to a model (host builds)",
     mtlite::cli::ShortlistMain},
    {"translate", "translate lines of stdin or the arguments", mtlite::cli::TranslateMain},
    {"profile", "latency profile: per-op table, latency, memory; Chrome trace and JSON report", mtlite::cli::ProfileMain},
    {"attention", "cross-attention heatmap of one sentence (SVG, JSON)", mtlite::cli::AttentionMain},
    {"embed", "model file -> read-only data (.S or .c) for a firmware image", mtlite::cli::EmbedMain},
    {"split", "cut the text of stdin into sentences (one a line, or JSON byte spans)", mtlite::cli::SplitMain},
    {"version", "print the version", VersionMain},
};

int Usage(FILE* f) {
  std::fprintf(f, "mtlite %s — on-device quantized translation\nusage: mtlite COMMAND [options]\n\ncommands:\n",
               mtlite::Version());
  for (const Command& c : kCommands) std::fprintf(f, "  %-11s %s\n", c.name, c.summary);
  std::fprintf(f, "\n`mtlite COMMAND --help` lists a command's options.\n");
  return f == stderr ? 2 : 0;
}

int Run(int argc, char** argv) {
  if (argc < 2) return Usage(stderr);
  const char* cmd = argv[1];
  if (!std::strcmp(cmd, "-h") || !std::strcmp(cmd, "--help") || !std::strcmp(cmd, "help")) return Usage(stdout);
  if (!std::strcmp(cmd, "--version")) return VersionLineMain(argc - 1, argv + 1);
  for (const Command& c : kCommands) {
    if (!std::strcmp(cmd, c.name)) return c.main(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "mtlite: unknown command '%s'\n", cmd);
  return Usage(stderr);
}

}  // namespace

// A command that succeeded fails after all when what it wrote to stdout was lost (a full disk).
int main(int argc, char** argv) {
  const int rc = Run(argc, argv);
  const std::string name = argc < 2 || argv[1][0] == '-' ? std::string("mtlite") : "mtlite " + std::string(argv[1]);
  return rc == 0 && !mtlite::cli::FinishStdout(name.c_str()) ? 1 : rc;
}
