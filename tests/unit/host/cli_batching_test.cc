// `mtlite translate` batching: a window of --sort-window lines is translated in batches sorted by
// source length and written in input order. Sorting must not change a byte of stdout or stderr
// (batch composition does not change results by the kernel contract; errors keep naming their
// lines, in input order), input is read one window at a time (memory bounded by the window, and
// output appears before the input ends), and the sorted batches hold less padding.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "commands.h"
#include "unit/host/model_test_helpers.h"

extern char** environ;

namespace mtlite {
namespace {

using cli::BatchPadding;
using cli::LengthOrder;
using cli::SortWindowLines;
using cli::TranslateArgs;

// ---- the window and its order ----------------------------------------------------------------

TEST(CliBatching, WindowDefaultsTo64BatchesAndIsOffForBatchOneAndStream) {
  TranslateArgs a;
  EXPECT_EQ(SortWindowLines(a), 1) << "--batch 1: nothing to sort";
  a.batch = 16;
  EXPECT_EQ(SortWindowLines(a), 64 * 16);
  a.sort_window = 100;
  EXPECT_EQ(SortWindowLines(a), 100);
  a.sort_window = 0;
  EXPECT_EQ(SortWindowLines(a), 1);
  a.sort_window = 1;
  EXPECT_EQ(SortWindowLines(a), 1);
  a.sort_window = -1;
  a.stream = true;
  EXPECT_EQ(SortWindowLines(a), 1) << "--stream translates one sentence per call, in order";
}

TEST(CliBatching, ParsesSortWindow) {
  TranslateArgs a;
  const char* argv[] = {"translate", "-m", "m", "--batch", "8", "--sort-window", "40"};  // argv[0]: the command
  ASSERT_TRUE(cli::ParseTranslateArgs(7, argv, &a).ok());
  EXPECT_EQ(a.sort_window, 40);
  TranslateArgs b;
  const char* bad[] = {"translate", "-m", "m", "--sort-window", "-2"};
  const cli::ParseResult r = cli::ParseTranslateArgs(5, bad, &b);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.text.find("--sort-window"), std::string::npos) << r.text;
}

TEST(CliBatching, LengthOrderIsStableByLength) {
  const int lengths[] = {5, 0, 3, 5, 3, 12, 0, 1};
  const std::vector<uint32_t> want = {1, 6, 7, 2, 4, 0, 3, 5};  // ties keep their input order
  EXPECT_EQ(LengthOrder(lengths, 8), want);
  EXPECT_TRUE(LengthOrder(lengths, 0).empty());
}

TEST(CliBatching, PaddingCountsCellsOfEachBatch) {
  const int lengths[] = {10, 2, 9, 3, 4};
  BatchPadding p;
  p.Add(lengths, LengthOrder(lengths, 5), 2);
  // Sorted: {2,3} {4,9} {10} -> 6 + 18 + 10 = 34 cells; input order: {10,2} {9,3} {4} -> 20 + 18 + 4 = 42.
  EXPECT_EQ(p.tokens, 28u);
  EXPECT_EQ(p.sorted_cells, 34u);
  EXPECT_EQ(p.input_order_cells, 42u);
  EXPECT_EQ(p.batches, 3u);
  EXPECT_NEAR(p.SortedPercent(), 100.0 * 6 / 34, 1e-9);
  EXPECT_NEAR(p.InputOrderPercent(), 100.0 * 14 / 42, 1e-9);
}

// ---- end to end ------------------------------------------------------------------------------

struct Result {
  int exit_code = -1;
  std::string out, err;
};

// `mtlite translate -m demo.int8 ARGS < input`.
Result Translate(const std::string& args, const std::string& input) {
  testing::TempDir dir;
  testing::WriteText(dir / "in", input);
  const testing::CommandResult r =
      testing::Run("( '" + testing::CliPath() + "' translate -m '" + testing::DemoModel("int8") + "' " + args +
                   " < '" + (dir / "in") + "' > '" + (dir / "out") + "' 2> '" + (dir / "err") + "' )");
  return {r.exit_code, testing::ReadText(dir / "out"), testing::ReadText(dir / "err") + r.output};
}

// The first n lines of a dev set, each with its "\n".
std::string DevLines(const char* name, size_t n) {
  std::ifstream f(std::string(MTLITE_SOURCE_DIR) + "/tests/data/dev/" + name + ".en");
  std::string line, s;
  for (size_t i = 0; i < n && std::getline(f, line); ++i) s += line + "\n";
  return s;
}

size_t CountLines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(CliBatching, SortedOutputIsByteIdenticalAcrossWindowBoundaries) {
  // 120 lines of both dev sets (short tatoeba lines among long multi30k ones): windows of 48 end
  // inside the input (48 + 48 + 24), the default window (64 x 16) holds all of it.
  const std::string input = DevLines("multi30k.val", 60) + DevLines("tatoeba.dev", 60);
  ASSERT_EQ(CountLines(input), 120u);
  const Result unsorted = Translate("-q --batch 16 --beam 4 --sort-window 0", input);
  ASSERT_EQ(unsorted.exit_code, 0) << unsorted.err;
  ASSERT_EQ(CountLines(unsorted.out), 120u);
  for (const char* window : {"--sort-window 48", ""}) {
    SCOPED_TRACE(window);
    const Result sorted = Translate(std::string("-q --batch 16 --beam 4 ") + window, input);
    EXPECT_EQ(sorted.exit_code, 0) << sorted.err;
    EXPECT_EQ(sorted.out, unsorted.out);
    EXPECT_EQ(sorted.err, "");
  }
  // n-best lines carry the input line's index; ids, scores and alignments too.
  const std::string extra = "-q --batch 8 --beam 2 --n-best 2 --scores --alignments --output-ids ";
  const Result want = Translate(extra + "--sort-window 1", input);
  ASSERT_EQ(want.exit_code, 0) << want.err;
  ASSERT_EQ(CountLines(want.out), 240u);
  const Result got = Translate(extra + "--sort-window 24", input);
  EXPECT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(got.out, want.out);
}

TEST(CliBatching, ErrorsNameTheirLinesInInputOrder) {
  // Bad lines of every kind among good ones of different lengths: stdout and stderr are the same
  // as in input order, and a batch with a bad line still translates its good lines.
  const std::string longest(300, 'x');  // beyond --max-input-bytes 256
  const std::string input =
      "A man in a blue shirt is standing on a ladder cleaning windows.\n"
      "bad \xff byte\n"
      "Two dogs play in the snow.\n"
      "\n" +
      longest +
      "\n"
      "Hi.\n"
      "A little girl climbs into a wooden playhouse.\n"
      "\xc0\xaf\n"
      "A dog runs.\n"
      "Several people are standing in front of a building with a large sign on it.\n"
      "Thank you.\n" +
      longest + " again\n" +
      "Two cats sleep.\n"
      "A woman is reading a book in the park while her children play.\n";
  const std::string flags = "-q --split none --batch 4 --max-input-bytes 256 ";
  const Result want = Translate(flags + "--sort-window 0", input);
  ASSERT_EQ(want.exit_code, 1);
  ASSERT_EQ(CountLines(want.out), 14u);
  for (const char* line : {"line 2: INVALID_ARGUMENT", "line 5: OUT_OF_RANGE", "line 8: INVALID_ARGUMENT",
                           "line 12: OUT_OF_RANGE"})
    EXPECT_NE(want.err.find(line), std::string::npos) << line << " in\n" << want.err;
  for (const char* window : {"--sort-window 6", "--sort-window 8", ""}) {
    SCOPED_TRACE(window);
    const Result got = Translate(flags + window, input);
    EXPECT_EQ(got.exit_code, 1);
    EXPECT_EQ(got.out, want.out);
    EXPECT_EQ(got.err, want.err);
  }
  // Source ids (--input-ids) sort by their count; a line that is no list of ids fails alone.
  const std::string ids = "12 7 0\n3 0\nnot ids\n44 55 66 77 0\n0\n";
  const Result ids_want = Translate("-q --input-ids --output-ids --batch 2 --sort-window 0", ids);
  const Result ids_got = Translate("-q --input-ids --output-ids --batch 2 --sort-window 5", ids);
  EXPECT_EQ(ids_want.exit_code, 1);
  EXPECT_EQ(ids_got.exit_code, 1);
  EXPECT_EQ(ids_got.out, ids_want.out);
  EXPECT_EQ(ids_got.err, ids_want.err);
  EXPECT_NE(ids_got.err.find("line 3: INVALID_ARGUMENT"), std::string::npos) << ids_got.err;
}

TEST(CliBatching, ProgressReportsLessPaddingWhenSorted) {
  // The final progress line (>= 200 lines, no -q) gives the source padding of the batches as
  // translated and as they would have been in input order.
  const std::string input = DevLines("multi30k.val", 128) + DevLines("tatoeba.dev", 128);
  const Result r = Translate("--split none --batch 16", input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.err.find("; source padding ");
  ASSERT_NE(at, std::string::npos) << r.err;
  double sorted = -1, input_order = -1;
  ASSERT_EQ(std::sscanf(r.err.c_str() + at, "; source padding %lf %% sorted by length, %lf %% in input order", &sorted,
                        &input_order),
            2)
      << r.err;
  EXPECT_GE(sorted, 0.0);
  EXPECT_LT(sorted, input_order / 2) << r.err;
  const Result unsorted = Translate("--split none --batch 16 --sort-window 0", input);
  ASSERT_EQ(unsorted.exit_code, 0) << unsorted.err;
  EXPECT_NE(unsorted.err.find("256 lines"), std::string::npos) << unsorted.err;
  EXPECT_EQ(unsorted.err.find("padding"), std::string::npos) << unsorted.err;
  EXPECT_EQ(unsorted.out, r.out);
}

// A CLI process with pipes on stdin and stdout.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    for (int fd : {in[0], in[1], out[0], out[1]}) posix_spawn_file_actions_addclose(&fa, fd);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  ~Child() {
    CloseInput();
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return pid_ > 0; }
  void Write(const std::string& s) { ASSERT_EQ(write(in_, s.data(), s.size()), ssize_t(s.size())); }
  void CloseInput() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }
  // Reads stdout until it holds `lines` lines, EOF, or `seconds` pass; returns what was read.
  std::string ReadLines(size_t lines, int seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (CountLines(read_) < lines) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p = {out_, POLLIN, 0};
      if (poll(&p, 1, int(left.count())) <= 0) break;
      char buf[4096];
      const ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) break;
      read_.append(buf, size_t(n));
    }
    return read_;
  }
  int Wait() {
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string read_;
};

TEST(CliBatching, InputIsReadOneWindowAtATime) {
  // stdin stays open: the first window's translations must come out before the input ends
  // (reading to the end first would hold the whole input in memory, and wait forever here).
  const std::string lines = DevLines("tatoeba.dev", 16);
  for (const char* window : {"8", "0"}) {
    SCOPED_TRACE(window);
    Child c({testing::CliPath(), "translate", "-m", testing::DemoModel("int8"), "-q", "--batch", "4",
             "--sort-window", window});
    ASSERT_TRUE(c.ok());
    std::string first8;
    for (size_t i = 0, n = 0; n < 8; ++i) {
      first8 += lines[i];
      n += lines[i] == '\n';
    }
    c.Write(first8);
    const std::string got = c.ReadLines(8, 120);
    EXPECT_EQ(CountLines(got), 8u) << "no output for a full window while stdin is open: '" << got << "'";
    c.Write(lines.substr(first8.size()));
    c.CloseInput();
    const std::string all = c.ReadLines(16, 120);
    EXPECT_EQ(c.Wait(), 0);
    EXPECT_EQ(all, Translate("-q --batch 4 --sort-window 0", lines).out);
  }
}

}  // namespace
}  // namespace mtlite
