// Subcommands of the `mtlite` CLI. Each returns the process exit code (0 = success) and
// prints its own errors to stderr.
#pragma once

namespace mtlite {
namespace cli {
int ConvertMain(int argc, char** argv);    // converter/ (host builds only)
int InfoMain(int argc, char** argv);       // runtime/cli/info_cmd.cc
int TranslateMain(int argc, char** argv);  // runtime/cli/translate_cmd.cc
}  // namespace cli
}  // namespace mtlite
