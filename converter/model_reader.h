// .mtlite bytes -> ModelSpec: the inverse of SerializeModel, so that a tool can re-emit a model
// with a changed optional section (`mtlite shortlist` adds or replaces the shortlist) without
// touching the weights: every tensor, scale and tokenizer array is copied byte for byte, and
// SerializeModel(ReadModelSpec(m)) reproduces the file m was loaded from when the same writer
// wrote it (tests/unit/host/shortlist_test.cc).
#pragma once

#include "model_writer.h"
#include "mtlite/mtlite.hpp"

namespace mtlite {
namespace converter {

// `model` was loaded (and so validated) by Model::Load / FromBuffer. kUnsupported for a file
// this writer could not reproduce exactly: a tensor whose layout or quantization scheme is not
// the one the writer derives from its dtype (only possible for tensors the model does not use).
Status ReadModelSpec(const Model& model, ModelSpec* out);

}  // namespace converter
}  // namespace mtlite
