// libFuzzer target: Marian's model options (special:model.yml, and the decoder.yml / config*.yml
// of a release folder) on arbitrary bytes: ParseMarianYaml, then ReadMarianOptions on what it
// accepted. Both return a Status, never crash or trip a sanitizer; every rejection has a message;
// allocation stays within 32 x the input + 1 MiB; accepted options are inside the ranges the
// converter then builds tables from.
#include <cstddef>
#include <cstdint>
#include <string>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "marian_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::AllocMeter meter;
  {
    converter::MarianYaml yaml;
    Status s = converter::ParseMarianYaml(text, "special:model.yml", &yaml);
    if (!s.ok() && s.message().empty()) fuzz::Fail(text, "ParseMarianYaml: rejection without a message");
    if (s.ok()) {
      for (const auto& [key, v] : yaml) {
        if (key.empty()) fuzz::Fail(text, "an empty key was accepted");
        if (!v.is_list && !v.list.empty()) fuzz::Fail(text, "key %s: a scalar with list items", key.c_str());
      }
      converter::MarianOptions o;
      s = converter::ReadMarianOptions(yaml, &o);
      if (!s.ok() && s.message().empty()) fuzz::Fail(text, "ReadMarianOptions: rejection without a message");
      if (s.ok() && (o.dim_emb <= 0 || o.enc_depth <= 0 || o.dec_depth <= 0 || o.heads <= 0 || o.dim_ffn <= 0 ||
                     o.src_vocab <= 0 || o.tgt_vocab <= 0 || o.dim_emb % o.heads != 0)) {
        fuzz::Fail(text, "accepted options out of range: dim-emb %d depth %d/%d heads %d ffn %d vocabs %d/%d", o.dim_emb,
                   o.enc_depth, o.dec_depth, o.heads, o.dim_ffn, o.src_vocab, o.tgt_vocab);
      }
    }
  }
  meter.Check(text, 32, 1u << 20, "ParseMarianYaml + ReadMarianOptions");
  return 0;
}
