// libFuzzer target: Marian checkpoints (converter/marian_checkpoint.*) on arbitrary bytes, as
// `mtlite convert` reads a model file: a numpy .npz (a zip of .npy entries, stored or deflate) or
// a Marian binary .bin (float32 and intgemm8 items), with special:model.yml inside.
// ParseMarianCheckpoint must return a Status, never crash, hang or trip a sanitizer; every
// rejection has a message; what it allocates stays within 64 x the input + 4 MiB (the entries of
// an .npz may inflate to 16 x its size + 1 MiB, decoded once into floats and once more into the HF
// layout). An accepted checkpoint has every tensor with as many values as its shape says, and
// MarianToHfTensors succeeds on it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "alloc_meter.h"
#include "fuzz_util.h"
#include "marian_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mtlite;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::AllocMeter meter;
  {
    converter::MarianCheckpoint ckpt;
    Status s = converter::ParseMarianCheckpoint(bytes, "fuzz.npz", &ckpt);
    if (!s.ok()) {
      if (s.message().empty()) fuzz::Fail(bytes, "rejection without a message");
    } else {
      for (const auto& [name, t] : ckpt.tensors) {
        uint64_t n = 1;
        for (int64_t d : t.shape) n *= uint64_t(d);
        if (n != t.values.size()) fuzz::Fail(bytes, "tensor %s: %zu values for its shape", name.c_str(), t.values.size());
      }
      std::map<std::string, converter::HfTensor> hf;
      s = converter::MarianToHfTensors(ckpt, &hf);
      if (!s.ok()) fuzz::Fail(bytes, "MarianToHfTensors of an accepted checkpoint: %s", s.ToString().c_str());
    }
  }
  meter.Check(bytes, 64, 4u << 20, "ParseMarianCheckpoint");
  return 0;
}
