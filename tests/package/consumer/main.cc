// Translates argv[2..] with the model argv[1] through the C++ API; prints one line per input.
#include <mtlite/mtlite.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: consumer_cpp model.mtlite text...\n");
    return 2;
  }
  auto model = mtlite::Model::Load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "load: %s\n", model.status().ToString().c_str());
    return 1;
  }
  mtlite::TranslatorLimits limits;
  limits.max_batch = argc - 2;
  auto tr = mtlite::Translator::Create(model.value(), limits);
  if (!tr.ok()) {
    std::fprintf(stderr, "create: %s\n", tr.status().ToString().c_str());
    return 1;
  }
  std::vector<std::string> texts(argv + 2, argv + argc);
  std::vector<mtlite::TranslationResult> out;
  const mtlite::Status s = tr.value()->Translate(texts, mtlite::TranslateOptions(), &out);
  if (!s.ok()) {
    std::fprintf(stderr, "translate: %s\n", s.ToString().c_str());
    return 1;
  }
  for (const auto& r : out) std::printf("%s\n", r.hypotheses.at(0).text.c_str());
  std::fprintf(stderr, "mtlite %s, arena %zu bytes\n", mtlite::Version(), tr.value()->arena_bytes());
  return 0;
}
