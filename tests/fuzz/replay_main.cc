// Replays a libFuzzer target's inputs without libFuzzer: `<name>_fuzz_replay [-every=N] PATH...`
// runs LLVMFuzzerInitialize once, then LLVMFuzzerTestOneInput on every file given and on every
// file of every directory given (sorted, dot files skipped). -every=N (emulated test runs) takes
// every N-th input only, plus every regression-* file. A failed property aborts, as under
// libFuzzer. Exits 1 when no input was found (a missing seed directory is an error, not a pass).
// 64-bit inode numbers and offsets on 32-bit targets too (armv7 readdir() on a host file system
// fails with EOVERFLOW otherwise).
#define _FILE_OFFSET_BITS 64
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

void Collect(const std::string& path, std::vector<std::string>* files) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "replay: cannot stat %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    files->push_back(path);
    return;
  }
  std::vector<std::string> entries;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) {
    std::fprintf(stderr, "replay: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  errno = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') entries.push_back(path + "/" + e->d_name);
    errno = 0;
  }
  if (errno != 0) std::fprintf(stderr, "replay: reading %s: %s\n", path.c_str(), std::strerror(errno));
  closedir(d);
  std::sort(entries.begin(), entries.end());
  for (const std::string& e : entries) Collect(e, files);
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> all, files;
  long every = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "-every=", 7) == 0) {
      every = std::strtol(argv[i] + 7, nullptr, 10);
      if (every < 1) every = 1;
    } else {
      Collect(argv[i], &all);
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t slash = all[i].rfind('/');
    const bool regression = all[i].compare(slash == std::string::npos ? 0 : slash + 1, 11, "regression-") == 0;
    if (regression || i % size_t(every) == 0) files.push_back(all[i]);
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs (usage: %s FILE_OR_DIR...)\n", argv[0]);
    return 1;
  }
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
      return 1;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
