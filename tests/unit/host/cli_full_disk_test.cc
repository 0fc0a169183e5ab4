// Every output of the `mtlite` commands is checked: a write that fails (a full disk: /dev/full, or
// a file larger than the process may write) exits 1 with a message naming the output and the
// reason, and a file output that fails part-way leaves the previous file (or none) behind, never
// a truncated one.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "model_test_helpers.h"

namespace mtlite {
namespace {

const char kFull[] = "/dev/full";
const char kNoSpace[] = "No space left on device";

std::string Quote(const std::string& s) { return "'" + s + "'"; }
std::string Demo() { return Quote(testing::DemoModel("int8")); }
// Runs `command` in a group, so that redirections of its stdout leave its stderr to the result.
testing::CommandResult Shell(const std::string& command) { return testing::Run("{ " + command + "; }"); }
testing::CommandResult RunCli(const std::string& args) { return Shell(Quote(testing::CliPath()) + " " + args); }

std::string Data(const char* name) { return Quote(std::string(MTLITE_SOURCE_DIR) + "/tests/data/" + name); }

// One pair of source / target ids of tests/data/golden/demo.forced.json: 7 x 8001 logits.
const char kForcedPair[] = "printf '6 12 100 339 7 2 0\\n6 17 269 7 608 2 0\\n' | ";

class CliFullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    struct stat st;
    if (stat(kFull, &st) != 0 || !S_ISCHR(st.st_mode) || access(kFull, W_OK) != 0)
      GTEST_SKIP() << kFull << " is not a writable character device on this system (it is on Linux)";
  }

  // A name in the temp dir that is a symbolic link to /dev/full, so that outputs whose name must
  // end in .S / .json / ... fail as on a full disk.
  std::string FullAs(const std::string& name) {
    const std::string path = dir_ / name;
    EXPECT_EQ(symlink(kFull, path.c_str()), 0) << path;
    return path;
  }

  // Runs the CLI; expects exit 1 and "writing OUTPUT: No space left on device" on stderr.
  void ExpectFails(const std::string& args, const std::string& output, const std::string& stdin_from = "") {
    const auto r = Shell(stdin_from + Quote(testing::CliPath()) + " " + args + " >/dev/null");
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("writing " + output + ": " + kNoSpace), std::string::npos) << args << "\n" << r.output;
  }

  testing::TempDir dir_;
};

TEST_F(CliFullDisk, TranslateToStdout) {
  const auto r = RunCli("translate -m " + Demo() + " -q 'A man is riding a bike.' >/dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(std::string("mtlite translate: writing stdout: ") + kNoSpace), std::string::npos) << r.output;
  // More output than a stdio buffer: the failure is seen while translating, in batches too.
  const auto many = Shell("{ for i in $(seq 300); do echo 'Two dogs play in the snow.'; done; } | " +
                                 Quote(testing::CliPath()) + " translate -m " + Demo() + " -q --batch 8 >/dev/full");
  EXPECT_EQ(many.exit_code, 1) << many.output;
  EXPECT_NE(many.output.find(std::string("writing stdout: ") + kNoSpace), std::string::npos) << many.output;
}

TEST_F(CliFullDisk, TranslateForcedLogits) {
  const std::string out = FullAs("logits.f32");
  ExpectFails("translate -m " + Demo() + " --input-ids --forced-logits " + Quote(out), out, kForcedPair);
}

TEST_F(CliFullDisk, Embed) {
  for (const char* name : {"model_data.S", "model_data.c"}) {
    const std::string out = FullAs(name);
    ExpectFails("embed " + Demo() + " -o " + Quote(out), out);
  }
}

TEST_F(CliFullDisk, Convert) {
  const std::string out = FullAs("demo.mtlite");
  ExpectFails("convert " + Quote(testing::DemoHfDir()) + " -o " + Quote(out) + " --quiet", out);
  struct stat st;
  ASSERT_EQ(lstat(out.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link to " << kFull << " was replaced";
  // The converter's report on stdout.
  const auto r = RunCli("convert " + Quote(testing::DemoHfDir()) + " -o " + Quote(dir_ / "ok.mtlite") +
                                 " >/dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(std::string("mtlite convert: writing stdout: ") + kNoSpace), std::string::npos) << r.output;
}

TEST_F(CliFullDisk, Shortlist) {
  const std::string out = FullAs("shortlist.mtlite");
  ExpectFails("shortlist -m " + Demo() + " -o " + Quote(out) + " --source " + Data("shortlist/train.en") +
                  " --target " + Data("shortlist/train.de") + " --quiet",
              out);
}

TEST_F(CliFullDisk, ProfileTraceAndJson) {
  const std::string trace = FullAs("trace.json"), json = FullAs("report.json");
  ExpectFails("profile -m " + Demo() + " -q --trace " + Quote(trace) + " 'A man is riding a bike.'", trace);
  ExpectFails("profile -m " + Demo() + " -q --json " + Quote(json) + " 'A man is riding a bike.'", json);
  const auto r = RunCli("profile -m " + Demo() + " --json - 'A man is riding a bike.' >/dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(std::string("mtlite profile: writing stdout: ") + kNoSpace), std::string::npos) << r.output;
}

TEST_F(CliFullDisk, AttentionOutputs) {
  const std::string svg = FullAs("map.svg"), json = FullAs("map.json");
  ExpectFails("attention -m " + Demo() + " -o " + Quote(svg) + " 'A man is riding a bike.'", svg);
  ExpectFails("attention -m " + Demo() + " --json " + Quote(json) + " 'A man is riding a bike.'", json);
}

TEST_F(CliFullDisk, InfoHeaderAndTables) {
  const std::string header = FullAs("ram_budget.h");
  ExpectFails("info " + Demo() + " --limits 1,64,64,1 --header " + Quote(header) + " --quiet", header);
  const auto r = RunCli("info " + Demo() + " >/dev/full");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(std::string("mtlite info: writing stdout: ") + kNoSpace), std::string::npos) << r.output;
}

// A regular file that cannot be written to the end (here: larger than the file size limit, with
// SIGXFSZ ignored so that the write fails with EFBIG): exit 1 naming the file, and the file that
// was there before is left as it was, with no temporary beside it.
TEST(CliFailedWrite, KeepsThePreviousFile) {
  testing::TempDir dir;
  const std::string limit = "trap '' XFSZ; ulimit -f 64; ";  // 32 KiB (sh counts 512-byte blocks)
  const std::pair<std::string, std::string> cases[] = {
      {"demo.mtlite", "convert " + Quote(testing::DemoHfDir()) + " -o OUT --quiet"},
      {"model_data.c", "embed " + Demo() + " -o OUT"},
      {"logits.f32", "translate -m " + Demo() + " --input-ids --forced-logits OUT"},
      {"trace.json", "profile -m " + Demo() + " -q --repeat 20 --trace OUT 'A man is riding a bike.'"},
  };
  for (const auto& [name, args_template] : cases) {
    const std::string out = dir / name;
    testing::WriteText(out, "previous\n");
    std::string args = args_template;
    args.replace(args.find("OUT"), 3, Quote(out));
    const std::string stdin_from = name == "logits.f32" ? kForcedPair : "";
    const auto r = Shell(limit + stdin_from + Quote(testing::CliPath()) + " " + args + " >/dev/null");
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("writing " + out + ": "), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(testing::ReadText(out), "previous\n") << args;
    EXPECT_NE(access((out + ".tmp").c_str(), F_OK), 0) << args << ": the temporary was left behind";
  }
}

}  // namespace
}  // namespace mtlite
