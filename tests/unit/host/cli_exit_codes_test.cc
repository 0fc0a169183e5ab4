// The `mtlite` binary's exit codes and streams: 0 success (and --help, on stdout), 1 a failure
// at run time, 2 bad arguments (message and usage on stderr). The parsers themselves are tested
// in process by cli_args_test.
#include <gtest/gtest.h>

#include <string>

#include "model_test_helpers.h"

namespace mtlite {
namespace {

using testing::RunCli;

std::string DemoPath() { return "'" + testing::DemoModel("int8") + "'"; }

TEST(CliExitCodes, HelpGoesToStdoutWithExitZero) {
  for (const char* cmd : {"convert", "info", "translate"}) {
    const auto r = testing::Run("{ '" + testing::CliPath() + "' " + cmd + " --help 2>/dev/null; }");  // stdout
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_EQ(r.output.find(std::string("usage: mtlite ") + cmd), 0u) << r.output;
  }
  EXPECT_EQ(RunCli("--help").exit_code, 0);
  EXPECT_EQ(RunCli("help").exit_code, 0);
  const auto v = RunCli("version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.output.find("mtlite "), 0u);
}

TEST(CliExitCodes, BadArgumentsExitTwoWithAMessage) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "usage: mtlite COMMAND"},
      {"frobnicate", "unknown command 'frobnicate'"},
      {"info", "missing MODEL"},
      {"info " + DemoPath() + " --limits 1,2", "--limits expects BATCH,SRC,TGT,BEAM"},
      {"info " + DemoPath() + " --limits", "--limits needs a value"},
      {"info " + DemoPath() + " --jason", "unknown option '--jason'"},
      {"translate", "-m MODEL is required"},
      {"translate -m " + DemoPath() + " --beam 0", "--beam must be an integer in [1, 64], got '0'"},
      {"translate -m " + DemoPath() + " --beam", "--beam needs a value"},
      {"translate -m " + DemoPath() + " --beam 2 --n-best 3", "--n-best (3) cannot exceed --beam (2)"},
      {"translate -m " + DemoPath() + " --length-penalty nan", "--length-penalty must be a number"},
      {"translate -m " + DemoPath() + " --bogus", "unknown option '--bogus'"},
      {"convert", "-o MODEL is required"},
      {"convert dir -o x.mtlite --quantize int4", "--quantize must be one of int8|fp16|fp32"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = testing::Run("{ '" + testing::CliPath() + "' " + args + " 2>&1 >/dev/null; }");  // stderr
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(CliExitCodes, RunTimeFailuresExitOne) {
  testing::TempDir dir;
  EXPECT_EQ(RunCli("info '" + (dir / "missing.mtlite") + "'").exit_code, 1);
  EXPECT_EQ(RunCli("translate -m '" + (dir / "missing.mtlite") + "' hello").exit_code, 1);
  EXPECT_EQ(RunCli("convert '" + (dir / "no_such_dir") + "' -o '" + (dir / "x.mtlite") + "' --quiet").exit_code, 1);
}

TEST(CliExitCodes, ValidCommandsExitZero) {
  const auto info = RunCli("info " + DemoPath() + " --limits 1,64,64,2");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("arena for limits batch=1 src=64 tgt=64 beam=2: "), std::string::npos) << info.output;
  const auto tr = RunCli("translate -m " + DemoPath() + " --beam=2 --output-ids -- 'A man is riding a bike.'");
  EXPECT_EQ(tr.exit_code, 0) << tr.output;
  EXPECT_FALSE(tr.output.empty());
}

}  // namespace
}  // namespace mtlite
